#include "worker/noop_session.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

namespace kiln {

namespace {

enum Observation : std::size_t {
  kSum,
  kSteps,
  kBytes16,
  kBytes4K,
  kTensor,
  kBenchmark,
  kRewardSum,
  kCount
};

constexpr std::size_t kLargestPayload = 4096;

// Byte i of a payload is (seed + i) mod 256: every payload is a window into
// one repeating ramp, so making one is a single copy. A noop step measures
// kiln's overhead; filling 4 KiB byte by byte would add a microsecond to it.
const std::string& payloadRamp() {
  static const std::string ramp = [] {
    std::string bytes(kLargestPayload + 256, '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i & 0xff);
    return bytes;
  }();
  return ramp;
}

Bytes payload(std::size_t size, std::int64_t seed) {
  Bytes bytes;
  bytes.data.assign(payloadRamp(), static_cast<std::uint64_t>(seed) & 0xff, size);
  return bytes;
}

}  // namespace

std::vector<Space> NoopSession::actionSpaces() const {
  std::vector<std::string> names;
  for (std::int64_t i = 0; i < kAddActions; ++i) names.push_back(fmt::format("add-{}", i));
  names.push_back("no-effect");
  names.push_back("end-episode");
  return {Space::namedDiscrete("noop", std::move(names))};
}

std::vector<Space> NoopSession::observationSpaces() const {
  std::vector<Space> spaces(kCount);
  spaces[kSum] = Space::int64Scalar("Sum", {0, std::nullopt});
  spaces[kSteps] = Space::int64Scalar("Steps", {0, std::nullopt});
  spaces[kBytes16] = Space::bytes("Bytes16", {16, 16});
  spaces[kBytes4K] = Space::bytes("Bytes4K", {4096, 4096});
  spaces[kTensor] = Space::int64Box("Tensor", {4}, {});
  spaces[kBenchmark] = Space::string("Benchmark");
  spaces[kSum].defaultValue = std::int64_t{0};
  // The sum gained since the session last computed this space: a reward
  // with CompilerGym's semantics, so that restores are tested on rewards
  // without a compiler.
  spaces[kRewardSum] = Space::int64Scalar("Reward:Sum", {});
  spaces[kRewardSum].sinceLastObserved = true;
  return spaces;
}

Result<std::string> NoopContext::handleParameter(const std::string& key, const std::string& value) {
  if (key != "noop.skew_next_starts") return ServiceContext::handleParameter(key, value);
  KILN_RETURN_IF_ERROR(checkFaultInjection(settings(), key));
  char* end = nullptr;
  const long count = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || count < 0 || count > 1000) {
    return invalidArgument(
        fmt::format("noop.skew_next_starts wants a count in [0, 1000], got '{}'", value));
  }
  skewedStarts_.store(static_cast<int>(count));
  return std::to_string(count);
}

bool NoopContext::takeSkew() {
  int left = skewedStarts_.load();
  while (left > 0 && !skewedStarts_.compare_exchange_weak(left, left - 1)) {
  }
  return left > 0;
}

Status NoopContext::shutdown() {
  logger().debug("noop context shut down in process {}", ::getpid());
  return okStatus();
}

Status NoopSession::init(std::size_t actionSpaceIndex, const Benchmark& benchmark) {
  benchmarkUri_ = benchmark.uri;
  if (noopContext_ != nullptr && noopContext_->takeSkew()) sum_ = 1;
  return okStatus();
}

Status NoopSession::initAsFork(const CompilationSession& parent) {
  const auto& other = static_cast<const NoopSession&>(parent);
  benchmarkUri_ = other.benchmarkUri_;
  sum_ = other.sum_;
  steps_ = other.steps_;
  rewardedSum_ = other.rewardedSum_;
  busyMicros_ = other.busyMicros_;
  fault_ = other.fault_;
  return okStatus();
}

Status NoopSession::applyAction(const Value& action, ActionOutcome& outcome) {
  std::int64_t index = action.as<std::int64_t>();
  switch (fault_) {
    case Fault::kNone:
      break;
    case Fault::kSegv:
      // raise() rather than a bad pointer: the same signal, without undefined
      // behaviour an optimiser could remove.
      std::raise(SIGSEGV);
      break;
    case Fault::kAbort:
      std::abort();
    case Fault::kHangUntilCancelled:
      while (!cancelled_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return timeoutError("noop.hang_on_step: the step was cancelled");
    case Fault::kHangForever:
      // A compiler stuck in a loop that ignores cancellation.
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  if (busyMicros_ > 0) {
    // Spin rather than sleep: the step must occupy a CPU like real compile work.
    auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(busyMicros_);
    while (std::chrono::steady_clock::now() < until && !cancelled_.load()) {
    }
  }
  ++steps_;
  if (index < kAddActions) {
    sum_ += index;
    outcome.actionHadNoEffect = index == 0;
  } else if (index == kNoEffectAction) {
    outcome.actionHadNoEffect = true;
  } else if (index == kEndAction) {
    outcome.endOfEpisode = true;
  }
  return okStatus();
}

Status NoopSession::computeObservation(std::size_t spaceIndex, Value& observation) {
  switch (spaceIndex) {
    case kSum:
      observation = sum_;
      return okStatus();
    case kSteps:
      observation = steps_;
      return okStatus();
    case kBytes16:
      observation = payload(16, sum_);
      return okStatus();
    case kBytes4K:
      observation = payload(4096, sum_);
      return okStatus();
    case kTensor:
      observation = Int64Tensor{{4}, {sum_, steps_, sum_ * 2, steps_ * 2}};
      return okStatus();
    case kBenchmark:
      observation = benchmarkUri_;
      return okStatus();
    case kRewardSum:
      observation = sum_ - rewardedSum_;
      rewardedSum_ = sum_;
      return okStatus();
    default:
      return notFound(fmt::format("noop has no observation space {}", spaceIndex));
  }
}

Result<std::string> NoopSession::handleParameter(const std::string& key, const std::string& value) {
  if (key == "noop.busy_us") {
    char* end = nullptr;
    long long micros = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || micros < 0 || micros > 10'000'000) {
      return invalidArgument(
          fmt::format("noop.busy_us wants microseconds in [0, 10000000], got '{}'", value));
    }
    busyMicros_ = micros;
    return std::to_string(busyMicros_);
  }
  if (key == "noop.crash_on_step" || key == "noop.hang_on_step") {
    // They take down or stall the process: the operator's call, not a client's.
    KILN_RETURN_IF_ERROR(checkFaultInjection(context_.settings(), key));
  }
  if (key == "noop.crash_on_step") {
    if (value == "segv") {
      fault_ = Fault::kSegv;
    } else if (value == "abort") {
      fault_ = Fault::kAbort;
    } else if (value.empty() || value == "off") {
      fault_ = Fault::kNone;
    } else {
      return invalidArgument(
          fmt::format("noop.crash_on_step wants 'segv', 'abort' or 'off', got '{}'", value));
    }
    return value.empty() ? std::string("off") : value;
  }
  if (key == "noop.hang_on_step") {
    if (value == "until_cancelled") {
      fault_ = Fault::kHangUntilCancelled;
    } else if (value == "forever") {
      fault_ = Fault::kHangForever;
    } else if (value.empty() || value == "off") {
      fault_ = Fault::kNone;
    } else {
      return invalidArgument(fmt::format(
          "noop.hang_on_step wants 'until_cancelled', 'forever' or 'off', got '{}'", value));
    }
    return value.empty() ? std::string("off") : value;
  }
  if (key == "noop.sum") return std::to_string(sum_);
  return notFound(fmt::format("noop has no session parameter '{}'", key));
}

}  // namespace kiln
