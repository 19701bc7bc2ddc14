// `kiln actions`: the llvm env's action spaces as this build's LLVM makes
// them: each action's index, name, flag (CompilerGym's where it had one) and
// exact `-passes=` text; --markdown prints docs/actions.md (with the flags
// that name no action and the registry passes left out, each with its reason).
#include <fmt/format.h>

#include "compilers/llvm_engine/action_docs.h"
#include "compilers/llvm_engine/pass_table.h"
#include "tools/cli/commands.h"

namespace kiln::cli {

void addActionsCommand(CLI::App& app) {
  auto* command = app.add_subcommand(
      "actions", "list the llvm env's actions: index, name, CompilerGym flag, exact -passes= text");
  auto markdown = std::make_shared<bool>(false);
  command->add_flag("--markdown", *markdown,
                    "print docs/actions.md (actions, flags without one, passes left out)");
  command->callback([markdown] {
    auto table = llvm_engine::PassTable::fromRegistry();
    if (!table.ok()) {
      fmt::print(stderr, "kiln actions: {}\n", table.status().toString());
      throw CLI::RuntimeError(1);
    }
    if (*markdown) {
      fmt::print("{}", llvm_engine::actionsMarkdown(**table));
      return;
    }
    // Indices as both spaces number them; the pipelines (PassesAndPipelines
    // only) come after the single passes.
    for (std::size_t i = 0; i < (*table)->size(); ++i) {
      const llvm_engine::PassInfo& pass = (*table)->at(i);
      if (i == (*table)->singlePassCount()) {
        fmt::print("# {} only:\n", llvm_engine::kActionSpaces[1].name);
      }
      fmt::print("{:<4} {:<36} {:<36} {}\n", i, pass.name, pass.flag, pass.pipeline);
    }
  });
}

}  // namespace kiln::cli
