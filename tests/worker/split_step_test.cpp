// Split-phase steps in a SessionHost without sockets: a fake session waits
// on a pipe the test writes to, the test plays the poll loop (appendWaits,
// onWaitReady, tick), and a held executor shows what went to the pool.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <deque>
#include <functional>
#include <thread>

#include "tests/worker/host_harness.h"

namespace kiln {
namespace {

// One live PipeSession at a time: the test's end of its pipe and what it saw.
struct PipeProbe {
  int writeFd = -1;
  Duration waitFor = std::chrono::seconds(30);  // the session's own deadline
  int applyCalls = 0;                           // the blocking path, never used here
  int finishCalls = 0;
  bool cancelled = false;
};
PipeProbe probe;

// Each action waits for one byte: 'o' applies it on the loop, 'e' ends the
// episode on the pool, EOF (cancel closes the writer) fails on the pool.
class PipeSession final : public CompilationSession, public SplitActions {
 public:
  explicit PipeSession(ServiceContext&) {}
  ~PipeSession() override {
    ::close(readFd_);
    if (probe.writeFd >= 0) ::close(probe.writeFd);
    probe.writeFd = -1;
  }
  std::vector<Space> actionSpaces() const override { return {Space::discrete("add", 10)}; }
  std::vector<Space> observationSpaces() const override {
    return {Space::int64Scalar("sum", {}), Space::int64Scalar("slow-sum", {})};
  }
  Status init(std::size_t, const Benchmark&) override {
    int fds[2];
    if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return internalError("pipe2 failed");
    readFd_ = fds[0];
    probe.writeFd = fds[1];
    return okStatus();
  }
  Status applyAction(const Value&, ActionOutcome&) override {
    ++probe.applyCalls;
    return internalError("a split session is never stepped through applyAction here");
  }
  Status computeObservation(std::size_t, Value& observation) override {
    observation = sum_;
    return okStatus();
  }
  SplitActions* splitActions() override { return this; }
  bool quickObservation(std::size_t index) const override { return index == 0; }
  Result<ActionProgress> beginAction(const Value& action, ActionOutcome&,
                                     ActionWait& wait) override {
    pendingAction_ = action.as<std::int64_t>();
    if (pendingAction_ == 9) return compileError("the fake compiler rejects 9");
    wait.fd = readFd_;
    wait.deadline = std::chrono::steady_clock::now() + probe.waitFor;
    return ActionProgress::kWaiting;
  }
  Result<ActionProgress> continueAction(ActionOutcome&, ActionWait& wait) override {
    char byte = 0;
    ssize_t n = ::read(readFd_, &byte, 1);
    if (n == 1 && byte == 'o') {
      sum_ += pendingAction_;
      return ActionProgress::kDone;
    }
    if (n == 1 && byte == 'e') return ActionProgress::kOnPool;
    if (n == 0) return ActionProgress::kOnPool;  // the writer is gone
    if (std::chrono::steady_clock::now() >= wait.deadline) {
      return compileError("the fake compiler hung");
    }
    return ActionProgress::kWaiting;
  }
  Status finishAction(ActionOutcome& outcome) override {
    ++probe.finishCalls;
    if (probe.cancelled) return compileError("the fake compiler was killed");
    sum_ += pendingAction_;
    outcome.endOfEpisode = true;
    return okStatus();
  }
  void cancel() override {
    probe.cancelled = true;
    if (probe.writeFd >= 0) ::close(probe.writeFd);
    probe.writeFd = -1;
  }

 private:
  int readFd_ = -1;
  std::int64_t sum_ = 0;
  std::int64_t pendingAction_ = 0;
};

using testsupport::HostHarness;

class SplitStepTest : public HostHarness {
 protected:
  SplitStepTest() : HostHarness(limits()) {
    probe = PipeProbe{};
    types_.add<PipeSession>("pipe");
    EXPECT_TRUE(types_.start(resources_).ok());
  }
  ~SplitStepTest() override { host_.clear(); }

