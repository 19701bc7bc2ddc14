// Batch compile jobs (ml-compiler-opt's data collection): a job runs a list of
// steps on one module, each step reading the previous step's output file.
// Steps declare the dependencies they need (tools, working directory, clock,
// deadline, limits, kill switch, benchmark); the runner resolves them when the
// step runs (late binding) from the worker context's providers, with
// per-job and per-test overrides taking precedence.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/clock.h>
#include <kiln/status.h>
#include <kiln/value.h>
#include "compilers/mlgo_channel/channel_header.h"
#include "compilers/mlgo_session/job_passes.h"
#include "compilers/mlgo_session/kill_switch.h"
#include "compilers/mlgo_session/module_flags.h"

namespace kiln::mlgo_session {

enum class Dependency : std::uint8_t {
  kBenchmark,      // the module's bytes (from the benchmark cache) and its own flags
  kWorkDirectory,  // a private directory for the job's files
  kOpt,            // program names
  kLlc,
  kClock,
  kDeadline,  // when the job must be done, on kClock
  kLimits,    // memory limit of compilers
  kKillSwitch,
};
std::string_view dependencyName(Dependency dependency);

// What a step receives: only the fields it declared are filled.
struct Resolved {
  std::shared_ptr<const std::string> benchmark;
  ModuleToolFlags moduleFlags;  // with kBenchmark: from the module's .cmd, if it has one
  std::filesystem::path workDirectory;
  std::string opt;
  std::string llc;
  const Clock* clock = nullptr;
  std::optional<TimePoint> deadline;
  std::optional<std::uint64_t> memoryLimitBytes;
  KillSwitch* killSwitch = nullptr;
};

// Fills the field(s) of one dependency; may fail (e.g. no benchmark).
using Provider = std::function<Status(Resolved&)>;

class Dependencies {
 public:
  void provide(Dependency dependency, Provider provider);
  // A copy in which every provider of `overrides` replaces ours.
  Dependencies overriddenBy(const Dependencies& overrides) const;
  // A copy in which `dependency` is resolved by our provider (if any), then
  // by `narrow`, which may only tighten what ours gave (a job's limits).
  Dependencies narrowedBy(Dependency dependency, Provider narrow) const;
  // Runs the providers of `needs` in order; not-found names a missing one.
  Result<Resolved> resolve(const std::vector<Dependency>& needs) const;

 private:
  std::map<Dependency, Provider> providers_;
};

// One (features, decision) pair of the interactive inliner.
struct TrainingRecord {
  std::vector<Value> features;  // in header order
  std::int64_t decision = 0;
};

struct JobOutputs {
  std::optional<std::int64_t> nativeSize;
  std::optional<mlgo_channel::ChannelHeader> header;  // set by steps that talk to a compiler
  std::string context;                                // the module's name in the log
  std::vector<TrainingRecord> records;
  std::string trainingLog;  // LLVM's training-log format (Utils/TrainingLogger.h)
  std::string log;          // one line per step: what ran, how long, how it ended
};

class Step {
 public:
  virtual ~Step() = default;
  virtual std::string name() const = 0;
  virtual std::vector<Dependency> needs() const = 0;
  // Reads the module at `input` and returns the file the next step reads.
  virtual Result<std::filesystem::path> run(const std::filesystem::path& input,
                                            const Resolved& deps, JobOutputs& outputs) = 0;
};

// Built-in steps.
std::unique_ptr<Step> makeLoadStep();  // writes the benchmark into the work directory
// opt with the module's target flags (.cmd), then `flags` (from
// allowedFlag()), or with none the module's own -O level; the result is
// bitcode.
std::unique_ptr<Step> makeCompileStep(std::vector<std::string> flags);
// opt's ML inliner (with the module's target flags) driven over the
// interactive channel by the compiler's own default decisions: mlgo-inline's
// reference build; records every (features, decision) pair.
std::unique_ptr<Step> makeInlineDefaultStep();
std::unique_ptr<Step> makeNativeSizeStep();   // .text bytes of the input (bitcode or object)
std::unique_ptr<Step> makeTrainingLogStep();  // serializes the recorded decisions

// Flags a job may pass to opt: -O0..-O3, -Os, -Oz, -passes=<pipeline>,
// -inline-threshold=<int>. Anything else (plugins, output paths, response
// files) is refused so a job spec cannot make the worker load code or write
// files elsewhere; a pipeline may name only the passes `passes` allows
// (job_passes.h: an allow-list, so no pass that writes files or starts a
// graph viewer program).
Status allowedFlag(std::string_view flag, const JobPasses& passes);

struct JobSpec {
  std::vector<std::unique_ptr<Step>> steps;  // the load step comes first
  std::optional<std::chrono::milliseconds> timeout;
  std::optional<std::uint64_t> memoryLimitBytes;
};

// {"steps":[{"kind":"compile","flags":["-Oz"]}, {"kind":"inline-default"},
//   {"kind":"native-size"}, {"kind":"training-log"}], "timeout_ms":60000,
//   "memory_limit_mb":2048}. invalid-argument naming the bad field.
Result<JobSpec> parseJobSpec(std::string_view json, const JobPasses& passes);

// Runs every step. The job's timeout and memory limit are a client's: they
// may only lower kDeadline and kLimits as the providers (the operator's
// settings) give them, never raise them. A failing step stops the job; its
// error names the step.
Result<JobOutputs> runJob(JobSpec& spec, const Dependencies& dependencies);

// The training log of `outputs` in LLVM's format: header line, context line,
// then per decision {"observation":i} + feature bytes + '\n' and
// {"outcome":i} + decision bytes + '\n'.
Result<std::string> serializeTrainingLog(const JobOutputs& outputs);

}  // namespace kiln::mlgo_session
