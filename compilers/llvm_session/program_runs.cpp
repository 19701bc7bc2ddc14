#include "compilers/llvm_session/program_runs.h"

#include <fmt/format.h>

#include "common/base/json_text.h"
#include "compilers/llvm_engine/codegen.h"
#include "llvm/Support/xxhash.h"

namespace kiln::llvm_session {
namespace {

using Clock = std::chrono::steady_clock;

// ASan's own limits stand in for RLIMIT_AS, which its shadow memory cannot
// live with; leak checking (ptrace, which the sandbox forbids) is off: a
// leak is no miscompile.
std::vector<std::string> asanEnvironment(const sandbox::SandboxLimits& limits) {
  return {
      fmt::format("ASAN_OPTIONS=detect_leaks=0:hard_rss_limit_mb={}:allocator_may_return_null=1"
                  ":abort_on_error=0:exitcode=86",
                  std::max<std::uint64_t>(limits.memoryBytes >> 20, 64))};
}

// "exited with code 3", "killed by signal 11 (SIGSEGV)" or "timed out".
std::string describeRun(const sandbox::RunRecord& run) {
  return run.timedOut ? "timed out" : run.status.describe();
}

// What a build is kept by: the state's identity (the BLAKE3 the transition
// cache keys states by, kept with the state), else the SHA-1 of its
// canonical IR (a module read from text has no identity yet; printing it
// costs more).
Result<std::string> programKey(const llvm_engine::ModuleState& state) {
  if (const std::optional<llvm_engine::StateDigest> identity = state.identity()) {
    return fmt::format("id:{:02x}", fmt::join(*identity, ""));
  }
  KILN_ASSIGN_OR_RETURN(std::string ir, state.irSha1());
  return "ir:" + ir;
}

}  // namespace

std::string ValidationReport::json() const {
  std::string text = fmt::format(R"({{"valid": {}, "inputs": {}, "asan": {}, "errors": [)",
                                 valid() ? "true" : "false", inputs, asan ? "true" : "false");
  for (std::size_t i = 0; i < errors.size(); ++i) {
    const runs::ValidationError& error = errors[i];
    text += fmt::format(R"({}{{"kind": "{}", "input": "{}", "message": "{}", "evidence": "{}"}})",
                        i == 0 ? "" : ", ", runs::kindName(error.kind), jsonEscape(error.input),
                        jsonEscape(error.message), jsonEscape(error.evidence));
  }
  return text + "]}";
}

runs::RunEvidence evidenceOf(const sandbox::SandboxOutcome& outcome) {
  runs::RunEvidence evidence;
  if (!outcome.runs.empty()) {
    evidence.status = outcome.runs[0].status;
    evidence.timedOut = outcome.runs[0].timedOut;
    evidence.peakRssBytes = outcome.runs[0].peakRssBytes;
  }
  evidence.stdoutText = outcome.stdoutText;
  evidence.stdoutBytes = outcome.stdoutBytes;
  evidence.stderrText = outcome.stderrText;
  return evidence;
}

ProgramRuns::ProgramRuns(const OperatorSettings& settings, std::filesystem::path workingDirectory,
                         std::shared_ptr<runs::MeasuringCpus> cpus)
    : link_{settings.runtimeLinker, {}},
      requireNamespaces_(settings.sandboxRequireNamespaces),
      measuringCores_(settings.runtimeCpus),
      cpuLocks_(settings.runtimeCpuLocks),
      workingDirectory_(std::move(workingDirectory)),
      cpus_(std::move(cpus)) {}

Result<runs::MeasuringCpus*> ProgramRuns::measuringCpus() {
  std::lock_guard lock(mutex_);
  if (!cpus_) {
    const std::filesystem::path locks = cpuLocks_ == "off"  ? std::filesystem::path()
                                        : cpuLocks_.empty() ? runs::defaultCpuLockDirectory()
                                                            : std::filesystem::path(cpuLocks_);
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<runs::SystemCpuHost> host,
                          runs::SystemCpuHost::create(locks));
    runs::MeasuringCpusOptions options;
    options.cpus = measuringCores_;
    cpus_ = std::make_shared<runs::MeasuringCpus>(std::move(host), std::move(options));
  }
  return cpus_.get();
}

Result<const sandbox::Sandbox*> ProgramRuns::sandboxOnce() {
  std::lock_guard lock(mutex_);
  if (!sandbox_) {
    sandbox::SandboxOptions options;
    options.requireNamespaces = requireNamespaces_;
    sandbox_ = sandbox::Sandbox::create(options);
  }
  if (!sandbox_->ok()) return sandbox_->status();
  return &sandbox_->value();
}

