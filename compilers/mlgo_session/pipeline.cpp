// Dependency resolution, job specs and the job runner. The steps themselves
// live in pipeline_steps.cpp.
#include "compilers/mlgo_session/pipeline.h"

#include <fmt/format.h>
#include <llvm/Support/JSON.h>

#include <algorithm>

namespace kiln::mlgo_session {

namespace {

constexpr std::size_t kMaxSpecBytes = 64 << 10;
constexpr std::size_t kMaxSteps = 32;
constexpr std::size_t kMaxFlags = 64;
constexpr std::int64_t kMaxTimeoutMs = 3'600'000;
constexpr std::int64_t kMaxMemoryMb = 1 << 20;

std::int64_t millisSince(const Clock& clock, TimePoint start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.now() - start).count();
}

Result<std::unique_ptr<Step>> parseStep(const llvm::json::Value& value, std::size_t index,
                                        const JobPasses& passes) {
  const llvm::json::Object* object = value.getAsObject();
  std::string where = fmt::format("steps[{}]", index);
  if (object == nullptr) return invalidArgument(where + " must be an object");
  auto kind = object->getString("kind");
  if (!kind) return invalidArgument(where + ".kind must be a string");
  for (const auto& [key, ignored] : *object) {
    if (key != "kind" && key != "flags") {
      return invalidArgument(fmt::format("{} has an unknown field \"{}\"", where, key.str()));
    }
  }
  const llvm::json::Value* flagsValue = object->get("flags");
  if (*kind == "compile") {
    std::vector<std::string> flags;
    if (flagsValue != nullptr) {
      const llvm::json::Array* array = flagsValue->getAsArray();
      if (array == nullptr) return invalidArgument(where + ".flags must be an array of strings");
      if (array->size() > kMaxFlags) {
        return invalidArgument(fmt::format("{}.flags has {} flags, over the limit of {}", where,
                                           array->size(), kMaxFlags));
      }
      for (const llvm::json::Value& flag : *array) {
        auto text = flag.getAsString();
        if (!text) return invalidArgument(where + ".flags must be an array of strings");
        Status allowed = allowedFlag(*text, passes);
        if (!allowed.ok()) return invalidArgument(where + ": " + allowed.message());
        flags.push_back(text->str());
      }
    }
    return makeCompileStep(std::move(flags));
  }
  if (flagsValue != nullptr) {
    return invalidArgument(fmt::format("{}: only compile steps take flags", where));
  }
  if (*kind == "inline-default") return makeInlineDefaultStep();
  if (*kind == "native-size") return makeNativeSizeStep();
  if (*kind == "training-log") return makeTrainingLogStep();
  return invalidArgument(fmt::format(
      "{}.kind \"{}\" is not a step (known: compile, inline-default, native-size, training-log)",
      where, kind->str()));
}

Result<std::int64_t> boundedInt(const llvm::json::Object& object, llvm::StringRef key,
                                std::int64_t max) {
  auto number = object.getInteger(key);
  if (!number || *number < 1 || *number > max) {
    return invalidArgument(fmt::format("\"{}\" must be an integer in [1, {}]", key.str(), max));
  }
  return *number;
}

}  // namespace

std::string_view dependencyName(Dependency dependency) {
  switch (dependency) {
    case Dependency::kBenchmark:
      return "benchmark";
    case Dependency::kWorkDirectory:
      return "work directory";
    case Dependency::kOpt:
      return "opt";
    case Dependency::kLlc:
      return "llc";
    case Dependency::kClock:
      return "clock";
    case Dependency::kDeadline:
      return "deadline";
    case Dependency::kLimits:
      return "limits";
    case Dependency::kKillSwitch:
      return "kill switch";
  }
  return "unknown";
}

void Dependencies::provide(Dependency dependency, Provider provider) {
  providers_[dependency] = std::move(provider);
}

Dependencies Dependencies::overriddenBy(const Dependencies& overrides) const {
  Dependencies merged = *this;
  for (const auto& [dependency, provider] : overrides.providers_) {
    merged.providers_[dependency] = provider;
  }
  return merged;
}

Dependencies Dependencies::narrowedBy(Dependency dependency, Provider narrow) const {
  Dependencies narrowed = *this;
  auto found = providers_.find(dependency);
  Provider ours = found == providers_.end() ? Provider() : found->second;
  narrowed.providers_[dependency] = [ours = std::move(ours),
                                     narrow = std::move(narrow)](Resolved& r) -> Status {
    if (ours) KILN_RETURN_IF_ERROR(ours(r));
    return narrow(r);
  };
  return narrowed;
}

Result<Resolved> Dependencies::resolve(const std::vector<Dependency>& needs) const {
  Resolved resolved;
  for (Dependency dependency : needs) {
    auto it = providers_.find(dependency);
    if (it == providers_.end()) {
      return notFound(
          fmt::format("no provider for the dependency \"{}\"", dependencyName(dependency)));
    }
    KILN_RETURN_IF_ERROR(it->second(resolved));
  }
  return resolved;
}