  static HostLimits limits() {
    HostLimits l;
    l.loopWaits = true;
    l.leaseTimeout = std::chrono::seconds(10);
    return l;
  }

  std::uint64_t start() {
    send([](wire::Request::Builder r) {
      auto s = r.initStartSession();
      s.setSessionType("pipe");
      s.initBenchmark().setUri("benchmark://test/pipe");
    });
    runPool();
    auto reply = lastReply();
    EXPECT_TRUE(reply.isSessionStarted());
    return reply.getSessionStarted().getSessionId();
  }

  void step(std::uint64_t session, std::vector<std::int64_t> actions, std::uint32_t observation,
            std::uint32_t timeoutMs = 0) {
    send(
        [&](wire::Request::Builder r) {
          auto s = r.initStep();
          s.setSessionId(session);
          auto wireActions = s.initActions(actions.size());
          for (unsigned i = 0; i < actions.size(); ++i) toWire(Value(actions[i]), wireActions[i]);
          s.initObservationSpaces(1).set(0, observation);
        },
        /*client=*/1, timeoutMs);
  }

  std::vector<LoopWait> waits() const {
    std::vector<LoopWait> out;
    host_.appendWaits(out);
    return out;
  }

  // Writes `byte` for the session and wakes the host as the poll loop would.
  void compilerWrites(char byte) {
    ASSERT_EQ(::write(probe.writeFd, &byte, 1), 1);
    auto pending = waits();
    ASSERT_EQ(pending.size(), 1u);
    host_.onWaitReady(pending[0].ticket);
  }
};

TEST_F(SplitStepTest, WaitsOnTheLoopAndRepliesWithoutThePool) {
  std::uint64_t id = start();
  std::size_t before = sink_.replies.size();
  step(id, {4}, 0);
  EXPECT_EQ(sink_.replies.size(), before);  // waiting for the compiler
  EXPECT_TRUE(executor_.tasks.empty());
  auto pending = waits();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_GE(pending[0].fd, 0);
  host_.onWaitReady(pending[0].ticket);  // woken without input: keeps waiting
  EXPECT_EQ(sink_.replies.size(), before);
  compilerWrites('o');
  ASSERT_EQ(sink_.replies.size(), before + 1);
  EXPECT_TRUE(executor_.tasks.empty());
  auto stepped = lastReply();
  ASSERT_TRUE(stepped.isStepped()) << errorOf(stepped).toString();
  EXPECT_EQ(stepped.getStepped().getObservations()[0].getInt64(), 4);
  EXPECT_TRUE(waits().empty());
  EXPECT_EQ(probe.applyCalls, 0);
  EXPECT_EQ(host_.load().busySessions, 0u);
}

TEST_F(SplitStepTest, ActionsOfOneStepWaitInTurn) {
  std::uint64_t id = start();
  step(id, {2, 3}, 0);
  compilerWrites('o');
  EXPECT_EQ(waits().size(), 1u);  // the second action now waits
  compilerWrites('o');
  auto stepped = lastReply().getStepped();
  EXPECT_EQ(stepped.getActionsApplied(), 2u);
  EXPECT_EQ(stepped.getObservations()[0].getInt64(), 5);
}

// actionMicros is the compiler's share of a step: the wait for its answer is
// in it, the observation computed afterwards (on the pool here) is not;
// workerMicros has both, without the queueing between them.
TEST_F(SplitStepTest, ActionTimeCoversTheWaitForTheCompilerOnly) {
  std::uint64_t id = start();
  step(id, {1}, /*slow-sum*/ 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  compilerWrites('o');
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  runPool();
  auto stepped = lastReply();
  ASSERT_TRUE(stepped.isStepped()) << errorOf(stepped).toString();
  EXPECT_GE(stepped.getStepped().getActionMicros(), 30'000u);
  EXPECT_LT(stepped.getStepped().getActionMicros(), 200'000u);
  // The worker's whole time adds the observation's, not the 200 ms the step
  // waited in the queue for a slot.
  EXPECT_GE(stepped.getStepped().getWorkerMicros(), stepped.getStepped().getActionMicros());
  EXPECT_LT(stepped.getStepped().getWorkerMicros(),
            stepped.getStepped().getActionMicros() + 100'000u);
}

TEST_F(SplitStepTest, HeavyWorkGoesToThePool) {
  std::uint64_t id = start();
  std::size_t before = sink_.replies.size();
  step(id, {1}, /*slow-sum*/ 1);
  compilerWrites('o');
  EXPECT_EQ(sink_.replies.size(), before);  // the observation is not quick
  ASSERT_EQ(executor_.tasks.size(), 1u);
  runPool();
  EXPECT_EQ(lastReply().getStepped().getObservations()[0].getInt64(), 1);

  step(id, {6}, 0);
  compilerWrites('e');  // the end of the episode
  ASSERT_EQ(executor_.tasks.size(), 1u);
  runPool();
  auto stepped = lastReply();
  ASSERT_TRUE(stepped.isStepped()) << errorOf(stepped).toString();
  EXPECT_TRUE(stepped.getStepped().getEndOfEpisode());
  EXPECT_EQ(stepped.getStepped().getObservations()[0].getInt64(), 7);
  EXPECT_EQ(probe.finishCalls, 1);
}

TEST_F(SplitStepTest, BadActionIsRejectedBeforeAnyWait) {
  std::uint64_t id = start();
  step(id, {42}, 0);
  EXPECT_EQ(errorOf(lastReply()).code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(waits().empty());
  step(id, {9}, 0);  // the session refuses to begin it: a compile error ends the session
  EXPECT_EQ(errorOf(lastReply()).code(), ErrorCode::kCompileError);
  step(id, {1}, 0);
  EXPECT_EQ(errorOf(lastReply()).code(), ErrorCode::kNotFound);
}

TEST_F(SplitStepTest, SilentCompilerIsReportedAtTheSessionsDeadline) {
  probe.waitFor = Duration::zero();
  std::uint64_t id = start();
  step(id, {1}, 0);
  host_.tick();  // the wait's deadline has passed
  EXPECT_EQ(errorOf(lastReply()).code(), ErrorCode::kCompileError);
  EXPECT_TRUE(waits().empty());
  step(id, {1}, 0);
  EXPECT_EQ(errorOf(lastReply()).code(), ErrorCode::kNotFound);
}

TEST_F(SplitStepTest, OverrunRequestCancelsAndRetiresTheSession) {
  std::uint64_t id = start();
  step(id, {1}, 0, /*timeoutMs=*/100);
  clock_.advance(std::chrono::milliseconds(150));
  host_.tick();
  EXPECT_EQ(errorOf(lastReply()).code(), ErrorCode::kTimeout);
  EXPECT_TRUE(probe.cancelled);
  std::size_t answered = sink_.replies.size();
  auto pending = waits();
  ASSERT_EQ(pending.size(), 1u);
  host_.onWaitReady(pending[0].ticket);  // the killed compiler's EOF
  runPool();
  EXPECT_EQ(sink_.replies.size(), answered);  // the late failure is not sent
  step(id, {1}, 0);
  EXPECT_EQ(errorOf(lastReply()).code(), ErrorCode::kNotFound);
}

TEST_F(SplitStepTest, RequestsQueueBehindAWaitingStepAndClearDropsIt) {
  std::uint64_t id = start();
  step(id, {1}, 0);
  step(id, {2}, 0);
  EXPECT_EQ(host_.load().waitingRequests, 1u);
  compilerWrites('o');  // the first replies; the second begins and waits
  EXPECT_EQ(lastReply().getStepped().getObservations()[0].getInt64(), 1);
  EXPECT_EQ(waits().size(), 1u);
  host_.clear();
  EXPECT_TRUE(waits().empty());
}

}  // namespace
}  // namespace kiln
