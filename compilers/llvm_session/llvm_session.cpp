#include "compilers/llvm_session/llvm_session.h"

#include <fmt/format.h>

#include <string_view>

#include "compilers/llvm_engine/autophase.h"
#include "compilers/llvm_engine/inst_count.h"
#include "compilers/llvm_engine/observations.h"
#include "compilers/llvm_engine/rewards.h"
#include "llvm/Config/llvm-config.h"

namespace kiln::llvm_session {
namespace {

// Observation spaces by index; the order is the contract with clients.
enum Observation : std::size_t {
  kIr,
  kIrSha1,
  kBitcode,
  kIrInstructionCount,
  kIrInstructionCountO0,
  kIrInstructionCountO3,
  kIrInstructionCountOz,
  kInstCount,
  kInstCountDict,
  kAutophase,
  kAutophaseDict,
  kObjectTextSizeBytes,
  kObjectTextSizeO0,
  kObjectTextSizeO3,
  kObjectTextSizeOz,
  kRewardIrInstructionCount,
  kRewardIrInstructionCountOz,
  kRewardObjectTextSizeBytes,
  kRewardObjectTextSizeOz,
  kBuildtime,
  kIsBuildable,
  kIsRunnable,
  kRuntime,
  kRuntimeO3,
  kValidation,
  kRewardRuntimeO3,
  kProgramGraph,
  kRuntimeStats,
  kObservationCount,
};

Space withFlags(Space space, bool platformDependent) {
  space.deterministic = true;
  space.platformDependent = platformDependent;
  return space;
}

// A measurement: neither the same twice nor the same on another host.
Space measured(Space space) {
  space.deterministic = false;
  space.platformDependent = true;
  return space;
}

Space namedInt64Dict(std::string name, std::span<const std::string_view> names) {
  std::vector<Space> members;
  members.reserve(names.size());
  for (std::string_view feature : names) {
    members.push_back(Space::int64Scalar(std::string(feature), {0, std::nullopt}));
  }
  return Space::dict(std::move(name), std::move(members));
}

template <class T>
Result<Value> wrap(Result<T> result) {
  if (!result.ok()) return result.status();
  return Value(std::move(result).value());
}

}  // namespace

std::vector<Space> LlvmSession::actionSpaces() const {
  // Each space is a prefix of the pass table (llvm_engine::kActionSpaces): the
  // default holds single passes, the second adds the pipelines after them.
  std::vector<Space> spaces;
  for (std::size_t index = 0; index < llvm_engine::kActionSpaces.size(); ++index) {
    std::vector<std::string> names;
    std::vector<std::string> flags;
    ValueList pipelines;
    if (const auto& passes = context_.passes()) {
      const std::size_t size = passes->spaceSize(index);
      names.reserve(size);
      flags.reserve(size);
      pipelines.reserve(size);
      for (std::size_t i = 0; i < size; ++i) {
        const llvm_engine::PassInfo& pass = passes->at(i);
        names.push_back(pass.name);
        flags.push_back(pass.flag);
        pipelines.emplace_back(pass.pipeline);
      }
    }
    Space space =
        Space::namedDiscrete(std::string(llvm_engine::kActionSpaces[index].name), std::move(names));
    space.aliases = std::move(flags);
    ValueDict metadata;
    metadata.emplace_back("pipelines", Value(std::move(pipelines)));
    space.metadata = Value(std::move(metadata));
    spaces.push_back(std::move(space));
  }
  return spaces;
}

std::vector<Space> LlvmSession::observationSpaces() const {
  const Int64Range count{0, std::nullopt};
  const auto instCountDims = static_cast<std::int64_t>(llvm_engine::instCountFeatureNames().size());
  const auto autophaseDims = static_cast<std::int64_t>(llvm_engine::kAutophaseDims);
  std::vector<Space> spaces(kObservationCount);
  spaces[kIr] = withFlags(Space::string("Ir"), false);
  spaces[kIrSha1] = withFlags(Space::string("IrSha1", {40, 40}), false);
  spaces[kBitcode] = withFlags(Space::bytes("Bitcode"), false);
  spaces[kIrInstructionCount] = withFlags(Space::int64Scalar("IrInstructionCount", count), false);
  spaces[kIrInstructionCountO0] =
      withFlags(Space::int64Scalar("IrInstructionCountO0", count), false);
  spaces[kIrInstructionCountO3] =
      withFlags(Space::int64Scalar("IrInstructionCountO3", count), false);
  spaces[kIrInstructionCountOz] =
      withFlags(Space::int64Scalar("IrInstructionCountOz", count), false);
  spaces[kInstCount] = withFlags(Space::int64Box("InstCount", {instCountDims}, count), false);
  spaces[kInstCountDict] =
      withFlags(namedInt64Dict("InstCountDict", llvm_engine::instCountFeatureNames()), false);
  spaces[kAutophase] = withFlags(Space::int64Box("Autophase", {autophaseDims}, count), false);
  spaces[kAutophaseDict] =
      withFlags(namedInt64Dict("AutophaseDict", llvm_engine::autophaseFeatureNames()), false);
  // Object code size depends on the host target and the LLVM build.
  spaces[kObjectTextSizeBytes] = withFlags(Space::int64Scalar("ObjectTextSizeBytes", count), true);
  spaces[kObjectTextSizeO0] = withFlags(Space::int64Scalar("ObjectTextSizeO0", count), true);
  spaces[kObjectTextSizeO3] = withFlags(Space::int64Scalar("ObjectTextSizeO3", count), true);
  spaces[kObjectTextSizeOz] = withFlags(Space::int64Scalar("ObjectTextSizeOz", count), true);
  // Rewards depend on the history of the episode, not on the state alone:
  // each is the drop of its cost since the session last computed it, so the
  // same actions observed at the same steps always give the same values.
  spaces[kRewardIrInstructionCount] =
      withFlags(Space::doubleScalar("Reward:IrInstructionCount", {}), false);
  spaces[kRewardIrInstructionCountOz] =
      withFlags(Space::doubleScalar("Reward:IrInstructionCountOz", {}), false);
  spaces[kRewardObjectTextSizeBytes] =
      withFlags(Space::doubleScalar("Reward:ObjectTextSizeBytes", {}), true);
  spaces[kRewardObjectTextSizeOz] =
      withFlags(Space::doubleScalar("Reward:ObjectTextSizeOz", {}), true);
  // Running the program: times vary from run to run; what builds and runs
  // depends on the host's linker and limits.
  const DoubleRange seconds{0.0, std::nullopt};
  spaces[kBuildtime] = measured(Space::doubleScalar("Buildtime", seconds));
  spaces[kIsBuildable] = withFlags(Space::int64Scalar("IsBuildable", {0, 1}), true);
  spaces[kIsRunnable] = withFlags(Space::int64Scalar("IsRunnable", {0, 1}), true);
  spaces[kRuntime] = measured(Space::doubleBox("Runtime", {-1}, seconds));
  spaces[kRuntimeO3] = measured(Space::doubleBox("RuntimeO3", {-1}, seconds));
  spaces[kValidation] = withFlags(Space::string("Validation"), true);
  spaces[kRewardRuntimeO3] = measured(Space::doubleScalar("Reward:RuntimeO3", {}));
  spaces[kProgramGraph] = withFlags(Space::bytes("Programl"), false);
  spaces[kRuntimeStats] = measured(runtimeStatsSpace());
  for (std::size_t reward :
       {kRewardIrInstructionCount, kRewardIrInstructionCountOz, kRewardObjectTextSizeBytes,
        kRewardObjectTextSizeOz, kRewardRuntimeO3}) {
    spaces[reward].sinceLastObserved = true;
  }
  return spaces;
}

std::string LlvmSession::compilerVersion() const {
  const auto& passes = context_.passes();
  return fmt::format("LLVM {} (pass table {})", LLVM_VERSION_STRING,
                     passes ? passes->fingerprint().substr(0, 12) : "unknown");
}

Status LlvmSession::init(std::size_t actionSpaceIndex, const Benchmark& benchmark) {
  if (actionSpaceIndex >= llvm_engine::kActionSpaces.size()) {
    return invalidArgument(fmt::format(
        "the llvm session type has action spaces 0 ({}) and 1 ({}), not {}",
        llvm_engine::kActionSpaces[0].name, llvm_engine::kActionSpaces[1].name, actionSpaceIndex));
  }
  KILN_ASSIGN_OR_RETURN(episode_.benchmark, context_.module(benchmark));
  KILN_ASSIGN_OR_RETURN(state_, context_.materialize(episode_.benchmark));
  episode_.source = benchmark;
  episode_.actionSpace = actionSpaceIndex;
  episode_.datasetRunSpec.reset();
  episode_.lastCost.fill(std::nullopt);
  episode_.limits = context_.settings().sandbox;
  return okStatus();
}

Status LlvmSession::initAsFork(const CompilationSession& parent) {
  const auto& other = static_cast<const LlvmSession&>(parent);
  if (other.state_ == nullptr) return invalidArgument("cannot fork a session that never started");
  KILN_ASSIGN_OR_RETURN(state_, other.state_->clone());
  episode_ = other.episode_;
  return okStatus();
}

Status LlvmSession::applyAction(const Value& action, ActionOutcome& outcome) {
  if (state_ == nullptr) return internalError("the llvm session was not initialized");
  const std::string_view spaceName = llvm_engine::kActionSpaces.at(episode_.actionSpace).name;
  if (!action.is<std::int64_t>()) {
    return invalidArgument(fmt::format("an llvm action is the index of a pass in '{}'", spaceName));
  }
  const std::int64_t index = action.as<std::int64_t>();
  const std::size_t spaceSize = context_.passes()->spaceSize(episode_.actionSpace);
  if (index < 0 || static_cast<std::size_t>(index) >= spaceSize) {
    return invalidArgument(
        fmt::format("action {} is not in '{}' (actions 0 to {})", index, spaceName, spaceSize - 1));
  }
  auto result = context_.applyPass(*state_, static_cast<std::size_t>(index));
  if (!result.ok()) {
    // The module is broken or LLVM crashed: the episode is over (the
    // worker ends the session on a compile error). A pass refused before it
    // ran (invalid argument) left the state as it was.
    outcome.endOfEpisode = result.status().code() != ErrorCode::kInvalidArgument;
    return result.status();
  }
  outcome.actionHadNoEffect = !result->outcome.changed;
  return okStatus();
}

Status LlvmSession::computeObservation(std::size_t spaceIndex, Value& observation) {
  if (state_ == nullptr) return internalError("the llvm session was not initialized");
  KILN_ASSIGN_OR_RETURN(observation, observe(spaceIndex));
  return okStatus();
}

Result<Value> LlvmSession::observe(std::size_t spaceIndex) {
  switch (spaceIndex) {
    case kIr:
      return wrap(state_->ir());
    case kIrSha1:
      return wrap(state_->irSha1());
    case kBitcode:
      return wrap(state_->bitcode());
    case kIrInstructionCount:
      return wrap(state_->instructionCount());
    case kInstCount:
      return wrap(state_->instCount());
    case kInstCountDict:
      return wrap(state_->instCountDict());
    case kAutophase:
      return wrap(state_->autophase());
    case kAutophaseDict:
      return wrap(state_->autophaseDict());
    case kObjectTextSizeBytes:
      return wrap(state_->objectTextSizeBytes());
    case kProgramGraph:
      return programGraph();
    case kIrInstructionCountO0:
    case kIrInstructionCountO3:
    case kIrInstructionCountOz: {
      KILN_ASSIGN_OR_RETURN(llvm_engine::Baselines b, baselines());
      const std::int64_t values[] = {b.instCountO0, b.instCountO3, b.instCountOz};
      return Value(values[spaceIndex - kIrInstructionCountO0]);
    }
    case kObjectTextSizeO0:
    case kObjectTextSizeO3:
    case kObjectTextSizeOz: {
      KILN_ASSIGN_OR_RETURN(llvm_engine::Baselines b, baselines());
      const std::int64_t values[] = {b.textSizeO0, b.textSizeO3, b.textSizeOz};
      return Value(values[spaceIndex - kObjectTextSizeO0]);
    }
    case kRewardIrInstructionCount:
    case kRewardIrInstructionCountOz:
    case kRewardObjectTextSizeBytes:
    case kRewardObjectTextSizeOz:
      return wrap(reward(static_cast<Reward>(spaceIndex - kRewardIrInstructionCount)));
    case kBuildtime:
    case kIsBuildable:
    case kIsRunnable:
    case kRuntime:
    case kRuntimeO3:
    case kValidation:
    case kRewardRuntimeO3:
    case kRuntimeStats:
      return observeProgram(spaceIndex);
    default:
      return invalidArgument(
          fmt::format("observation space {} does not exist for llvm sessions", spaceIndex));
  }
}

Result<double> LlvmSession::reward(Reward which) {
  const bool textSize = which == kTextSize || which == kTextSizeOz;
  const bool needsBaselines = which != kIrCount;
  std::optional<llvm_engine::Baselines> b;
  if (needsBaselines || (textSize && !episode_.lastCost[which])) {
    KILN_ASSIGN_OR_RETURN(b, baselines());
  }
  std::int64_t current = 0;
  if (textSize) {
    KILN_ASSIGN_OR_RETURN(current, state_->objectTextSizeBytes());
  } else {
    KILN_ASSIGN_OR_RETURN(current, state_->instructionCount());
  }
  // The start of the episode is the unoptimized benchmark: its count is
  // known from the cache, its size from the O0 baseline.
  const std::int64_t previous = episode_.lastCost[which].value_or(
      textSize ? b->textSizeO0 : episode_.benchmark->instructionCount());
  episode_.lastCost[which] = current;
  switch (which) {
    case kIrCount:
      return llvm_engine::irInstructionCountReward(previous, current);
    case kIrCountOz:
      return llvm_engine::irInstructionCountOzReward(previous, current, *b);
    case kTextSize:
      return llvm_engine::objectTextSizeReward(previous, current);
    default:
      return llvm_engine::objectTextSizeOzReward(previous, current, *b);
  }
}

Result<Value> LlvmSession::programGraph() {
  // The state's own graph first (no hash, no lock), then the worker's by the
  // state's identity; a state without one (read from text) walks its module.
  const std::optional<llvm_engine::StateDigest> identity =
      state_->keepsProgramGraph() ? std::nullopt : state_->identity();
  if (!identity) return wrap(state_->programGraph());
  const std::string key(reinterpret_cast<const char*>(identity->data()), identity->size());
  if (auto cached = context_.programGraphCache().get(key)) return Value(Bytes{cached->bytes()});
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const std::string> graph, state_->sharedProgramGraph());
  context_.programGraphCache().insert(std::make_shared<CachedProgramGraph>(key, graph));
  return Value(Bytes{*graph});
}