std::uint64_t ProgramRuns::ReferenceRuns::sizeInBytes() const {
  std::uint64_t bytes = cacheKey.size();
  for (const runs::RunEvidence& run : runs) bytes += run.stdoutText.size() + run.stderrText.size();
  return bytes;
}

Result<std::shared_ptr<const ProgramRuns::Executable>> ProgramRuns::executable(
    const llvm_engine::ModuleState& state, const runs::RunSpec& spec, bool asan) {
  const llvm::Module* module = state.module();
  if (module == nullptr) return compileError("the module is broken: it cannot be built");
  KILN_ASSIGN_OR_RETURN(std::string program, programKey(state));
  std::string key =
      fmt::format("{}|{}|{}", program, fmt::join(spec.libraries, ","), asan ? "asan" : "plain");
  if (auto cached = executables_.get(key)) return cached;
  auto built = buildExecutable(*module, spec, asan, std::move(key));
  // A program that does not compile or link fails the same way again; the
  // host's trouble (a full disk, a linker that timed out) may pass.
  if (built->status.ok() || built->status.code() == ErrorCode::kCompileError) {
    executables_.insert(built);
  }
  return built;
}

std::shared_ptr<const ProgramRuns::Executable> ProgramRuns::buildExecutable(
    const llvm::Module& module, const runs::RunSpec& spec, bool asan, std::string key) {
  auto built = std::make_shared<Executable>();
  built->cacheKey = std::move(key);
  const auto began = Clock::now();
  auto object = llvm_engine::emitObject(module, asan);
  if (!object.ok()) {
    built->status = object.status();
    return built;
  }
  const auto codegen = Clock::now() - began;
  auto directory = WorkingDirectory::create(workingDirectory_, "program");
  if (!directory.ok()) {
    built->status = directory.status();
    return built;
  }
  built->directory.emplace(std::move(*directory));
  auto program = runs::linkProgram(*object, spec, asan, built->directory->path(),
                                   asan ? "program-asan" : "program", link_);
  if (!program.ok()) {
    built->status = program.status();
    return built;
  }
  built->program = std::move(*program);
  built->time = codegen + built->program.linkTime;
  std::error_code ignored;
  built->fileBytes = std::filesystem::file_size(built->program.executable, ignored);
  // The object file was only the linker's input.
  std::filesystem::remove(built->program.executable.string() + ".o", ignored);
  return built;
}

Result<sandbox::SandboxOutcome> ProgramRuns::run(const Executable& executable,
                                                 const runs::ProgramInput& input, unsigned repeats,
                                                 const sandbox::SandboxLimits& limits, bool asan,
                                                 int cpu) {
  KILN_ASSIGN_OR_RETURN(const sandbox::Sandbox* box, sandboxOnce());
  sandbox::SandboxRun request;
  request.program = executable.program.executable;
  request.args = input.args;
  request.stdinBytes = input.stdinBytes;
  request.repeats = repeats;
  request.cpu = cpu;
  if (asan) {
    request.environment = asanEnvironment(limits);
    request.limitAddressSpace = false;
  }
  return box->run(request, limits);
}

ProgramBuild ProgramRuns::build(const llvm_engine::ModuleState& state, const runs::RunSpec& spec) {
  auto built = executable(state, spec, false);
  if (!built.ok()) return {built.status(), {}};
  return {(*built)->status, (*built)->time};
}

Status ProgramRuns::timeBatch(const Executable& built, const runs::RunSpec& spec, unsigned runs,
                              const sandbox::SandboxLimits& limits, int cpu,
                              std::vector<double>& seconds) {
  KILN_ASSIGN_OR_RETURN(sandbox::SandboxOutcome outcome,
                        run(built, spec.inputs.at(0), runs + 1, limits, false, cpu));
  const sandbox::RunRecord& last = outcome.runs.back();
  if (outcome.runs.size() != runs + 1 || last.timedOut || !last.status.success()) {
    return invalidArgument(fmt::format(
        "the program cannot be timed: {} {}{}", runs::describeInput(spec, 0), describeRun(last),
        outcome.stderrText.empty() ? "" : fmt::format(" ({})", outcome.stderrText.substr(0, 200))));
  }
  for (std::size_t i = 1; i < outcome.runs.size(); ++i) {
    seconds.push_back(std::chrono::duration<double>(outcome.runs[i].wallTime).count());
  }
  return okStatus();
}

