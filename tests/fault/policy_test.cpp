// The fault-handling policies without processes: the replay guard's blame,
// slot tokens across children, the token-gated child queue, a pool that
// replaces a stuck thread (never more than its cap), and the noop type's
// fault parameters (refused unless the operator enabled them).
#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <functional>
#include <thread>

#include <kiln/kit/benchmark_cache.h>
#include "common/base/sanitizers.h"
#include "nesting/isolation_guard.h"
#include "nesting/isolation_tokens.h"
#include "worker/noop_session.h"
#include "worker/task_pool.h"

namespace kiln::nesting {
namespace {

using namespace std::chrono_literals;

TEST(ReplayGuard, ChainsDependOnOrderAndKind) {
  std::uint64_t a = extendChain(extendChain(0, 'T', "1"), 'T', "2");
  std::uint64_t b = extendChain(extendChain(0, 'T', "2"), 'T', "1");
  EXPECT_NE(a, b);
  EXPECT_NE(extendChain(0, 'T', "x"), extendChain(0, 'P', "x"));
  EXPECT_EQ(a, extendChain(extendChain(0, 'T', "1"), 'T', "2"));  // a replay names it again
}

TEST(ReplayGuard, ASuspectThatCrashesAloneIsPoisonedBystandersAreCleared) {
  ReplayGuard guard;
  // First death: three requests running, blame unknown.
  EXPECT_TRUE(guard.onDeath({11, 22, 0}).empty());
  EXPECT_TRUE(guard.suspect(11));
  EXPECT_TRUE(guard.suspect(22));
  EXPECT_FALSE(guard.poisoned(11));
  // Replayed alone, 22 completes: a bystander.
  guard.cleared(22);
  EXPECT_FALSE(guard.suspect(22));
  // 11 runs alone and the child dies again: certain blame.
  auto poisoned = guard.onDeath({11});
  ASSERT_EQ(poisoned, std::vector<std::uint64_t>{11});
  EXPECT_TRUE(guard.poisoned(11));
  EXPECT_FALSE(guard.suspect(11));
  // A death with a suspect among others proves nothing about it.
  EXPECT_TRUE(guard.onDeath({33}).empty());
  EXPECT_TRUE(guard.onDeath({33, 44}).empty());
  EXPECT_FALSE(guard.poisoned(33));
}

TEST(ReplayGuard, TablesAreBounded) {
  ReplayGuard guard(8);
  for (std::uint64_t i = 1; i <= 100; ++i) guard.onDeath({i, i + 1000});
  EXPECT_LE(guard.suspects(), 8u);
  EXPECT_TRUE(guard.suspect(1100));
  EXPECT_FALSE(guard.suspect(1));
}

TEST(SlotTokens, AtMostSlotsOutAndSharedByWeight) {
  SlotTokens tokens(2);
  tokens.setWeights({{"a", 3}, {"b", 1}});
  std::vector<std::string> granted;
  for (int i = 0; i < 40; ++i) {
    tokens.request("a", [&] { granted.push_back("a"); });
    tokens.request("b", [&] { granted.push_back("b"); });
  }
  tokens.pump();
  ASSERT_EQ(granted.size(), 2u);
  EXPECT_EQ(tokens.inUse(), 2u);
  // Every task runs 10 ms; count grants over the first 40 releases.
  std::size_t first = granted.size();
  for (int i = 0; i < 40; ++i) {
    tokens.release(granted[i], 10ms);
    tokens.pump();
  }
  long a = std::count(granted.begin() + first, granted.end(), "a");
  long b = std::count(granted.begin() + first, granted.end(), "b");
  EXPECT_EQ(a + b, 40);
  EXPECT_NEAR(static_cast<double>(a) / (a + b), 0.75, 0.1) << a << " vs " << b;
  EXPECT_LE(tokens.inUse(), 2u);
}

TEST(TokenGatedQueue, TasksWaitForTokensAndReportTheirTime) {
  Mailbox<TokenEvent> events;
  auto queue = std::make_unique<TokenGatedQueue>(events);
  TokenGatedQueue* gate = queue.get();
  std::atomic<int> ran{0};
  TaskPool pool(2, std::move(queue));
  pool.post("x", [&] { ++ran; });
  pool.post("x", [&] { ++ran; });
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(ran.load(), 0) << "ran without a token";
  std::vector<TokenEvent> seen;
  events.drain(seen);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_FALSE(seen[0].release);
  pool.withQueue([&](TaskQueue&) { gate->grant(1); });
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (ran.load() < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(ran.load(), 1);
  pool.withQueue([&](TaskQueue&) { gate->grant(1); });
  while (ran.load() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(ran.load(), 2);
  std::this_thread::sleep_for(20ms);
  seen.clear();
  events.drain(seen);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_TRUE(seen[0].release && seen[1].release);
}

TEST(TaskPoolStuck, AStuckThreadIsReplacedAndThePoolKeepsItsSize) {
  TaskPool pool(1);
  std::atomic<bool> release{false};
  std::atomic<int> done{0};
  pool.post("k", [&] {
    while (!release.load()) std::this_thread::sleep_for(1ms);
  });
  pool.post("k", [&] { ++done; });
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(done.load(), 0);  // the only thread is stuck
  EXPECT_EQ(pool.replaceStuck(10s).replaced, 0u);
  EXPECT_EQ(pool.replaceStuck(20ms).replaced, 1u);
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (done.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(done.load(), 1);
  EXPECT_EQ(pool.threads(), 1u);
  EXPECT_EQ(pool.stuck(), 1u);
  EXPECT_EQ(pool.busy(), 0u);
  release.store(true);
  while (pool.stuck() != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(pool.stuck(), 0u);
  pool.replaceStuck(20ms);  // reaps the finished one
  EXPECT_EQ(pool.threads(), 1u);
}

// Steps that never return must not grow the threads without bound: past
// the cap of written-off threads still running, a stuck thread keeps its
// slot, and the pool says so.
TEST(TaskPoolStuck, WrittenOffThreadsAreCappedAndTheCapIsReported) {
  TaskPool pool(1, std::make_unique<FifoTaskQueue>(), /*maxWrittenOff=*/1);
  std::atomic<bool> release{false};
  std::atomic<int> started{0}, done{0};
  auto hang = [&] {
    ++started;
    while (!release.load()) std::this_thread::sleep_for(1ms);
  };
  for (int i = 0; i < 3; ++i) pool.post("k", hang);
  pool.post("k", [&] { ++done; });
  auto waitUntil = [](const std::function<bool()>& done) {
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    return done();
  };
  ASSERT_TRUE(waitUntil([&] { return started.load() == 1; }));
  std::this_thread::sleep_for(30ms);
  StuckThreads first = pool.replaceStuck(20ms);
  EXPECT_EQ(first.replaced, 1u);
  EXPECT_EQ(first.held, 0u);
  EXPECT_TRUE(describeStuck(pool).empty());
  // The replacement takes the second hang, which stays: the cap is reached.
  ASSERT_TRUE(waitUntil([&] { return started.load() == 2; }));
  std::this_thread::sleep_for(30ms);
  for (int i = 0; i < 20; ++i) {
    StuckThreads again = pool.replaceStuck(20ms);
    EXPECT_EQ(again.replaced, 0u);
    EXPECT_EQ(again.held, 1u);
  }
  EXPECT_EQ(pool.stuck(), 1u);
  EXPECT_EQ(pool.threads(), 1u);
  EXPECT_EQ(pool.heldByStuck(), 1u);
  EXPECT_EQ(started.load(), 2);  // no third thread took the third hang
  std::string note = describeStuck(pool);
  EXPECT_NE(note.find("1 of this worker's 1 compile threads are stuck"), std::string::npos) << note;
  EXPECT_NE(note.find("the 1 stuck threads it already replaced still run"), std::string::npos)
      << note;
  // Once they return, everything left runs and nothing is held.
  release.store(true);
  ASSERT_TRUE(waitUntil([&] { return done.load() == 1; }));
  pool.replaceStuck(20ms);
  EXPECT_EQ(pool.heldByStuck(), 0u);
  EXPECT_TRUE(describeStuck(pool).empty());
}

// The noop type needs a context only to exist; its fault hooks need the
// operator's --enable-fault-injection.
struct NoopFixture {
  explicit NoopFixture(bool faultInjection = true) {
    resources.settings.faultInjection = faultInjection;
  }
  BenchmarkCache cache;
  SteadyClock clock;
  ContextResources resources{{}, cache, makeNullLogger("noop"), clock};
  ServiceContext context{resources};
};

TEST(NoopFaults, FaultHooksAreRefusedUnlessTheOperatorEnabledThem) {
  NoopFixture fixture(/*faultInjection=*/false);
  NoopSession session(fixture.context);
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"noop.crash_on_step", "segv"},
                                                        {"noop.crash_on_step", "abort"},
                                                        {"noop.hang_on_step", "forever"},
                                                        {"noop.hang_on_step", "until_cancelled"}}) {
    auto refused = session.handleParameter(key, value);
    ASSERT_FALSE(refused.ok()) << key;
    EXPECT_EQ(refused.status().code(), ErrorCode::kPermissionDenied);
    EXPECT_NE(refused.status().message().find("--enable-fault-injection"), std::string::npos)
        << refused.status().toString();
  }
  // Nothing was armed: the step runs.
  ActionOutcome outcome;
  EXPECT_TRUE(session.applyAction(Value(std::int64_t{1}), outcome).ok());
  // Load is not a fault.
  EXPECT_TRUE(session.handleParameter("noop.busy_us", "10").ok());

  NoopContext noopContext(fixture.resources);
  auto skew = noopContext.handleParameter("noop.skew_next_starts", "1");
  EXPECT_EQ(skew.status().code(), ErrorCode::kPermissionDenied) << skew.status().toString();
  EXPECT_FALSE(noopContext.takeSkew());

  NoopFixture allowed;
  NoopContext allowedContext(allowed.resources);
  EXPECT_TRUE(allowedContext.handleParameter("noop.skew_next_starts", "1").ok());
  EXPECT_TRUE(allowedContext.takeSkew());
}

TEST(NoopFaults, ParametersAreCheckedAndAHangEndsOnCancel) {
  NoopFixture fixture;
  NoopSession session(fixture.context);
  EXPECT_EQ(session.handleParameter("noop.crash_on_step", "sometimes").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(session.handleParameter("noop.hang_on_step", "1").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(*session.handleParameter("noop.crash_on_step", "off"), "off");
  ASSERT_TRUE(session.handleParameter("noop.hang_on_step", "until_cancelled").ok());
  ActionOutcome outcome;
  std::thread canceller([&] {
    std::this_thread::sleep_for(30ms);
    session.cancel();
  });
  auto started = std::chrono::steady_clock::now();
  Status stepped = session.applyAction(Value(std::int64_t{1}), outcome);
  canceller.join();
  EXPECT_EQ(stepped.code(), ErrorCode::kTimeout);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 25ms);
}

TEST(NoopFaults, CrashOnStepKillsTheProcessWithTheSignal) {
  NoopFixture fixture;
  EXPECT_EXIT(
      {
        // AddressSanitizer would turn the signal into a report and exit(1);
        // a compiler process without it dies of the signal itself.
        if (kUnderAddressSanitizer) std::signal(SIGSEGV, SIG_DFL);
        NoopSession session(fixture.context);
        (void)session.handleParameter("noop.crash_on_step", "segv");
        ActionOutcome outcome;
        (void)session.applyAction(Value(std::int64_t{1}), outcome);
      },
      ::testing::KilledBySignal(SIGSEGV), "");
  EXPECT_EXIT(
      {
        NoopSession session(fixture.context);
        (void)session.handleParameter("noop.crash_on_step", "abort");
        ActionOutcome outcome;
        (void)session.applyAction(Value(std::int64_t{1}), outcome);
      },
      ::testing::KilledBySignal(SIGABRT), "");
}

}  // namespace
}  // namespace kiln::nesting
