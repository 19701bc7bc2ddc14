#include "compilers/llvm_session/runtime_observation.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include <kiln/parameter_value.h>

namespace kiln::llvm_session {
namespace {

constexpr std::string_view kRuns = "llvm.runtime_runs";
constexpr std::string_view kMaxRuns = "llvm.runtime_max_runs";
constexpr std::string_view kTarget = "llvm.runtime_target";

Result<unsigned> runCount(const std::string& key, const std::string& value, std::uint32_t ceiling,
                          std::uint64_t least) {
  KILN_ASSIGN_OR_RETURN(std::uint64_t runs,
                        parseUnsignedParameter(key, value, "a whole number of runs"));
  if (runs < least) return invalidArgument(fmt::format("{} must be at least {}", key, least));
  if (runs > ceiling) {
    return aboveCeiling(key, runs, ceiling, "runs", "the operator's --runtime-max-runs");
  }
  return static_cast<unsigned>(runs);
}

}  // namespace

runs::StoppingRule RuntimeSettings::rule(std::uint32_t ceiling) const {
  const unsigned batch = std::min<unsigned>(runs, ceiling);
  if (target <= 0) return {batch, batch, 0};
  const unsigned most = maxRuns == 0 ? ceiling : std::min<unsigned>(maxRuns, ceiling);
  return {batch, std::max(most, batch), target};
}

bool isRuntimeParameter(const std::string& key) {
  return key == kRuns || key == kMaxRuns || key == kTarget;
}

Result<std::string> setRuntimeParameter(RuntimeSettings& settings, const std::string& key,
                                        const std::string& value, std::uint32_t ceiling) {
  if (key == kRuns) {
    KILN_ASSIGN_OR_RETURN(settings.runs, runCount(key, value, ceiling, 1));
    return std::to_string(settings.runs);
  }
  if (key == kMaxRuns) {
    KILN_ASSIGN_OR_RETURN(settings.maxRuns, runCount(key, value, ceiling, 0));
    return std::to_string(settings.maxRuns);
  }
  if (key != kTarget) return notFound(fmt::format("'{}' is no runtime parameter", key));
  double target = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), target);
  if (error != std::errc() || end != value.data() + value.size() || !std::isfinite(target) ||
      target < 0 || target >= 1) {
    return invalidArgument(fmt::format(
        "{} is the median's confidence half-width relative to the median that stops the runs, "
        "a number in [0, 1) (0: no target; e.g. 0.02), got '{}'",
        key, value));
  }
  settings.target = target;
  return fmt::format("{}", settings.target);
}

Space runtimeStatsSpace() {
  const DoubleRange seconds{0.0, std::nullopt};
  const DoubleRange ratio{0.0, std::nullopt};
  std::vector<Space> members;
  members.push_back(Space::doubleBox("samples", {-1}, seconds));
  members.push_back(Space::int64Scalar("count", {0, std::nullopt}));
  for (const char* name : {"median", "mean", "stdev", "min", "max", "q1", "q3", "iqr"}) {
    members.push_back(Space::doubleScalar(name, seconds));
  }
  members.push_back(Space::doubleScalar("relative_iqr", ratio));
  members.push_back(Space::doubleScalar("ci_low", seconds));
  members.push_back(Space::doubleScalar("ci_high", seconds));
  members.push_back(Space::doubleScalar("relative_ci", ratio));
  members.push_back(Space::doubleScalar("target", {0.0, 1.0}));
  members.push_back(Space::int64Scalar("stable", {0, 1}));
  members.push_back(Space::int64Scalar("cpu", {-1, std::nullopt}));
  members.push_back(Space::doubleScalar("queued_s", seconds));
  return Space::dict("RuntimeStats", std::move(members));
}

Value secondsValue(const std::vector<double>& seconds) {
  Tensor<double> tensor;
  tensor.shape = {static_cast<std::int64_t>(seconds.size())};
  tensor.values = seconds;
  return Value(std::move(tensor));
}

Value runtimeStatsValue(const RuntimeMeasurement& measured, const runs::StoppingRule& rule) {
  const runs::RuntimeSummary& s = measured.summary;
  ValueDict dict;
  dict.push_back({"samples", secondsValue(measured.samples)});
  dict.push_back({"count", Value(static_cast<std::int64_t>(s.count))});
  dict.push_back({"median", Value(s.median)});
  dict.push_back({"mean", Value(s.mean)});
  dict.push_back({"stdev", Value(s.stdev)});
  dict.push_back({"min", Value(s.min)});
  dict.push_back({"max", Value(s.max)});
  dict.push_back({"q1", Value(s.q1)});
  dict.push_back({"q3", Value(s.q3)});
  dict.push_back({"iqr", Value(s.iqr())});
  dict.push_back({"relative_iqr", Value(s.relativeIqr())});
  dict.push_back({"ci_low", Value(s.ciLow)});
  dict.push_back({"ci_high", Value(s.ciHigh)});
  dict.push_back({"relative_ci", Value(s.relativeCiHalfWidth())});
  dict.push_back({"target", Value(rule.targetRelativeHalfWidth)});
  dict.push_back({"stable", Value(std::int64_t{measured.stable ? 1 : 0})});
  dict.push_back({"cpu", Value(std::int64_t{measured.cpu})});
  dict.push_back({"queued_s", Value(std::chrono::duration<double>(measured.queued).count())});
  return Value(std::move(dict));
}

}  // namespace kiln::llvm_session
