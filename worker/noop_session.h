// The `noop` session type: answers immediately, so that benchmarks measure the
// orchestration itself and tests exercise every part of the protocol (end of
// episode, no-effect actions, forks, parameters, payload sizes, busy steps).
#pragma once

#include <atomic>
#include <cstdint>

#include <kiln/kit/compilation_session.h>
#include <kiln/kit/service_context.h>

namespace kiln {

// The `noop` type's per-process state: fault injection for replay tests.
class NoopContext final : public ServiceContext {
 public:
  using ServiceContext::ServiceContext;
  // "noop.skew_next_starts" = N (worker parameter): the next N sessions
  // started in this process begin with Sum 1 instead of 0, as a compiler
  // that is not deterministic would, so a replay here diverges. Permission
  // denied unless the operator allowed fault injection.
  Result<std::string> handleParameter(const std::string& key, const std::string& value) override;
  // True (and one fewer left) if the session starting now is skewed.
  bool takeSkew();
  // Says so in the log (debug), with its process: tests see that a clean
  // stop ran it, in `kiln nest`'s children too.
  Status shutdown() override;

 private:
  std::atomic<int> skewedStarts_{0};
};

class NoopSession final : public CompilationSession {
 public:
  // Action indices of the `noop` action space.
  static constexpr std::int64_t kAddActions = 8;      // 0..7 add their index to the sum
  static constexpr std::int64_t kNoEffectAction = 8;  // changes nothing
  static constexpr std::int64_t kEndAction = 9;       // ends the episode
  static constexpr std::int64_t kActionCount = 10;

  explicit NoopSession(ServiceContext& context) : context_(context) {}
  explicit NoopSession(NoopContext& context) : context_(context), noopContext_(&context) {}

  std::vector<Space> actionSpaces() const override;
  std::vector<Space> observationSpaces() const override;
  // Its whole state is (sum, steps), which the Tensor observation holds.
  ReplayPolicy replayPolicy() const override { return {true, "Tensor"}; }
  std::string compilerVersion() const override { return "noop 1"; }

  Status init(std::size_t actionSpaceIndex, const Benchmark& benchmark) override;
  Status initAsFork(const CompilationSession& parent) override;
  Status applyAction(const Value& action, ActionOutcome& outcome) override;
  Status computeObservation(std::size_t spaceIndex, Value& observation) override;
  Result<std::string> handleParameter(const std::string& key, const std::string& value) override;
  void cancel() override { cancelled_.store(true); }

  // What the next step does besides its action (fault tests; session
  // parameters, so that a replay reproduces them): raise a signal that kills
  // the process, or never return (until cancel(), or at all). The parameters
  // noop.crash_on_step and noop.hang_on_step answer permission denied unless
  // the operator allowed fault injection (--enable-fault-injection);
  // noop.busy_us (at most 10 s of CPU per action, stopped by cancel()) is
  // load, not a fault, and is always allowed.
  enum class Fault { kNone, kSegv, kAbort, kHangUntilCancelled, kHangForever };

 private:
  ServiceContext& context_;
  NoopContext* noopContext_ = nullptr;  // none when hosted with a plain context
  std::string benchmarkUri_;
  std::int64_t sum_ = 0;
  std::int64_t steps_ = 0;
  std::int64_t rewardedSum_ = 0;  // the sum when Reward:Sum was last computed
  std::int64_t busyMicros_ = 0;   // a calibrated busy wait per action (load tests)
  Fault fault_ = Fault::kNone;
  std::atomic<bool> cancelled_{false};
};

}  // namespace kiln
