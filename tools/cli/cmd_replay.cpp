// `kiln replay states.csv`: replays every state of a CompilerGym-style states
// file (include/kiln/client/env_state.h) on the cluster, in parallel over its slots, and
// prints which reproduce: the reward replayed against the one recorded, the
// instruction count reached against the one the recorded reward implies.
// Exits 1 if any state does not reproduce. With no --coordinator it starts
// the embedded single-node cluster, like `kiln datasets`.
// `kiln validate states.csv [--asan]` replays the same way and validates
// each state reached (its program run on the benchmark's inputs against the
// benchmark as it came, compilers/llvm_session/program_runs.h); exits 1 if any state
// does not replay or behaves differently.
#include <fmt/format.h>

#include <algorithm>

#include <kiln/client/env_state.h>
#include <kiln/client/state_replay.h>
#include <kiln/client/work_pool.h>
#include "programs/make/json_tree.h"
#include "tools/cli/commands.h"
#include "tools/local_cluster/local_cluster.h"
#include "worker/worker_cli.h"

namespace kiln::cli {

namespace {

struct ReplayCommandOptions {
  std::string statesFile;
  std::string coordinator;
  std::string keyFile;
  client::ReplayOptions replay;
  unsigned jobs = 0;  // 0 = the cluster's slots
  std::string command = "replay";
};

[[noreturn]] void fail(const ReplayCommandOptions& o, const Status& status) {
  fmt::print(stderr, "kiln {}: {}\n", o.command, status.toString());
  throw CLI::RuntimeError(2);
}

// A Validation observation's verdict: empty when the program behaved the
// same; otherwise each error's message and evidence, one per line.
std::vector<std::string> validationErrors(const client::ReplayResult& result) {
  if (!result.validation) return {"not validated: " + result.validationProblem};
  auto report = programs::parseJson(*result.validation, "the Validation observation");
  if (!report.ok()) return {report.status().message()};
  std::vector<std::string> errors;
  if (const programs::JsonValue* list = report->member("errors")) {
    for (const programs::JsonValue& error : list->array) {
      const programs::JsonValue* message = error.member("message");
      const programs::JsonValue* evidence = error.member("evidence");
      std::string line = message != nullptr ? message->string : "an error";
      if (evidence != nullptr && !evidence->string.empty()) line += ": " + evidence->string;
      errors.push_back(std::move(line));
    }
  }
  return errors;
}

unsigned clusterSlots(client::Client& client) {
  auto workers = client.listCluster();
  if (!workers.ok()) return 1;
  unsigned slots = 0;
  for (const client::WorkerStatus& worker : *workers) slots += worker.slots;
  return std::max(slots, 1u);
}

std::string shortened(const std::string& text, std::size_t width) {
  if (text.size() <= width) return text;
  return text.substr(0, width - 3) + "...";
}

std::string optionalNumber(const std::optional<double>& value) {
  return value ? fmt::format("{:.6g}", *value) : "-";
}

std::string optionalCount(const std::optional<std::int64_t>& value) {
  return value ? std::to_string(*value) : "-";
}

void runReplay(const ReplayCommandOptions& o) {
  auto states = client::readStatesFile(o.statesFile);
  if (!states.ok()) fail(o, states.status());
  if (states->empty()) fail(o, invalidArgument(o.statesFile + " holds no state"));

  client::ClientOptions clientOptions;
  clientOptions.coordinator = o.coordinator;
  clientOptions.keys = loadKeyFileOrExit(o.keyFile, o.command);
  LocalClusterOptions local;
  local.isolateWorkers =
      true;  // a crash in compile work costs a restart (tools/local_cluster/worker_child.h)
  local.workers = 1;
  auto embedded = connectOrStartLocal(clientOptions, local);
  if (!embedded.ok()) fail(o, embedded.status());
  if (embedded->cluster) {
    if (Status ready = embedded->cluster->waitUntilReady(std::chrono::seconds(10)); !ready.ok()) {
      fail(o, ready);
    }
    clientOptions.coordinator = embedded->cluster->coordinatorEndpoint();
  }
  const unsigned runners = std::min<unsigned>(o.jobs ? o.jobs : clusterSlots(*embedded->client),
                                              static_cast<unsigned>(states->size()));
  auto pool = client::WorkPool::create(clientOptions, runners);
  if (!pool.ok()) fail(o, pool.status());

  std::vector<std::future<Result<client::ReplayResult>>> futures;
  futures.reserve(states->size());
  for (const client::EnvState& state : *states) {
    futures.push_back(
        (*pool)->submit<client::ReplayResult>([&state, &o](client::WorkContext& context) {
          return client::replayState(context.client, state, o.replay);
        }));
  }
  fmt::print("{:>4}  {:<40} {:>7} {:>10} {:>10} {:>8} {:>8}  {}\n", "#", "BENCHMARK", "ACTIONS",
             "RECORDED", "REPLAYED", "INSTS", "IMPLIED", "RESULT");
  std::size_t reproduced = 0, valid = 0;
  for (std::size_t i = 0; i < futures.size(); ++i) {
    const client::EnvState& state = (*states)[i];
    Result<client::ReplayResult> result = futures[i].get();
    if (!result.ok()) fail(o, result.status());  // the cluster could not be asked
    reproduced += result->reproduced ? 1 : 0;
    std::string verdict = result->reproduced
                              ? (state.reward ? "reproduces" : "replays (no reward recorded)")
                              : "DIFFERS: " + result->problem;
    std::vector<std::string> errors;
    if (o.replay.validate && result->reproduced) {
      errors = validationErrors(*result);
      valid += errors.empty() ? 1 : 0;
      verdict += errors.empty() ? ", valid" : fmt::format(", INVALID ({} errors)", errors.size());
    }
    fmt::print("{:>4}  {:<40} {:>7} {:>10} {:>10} {:>8} {:>8}  {}\n", i + 1,
               shortened(state.benchmark, 40), state.actions.size(), optionalNumber(state.reward),
               optionalNumber(result->reward), optionalCount(result->instructions),
               optionalCount(result->recordedInstructions), verdict);
    for (const std::string& error : errors) fmt::print("        {}\n", error);
  }
  fmt::print("{} of {} states reproduce ({} in parallel, reward space {})\n", reproduced,
             states->size(), runners, o.replay.rewardSpace);
  if (o.replay.validate) {
    fmt::print("{} of {} states are valid{}\n", valid, states->size(),
               o.replay.asan ? " (ASan builds too)" : "");
  }
  if (reproduced != states->size() || (o.replay.validate && valid != states->size())) {
    throw CLI::RuntimeError(1);
  }
}

}  // namespace

namespace {

CLI::App* addReplayOptions(CLI::App& app, const std::string& name, const std::string& description,
                           const std::shared_ptr<ReplayCommandOptions>& options) {
  auto* command = app.add_subcommand(name, description);
  options->command = name;
  command->add_option("states", options->statesFile, "the states file (CompilerGym's CSV)")
      ->required();
  command->add_option("--coordinator", options->coordinator,
                      "use this cluster instead of starting one");
  command
      ->add_option("--reward-space", options->replay.rewardSpace,
                   "the reward the states recorded (Reward:<name> of the llvm type)")
      ->capture_default_str()
      ->check(CLI::IsMember({"IrInstructionCount", "IrInstructionCountOz", "ObjectTextSizeBytes",
                             "ObjectTextSizeOz"}));
  command
      ->add_option("--tolerance", options->replay.tolerance,
                   "largest reward difference that still reproduces")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e9));
  command->add_option("--jobs", options->jobs, "states replayed at once (0 = the cluster's slots)")
      ->capture_default_str()
      ->check(CLI::Range(0u, 1024u));
  addKeyFileOption(*command, options->keyFile);
  command->callback([options] { runReplay(*options); });
  return command;
}

}  // namespace

void addReplayCommand(CLI::App& app) {
  addReplayOptions(app, "replay",
                   "replay a CSV of states (benchmark,reward,walltime,commandline) and check each "
                   "reproduces (embedded cluster by default)",
                   std::make_shared<ReplayCommandOptions>());
  auto validate = std::make_shared<ReplayCommandOptions>();
  validate->replay.validate = true;
  auto* command = addReplayOptions(
      app, "validate",
      "replay a CSV of states and validate each: its program, run in the worker's sandbox on "
      "the benchmark's inputs, must behave as the benchmark as it came (embedded cluster by "
      "default)",
      validate);
  command->add_flag("--asan", validate->replay.asan,
                    "also run an AddressSanitizer build of each state's program");
}

}  // namespace kiln::cli
