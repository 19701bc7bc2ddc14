// Cleanup lives in State's destructor so every early return of start() and
// every error after it releases the child, the FIFOs and the files alike.
#include "compilers/mlgo_channel/interactive_compiler.h"

#include <fstream>
#include <system_error>

#include "common/security/file_confinement.h"

namespace kiln::mlgo_channel {

struct InteractiveCompiler::State {
  AdvisorDescription description;
  std::string compilerName;
  std::filesystem::path stdoutPath;
  std::filesystem::path stderrPath;
  std::filesystem::path outputPath;
  std::optional<std::uint64_t> memoryLimitBytes;  // named in errors: a likely cause
  std::optional<Subprocess> child;
  std::optional<InteractiveChannel> channel;
  std::int64_t decisions = 0;
  std::optional<std::size_t> referenceSlot;  // found on the first defaultAdvice()
  bool ended = false;
  bool finished = false;  // finish() succeeded: the output belongs to the caller

  // A compiler that died may have hit its memory limit: say which it had.
  std::string limitNote() const {
    if (!memoryLimitBytes) return {};
    return "; it ran with an address-space limit of " + std::to_string(*memoryLimitBytes >> 20) +
           " MiB (--compile-memory-mb)";
  }

  // Reaps a child that has exited, so a dead compiler is noticed at once.
  bool childAlive() {
    if (!child) return false;
    child->poll();
    return child->running();
  }
  AliveCheck aliveCheck() {
    return [this] { return childAlive(); };
  }

  // Turns a channel failure into a compile error when the compiler is the
  // cause (it died); otherwise keeps the channel's code (timeout, protocol).
  Status explain(const Status& status) {
    std::string message = compilerName + ": " + status.message();
    // EOF on the pipes arrives while the exiting compiler is not yet reapable;
    // give it a moment so the error can carry its exit status and stderr.
    if (child && status.code() == ErrorCode::kDisconnected && childAlive()) {
      (void)child->waitFor(std::chrono::milliseconds(200));
    }
    if (child && !childAlive()) {
      std::optional<ExitStatus> exit = child->poll();
      if (exit) message += "; the compiler " + exit->describe();
      message += limitNote();
      std::string tail = readTail(stderrPath, 2048);
      if (!tail.empty()) message += "; stderr tail:\n" + tail;
      return compileError(message);
    }
    return Status(status.code(), message);
  }

  ~State() {
    // Kill first: a compiler blocked on the channel must not see a half-closed pipe.
    if (child) child->kill();
    channel.reset();
    std::error_code ignored;
    std::filesystem::remove(stdoutPath, ignored);
    std::filesystem::remove(stderrPath, ignored);
    if (!finished) std::filesystem::remove(outputPath, ignored);
  }
};

std::string readTail(const std::filesystem::path& path, std::size_t maxBytes) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return {};
  std::streamoff size = file.tellg();
  std::streamoff start = size > static_cast<std::streamoff>(maxBytes)
                             ? size - static_cast<std::streamoff>(maxBytes)
                             : 0;
  file.seekg(start);
  std::string text(static_cast<std::size_t>(size - start), '\0');
  file.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(file.gcount()));
  return text;
}

InteractiveCompiler::InteractiveCompiler(std::unique_ptr<State> state) : state_(std::move(state)) {}
InteractiveCompiler::InteractiveCompiler(InteractiveCompiler&&) noexcept = default;
InteractiveCompiler& InteractiveCompiler::operator=(InteractiveCompiler&&) noexcept = default;
InteractiveCompiler::~InteractiveCompiler() = default;

