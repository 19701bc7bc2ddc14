// kiln-bench: kiln's benchmarks, kept out of the kiln binary that users
// install. `kiln bench NAME ...` runs this program beside it.
#include "bench/bench_commands.h"

int main(int argc, char** argv) {
  CLI::App app{"kiln bench: benchmarks that print figures (a table, or JSON with --json)",
               "kiln bench"};
  kiln::bench::addBenchCommands(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
