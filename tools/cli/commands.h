// The subcommands of the `kiln` binary; main.cpp only wires them together.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include <kiln/curve_keys.h>

namespace kiln::cli {

void addCoordinatorCommand(CLI::App& app);
void addWorkerCommand(CLI::App& app);
void addLocalCommand(CLI::App& app);
void addStatusCommand(CLI::App& app);
void addDemoCommand(CLI::App& app);
void addBenchCommand(CLI::App& app);
void addDatasetsCommand(CLI::App& app);
// `kiln datasets check DIR`, a subcommand of `datasets`.
void addDatasetsCheckCommand(CLI::App& datasets);
// `kiln datasets install`, a subcommand of `datasets` (cmd_datasets_install.cpp).
void addDatasetsInstallCommand(CLI::App& datasets);
void addKeygenCommand(CLI::App& app);
void addCorpusCommand(CLI::App& app);
void addReplayCommand(CLI::App& app);
void addActionsCommand(CLI::App& app);  // with KILN_WITH_LLVM only
void addEvalCommand(CLI::App& app);
// `kiln tools schema` (cmd_tools_schema.cpp): under the `tools` command, added
// if no command before it added one.
void addToolsSchemaCommand(CLI::App& app);
// `kiln tools serve` (cmd_tools_serve.cpp): under the `tools` command when
// one was added before it, else under a `tools` command it adds.
void addToolsServeCommand(CLI::App& app);
// A client command's --key-file (empty: none); a bad file ends `command` with the reason.
std::optional<ClusterKeys> loadKeyFileOrExit(const std::string& path, const std::string& command);

}  // namespace kiln::cli
