// Compiler deadlines use the steady clock, not the context's clock: the child
// is a real process and the channel's polls measure real time.
#include "compilers/mlgo_session/interactive_session.h"

#include <fmt/format.h>

#include <fstream>

#include "compilers/mlgo_session/feature_lists.h"
#include "compilers/mlgo_session/native_size.h"

namespace kiln::mlgo_session {

namespace {

std::size_t featureCount(mlgo_channel::AdvisorKind kind) { return expectedFeatures(kind).size(); }

enum Extra : std::size_t {
  kFeatures,
  kDefaultAdvice,
  kNativeSize,
  kDefaultNativeSize,
  kReward,
  kDecisions,
  kLlvmDefaultNativeSize,
  kExtraCount
};

Value zeroTensor(const mlgo_channel::FeatureSpec& spec) {
  if (spec.type == mlgo_channel::ElementType::kFloat) {
    return FloatTensor{spec.shape, std::vector<float>(spec.elementCount, 0.0F)};
  }
  if (spec.type == mlgo_channel::ElementType::kDouble) {
    return DoubleTensor{spec.shape, std::vector<double>(spec.elementCount, 0.0)};
  }
  return Int64Tensor{spec.shape, std::vector<std::int64_t>(spec.elementCount, 0)};
}

}  // namespace

MlgoInteractiveSession::MlgoInteractiveSession(MlgoContext& context, mlgo_channel::AdvisorKind kind)
    : context_(context), kind_(kind) {}

MlgoInteractiveSession::~MlgoInteractiveSession() {
  compiler_.reset();  // kills and reaps the child, removes the FIFOs
  if (!directory_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
  }
}

std::string MlgoInteractiveSession::kindName() const {
  return kind_ == mlgo_channel::AdvisorKind::kInliner ? "mlgo-inline" : "mlgo-regalloc";
}

std::vector<Space> MlgoInteractiveSession::actionSpaces() const {
  if (kind_ == mlgo_channel::AdvisorKind::kInliner) {
    return {Space::namedDiscrete("InlineDecision", {"dont-inline", "inline"})};
  }
  return {Space::discrete("EvictIndex", kEvictionCandidates)};
}

std::vector<Space> MlgoInteractiveSession::observationSpaces() const {
  std::vector<Space> spaces;
  std::vector<Space> members;
  for (const mlgo_channel::FeatureSpec& spec : expectedFeatures(kind_)) {
    Space space = featureSpace(spec);
    space.defaultValue = zeroTensor(spec);  // observed after the episode ended
    spaces.push_back(space);
    members.push_back(std::move(space));
  }
  spaces.push_back(Space::dict("Features", std::move(members)));
  std::int64_t maxAdvice =
      kind_ == mlgo_channel::AdvisorKind::kInliner ? 1 : kEvictionCandidates - 1;
  spaces.push_back(Space::int64Scalar("DefaultAdvice", {0, maxAdvice}));
  for (const char* name : {"NativeSize", "DefaultNativeSize"}) {
    Space size = Space::int64Scalar(name, {0, std::nullopt});
    size.platformDependent = true;
    spaces.push_back(std::move(size));
  }
  Space reward = Space::int64Scalar("Reward:NativeSizeSaved", {});
  reward.platformDependent = true;
  reward.defaultValue = std::int64_t{0};
  spaces.push_back(std::move(reward));
  spaces.push_back(Space::int64Scalar("Decisions", {0, std::nullopt}));
  Space llvmDefault = Space::int64Scalar("LlvmDefaultNativeSize", {0, std::nullopt});
  llvmDefault.platformDependent = true;
  spaces.push_back(std::move(llvmDefault));
  return spaces;
}

TimePoint MlgoInteractiveSession::decisionDeadline() const {
  return std::chrono::steady_clock::now() + config_.decisionTimeout;
}

Status MlgoInteractiveSession::fail(const Status& status, const std::string& during) {
  compiler_.reset();
  pending_.reset();
  ended_ = true;
  std::string message;
  if (killSwitch_.fired()) {
    message = fmt::format("{} was cancelled {}: {}", kindName(), during, status.message());
  } else if (status.code() == ErrorCode::kTimeout) {
    message = fmt::format("{}: the compiler hung {} (no answer within {} ms); it was killed: {}",
                          kindName(), during, config_.decisionTimeout.count(), status.message());
  } else {
    message = fmt::format("{} failed {}: {}", kindName(), during, status.message());
  }
  failure_ = compileError(message);
  return *failure_;
}

Status MlgoInteractiveSession::init(std::size_t, const Benchmark& benchmark) {
  if (!benchmark.program || benchmark.program->empty()) {
    return invalidArgument(kindName() + " needs a benchmark with LLVM IR or bitcode; '" +
                           benchmark.uri + "' has no program");
  }
  KILN_RETURN_IF_ERROR(context_.checkModule(benchmark));
  config_ = context_.config();
  benchmark_ = benchmark;
  KILN_ASSIGN_OR_RETURN(moduleFlags_, context_.moduleFlags(benchmark));
  KILN_ASSIGN_OR_RETURN(directory_, context_.makeSessionDirectory(kindName()));
  input_ = directory_ / "input.bc";  // opt and llc read bitcode or text IR whatever the name
  {
    std::ofstream out(input_, std::ios::binary);
    out.write(benchmark.program->data(), static_cast<std::streamsize>(benchmark.program->size()));
    if (!out) return internalError("cannot write the benchmark to " + input_.string());
  }
  return startCompiler({});
}

Status MlgoInteractiveSession::initAsFork(const CompilationSession& parentSession) {
  const auto& parent = static_cast<const MlgoInteractiveSession&>(parentSession);
  if (parent.failure_) {
    return invalidArgument("cannot fork a session whose compiler failed: " +
                           parent.failure_->message());
  }
  config_ = parent.config_;
  benchmark_ = parent.benchmark_;
  moduleFlags_ = parent.moduleFlags_;
  KILN_ASSIGN_OR_RETURN(directory_, context_.makeSessionDirectory(kindName()));
  input_ = directory_ / "input.bc";
  std::error_code ec;
  std::filesystem::copy_file(parent.input_, input_, ec);
  if (ec) return internalError("cannot copy the benchmark for the fork: " + ec.message());
  if (parent.ended_) {
    // Nothing left to decide: the fork is the finished episode.
    history_ = parent.history_;
    ended_ = true;
    nativeSize_ = parent.nativeSize_;
    defaultNativeSize_ = parent.defaultNativeSize_;
    llvmDefaultNativeSize_ = parent.llvmDefaultNativeSize_;
    return okStatus();
  }
  return startCompiler(parent.history_);
}

Status MlgoInteractiveSession::startCompiler(const std::vector<std::int64_t>& replay) {
  mlgo_channel::CompilerOptions options;
  options.kind = kind_;
  options.sessionDirectory = directory_;
  options.input = input_;
  options.compiler = kind_ == mlgo_channel::AdvisorKind::kInliner ? config_.opt : config_.llc;
  // The module's own target (and for llc its -O level and relocation
  // model); the inliner's pass pipeline stays kiln's. The builds the episode
  // is judged against take the same (buildRequest()).
  options.extraFlags = advisorModuleFlags(kind_, moduleFlags_);
  options.memoryLimitBytes = config_.memoryLimitBytes;
  options.onSpawn = [this](pid_t pid) { killSwitch_.arm(pid); };
  Result<mlgo_channel::InteractiveCompiler> started =
      mlgo_channel::InteractiveCompiler::start(options, decisionDeadline());
  if (!started.ok()) return fail(started.status(), "while starting");
  compiler_.emplace(std::move(started).value());
  Status header = checkHeader(expectedFeatures(kind_), compiler_->header());
  if (!header.ok()) return fail(header, "at its channel header");
  KILN_RETURN_IF_ERROR(advance());
  for (std::size_t i = 0; i < replay.size(); ++i) {
    if (ended_) {
      return fail(compileError(fmt::format("the compiler finished after {} of the parent's {} "
                                           "decisions: the fork cannot be replayed",
                                           i, replay.size())),
                  "while replaying the parent");
    }
    Status sent = compiler_->advise(Value(replay[i]), decisionDeadline());
    if (!sent.ok()) return fail(sent, "while replaying the parent");
    history_.push_back(replay[i]);
    pending_.reset();
    KILN_RETURN_IF_ERROR(advance());
  }
  return okStatus();
}

Status MlgoInteractiveSession::advance() {
  Result<std::optional<mlgo_channel::Observation>> next = compiler_->next(decisionDeadline());
  if (!next.ok()) return fail(next.status(), "waiting for a decision");
  if (next->has_value()) {
    pending_ = std::move(**next);
    return okStatus();
  }
  return finishEpisode();
}

Status MlgoInteractiveSession::finishEpisode() {
  Result<mlgo_channel::CompileOutcome> outcome = compiler_->finish(decisionDeadline());
  if (!outcome.ok()) return fail(outcome.status(), "at the end of the episode");
  Result<std::int64_t> size = nativeTextSize(outcome->output);
  std::error_code ignored;
  std::filesystem::remove(outcome->output, ignored);
  compiler_.reset();
  killSwitch_.disarm();
  if (!size.ok()) return fail(size.status(), "measuring the result");
  nativeSize_ = *size;
  ended_ = true;
  return okStatus();
}

Status MlgoInteractiveSession::answer(std::int64_t answer) {
  if (kind_ == mlgo_channel::AdvisorKind::kRegallocEviction) {
    std::optional<Value> mask = mlgo_channel::findFeature(compiler_->header(), *pending_, "mask");
    const auto* tensor = mask ? mask->getIf<Int64Tensor>() : nullptr;
    if (tensor == nullptr || answer >= static_cast<std::int64_t>(tensor->values.size()) ||
        tensor->values[static_cast<std::size_t>(answer)] == 0) {
      return invalidArgument(
          fmt::format("candidate {} may not be evicted at this decision (its \"mask\" entry is 0); "
                      "choose an index whose mask is 1",
                      answer));
    }
  }
  Status sent = compiler_->advise(Value(answer), decisionDeadline());
  if (!sent.ok()) return fail(sent, "receiving the advice");
  history_.push_back(answer);
  pending_.reset();
  return okStatus();
}

Status MlgoInteractiveSession::applyAction(const Value& action, ActionOutcome& outcome) {
  if (failure_) return *failure_;
  if (ended_) {
    outcome.endOfEpisode = true;
    outcome.actionHadNoEffect = true;
    return okStatus();
  }
  KILN_RETURN_IF_ERROR(answer(action.as<std::int64_t>()));
  KILN_RETURN_IF_ERROR(advance());
  outcome.endOfEpisode = ended_;
  return okStatus();
}

Result<ActionProgress> MlgoInteractiveSession::beginAction(const Value& action,
                                                           ActionOutcome& outcome,
                                                           ActionWait& wait) {
  if (failure_) return *failure_;
  if (ended_) {
    outcome.endOfEpisode = true;
    outcome.actionHadNoEffect = true;
    return ActionProgress::kDone;
  }
  KILN_RETURN_IF_ERROR(answer(action.as<std::int64_t>()));
  wait.fd = compiler_->observationFd();
  wait.deadline = decisionDeadline();
  return ActionProgress::kWaiting;
}

Result<ActionProgress> MlgoInteractiveSession::continueAction(ActionOutcome& outcome,
                                                              ActionWait& wait) {
  if (failure_) return *failure_;
  Result<mlgo_channel::RecordReadiness> ready = compiler_->nextReadiness();
  // The end of the episode, and errors, which may need waiting for the
  // compiler to exit to be explained, are the pool's.
  if (!ready.ok() || *ready == mlgo_channel::RecordReadiness::kOther)
    return ActionProgress::kOnPool;
  if (*ready == mlgo_channel::RecordReadiness::kIncomplete) {
    if (std::chrono::steady_clock::now() < wait.deadline) return ActionProgress::kWaiting;
    return fail(timeoutError("no decision arrived before the deadline"), "waiting for a decision");
  }
  KILN_RETURN_IF_ERROR(advance());  // the whole record is buffered: no waiting
  outcome.endOfEpisode = ended_;
  return ActionProgress::kDone;
}

Status MlgoInteractiveSession::finishAction(ActionOutcome& outcome) {
  if (failure_) return *failure_;
  KILN_RETURN_IF_ERROR(advance());
  outcome.endOfEpisode = ended_;
  return okStatus();
}

bool MlgoInteractiveSession::quickObservation(std::size_t spaceIndex) const {
  std::size_t n = featureCount(kind_);
  if (spaceIndex < n) return true;
  switch (spaceIndex - n) {
    case kDefaultNativeSize:
      return defaultNativeSize_.has_value();  // else a whole compile
    case kLlvmDefaultNativeSize:
      return llvmDefaultNativeSize_.has_value();
    case kReward:
      return !ended_ || failure_.has_value() || defaultNativeSize_.has_value();
    default:
      return spaceIndex - n < kExtraCount;
  }
}

Result<std::int64_t> MlgoInteractiveSession::defaultAdvice() const {
  if (!pending_) return std::int64_t{0};
  return compiler_->defaultAdvice(*pending_);
}

BuildRequest MlgoInteractiveSession::buildRequest(const std::string& stem) {
  BuildRequest request;
  request.kind = kind_;
  request.compiler = kind_ == mlgo_channel::AdvisorKind::kInliner ? config_.opt : config_.llc;
  request.input = input_;
  request.flags = advisorModuleFlags(kind_, moduleFlags_);
  request.workDirectory = directory_;
  request.stem = stem;
  request.deadline = std::chrono::steady_clock::now() + config_.compileTimeout;
  request.memoryLimitBytes = config_.memoryLimitBytes;
  request.killSwitch = &killSwitch_;
  return request;
}

Result<std::int64_t> MlgoInteractiveSession::defaultNativeSize() {
  if (defaultNativeSize_) return *defaultNativeSize_;
  std::string key = defaultSizeKey(kindName(), benchmark_);
  if (auto cached = context_.cachedDefaultSize(key)) {
    defaultNativeSize_ = cached;
    return *cached;
  }
  Result<Build> build = referenceBuild(buildRequest("reference"));
  if (!build.ok()) {
    return compileError(
        "the reference build (every decision answered with DefaultAdvice) failed: " +
        build.status().message());
  }
  context_.storeDefaultSize(key, build->nativeSize);
  defaultNativeSize_ = build->nativeSize;
  return build->nativeSize;
}

Result<std::int64_t> MlgoInteractiveSession::llvmDefaultNativeSize() {
  if (llvmDefaultNativeSize_) return *llvmDefaultNativeSize_;
  std::string key = defaultSizeKey(kindName() + "/llvm-default", benchmark_);
  if (auto cached = context_.cachedDefaultSize(key)) {
    llvmDefaultNativeSize_ = cached;
    return *cached;
  }
  Result<Build> build = llvmDefaultBuild(buildRequest("llvm-default"));
  if (!build.ok()) {
    return compileError("LLVM's default build failed: " + build.status().message());
  }
  context_.storeDefaultSize(key, build->nativeSize);
  llvmDefaultNativeSize_ = build->nativeSize;
  return build->nativeSize;
}

Status MlgoInteractiveSession::computeObservation(std::size_t spaceIndex, Value& observation) {
  const std::vector<mlgo_channel::FeatureSpec>& features = expectedFeatures(kind_);
  std::size_t n = featureCount(kind_);
  // Features are decoded here, for the spaces a step asks for only.
  if (spaceIndex < n) {
    if (!pending_) {
      observation = zeroTensor(features[spaceIndex]);
      return okStatus();
    }
    KILN_ASSIGN_OR_RETURN(observation,
                          mlgo_channel::decodeFeature(compiler_->header(), *pending_, spaceIndex));
    return okStatus();
  }
  switch (spaceIndex - n) {
    case kFeatures: {
      std::vector<Value> decoded;
      if (pending_) {
        KILN_ASSIGN_OR_RETURN(decoded,
                              mlgo_channel::decodeFeatures(compiler_->header(), *pending_));
      }
      ValueDict dict;
      dict.reserve(n);
      for (std::size_t i = 0; i < n; ++i) {
        dict.push_back(
            {features[i].name, pending_ ? std::move(decoded[i]) : zeroTensor(features[i])});
      }
      observation = std::move(dict);
      return okStatus();
    }
    case kDefaultAdvice: {
      KILN_ASSIGN_OR_RETURN(std::int64_t advice, defaultAdvice());
      observation = advice;
      return okStatus();
    }
    case kNativeSize:
      observation = nativeSize_;  // 0 until the episode ends
      return okStatus();
    case kDefaultNativeSize: {
      KILN_ASSIGN_OR_RETURN(std::int64_t size, defaultNativeSize());
      observation = size;
      return okStatus();
    }
    case kReward: {
      if (!ended_ || failure_) {
        observation = std::int64_t{0};
        return okStatus();
      }
      KILN_ASSIGN_OR_RETURN(std::int64_t size, defaultNativeSize());
      observation = size - nativeSize_;
      return okStatus();
    }
    case kDecisions:
      observation = static_cast<std::int64_t>(history_.size());
      return okStatus();
    case kLlvmDefaultNativeSize: {
      KILN_ASSIGN_OR_RETURN(std::int64_t size, llvmDefaultNativeSize());
      observation = size;
      return okStatus();
    }
    default:
      return invalidArgument(fmt::format("observation space {} does not exist", spaceIndex));
  }
}

}  // namespace kiln::mlgo_session
