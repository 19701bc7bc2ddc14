// The child processes of a benchmark (coordinator, workers, nesting host,
// and the replacements of killed workers) die with it however it ends:
// SIGTERM, SIGINT or SIGKILL of the benchmark process. This test process is
// made the subreaper, so orphans that survived would show up below it (and
// are killed and reaped at the end either way).
#include <gtest/gtest.h>
#include <signal.h>

#include <set>
#include <thread>

#include "common/process/subprocess.h"
#include "tests/support/process_probe.h"

namespace kiln::bench {
namespace {

using namespace std::chrono_literals;
using SteadyTime = std::chrono::steady_clock;

// kiln processes started by the benchmark `bench`, still running.
std::set<int> runningChildrenOf(int bench) {
  std::set<int> pids;
  for (const testsupport::ProcessInfo& p : testsupport::descendantsOf(bench)) {
    if (p.ppid == bench && p.name == "kiln" && !p.zombie()) pids.insert(p.pid);
  }
  return pids;
}

bool running(int pid) {
  auto info = testsupport::readProcess(pid);
  return info && !info->zombie();
}

// Starts a soak of noop sessions with 2 workers (one killed and replaced
// every second or so), waits until a replacement runs, then sends `signal`
// to the benchmark. Returns how many of the children it had are still
// running a bounded while later.
std::size_t survivorsAfter(int signal) {
  testsupport::OrphanReaper reaper;
  auto bench = Subprocess::spawn({KILN_BINARY, "bench", "soak", "--duration", "120", "--sessions",
                                  "2", "--workers", "2", "--kill-every", "1", "--sample-every", "5",
                                  "--mix", "noop"});
  EXPECT_TRUE(bench.ok()) << bench.status().toString();
  if (!bench.ok()) return 0;
  // coordinator, worker-0, worker-1, nest; then worker-1's replacement.
  const int pid = bench->pid();
  std::set<int> first, seen;
  const auto deadline = SteadyTime::now() + 60s;
  while (SteadyTime::now() < deadline && bench->running()) {
    std::set<int> now = runningChildrenOf(pid);
    seen.insert(now.begin(), now.end());
    if (first.empty() && now.size() == 4) first = now;
    bool replaced = !first.empty() && now.size() == 4 && now != first;
    if (replaced) break;
    std::this_thread::sleep_for(50ms);
    (void)bench->poll();
  }
  std::set<int> children = runningChildrenOf(pid);
  EXPECT_EQ(children.size(), 4u) << "the benchmark did not start its cluster and replace a worker";
  EXPECT_NE(children, first) << "no worker was replaced within 60 s";
  ::kill(pid, signal);
  EXPECT_TRUE(bench->waitFor(10s).ok());
  std::size_t survivors = 0;
  const auto gone = SteadyTime::now() + 10s;
  do {
    survivors = 0;
    for (int child : seen) survivors += running(child) ? 1 : 0;
    if (survivors == 0) break;
    std::this_thread::sleep_for(50ms);
  } while (SteadyTime::now() < gone);
  // Whatever the verdict, leave nothing behind.
  for (int child : seen) {
    if (running(child)) ::kill(child, SIGKILL);
  }
  std::this_thread::sleep_for(100ms);
  reaper.reapOrphans("");
  return survivors;
}

TEST(BenchChildren, DieWhenTheBenchmarkIsKilled) { EXPECT_EQ(survivorsAfter(SIGKILL), 0u); }

TEST(BenchChildren, DieWhenTheBenchmarkIsTerminated) { EXPECT_EQ(survivorsAfter(SIGTERM), 0u); }

TEST(BenchChildren, DieWhenTheBenchmarkIsInterrupted) { EXPECT_EQ(survivorsAfter(SIGINT), 0u); }

}  // namespace
}  // namespace kiln::bench
