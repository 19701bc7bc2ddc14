// `kiln tools schema`: the agent tools (tools/agent_tools/) in the
// function-calling format trainers register, as JSON; --results prints each
// tool's answer schema instead. The tools are generated from the llvm type's
// spaces as the cluster serves them: those of --cluster, or of an embedded
// single-node cluster started for the command.
#include <fmt/format.h>

#include "tools/agent_tools/tool_executor.h"
#include "tools/cli/commands.h"
#include "worker/worker_cli.h"

namespace kiln::cli {
namespace {

struct SchemaFlags {
  std::string cluster;
  std::string keyFile;
  bool results = false;
  bool json = true;  // the only format; the flag is accepted
};

void printSchema(const SchemaFlags& flags) {
  agent_tools::ExecutorOptions options;
  options.client.coordinator = flags.cluster;
  options.client.keys = loadKeyFileOrExit(flags.keyFile, "tools schema");
  auto executor = agent_tools::ToolExecutor::create(options);
  if (!executor.ok()) {
    fmt::print(stderr, "kiln tools schema: {}\n", executor.status().toString());
    throw CLI::RuntimeError(1);
  }
  fmt::print("{}\n", (*executor)->schemaJson(flags.results));
}

}  // namespace

void addToolsSchemaCommand(CLI::App& app) {
  auto found = app.get_subcommands([](CLI::App* sub) { return sub->get_name() == "tools"; });
  CLI::App* tools =
      found.empty() ? app.add_subcommand("tools", "kiln's tools for LLM agents") : found.front();
  tools->require_subcommand(1);
  auto* command = tools->add_subcommand(
      "schema",
      "print the agent tools as JSON in the function-calling format (OpenAI-compatible trainers "
      "register it as it is)");
  auto flags = std::make_shared<SchemaFlags>();
  command->add_option("--cluster,--coordinator", flags->cluster,
                      "the cluster's coordinator, e.g. tcp://10.0.0.1:7700 (default: an embedded "
                      "single-node cluster)");
  addKeyFileOption(*command, flags->keyFile);
  command->add_flag("--results", flags->results,
                    "print each tool's answer schema (JSON Schema 2020-12), and the error's");
  // JSON is the only format: the flag says so to whoever reaches for it.
  command->add_flag("--json", flags->json, "the output is JSON (the only format)");
  command->callback([flags] { printSchema(*flags); });
}

}  // namespace kiln::cli
