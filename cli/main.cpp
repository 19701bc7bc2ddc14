// kiln: a distributed worker pool for compiler RL sessions.
#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"kiln: a distributed worker pool for compiler reinforcement-learning sessions"};
  app.require_subcommand(1);
  kiln::cli::addCoordinatorCommand(app);
  kiln::cli::addWorkerCommand(app);
  kiln::cli::addLocalCommand(app);
  kiln::cli::addStatusCommand(app);
  kiln::cli::addDemoCommand(app);
  kiln::cli::addBenchCommand(app);
  kiln::cli::addDatasetsCommand(app);
  kiln::cli::addKeygenCommand(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
