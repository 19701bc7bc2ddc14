#include "compilers/llvm_engine/action_docs.h"

#include <fmt/format.h>

#include <map>

#include "compilers/llvm_engine/campaign_docs.h"
#include "compilers/llvm_engine/compiler_gym_flags.h"
#include "llvm/Config/llvm-config.h"

namespace kiln::llvm_engine {
namespace {

std::string actionRows(const PassTable& table, std::size_t first, std::size_t end) {
  std::string out = "| # | action | flag | `-passes=` |\n|---|---|---|---|\n";
  for (std::size_t i = first; i < end; ++i) {
    const PassInfo& pass = table.at(i);
    const std::string marked = pass.note.empty() ? "" : " (see below)";
    out += fmt::format("| {} | `{}`{} | `{}` | `{}` |\n", i, pass.name, marked, pass.flag,
                       pass.pipeline);
  }
  return out;
}

std::string spacesSection(const PassTable& table) {
  const std::size_t single = table.spaceSize(0);
  std::string out = fmt::format(
      "## Action spaces\n\n"
      "| # | space | actions | what |\n|---|---|---|---|\n");
  for (std::size_t space = 0; space < kActionSpaces.size(); ++space) {
    out += fmt::format("| {} | `{}` | {} | {} |\n", space, kActionSpaces[space].name,
                       table.spaceSize(space), kActionSpaces[space].summary);
  }
  out += fmt::format(
      "\n`{0}`, the default, holds single passes, as CompilerGym's llvm-v0 does, so that a\n"
      "result on it can be set beside CompilerGym's. `{1}` has the same {2} actions at\n"
      "the same indices, then the registry entries that run a whole pipeline in one step\n"
      "(LLVM's own printing of each entry lists the passes it runs). Pick a space by name:\n"
      "`kiln.make(\"llvm-v0\", action_space=\"{1}\")`, the same argument to\n"
      "`kiln.compiler_gym.make` or its env's `reset`, or `SessionOptions::actionSpace` in\n"
      "C++.\n\n",
      kActionSpaces[0].name, kActionSpaces[1].name, single);
  return out;
}

std::string pipelinesSection(const PassTable& table) {
  const std::size_t first = table.spaceSize(0);
  std::string out = fmt::format("## {}: the {} pipelines after them\n\n", kActionSpaces[1].name,
                                table.size() - first);
  out += "| # | action | flag | `-passes=` | passes it runs |\n|---|---|---|---|---|\n";
  for (std::size_t i = first; i < table.size(); ++i) {
    const PassInfo& pass = table.at(i);
    std::string runs;
    for (const std::string& name : pass.runs) runs += (runs.empty() ? "`" : ", `") + name + "`";
    const std::string marked = pass.note.empty() ? "" : " (see below)";
    out += fmt::format("| {} | `{}`{} | `{}` | `{}` | {} ({}) |\n", i, pass.name, marked, pass.flag,
                       pass.pipeline, runs, pass.runs.size());
  }
  return out;
}

std::string notesSection(const PassTable& table) {
  std::string out =
      "\n## Actions that do not run their bare registry name\n\n"
      "| action | `-passes=` | why |\n|---|---|---|\n";
  for (const PassInfo& pass : table.passes()) {
    if (pass.note.empty()) continue;
    out += fmt::format("| `{}` | `{}` | {} |\n", pass.name, pass.pipeline, pass.note);
  }
  return out;
}

}  // namespace

std::string actionsMarkdown(const PassTable& table) {
  std::map<std::string, std::string, std::less<>> droppedReason;
  for (const DroppedPass& d : table.dropped()) droppedReason.emplace(d.name, d.reason);

  std::string out = fmt::format(
      "# Actions of the llvm env\n\n"
      "Generated from the pass table of LLVM {} by `kiln actions --markdown`; a test\n"
      "(`ActionDocsTest`) fails when this file and the table disagree.\n\n"
      "An action is named as LLVM names the pass (`gvn`, `loop-unroll`) and does exactly\n"
      "what `opt-19 -passes=<name>` does. kiln gives LLVM's pipeline parser the text in the\n"
      "`-passes=` column, which is the action's name but for the few actions listed under\n"
      "\"Actions that do not run their bare registry name\", and never a pipeline printed\n"
      "back (printing drops parameters). Applied once, or again and again with fresh\n"
      "analyses at each step as one opt-19 call per step, an action leaves the IR text\n"
      "opt-19 leaves (`tests/llvm_engine/opt_equivalence_test.cpp`). The env also takes the\n"
      "action's flag: CompilerGym's flag for the same pass where CompilerGym (LLVM 10) had\n"
      "one (`-functionattrs` for `function-attrs`), else `-<name>` (in Python:\n"
      "`env.action_space.names`, `.flags`, `.pipelines`).\n\n",
      LLVM_VERSION_STRING);
  out += spacesSection(table);
  out += fmt::format("## {}: the {} single passes\n\n", kActionSpaces[0].name, table.spaceSize(0));
  out += actionRows(table, 0, table.spaceSize(0));
  out += "\n";
  out += pipelinesSection(table);
  out += notesSection(table);

  out += "\n## CompilerGym flags that name no action\n\n| flag | why |\n|---|---|\n";
  for (const CompilerGymFlag& flag : compilerGymFlags()) {
    const std::optional<std::size_t> action =
        flag.action.empty() ? std::nullopt : table.find(flag.action);
    if (action && *action < table.spaceSize(0)) continue;
    std::string why(flag.note);
    if (action) {
      why = fmt::format("`{}` runs a pipeline: in `{}` only", flag.action, kActionSpaces[1].name);
    } else if (why.empty()) {
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
  // Kept as the passes of their names although they can crash LLVM: a crash
  // is reported as such, never as a number.
  out +=
      "\n"
      "Two actions of the default space crash LLVM 19 on some modules, in kiln and\n"
      "in opt-19 alike: `scalarizer` and `interleaved-load-combine` segfault on every\n"
      "module of `generator://llvm-stress-v0` tried (seeds 1-10, `llvm-stress-19\n"
      "-size 200`, none with a target triple; `opt-19 -passes=<name>` exits with\n"
      "signal 11 on each). They stay, as the passes of their names: such a step ends\n"
      "its episode with a compile error that names the pass and the signal (the\n"
      "worker that caught it starts again, and the client waits for it on the next\n"
      "reset), never with a number.\n";
  out += validationCampaignMarkdown();
  return out;
}

}  // namespace kiln::llvm_engine