Result<RuntimeMeasurement> ProgramRuns::measure(const llvm_engine::ModuleState& state,
                                                const runs::RunSpec& spec,
                                                const runs::StoppingRule& rule,
                                                const sandbox::SandboxLimits& limits) {
  // Built first: the build is compile work, not to be done on a measuring CPU.
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const Executable> built, executable(state, spec, false));
  KILN_RETURN_IF_ERROR(built->status);
  KILN_ASSIGN_OR_RETURN(runs::MeasuringCpus * cpus, measuringCpus());
  KILN_ASSIGN_OR_RETURN(runs::MeasuringCpus::Lease lease, cpus->acquire());
  RuntimeMeasurement measured;
  measured.cpu = lease.cpu();
  measured.queued = lease.waited();
  while (const unsigned runs = runs::nextBatch(measured.summary, rule)) {
    KILN_RETURN_IF_ERROR(timeBatch(*built, spec, runs, limits, lease.cpu(), measured.samples));
    ++measured.batches;
    measured.summary = runs::summarize(measured.samples);
  }
  measured.stable = runs::meetsTarget(measured.summary, rule);
  return measured;
}

Result<std::vector<double>> ProgramRuns::runtimes(const llvm_engine::ModuleState& state,
                                                  const runs::RunSpec& spec, unsigned runs,
                                                  const sandbox::SandboxLimits& limits) {
  KILN_ASSIGN_OR_RETURN(RuntimeMeasurement measured,
                        measure(state, spec, runs::StoppingRule{runs, runs, 0}, limits));
  return std::move(measured.samples);
}

Result<bool> ProgramRuns::runnable(const llvm_engine::ModuleState& state, const runs::RunSpec& spec,
                                   const sandbox::SandboxLimits& limits) {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const Executable> built, executable(state, spec, false));
  if (!built->status.ok()) return false;
  KILN_ASSIGN_OR_RETURN(sandbox::SandboxOutcome outcome,
                        run(*built, spec.inputs.at(0), 1, limits, false));
  return !outcome.runs[0].timedOut && !outcome.runs[0].status.signaled();
}

Result<std::vector<runs::RunEvidence>> ProgramRuns::referenceRuns(
    const llvm_engine::ModuleState& reference, const runs::RunSpec& spec,
    const sandbox::SandboxLimits& limits) {
  // Kept per module, spec and limits: a client's own spec or lower limits
  // get runs of their own.
  KILN_ASSIGN_OR_RETURN(std::string program, programKey(reference));
  std::string key =
      fmt::format("{}|{}|{}", program, fmt::join(spec.libraries, ","), sandbox::describe(limits));
  for (const runs::ProgramInput& input : spec.inputs) {
    // A hash stands for the stdin (up to 1 MiB an input) in the key.
    key +=
        fmt::format("|{}:{:016x}:{}", fmt::join(input.args, "\x1f"),
                    llvm::xxh3_64bits(llvm::StringRef(input.stdinBytes)), input.stdinBytes.size());
  }
  if (auto cached = references_.get(key)) return cached->runs;
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const Executable> built,
                        executable(reference, spec, false));
  if (!built->status.ok()) {
    return invalidArgument(
        fmt::format("the benchmark as it came does not build, so there is "
                    "nothing to validate against: {}",
                    built->status.message()));
  }
  auto kept = std::make_shared<ReferenceRuns>();
  kept->cacheKey = std::move(key);
  for (const runs::ProgramInput& input : spec.inputs) {
    KILN_ASSIGN_OR_RETURN(sandbox::SandboxOutcome outcome, run(*built, input, 1, limits, false));
    kept->runs.push_back(evidenceOf(outcome));
  }
  references_.insert(kept);
  return kept->runs;
}

Result<ValidationReport> ProgramRuns::validate(const llvm_engine::ModuleState& candidate,
                                               const llvm_engine::ModuleState& reference,
                                               const runs::RunSpec& spec,
                                               const sandbox::SandboxLimits& limits, bool asan) {
  KILN_ASSIGN_OR_RETURN(std::vector<runs::RunEvidence> expected,
                        referenceRuns(reference, spec, limits));
  ValidationReport report;
  report.asan = asan;
  report.inputs = spec.inputs.size();
  for (const bool sanitized : {false, true}) {
    if (sanitized && !asan) break;
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<const Executable> built,
                          executable(candidate, spec, sanitized));
    if (!built->status.ok()) {
      report.errors.push_back(
          {runs::ValidationError::Kind::kBuildFailed, "",
           fmt::format("the {} does not build", sanitized ? "ASan build" : "optimized program"),
           built->status.message()});
      continue;
    }
    for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(sandbox::SandboxOutcome outcome,
                            run(*built, spec.inputs[i], 1, limits, sanitized));
      auto errors = runs::compareRun(spec, i, expected[i], evidenceOf(outcome), sanitized);
      report.errors.insert(report.errors.end(), errors.begin(), errors.end());
    }
  }
  return report;
}

}  // namespace kiln::llvm_session
