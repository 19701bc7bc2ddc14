// kiln: a distributed worker pool for compiler RL sessions.
#include "tools/cli/commands.h"
#include "tools/cli/version.h"

int main(int argc, char** argv) {
  CLI::App app{"kiln: a distributed worker pool for compiler reinforcement-learning sessions"};
  app.set_version_flag("--version", kiln::cli::versionText(),
                       "print kiln's version, its protocol's and LLVM's, and exit");
  app.require_subcommand(1);
  kiln::cli::addCoordinatorCommand(app);
  kiln::cli::addWorkerCommand(app);
  kiln::cli::addLocalCommand(app);
  kiln::cli::addStatusCommand(app);
  kiln::cli::addDemoCommand(app);
  kiln::cli::addBenchCommand(app);
  kiln::cli::addDatasetsCommand(app);
  kiln::cli::addKeygenCommand(app);
  kiln::cli::addCorpusCommand(app);
  kiln::cli::addReplayCommand(app);
#ifdef KILN_WITH_LLVM
  kiln::cli::addActionsCommand(app);
#endif
  kiln::cli::addEvalCommand(app);
  kiln::cli::addToolsSchemaCommand(app);
  kiln::cli::addToolsServeCommand(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