Result<runs::RunSpec> LlvmSession::runSpec() {
  if (episode_.clientRunSpec) return *episode_.clientRunSpec;
  if (!episode_.datasetRunSpec) {
    KILN_ASSIGN_OR_RETURN(episode_.datasetRunSpec, context_.runSpecFor(episode_.source));
  }
  return *episode_.datasetRunSpec;
}

Result<Value> LlvmSession::observeProgram(std::size_t spaceIndex) {
  if (state_->module() == nullptr) return compileError("the module is broken: it cannot be built");
  ProgramRuns& programs = context_.programs();
  KILN_ASSIGN_OR_RETURN(const runs::RunSpec spec, runSpec());
  switch (spaceIndex) {
    case kBuildtime: {
      ProgramBuild built = programs.build(*state_, spec);
      if (!built.status.ok()) return built.status;
      return Value(std::chrono::duration<double>(built.time).count());
    }
    case kIsBuildable:
      return Value(std::int64_t{programs.build(*state_, spec).status.ok() ? 1 : 0});
    case kIsRunnable: {
      KILN_ASSIGN_OR_RETURN(bool runnable, programs.runnable(*state_, spec, episode_.limits));
      return Value(std::int64_t{runnable ? 1 : 0});
    }
    case kRuntime: {
      KILN_ASSIGN_OR_RETURN(RuntimeMeasurement measured, measureRuntime(*state_));
      return secondsValue(measured.samples);
    }
    case kRuntimeO3: {
      KILN_ASSIGN_OR_RETURN(RuntimeMeasurement measured, runtimeO3());
      return secondsValue(measured.samples);
    }
    case kRuntimeStats: {
      KILN_ASSIGN_OR_RETURN(RuntimeMeasurement measured, measureRuntime(*state_));
      return runtimeStatsValue(measured,
                               episode_.runtimeSettings.rule(context_.settings().runtimeMaxRuns));
    }
    case kValidation: {
      KILN_ASSIGN_OR_RETURN(std::unique_ptr<llvm_engine::ModuleState> original,
                            context_.materialize(episode_.benchmark));
      KILN_ASSIGN_OR_RETURN(
          ValidationReport report,
          programs.validate(*state_, *original, spec, episode_.limits, episode_.validateAsan));
      return Value(report.json());
    }
    default:
      return wrap(runtimeReward());
  }
}

