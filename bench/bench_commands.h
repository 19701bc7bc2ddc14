// The command line of kiln-bench: one subcommand per benchmark (and the
// internal servers some benchmarks start as their floors).
#pragma once

#include <CLI/CLI.hpp>

namespace kiln::bench {

void addBenchCommands(CLI::App& app);

}  // namespace kiln::bench
