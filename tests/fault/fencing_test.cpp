// A host that hears neither its coordinator nor a client drops that client's
// sessions (docs/faults.md, Partitions), on every kind of host: a plain
// worker, a nesting host whose underlying workers share its process, and one
// whose experiments run in child processes (the default of `kiln nest`).
// Real processes: the coordinator is stopped with SIGSTOP, which its hosts
// see as a partition (silence, no error), while one client keeps its leases
// fresh and another stays silent. After SIGCONT, the silent client's session
// is gone, saying why, and the other client's session steps on with its sum.
#include <gtest/gtest.h>
#include <signal.h>

#include <fmt/format.h>

#include "tests/fault/fault_support.h"
#include "tests/support/child_cluster.h"

namespace kiln::fault {
namespace {

struct HostKind {
  std::string name;
  std::vector<std::string> args;  // the subcommand and its own flags
};

void PrintTo(const HostKind& kind, std::ostream* out) { *out << kind.name; }

class FencingTest : public ::testing::TestWithParam<HostKind> {};

std::int64_t sumAfterStep(client::Session& session, std::int64_t action) {
  auto stepped = session.step({Value(action)}, std::vector<std::string>{"Sum"});
  return stepped.ok() ? stepped->observations.at(0).as<std::int64_t>() : -1;
}

TEST_P(FencingTest, ACutOffHostDropsTheSessionsOfClientsItDidNotHearFrom) {
  const HostKind& kind = GetParam();
  const bool nesting = kind.args.front() == "nest";
  auto children = testsupport::ChildCluster::create(KILN_BINARY).value();
  const std::string endpoint = fmt::format("tcp://127.0.0.1:{}", freePort());
  auto* coordinator = children
                          .spawn({"coordinator", "--listen", endpoint, "--heartbeat-seconds", "0.1",
                                  "--log-level", "off"})
                          .value();
  std::vector<std::string> hostArgs = kind.args;
  hostArgs.insert(hostArgs.end(),
                  {"--coordinator", endpoint, "--heartbeat-seconds", "0.1", "--log-level", "off"});
  children.spawn(hostArgs).value();

  const std::string experiment = nesting ? "fence" : "";
  auto heard = connectClient(endpoint, experiment);  // keep-alives every 100 ms
  ASSERT_TRUE(testsupport::waitForWorkers(*heard, 1, 10s).ok());
  client::ClientOptions silentOptions;
  silentOptions.coordinator = endpoint;
  silentOptions.requestTimeout = 5s;
  silentOptions.leasePeriod = std::chrono::hours(1);  // sends nothing while idle
  silentOptions.restoreLostSessions = false;          // shows the host's answer
  if (nesting) {
    ExperimentSpec spec;
    spec.name = experiment;
    spec.workers = 1;
    spec.sessionTypes = {"noop"};
    auto opened = heard->openExperiment(spec);
    ASSERT_TRUE(opened.ok()) << opened.status().toString();
    ASSERT_TRUE(heard->waitForExperiment(experiment, 1, 10s).ok());
    silentOptions.experiment = experiment;
    silentOptions.experimentKey = opened->key;
  }
  auto silent = client::Client::connect(silentOptions).value();
  auto kept = heard->startSession({"noop", "benchmark://fence/kept"}).value();
  auto dropped = silent->startSession({"noop", "benchmark://fence/dropped"}).value();
  ASSERT_EQ(sumAfterStep(*kept, 3), 3);
  ASSERT_EQ(sumAfterStep(*dropped, 4), 4);

  // The hosts hear nothing from the coordinator for 1.5 s: cut off after
  // (liveness - 1) heartbeats, they fence.
  ASSERT_EQ(::kill(coordinator->process.pid(), SIGSTOP), 0);
  std::this_thread::sleep_for(1500ms);
  ASSERT_EQ(::kill(coordinator->process.pid(), SIGCONT), 0);

  auto late = dropped->step({Value(std::int64_t{1})}, std::vector<std::string>{"Sum"});
  ASSERT_FALSE(late.ok()) << "the silent client's session survived the cut";
  EXPECT_EQ(late.status().code(), ErrorCode::kDisconnected) << late.status().toString();
  EXPECT_NE(late.status().message().find("was dropped by this worker"), std::string::npos)
      << late.status().toString();
  EXPECT_EQ(sumAfterStep(*kept, 2), 5) << "the session of a client the host heard was dropped";
  EXPECT_EQ(kept->restores(), 0u);
}

INSTANTIATE_TEST_SUITE_P(EveryHostKind, FencingTest,
                         ::testing::Values(HostKind{"worker", {"worker"}},
                                           HostKind{"nestShared", {"nest", "--shared-process"}},
                                           HostKind{"nestIsolated", {"nest", "--isolate"}}),
                         [](const ::testing::TestParamInfo<HostKind>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace kiln::fault