Status allowedFlag(std::string_view flag, const JobPasses& passes) {
  static constexpr std::string_view kLevels[] = {"-O0", "-O1", "-O2", "-O3", "-Os", "-Oz"};
  for (std::string_view level : kLevels) {
    if (flag == level) return okStatus();
  }
  auto valueAfter = [&](std::string_view prefix) -> std::optional<std::string_view> {
    if (!flag.starts_with(prefix)) return std::nullopt;
    return flag.substr(prefix.size());
  };
  if (auto pipeline = valueAfter("-passes=")) {
    if (pipeline->empty() || pipeline->size() > 4096) {
      return invalidArgument("flag \"-passes=\" needs a pass pipeline of 1 to 4096 characters");
    }
    return passes.check(*pipeline);
  }
  if (auto threshold = valueAfter("-inline-threshold=")) {
    bool digits = !threshold->empty() && threshold->size() <= 9;
    for (std::size_t i = 0; i < threshold->size(); ++i) {
      char c = (*threshold)[i];
      digits = digits && (std::isdigit(static_cast<unsigned char>(c)) || (i == 0 && c == '-'));
    }
    if (digits) return okStatus();
    return invalidArgument("flag \"-inline-threshold=\" needs an integer");
  }
  std::string shown(flag.substr(0, 80));
  return invalidArgument("flag \"" + shown +
                         "\" is not allowed in a job (allowed: -O0..-O3, -Os, -Oz, "
                         "-passes=<pipeline>, -inline-threshold=<n>)");
}

Result<JobSpec> parseJobSpec(std::string_view json, const JobPasses& passes) {
  if (json.size() > kMaxSpecBytes) {
    return invalidArgument(
        fmt::format("the job spec is {} bytes, over the limit of {}", json.size(), kMaxSpecBytes));
  }
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(llvm::StringRef(json));
  if (!parsed) {
    return invalidArgument("the job spec is not JSON: " + llvm::toString(parsed.takeError()));
  }
  const llvm::json::Object* object = parsed->getAsObject();
  if (object == nullptr) return invalidArgument("the job spec must be a JSON object");
  JobSpec spec;
  spec.steps.push_back(makeLoadStep());
  for (const auto& [key, value] : *object) {
    if (key == "steps") continue;
    if (key == "timeout_ms") {
      KILN_ASSIGN_OR_RETURN(std::int64_t ms, boundedInt(*object, key, kMaxTimeoutMs));
      spec.timeout = std::chrono::milliseconds(ms);
    } else if (key == "memory_limit_mb") {
      KILN_ASSIGN_OR_RETURN(std::int64_t mb, boundedInt(*object, key, kMaxMemoryMb));
      spec.memoryLimitBytes = static_cast<std::uint64_t>(mb) << 20;
    } else {
      return invalidArgument(fmt::format(
          "the job spec has an unknown field \"{}\" (known: steps, timeout_ms, memory_limit_mb)",
          key.str()));
    }
  }
  const llvm::json::Array* steps = object->getArray("steps");
  if (steps == nullptr || steps->empty()) {
    return invalidArgument("the job spec needs \"steps\": a non-empty array");
  }
  if (steps->size() > kMaxSteps) {
    return invalidArgument(
        fmt::format("the job has {} steps, over the limit of {}", steps->size(), kMaxSteps));
  }
  for (std::size_t i = 0; i < steps->size(); ++i) {
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<Step> step, parseStep((*steps)[i], i, passes));
    spec.steps.push_back(std::move(step));
  }
  return spec;
}

Result<JobOutputs> runJob(JobSpec& spec, const Dependencies& dependencies) {
  KILN_ASSIGN_OR_RETURN(Resolved timing, dependencies.resolve({Dependency::kClock}));
  if (timing.clock == nullptr) return invalidArgument("the clock dependency resolved to nothing");
  const Clock& clock = *timing.clock;
  TimePoint start = clock.now();
  // The job's own limits bind last, and only where they are tighter: a
  // client may shorten the operator's deadline or lower its memory limit
  // (none = no limit), never extend either.
  Dependencies bound = dependencies;
  if (spec.timeout) {
    TimePoint deadline = start + *spec.timeout;
    bound = bound.narrowedBy(Dependency::kDeadline, [deadline](Resolved& r) {
      r.deadline = r.deadline ? std::min(*r.deadline, deadline) : deadline;
      return okStatus();
    });
  }
  if (spec.memoryLimitBytes) {
    std::uint64_t limit = *spec.memoryLimitBytes;
    bound = bound.narrowedBy(Dependency::kLimits, [limit](Resolved& r) {
      r.memoryLimitBytes = r.memoryLimitBytes ? std::min(*r.memoryLimitBytes, limit) : limit;
      return okStatus();
    });
  }

  JobOutputs outputs;
  std::filesystem::path current;
  for (std::size_t i = 0; i < spec.steps.size(); ++i) {
    Step& step = *spec.steps[i];
    TimePoint stepStart = clock.now();
    Result<Resolved> deps = bound.resolve(step.needs());
    if (!deps.ok()) {
      return Status(deps.status().code(),
                    fmt::format("step {} ({}): {}", i, step.name(), deps.status().message()));
    }
    if (deps->deadline && clock.now() >= *deps->deadline) {
      return timeoutError(fmt::format("the job ran out of time before step {} ({}) after {} ms", i,
                                      step.name(), millisSince(clock, start)));
    }
    Result<std::filesystem::path> produced = step.run(current, *deps, outputs);
    std::int64_t took = millisSince(clock, stepStart);
    if (!produced.ok()) {
      outputs.log += fmt::format("{} failed after {} ms: {}\n", step.name(), took,
                                 produced.status().message());
      return Status(produced.status().code(),
                    fmt::format("step {} ({}) failed: {}\njob log:\n{}", i, step.name(),
                                produced.status().message(), outputs.log));
    }
    current = *produced;
    outputs.log += fmt::format("{} ok in {} ms\n", step.name(), took);
  }
  return outputs;
}

}  // namespace kiln::mlgo_session
