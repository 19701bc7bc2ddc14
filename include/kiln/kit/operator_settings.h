// What the operator of a worker process (whoever starts `kiln worker`, `kiln
// nest` or `kiln local` and writes their flags) decides for the session
// types' contexts: which programs they run, the ceilings of the time limits
// a client may lower, and whether test hooks that crash or hang the process
// answer at all. A client's message never changes any of these; where a
// parameter touches one, it may only lower it (docs/security.md). Contexts
// read them through ServiceContext::settings(); the children of `kiln nest`
// are forked after the contexts start and so inherit them.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/parameter_value.h>
#include <kiln/sandbox_limits.h>
#include <kiln/status.h>

namespace kiln {

// --dataset NAME=DIR: a corpus the session types serve as benchmark://NAME/...
// (an ml-compiler-opt corpus with corpus_description.json, or a directory
// of .bc/.ll files). Its files are read below DIR only, and DIR is no root
// for the file:// benchmarks clients name.
struct OperatorDataset {
  std::string name;
  std::filesystem::path root;  // absolute
  bool operator==(const OperatorDataset&) const = default;
};

struct OperatorSettings {
  // --enable-fault-injection: off, the noop type's hooks that crash, hang or
  // skew sessions (noop.crash_on_step, noop.hang_on_step,
  // noop.skew_next_starts) answer permission denied.
  bool faultInjection = false;
  // --mlgo-opt, --mlgo-llc: the LLVM tools the mlgo session types run as
  // child processes. A bare name is looked up in PATH.
  std::string mlgoOpt = "opt-19";
  std::string mlgoLlc = "llc-19";
  // --mlgo-decision-timeout-ms: the longest an mlgo compiler may take to
  // open its channel or between two decisions before it counts as hung.
  std::chrono::milliseconds mlgoDecisionTimeout{30'000};
  // --mlgo-compile-timeout-ms: a whole non-interactive compile (a job of
  // mlgo-compile, the default policy's size).
  std::chrono::milliseconds mlgoCompileTimeout{120'000};
  // --dataset, repeatable: the corpora of this process, in flag order.
  std::vector<OperatorDataset> datasets;
  // --sandbox-wall-ms, --sandbox-memory-mb, --sandbox-processes,
  // --sandbox-output-kb, --sandbox-scratch-mb: what a benchmark binary may
  // use when a session runs it (Runtime, validation). A client may lower
  // each for its session (sandbox.*), never raise it.
  sandbox::SandboxLimits sandbox;
  // --sandbox-require-namespaces: run no binary where the host gives the
  // sandbox no namespaces (programs/sandbox/sandbox.h's fallback shares the host's
  // network and files).
  bool sandboxRequireNamespaces = false;
  // --runtime-linker: the driver that links a module into an executable.
  std::string runtimeLinker = "clang-19";
  // --runtime-max-runs: the most runs one Runtime observation may ask for.
  std::uint32_t runtimeMaxRuns = 100;
  // --runtime-cpus: how many of the worker's cores time programs, one
  // measurement each at a time (programs/runs/measuring_cpus.h); 0 = half of them.
  std::uint32_t runtimeCpus = 0;
  // --runtime-cpu-locks: the directory of the host-wide per-CPU locks that
  // make the worker processes of a host take turns on a CPU; empty = one per
  // user in the temporary directory, "off" = none (CPUs of its own).
  std::string runtimeCpuLocks;
};

// Parses one --dataset value, NAME=DIR; a relative DIR is taken from
// `current`. Invalid-argument naming the flag and what is wrong.
Result<OperatorDataset> parseDatasetFlag(std::string_view value,
                                         const std::filesystem::path& current);

// Parses --datasets: whitespace-separated NAME=DIR items, each as
// parseDatasetFlag; an empty or blank list is none.
Result<std::vector<OperatorDataset>> parseDatasetList(std::string_view list,
                                                      const std::filesystem::path& current);

// The most runs --runtime-max-runs allows.
inline constexpr std::uint32_t kMaxRuntimeRuns = 1000;

// The range of the two mlgo time limits, flags and parameters alike.
inline constexpr std::int64_t kMaxCompilerTimeoutMs = 3'600'000;

// Start-up check: invalid-argument naming the flag that is out of range (a
// dataset named twice, or whose directory is not one, included).
Status checkOperatorSettings(const OperatorSettings& settings);

// The refusal of a client parameter that only the operator may set, naming
// the flag to use instead.
Status operatorOnly(std::string_view key, std::string_view flag);

// Ok when the process allows fault injection; otherwise the refusal of the
// hook `key`.
Status checkFaultInjection(const OperatorSettings& settings, std::string_view key);

}  // namespace kiln
