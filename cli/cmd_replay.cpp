// `kiln replay states.csv`: replays every state of a CompilerGym-style states
// file (client/env_state.h) on the cluster, in parallel over its slots, and
// prints which reproduce: the reward replayed against the one recorded, the
// instruction count reached against the one the recorded reward implies.
// Exits 1 if any state does not reproduce. With no --coordinator it starts
// the embedded single-node cluster, like `kiln datasets`.
#include <fmt/format.h>

#include <algorithm>

#include "cli/commands.h"
#include "client/env_state.h"
#include "client/state_replay.h"
#include "client/work_pool.h"
#include "local/local_cluster.h"
#include "worker/worker_cli.h"

namespace kiln::cli {

namespace {

struct ReplayCommandOptions {
  std::string statesFile;
  std::string coordinator;
  std::string keyFile;
  client::ReplayOptions replay;
  unsigned jobs = 0;  // 0 = the cluster's slots
};

[[noreturn]] void fail(const Status& status) {
  fmt::print(stderr, "kiln replay: {}\n", status.toString());
  throw CLI::RuntimeError(2);
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
  if (!states.ok()) fail(states.status());
  if (states->empty()) fail(invalidArgument(o.statesFile + " holds no state"));

  client::ClientOptions clientOptions;
  clientOptions.coordinator = o.coordinator;
  clientOptions.keys = loadKeyFileOrExit(o.keyFile, "replay");
  LocalClusterOptions local;
  local.isolateWorkers = true;  // a crash in compile work costs a restart (local/worker_child.h)
  local.workers = 1;
  auto embedded = connectOrStartLocal(clientOptions, local);
  if (!embedded.ok()) fail(embedded.status());
  if (embedded->cluster) {
    if (Status ready = embedded->cluster->waitUntilReady(std::chrono::seconds(10)); !ready.ok()) {
      fail(ready);
    }
    clientOptions.coordinator = embedded->cluster->coordinatorEndpoint();
  }
  const unsigned runners = std::min<unsigned>(o.jobs ? o.jobs : clusterSlots(*embedded->client),
                                              static_cast<unsigned>(states->size()));
  auto pool = client::WorkPool::create(clientOptions, runners);
  if (!pool.ok()) fail(pool.status());

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
  std::size_t reproduced = 0;
  for (std::size_t i = 0; i < futures.size(); ++i) {
    const client::EnvState& state = (*states)[i];
    Result<client::ReplayResult> result = futures[i].get();
    if (!result.ok()) fail(result.status());  // the cluster could not be asked
    reproduced += result->reproduced ? 1 : 0;
    fmt::print("{:>4}  {:<40} {:>7} {:>10} {:>10} {:>8} {:>8}  {}\n", i + 1,
               shortened(state.benchmark, 40), state.actions.size(), optionalNumber(state.reward),
               optionalNumber(result->reward), optionalCount(result->instructions),
               optionalCount(result->recordedInstructions),
               result->reproduced ? (state.reward ? "reproduces" : "replays (no reward recorded)")
                                  : "DIFFERS: " + result->problem);
  }
  fmt::print("{} of {} states reproduce ({} in parallel, reward space {})\n", reproduced,
             states->size(), runners, o.replay.rewardSpace);
  if (reproduced != states->size()) throw CLI::RuntimeError(1);
}

}  // namespace

void addReplayCommand(CLI::App& app) {
  auto* command = app.add_subcommand(
      "replay",
      "replay a CSV of states (benchmark,reward,walltime,commandline) and check each "
      "reproduces (embedded cluster by default)");
  auto options = std::make_shared<ReplayCommandOptions>();
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
}

}  // namespace kiln::cli
