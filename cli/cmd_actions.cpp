// `kiln actions`: the llvm env's action space as this build's LLVM makes it:
// each action's name, flag (CompilerGym's where it had one) and exact
// pipeline; --markdown prints docs/actions.md (with the flags that name no
// action and the registry passes left out, each with its reason).
#include <fmt/format.h>

#include "cli/commands.h"
#include "llvmenv/action_docs.h"
#include "llvmenv/pass_table.h"

namespace kiln::cli {

void addActionsCommand(CLI::App& app) {
  auto* command = app.add_subcommand(
      "actions", "list the llvm env's actions: name, CompilerGym flag, exact pipeline");
  auto markdown = std::make_shared<bool>(false);
  command->add_flag("--markdown", *markdown,
                    "print docs/actions.md (actions, flags without one, passes left out)");
  command->callback([markdown] {
    auto table = llvmenv::PassTable::fromRegistry();
    if (!table.ok()) {
      fmt::print(stderr, "kiln actions: {}\n", table.status().toString());
      throw CLI::RuntimeError(1);
    }
    if (*markdown) {
      fmt::print("{}", llvmenv::actionsMarkdown(**table));
      return;
    }
    for (const llvmenv::PassInfo& pass : (*table)->passes()) {
      fmt::print("{:<36} {:<36} {}\n", pass.name, pass.flag, pass.pipeline);
    }
  });
}

}  // namespace kiln::cli
