// Each job runs in its own directory under the session's, removed afterwards,
// so a failed or cancelled job leaves no file behind.
#include "compilers/mlgo_session/compile_session.h"

#include <fmt/format.h>

namespace kiln::mlgo_session {

namespace {
enum Observation : std::size_t { kNativeSize, kTrainingLog, kJobLog, kCount };
constexpr std::int64_t kMaxSpecBytes = 64 << 10;
}  // namespace

Dependencies contextDependencies(const MlgoConfig& config, const Clock& clock,
                                 std::filesystem::path workDirectory,
                                 std::shared_ptr<const std::string> benchmark,
                                 KillSwitch& killSwitch, ModuleToolFlags moduleFlags) {
  Dependencies deps;
  deps.provide(Dependency::kBenchmark, [benchmark, moduleFlags](Resolved& r) {
    r.benchmark = benchmark;
    r.moduleFlags = moduleFlags;
    return okStatus();
  });
  deps.provide(Dependency::kWorkDirectory, [workDirectory](Resolved& r) {
    r.workDirectory = workDirectory;
    return okStatus();
  });
  deps.provide(Dependency::kOpt, [opt = config.opt](Resolved& r) {
    r.opt = opt;
    return okStatus();
  });
  deps.provide(Dependency::kLlc, [llc = config.llc](Resolved& r) {
    r.llc = llc;
    return okStatus();
  });
  deps.provide(Dependency::kClock, [&clock](Resolved& r) {
    r.clock = &clock;
    return okStatus();
  });
  // Bound late: the deadline counts from when a step asks, unless the job set one.
  deps.provide(Dependency::kDeadline, [&clock, timeout = config.compileTimeout](Resolved& r) {
    r.clock = &clock;
    r.deadline = clock.now() + timeout;
    return okStatus();
  });
  deps.provide(Dependency::kLimits, [limit = config.memoryLimitBytes](Resolved& r) {
    r.memoryLimitBytes = limit;
    return okStatus();
  });
  deps.provide(Dependency::kKillSwitch, [&killSwitch](Resolved& r) {
    r.killSwitch = &killSwitch;
    return okStatus();
  });
  return deps;
}

MlgoCompileSession::~MlgoCompileSession() {
  if (!directory_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
  }
}

std::vector<Space> MlgoCompileSession::actionSpaces() const {
  return {Space::string("JobSpec", {1, kMaxSpecBytes})};
}

std::vector<Space> MlgoCompileSession::observationSpaces() const {
  std::vector<Space> spaces(kCount);
  spaces[kNativeSize] = Space::int64Scalar("NativeSize", {0, std::nullopt});
  spaces[kNativeSize].platformDependent = true;
  spaces[kTrainingLog] = Space::bytes("TrainingLog");
  spaces[kJobLog] = Space::string("JobLog");
  return spaces;
}

Status MlgoCompileSession::init(std::size_t, const Benchmark& benchmark) {
  if (!benchmark.program || benchmark.program->empty()) {
    return invalidArgument("mlgo-compile needs a benchmark with LLVM IR or bitcode; '" +
                           benchmark.uri + "' has no program");
  }
  // A job may measure an object file as sent (native-size); everything else
  // is a module that opt or llc will read, checked first.
  if (!benchmark.program->starts_with("\x7f"
                                      "ELF")) {
    KILN_RETURN_IF_ERROR(context_.checkModule(benchmark));
  }
  config_ = context_.config();
  benchmark_ = benchmark;
  KILN_ASSIGN_OR_RETURN(moduleFlags_, context_.moduleFlags(benchmark));
  KILN_ASSIGN_OR_RETURN(directory_, context_.makeSessionDirectory("mlgo-compile"));
  return okStatus();
}

Status MlgoCompileSession::applyAction(const Value& action, ActionOutcome& outcome) {
  outcome.endOfEpisode = true;
  if (done_) {
    return invalidArgument("this mlgo-compile session already ran its job; start a new one");
  }
  KILN_ASSIGN_OR_RETURN(JobSpec spec, parseJobSpec(action.as<std::string>(), context_.jobPasses()));
  done_ = true;
  Dependencies deps = contextDependencies(config_, context_.clock(), directory_, benchmark_.program,
                                          killSwitch_, moduleFlags_);
  Result<JobOutputs> outputs = runJob(spec, deps);
  killSwitch_.disarm();
  // Intermediate modules are not needed once the figures are taken.
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator(directory_, ignored)) {
    std::filesystem::remove_all(entry.path(), ignored);
  }
  if (!outputs.ok()) {
    if (killSwitch_.fired()) {
      return compileError("the job was cancelled: " + outputs.status().message());
    }
    return outputs.status();
  }
  outputs_ = std::move(outputs).value();
  return okStatus();
}

Status MlgoCompileSession::computeObservation(std::size_t spaceIndex, Value& observation) {
  if (!outputs_) {
    return invalidArgument("mlgo-compile observations exist after the job step; send the job spec");
  }
  switch (spaceIndex) {
    case kNativeSize:
      if (!outputs_->nativeSize) {
        return invalidArgument("the job measured no native size: add a native-size step");
      }
      observation = *outputs_->nativeSize;
      return okStatus();
    case kTrainingLog:
      observation = Bytes{outputs_->trainingLog};
      return okStatus();
    case kJobLog:
      observation = outputs_->log;
      return okStatus();
    default:
      return invalidArgument(fmt::format("observation space {} does not exist", spaceIndex));
  }
}

}  // namespace kiln::mlgo_session
