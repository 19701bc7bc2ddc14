// A local cluster's isolated worker (tools/local_cluster/worker_child.h): a real LLVM
// crash caught in compile work costs a fresh child process, not the run,
// and the other sessions of the crashed child are restored by replay.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cerrno>

#include "common/base/exit_codes.h"
#include "tests/fault/fault_support.h"
#include "tools/local_cluster/local_cluster.h"

namespace kiln::fault {
namespace {

using namespace std::chrono_literals;

TEST(LocalIsolation, AWorkerChildThatCaughtAnLlvmCrashIsReplacedAndItsSessionsRestored) {
  LocalClusterOptions options;
  options.isolateWorkers = true;
  options.worker.slots = 2;
  // Offers loop-bound-split, a pass that crashes LLVM 19 (no action otherwise).
  options.worker.settings.faultInjection = true;
  options.worker.allowFiles =
      std::vector<std::filesystem::path>{std::filesystem::path(KILN_CRASHER_IR).parent_path()};
  auto cluster = LocalCluster::start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status().toString();
  ASSERT_TRUE((*cluster)->waitUntilReady(10s).ok());
  EXPECT_EQ((*cluster)->sessionTypes(0), nullptr);  // its types live in its process
  const std::string firstEndpoint = (*cluster)->workerEndpoints().at(0);
  auto client = connectClient((*cluster)->coordinatorEndpoint(), {}, 30s);

  auto crasher = client->startSession(llvmSession("file://" KILN_CRASHER_IR)).value();
  auto bystander = client->startSession(llvmSession("benchmark://kiln-bench-v0/crc32")).value();
  const std::vector<std::string> count{"IrInstructionCount"};
  ASSERT_TRUE(bystander->step({passAction(*bystander, "mem2reg")}, count).ok());

  auto crashed = crasher->step({passAction(*crasher, "loop-bound-split")}, count);
  ASSERT_FALSE(crashed.ok());
  EXPECT_EQ(crashed.status().code(), ErrorCode::kCompileError) << crashed.status().toString();
  // The child exits to be replaced; a new one registers at a new endpoint.
  ASSERT_TRUE(waitUntil([&] { return (*cluster)->workerRestarts() == 1; }, 30s));
  EXPECT_NE((*cluster)->workerEndpoints().at(0), firstEndpoint);

  // The bystander steps on from the new child as a session that never moved.
  auto moved = bystander->step({passAction(*bystander, "gvn")}, count);
  ASSERT_TRUE(moved.ok()) << moved.status().toString();
  EXPECT_GE(bystander->restores(), 1u);
  EXPECT_EQ(moved->observations.at(0).as<std::int64_t>(),
            instructionCountAfter(*client, "benchmark://kiln-bench-v0/crc32", {"mem2reg", "gvn"}));
  // New sessions are served there too.
  auto fresh = client->startSession(llvmSession("benchmark://kiln-bench-v0/crc32"));
  ASSERT_TRUE(fresh.ok()) << fresh.status().toString();
  EXPECT_TRUE((*fresh)->step({passAction(**fresh, "gvn")}, count).ok());
}

TEST(LocalIsolation, StoppingTheClusterLeavesNoChildBehind) {
  LocalClusterOptions options;
  options.isolateWorkers = true;
  options.workers = 2;
  auto cluster = LocalCluster::start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status().toString();
  ASSERT_TRUE((*cluster)->waitUntilReady(10s).ok());
  auto endpoints = (*cluster)->workerEndpoints();
  ASSERT_EQ(endpoints.size(), 2u);
  EXPECT_NE(endpoints[0], endpoints[1]);
  cluster->reset();
  // Reaped: no child of this process is left, not even a zombie.
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

// A nesting host can be a process of its own too, and whoever runs the
// cluster learns each host's pid before it serves (the demo puts it into a
// CPU budget there): an experiment opened on it runs sessions.
TEST(LocalIsolation, NestingHostsRunInProcessesWhosePidsTheHookGets) {
  LocalClusterOptions options;
  options.workers = 0;
  options.nestingHosts = 1;
  options.isolateNestingHosts = true;
  std::vector<std::pair<std::size_t, pid_t>> started;
  options.onWorkerProcess = [&started](std::size_t host, pid_t pid) {
    started.emplace_back(host, pid);
  };
  auto cluster = LocalCluster::start(options);
  ASSERT_TRUE(cluster.ok()) << cluster.status().toString();
  ASSERT_TRUE((*cluster)->waitUntilReady(10s).ok());
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].first, 0u);
  EXPECT_NE(started[0].second, ::getpid());
  EXPECT_EQ(::kill(started[0].second, 0), 0);  // alive
  client::ClientOptions clientOptions;
  clientOptions.coordinator = (*cluster)->coordinatorEndpoint();
  auto client = client::Client::connect(clientOptions);
  ASSERT_TRUE(client.ok());
  ExperimentSpec spec;
  spec.name = "isolated-nest";
  spec.workers = 1;
  auto opened = (*client)->openExperiment(spec);
  ASSERT_TRUE(opened.ok()) << opened.status().toString();
  ASSERT_TRUE((*client)->waitForExperiment(spec.name, 1, 20s).ok());
  clientOptions.experiment = spec.name;
  clientOptions.experimentKey = opened->key;
  auto member = client::Client::connect(clientOptions);
  ASSERT_TRUE(member.ok());
  auto session = (*member)->startSession({"noop", "benchmark://noop/one"});
  ASSERT_TRUE(session.ok()) << session.status().toString();
  EXPECT_TRUE((*session)->step({Value(std::int64_t{1})}, std::vector<std::uint32_t>{}).ok());
  session->reset();
  member->reset();
  client->reset();
  cluster->reset();
  EXPECT_EQ(::kill(started[0].second, 0), -1);  // stopped with the cluster
}

}  // namespace
}  // namespace kiln::fault
