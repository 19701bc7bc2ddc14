#include "llvmenv/action_docs.h"

#include <fmt/format.h>

#include <map>

#include "llvm/Config/llvm-config.h"
#include "llvmenv/compiler_gym_flags.h"

namespace kiln::llvmenv {

std::string actionsMarkdown(const PassTable& table) {
  std::map<std::string, std::string, std::less<>> droppedReason;
  for (const DroppedPass& d : table.dropped()) droppedReason.emplace(d.name, d.reason);

  std::string out = fmt::format(
      "# Actions of the llvm env\n\n"
      "Generated from the pass table of LLVM {} by `kiln actions --markdown`; a test\n"
      "(`ActionDocsTest`) fails when this file and the table disagree.\n\n"
      "An action is named as LLVM names the pass (`gvn`, `loop-unroll`). The env also\n"
      "takes the action's flag: CompilerGym's flag for the same pass where CompilerGym\n"
      "(LLVM 10) had one (`-functionattrs` for `function-attrs`), else `-<name>`. The\n"
      "pipeline is exactly what the action runs, one `opt-19 -passes='<pipeline>'` call\n"
      "(in Python: `env.action_space.names`, `.flags`, `.pipelines`). A pipeline that\n"
      "starts with another pass carries a prerequisite the pass needs.\n\n"
      "## The {} actions\n\n"
      "| # | action | flag | pipeline |\n|---|---|---|---|\n",
      LLVM_VERSION_STRING, table.size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    const PassInfo& pass = table.at(i);
    std::string name = "`" + pass.name + "`";
    if (!pass.carries.empty()) name += " (carries `" + pass.carries + "`)";
    out += fmt::format("| {} | {} | `{}` | `{}` |\n", i, name, pass.flag, pass.pipeline);
  }

  out += "\n## CompilerGym flags that name no action\n\n| flag | why |\n|---|---|\n";
  for (const CompilerGymFlag& flag : compilerGymFlags()) {
    if (!flag.action.empty() && table.find(flag.action)) continue;
    std::string why(flag.note);
    if (why.empty()) {
      auto dropped = droppedReason.find(flag.action);
      why = "`" + std::string(flag.action) + "` in LLVM 19, left out: " +
            (dropped != droppedReason.end() ? dropped->second : "not in LLVM 19's registry");
    }
    out += fmt::format("| `{}` | {} |\n", flag.flag, why);
  }

  out += fmt::format(
      "\n## Registry passes left out ({})\n\n"
      "Every pass of LLVM 19's registry that is not an action, with the reason.\n\n"
      "| pass | reason |\n|---|---|\n",
      table.dropped().size());
  for (const DroppedPass& dropped : table.dropped()) {
    out += fmt::format("| `{}` | {} |\n", dropped.name, dropped.reason);
  }
  return out;
}

}  // namespace kiln::llvmenv