Result<RuntimeMeasurement> LlvmSession::measureRuntime(const llvm_engine::ModuleState& state) {
  KILN_ASSIGN_OR_RETURN(const runs::RunSpec spec, runSpec());
  return context_.programs().measure(
      state, spec, episode_.runtimeSettings.rule(context_.settings().runtimeMaxRuns),
      episode_.limits);
}

Result<RuntimeMeasurement> LlvmSession::runtimeO3() {
  const runs::StoppingRule rule = episode_.runtimeSettings.rule(context_.settings().runtimeMaxRuns);
  if (episode_.runtimeO3 && episode_.runtimeO3->first == rule) return episode_.runtimeO3->second;
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<llvm_engine::ModuleState> o3,
                        context_.materialize(episode_.benchmark));
  KILN_ASSIGN_OR_RETURN(llvm_engine::PassOutcome outcome, o3->applyPipeline("default<O3>"));
  (void)outcome;
  KILN_ASSIGN_OR_RETURN(RuntimeMeasurement measured, measureRuntime(*o3));
  episode_.runtimeO3.emplace(rule, measured);
  return measured;
}

// The point estimate of each runtime is its median, as CompilerGym's
// RuntimePointEstimateReward's default: a run disturbed by a neighbour moves
// it far less than the mean.
Result<double> LlvmSession::runtimeReward() {
  KILN_ASSIGN_OR_RETURN(RuntimeMeasurement o3, runtimeO3());
  KILN_ASSIGN_OR_RETURN(RuntimeMeasurement now, measureRuntime(*state_));
  auto speedupOver = [&o3](const RuntimeMeasurement& measured) {
    return measured.summary.median > 0 ? o3.summary.median / measured.summary.median : 0;
  };
  if (!episode_.lastSpeedup) {
    // The start of the episode is the benchmark as it came.
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<llvm_engine::ModuleState> original,
                          context_.materialize(episode_.benchmark));
    KILN_ASSIGN_OR_RETURN(RuntimeMeasurement o0, measureRuntime(*original));
    episode_.lastSpeedup = speedupOver(o0);
  }
  const double current = speedupOver(now);
  const double reward = current - *episode_.lastSpeedup;
  episode_.lastSpeedup = current;
  return reward;
}

Result<std::string> LlvmSession::handleParameter(const std::string& key, const std::string& value) {
  if (isRuntimeParameter(key)) {
    return setRuntimeParameter(episode_.runtimeSettings, key, value,
                               context_.settings().runtimeMaxRuns);
  }
  if (key == "llvm.run_spec") {
    KILN_ASSIGN_OR_RETURN(episode_.clientRunSpec, runs::parseRunSpec(value, "llvm.run_spec"));
    episode_.runtimeO3.reset();
    episode_.lastSpeedup.reset();
    return std::to_string(episode_.clientRunSpec->inputs.size());
  }
  if (key == "llvm.validate_asan") {
    if (value != "0" && value != "1") {
      return invalidArgument(fmt::format("llvm.validate_asan must be 0 or 1, got '{}'", value));
    }
    episode_.validateAsan = value == "1";
    return value;
  }
  if (key.starts_with("sandbox.")) {
    KILN_ASSIGN_OR_RETURN(
        episode_.limits,
        sandbox::lowered(episode_.limits, context_.settings().sandbox, key, value));
    return sandbox::describe(episode_.limits);
  }
  return CompilationSession::handleParameter(key, value);
}

}  // namespace kiln::llvm_session
