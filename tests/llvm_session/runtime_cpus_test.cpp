// Runtime measurements for real (compilers/llvm_session/program_runs.h with the host's
// CPUs, programs/runs/measuring_cpus.h): two measurements started at once never
// hold one CPU together, in one context or in two that share the host-wide
// locks (two worker processes on a host); compile work leaves the measuring
// CPU while it is held; and RuntimeStats through a session says what its
// samples say, with the repeat-until-stable rule and its parameters.
#include <gtest/gtest.h>
#include <sched.h>

#include <latch>
#include <map>
#include <mutex>
#include <thread>

#include "compilers/llvm_engine/module_state.h"
#include "compilers/llvm_engine/pass_table.h"
#include "compilers/llvm_session/program_runs.h"
#include "programs/runs/cpu_host.h"
#include "programs/runs/run_spec.h"
#include "tests/llvm_session/support.h"

namespace kiln::llvm_session::testing {
namespace {

using runs::LeaseEvent;

// Events of every context in one line, in the order they happened (a grant
// is told after its host-wide lock is taken, a release before it goes).
struct SharedLog {
  std::mutex mutex;
  std::vector<std::pair<int, LeaseEvent>> events;  // (context, event)
  std::function<void(const LeaseEvent&)> observer(int context) {
    return [this, context](const LeaseEvent& event) {
      std::lock_guard lock(mutex);
      events.emplace_back(context, event);
    };
  }
};

std::shared_ptr<runs::MeasuringCpus> hostCpus(const std::filesystem::path& locks,
                                              unsigned measuring, SharedLog& log, int context) {
  auto host = runs::SystemCpuHost::create(locks);
  EXPECT_TRUE(host.ok()) << host.status().toString();
  runs::MeasuringCpusOptions options;
  options.cpus = measuring;
  options.observer = log.observer(context);
  return std::make_shared<runs::MeasuringCpus>(std::move(host).value(), options);
}

std::unique_ptr<llvm_engine::ModuleState> benchState(const std::string& name) {
  auto table = llvm_engine::PassTable::fromRegistry();
  EXPECT_TRUE(table.ok()) << table.status().toString();
  auto state =
      llvm_engine::ModuleState::fromBitcode(*table, readFile(benchPath(name)), benchUri(name));
  EXPECT_TRUE(state.ok()) << state.status().toString();
  return std::move(state).value();
}

// Checks that no CPU ever had two holders; returns how many grants there were.
std::size_t checkOneHolderPerCpu(const SharedLog& log) {
  std::map<int, std::pair<int, std::uint64_t>> holders;  // cpu -> (context, ticket)
  std::size_t grants = 0;
  for (const auto& [context, event] : log.events) {
    if (event.kind == LeaseEvent::Kind::kGranted) {
      ++grants;
      EXPECT_FALSE(holders.contains(event.cpu))
          << "CPU " << event.cpu << " granted to context " << context << " ticket " << event.ticket
          << " while context " << holders[event.cpu].first << " ticket "
          << holders[event.cpu].second << " held it";
      holders[event.cpu] = {context, event.ticket};
    } else if (event.kind == LeaseEvent::Kind::kReleased) {
      EXPECT_EQ(holders[event.cpu], std::make_pair(context, event.ticket));
      holders.erase(event.cpu);
    }
  }
  EXPECT_TRUE(holders.empty());
  return grants;
}

// Two measurements of `program` started together, each through `programs[i]`.
std::vector<Result<RuntimeMeasurement>> measureTogether(const std::vector<ProgramRuns*>& programs,
                                                        const std::string& program) {
  const runs::RunSpec spec = runs::kilnBenchRunSpec();
  const OperatorSettings settings;
  std::vector<std::unique_ptr<llvm_engine::ModuleState>> states;
  for (ProgramRuns* runs : programs) {
    states.push_back(benchState(program));
    // Built before: the measurements below overlap in their runs.
    EXPECT_TRUE(runs->build(*states.back(), spec).status.ok());
  }
  std::vector<Result<RuntimeMeasurement>> results(programs.size(), internalError("not measured"));
  std::latch start(static_cast<std::ptrdiff_t>(programs.size()));
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < programs.size(); ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        results[i] =
            programs[i]->measure(*states[i], spec, runs::StoppingRule{3, 3, 0}, settings.sandbox);
      });
    }
  }
  for (const auto& result : results) {
    EXPECT_TRUE(result.ok()) << result.status().toString();
    if (result.ok()) {
      EXPECT_EQ(result->samples.size(), 3u);
    }
  }
  return results;
}

