// One opt/llc child driven through the MLGO interactive channel, start to
// finish: start() spawns it and reads the header; next()/advise() alternate for
// every decision; finish() collects the exit status and the output file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <kiln/clock.h>
#include <kiln/status.h>
#include <kiln/value.h>
#include "common/process/subprocess.h"
#include "compilers/mlgo_channel/advisor_kind.h"
#include "compilers/mlgo_channel/channel.h"

namespace kiln::mlgo_channel {

struct CompilerOptions {
  AdvisorKind kind = AdvisorKind::kInliner;
  std::filesystem::path sessionDirectory;  // must exist; FIFOs, logs and output go here
  std::filesystem::path input;             // LLVM bitcode
  std::string compiler;                    // empty = describeAdvisor(kind).defaultCompiler
  std::vector<std::string> extraFlags;
  int llvmMajorVersion = 19;
  std::string channelBaseName = "mlgo-channel";
  std::string outputStem = "output";  // the output is sessionDirectory/outputStem + extension
  ChannelOptions channel;
  std::optional<std::uint64_t> memoryLimitBytes;
  std::optional<std::uint64_t> cpuLimitSeconds;
  // Called with the child's pid right after it is spawned, before the channel
  // is opened, so that another thread can kill it while start() still waits
  // (e.g. a session's cancel()). Must not block.
  std::function<void(pid_t)> onSpawn;
};

struct CompileOutcome {
  ExitStatus status;
  std::filesystem::path output;
  std::int64_t decisions = 0;  // observations answered
};

// Owns the child, the FIFOs and the log files. Every failure path and the
// destructor SIGKILL and reap the child and remove the FIFOs and logs; the
// output file is removed too unless finish() succeeded (then it is the caller's).
class InteractiveCompiler {
 public:
  // Spawns the compiler and waits (until `deadline`) for the channel header.
  // A compiler that exits first gives a compile-error with its stderr tail.
  static Result<InteractiveCompiler> start(const CompilerOptions& options, TimePoint deadline);

  InteractiveCompiler(InteractiveCompiler&&) noexcept;
  InteractiveCompiler& operator=(InteractiveCompiler&&) noexcept;
  ~InteractiveCompiler();

  const AdvisorDescription& description() const;
  const ChannelHeader& header() const;
  pid_t pid() const;

  // The next decision to make, or nullopt once the compiler closed the channel.
  Result<std::optional<Observation>> next(TimePoint deadline);
  // Never waits: whether next() can now read a whole observation at once
  // (kObservation). For callers that wait on observationFd() themselves.
  Result<RecordReadiness> nextReadiness();
  int observationFd() const;
  // Answers the decision returned by the last next().
  Status advise(const Value& advice, TimePoint deadline);
  // The reference answer to `observation` (referenceAnswerAt()): the
  // compiler's own decision for the inliner, kiln's fixed policy for eviction.
  Result<std::int64_t> defaultAdvice(const Observation& observation) const;

  // After next() returned nullopt: waits for the exit; a failing compiler is a
  // compile-error carrying its stderr tail, a slow one a timeout (it is killed).
  Result<CompileOutcome> finish(TimePoint deadline);

 private:
  struct State;
  explicit InteractiveCompiler(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// The last `maxBytes` of a text file (for error messages); empty if unreadable.
std::string readTail(const std::filesystem::path& path, std::size_t maxBytes);

}  // namespace kiln::mlgo_channel
