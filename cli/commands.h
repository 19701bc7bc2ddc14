// The subcommands of the `kiln` binary; main.cpp only wires them together.
#pragma once

#include <CLI/CLI.hpp>

namespace kiln::cli {

void addCoordinatorCommand(CLI::App& app);
void addWorkerCommand(CLI::App& app);
void addLocalCommand(CLI::App& app);
void addStatusCommand(CLI::App& app);
void addDemoCommand(CLI::App& app);
void addBenchCommand(CLI::App& app);
void addDatasetsCommand(CLI::App& app);

}  // namespace kiln::cli