class ConcurrentMeasurementTest : public ::testing::TestWithParam<unsigned> {};

TEST_P(ConcurrentMeasurementTest, TwoAtOnceInOneContextNeverShareACpu) {
  ScratchDir scratch("runtime-cpus-one");
  SharedLog log;
  const OperatorSettings settings;
  ProgramRuns programs(settings, scratch.path(),
                       hostCpus(scratch.path() / "locks", GetParam(), log, 0));
  auto results = measureTogether({&programs, &programs}, "matmul");
  EXPECT_EQ(checkOneHolderPerCpu(log), 2u);
  // Each measurement says the CPU it was granted.
  std::multiset<int> granted, said;
  for (const auto& [context, event] : log.events) {
    if (event.kind == LeaseEvent::Kind::kGranted) granted.insert(event.cpu);
  }
  for (const auto& result : results) {
    if (result.ok()) said.insert(result->cpu);
  }
  EXPECT_EQ(granted, said);
}

// 0: half the cores measure (one on a 2-CPU host: the second waits in
// line); 64: every core does (two at once on different CPUs).
INSTANTIATE_TEST_SUITE_P(MeasuringCores, ConcurrentMeasurementTest, ::testing::Values(0u, 64u));

TEST(HostWideCpuLocksTest, TwoContextsOnOneHostTakeTurns) {
  ScratchDir scratch("runtime-cpus-two");
  SharedLog log;
  const OperatorSettings settings;
  // Two contexts, as two worker processes would have, measuring on the same
  // CPU (one core each: the last), sharing the lock directory.
  ProgramRuns first(settings, scratch.path(), hostCpus(scratch.path() / "locks", 1, log, 1));
  ProgramRuns second(settings, scratch.path(), hostCpus(scratch.path() / "locks", 1, log, 2));
  measureTogether({&first, &second}, "matmul");
  EXPECT_EQ(checkOneHolderPerCpu(log), 2u);
}