Result<InteractiveCompiler> InteractiveCompiler::start(const CompilerOptions& options,
                                                       TimePoint deadline) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(options.input, ec)) {
    return notFound("compiler input " + options.input.string() + " does not exist");
  }
  auto state = std::make_unique<State>();
  State& s = *state;
  s.description = describeAdvisor(options.kind, options.llvmMajorVersion);
  s.compilerName = options.compiler.empty() ? s.description.defaultCompiler : options.compiler;
  const std::filesystem::path& dir = options.sessionDirectory;
  s.stdoutPath = dir / (options.channelBaseName + ".stdout");
  s.stderrPath = dir / (options.channelBaseName + ".stderr");
  s.outputPath = dir / (options.outputStem + s.description.outputExtension);
  s.memoryLimitBytes = options.memoryLimitBytes;

  KILN_ASSIGN_OR_RETURN(InteractiveChannel channel,
                        InteractiveChannel::create(dir, options.channelBaseName, options.channel));
  s.channel.emplace(std::move(channel));

  std::vector<std::string> argv{s.compilerName};
  std::vector<std::string> args = compilerArguments(
      s.description, s.channel->basePath(), options.extraFlags, options.input, s.outputPath);
  argv.insert(argv.end(), args.begin(), args.end());
  SubprocessOptions spawnOptions;
  spawnOptions.workingDirectory = dir;
  spawnOptions.stdoutPath = s.stdoutPath;
  spawnOptions.stderrPath = s.stderrPath;
  spawnOptions.memoryLimitBytes = options.memoryLimitBytes;
  spawnOptions.cpuLimitSeconds = options.cpuLimitSeconds;
  spawnOptions.dieWithParent = true;  // blocked on its FIFOs, it would outlive a killed worker
  // It reads a client's module: it may read only what a compiler needs and
  // write only the session's directory (common/security/file_confinement.h).
  KILN_ASSIGN_OR_RETURN(std::optional<FileConfinement> confinement,
                        FileConfinement::prepareIfSupported(compilerPaths(dir, s.compilerName)));
  if (confinement) spawnOptions.confinement = &*confinement;
  KILN_ASSIGN_OR_RETURN(Subprocess child, Subprocess::spawn(argv, spawnOptions));
  s.child.emplace(std::move(child));
  if (options.onSpawn) options.onSpawn(s.child->pid());

  Status connected = s.channel->connect(deadline, s.aliveCheck());
  if (!connected.ok()) return s.explain(connected);
  return InteractiveCompiler(std::move(state));
}

const AdvisorDescription& InteractiveCompiler::description() const { return state_->description; }
const ChannelHeader& InteractiveCompiler::header() const { return state_->channel->header(); }
pid_t InteractiveCompiler::pid() const { return state_->child ? state_->child->pid() : -1; }

Result<std::optional<Observation>> InteractiveCompiler::next(TimePoint deadline) {
  State& s = *state_;
  if (s.ended) return std::optional<Observation>();
  Result<std::optional<Observation>> observation = s.channel->next(deadline, s.aliveCheck());
  if (!observation.ok()) return s.explain(observation.status());
  if (!observation->has_value()) s.ended = true;
  return observation;
}

Result<RecordReadiness> InteractiveCompiler::nextReadiness() {
  State& s = *state_;
  if (s.ended) return RecordReadiness::kOther;
  return s.channel->nextReadiness();
}

int InteractiveCompiler::observationFd() const { return state_->channel->observationFd(); }

Status InteractiveCompiler::advise(const Value& advice, TimePoint deadline) {
  State& s = *state_;
  Status sent = s.channel->sendAdvice(advice, deadline, s.aliveCheck());
  if (sent.code() == ErrorCode::kInvalidArgument) return sent;  // the caller's mistake
  if (!sent.ok()) return s.explain(sent);
  ++s.decisions;
  return okStatus();
}

Result<std::int64_t> InteractiveCompiler::defaultAdvice(const Observation& observation) const {
  State& s = *state_;
  const ChannelHeader& header = s.channel->header();
  if (!s.referenceSlot) {  // a cache: the header never changes
    KILN_ASSIGN_OR_RETURN(s.referenceSlot, referenceFeatureIndex(s.description, header));
  }
  return referenceAnswerAt(s.description, header, observation, *s.referenceSlot);
}

Result<CompileOutcome> InteractiveCompiler::finish(TimePoint deadline) {
  State& s = *state_;
  if (!s.ended) {
    return invalidArgument(
        "finish() before the episode ended: answer observations until next() "
        "returns none");
  }
  s.channel->close();
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  Result<ExitStatus> exit = s.child->waitFor(std::max(left, std::chrono::milliseconds(0)));
  if (!exit.ok()) {
    s.child->kill();
    return timeoutError(s.compilerName +
                        " did not exit before the deadline after the episode "
                        "ended; it was killed");
  }
  if (!exit->success()) {
    std::string message = s.compilerName + " " + exit->describe() + s.limitNote();
    std::string tail = readTail(s.stderrPath, 2048);
    if (!tail.empty()) message += "; stderr tail:\n" + tail;
    return compileError(message);
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(s.outputPath, ec)) {
    return compileError(s.compilerName + " exited with code 0 but wrote no " +
                        s.outputPath.string());
  }
  s.finished = true;
  return CompileOutcome{*exit, s.outputPath, s.decisions};
}

}  // namespace kiln::mlgo_channel