std::vector<int> threadCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(::sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

TEST(HostWideCpuLocksTest, CompileWorkLeavesTheMeasuringCpuWhileItIsHeld) {
  ScratchDir scratch("runtime-cpus-compile");
  SharedLog log;
  auto cpus = hostCpus(scratch.path() / "locks", 0, log, 0);
  const std::vector<int> before = threadCpus();
  if (before.size() < 2) GTEST_SKIP() << "one CPU: compile work cannot leave it";
  {
    auto lease = cpus->acquire();
    ASSERT_TRUE(lease.ok()) << lease.status().toString();
    const std::vector<int> during = threadCpus();
    EXPECT_EQ(std::count(during.begin(), during.end(), lease->cpu()), 0)
        << "this thread may still run on measuring CPU " << lease->cpu();
    EXPECT_FALSE(during.empty());
  }
  EXPECT_EQ(threadCpus(), before);
}

// --- RuntimeStats through a session -------------------------------------

double number(const Value& stats, const std::string& key) {
  const Value* member = findInDict(stats, key);
  EXPECT_NE(member, nullptr) << key;
  if (member == nullptr) return -1;
  if (member->is<std::int64_t>()) return static_cast<double>(member->as<std::int64_t>());
  return member->as<double>();
}

Value observe(client::Session& session, const std::string& space) {
  auto result = session.step({}, std::vector<std::string>{space});
  EXPECT_TRUE(result.ok()) << result.status().toString();
  return result.ok() ? result->observations.at(0) : Value();
}

TEST(RuntimeStatsTest, TheSamplesAndWhatTheySay) {
  Cluster cluster = startCluster();
  ASSERT_NE(cluster.client, nullptr);
  auto session = cluster.client->startSession(llvmOptions(benchUri("sieve")));
  ASSERT_TRUE(session.ok()) << session.status().toString();
  client::Session& s = **session;
  // Appended after every space that was there before it.
  auto stats = s.observationIndex("RuntimeStats");
  auto graph = s.observationIndex("Programl");
  ASSERT_TRUE(stats.ok() && graph.ok());
  EXPECT_GT(*stats, *graph);

  ASSERT_TRUE(s.setParameter("llvm.runtime_runs", "4").ok());
  const Value fixed = observe(s, "RuntimeStats");
  const Value* samples = findInDict(fixed, "samples");
  ASSERT_NE(samples, nullptr);
  const auto& seconds = samples->as<DoubleTensor>().values;
  ASSERT_EQ(seconds.size(), 4u);
  EXPECT_EQ(number(fixed, "count"), 4);
  EXPECT_DOUBLE_EQ(number(fixed, "median"), runs::median(seconds));
  EXPECT_LE(number(fixed, "min"), number(fixed, "q1"));
  EXPECT_LE(number(fixed, "q1"), number(fixed, "median"));
  EXPECT_LE(number(fixed, "median"), number(fixed, "q3"));
  EXPECT_LE(number(fixed, "q3"), number(fixed, "max"));
  EXPECT_EQ(number(fixed, "ci_low"), number(fixed, "min"));  // 4 samples: [min, max]
  EXPECT_EQ(number(fixed, "target"), 0);
  EXPECT_EQ(number(fixed, "stable"), 0);
  EXPECT_GE(number(fixed, "cpu"), 0);

  // Repeat until stable: batches of 3 up to 9 runs, stopping once the
  // median is known within 50% (a loose target: any quiet run meets it).
  ASSERT_TRUE(s.setParameter("llvm.runtime_runs", "3").ok());
  ASSERT_TRUE(s.setParameter("llvm.runtime_max_runs", "9").ok());
  ASSERT_TRUE(s.setParameter("llvm.runtime_target", "0.5").ok());
  const Value stable = observe(s, "RuntimeStats");
  const double count = number(stable, "count");
  EXPECT_TRUE(count == 6 || count == 9) << count;  // 3 never qualify
  EXPECT_EQ(number(stable, "stable") == 1, number(stable, "relative_ci") <= 0.5);
  if (count == 6) {
    EXPECT_EQ(number(stable, "stable"), 1);
  }
  EXPECT_EQ(number(stable, "target"), 0.5);
  // Runtime follows the same rule.
  const Value runtime = observe(s, "Runtime");
  const auto n = runtime.as<DoubleTensor>().values.size();
  EXPECT_TRUE(n == 6 || n == 9) << n;
}

TEST(RuntimeStatsTest, AClientOnlyLowersTheOperatorsCeilingAndNamesWhatIsWrong) {
  Cluster cluster = startCluster(
      [](LocalClusterOptions& options) { options.worker.settings.runtimeMaxRuns = 20; });
  ASSERT_NE(cluster.client, nullptr);
  auto session = cluster.client->startSession(llvmOptions(benchUri("sieve")));
  ASSERT_TRUE(session.ok()) << session.status().toString();
  client::Session& s = **session;
  auto above = s.setParameter("llvm.runtime_max_runs", "21");
  ASSERT_FALSE(above.ok());
  EXPECT_NE(above.status().message().find("--runtime-max-runs"), std::string::npos);
  EXPECT_TRUE(s.setParameter("llvm.runtime_max_runs", "20").ok());
  for (const char* bad : {"1", "1.5", "-0.1", "x", "nan"}) {
    auto refused = s.setParameter("llvm.runtime_target", bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument) << bad;
  }
  auto kept = s.setParameter("llvm.runtime_target", "0.02");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(*kept, "0.02");
}

}  // namespace
}  // namespace kiln::llvm_session::testing
