// Child processes that are always reaped: a compiler started by a session
// must be killed and waited for on every path (no zombies), and every wait
// has a deadline. Mechanism only; callers decide what to run and for how long.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <kiln/status.h>

namespace kiln {

class FileConfinement;

struct SubprocessOptions {
  std::filesystem::path workingDirectory;         // empty = inherit
  std::filesystem::path stdinPath;                // empty = /dev/null
  std::filesystem::path stdoutPath;               // empty = /dev/null
  std::filesystem::path stderrPath;               // empty = /dev/null
  std::optional<std::uint64_t> memoryLimitBytes;  // RLIMIT_AS of the child
  std::optional<std::uint64_t> cpuLimitSeconds;   // RLIMIT_CPU of the child
  // SIGKILL the child when the spawning thread ends, e.g. with its process
  // (PR_SET_PDEATHSIG): a compiler must not outlive a SIGKILLed worker. Only
  // for children spawned by a thread that lives at least as long as they do.
  bool dieWithParent = false;
  // Entered by the child before exec (common/security/file_confinement.h); must
  // outlive the spawn call only.
  const FileConfinement* confinement = nullptr;
};

struct ExitStatus {
  int exitCode = -1;  // valid when !signaled
  int signal = 0;     // the signal that ended the child, 0 if it exited
  bool signaled() const { return signal != 0; }
  bool success() const { return !signaled() && exitCode == 0; }
  std::string describe() const;  // "exited with code 1" / "killed by signal 9 (SIGKILL)"
};

// What waitpid()'s status word says: the signal, else the exit code.
ExitStatus fromWaitStatus(int raw);

struct ProcessOutput;

// Owns one running child. Destruction kills (SIGKILL) and reaps it if it is
// still running. Move-only.
class Subprocess {
 public:
  // Starts argv[0] (looked up in PATH) with the given arguments. Fails with
  // not-found if the program does not exist, invalid-argument for empty argv.
  static Result<Subprocess> spawn(const std::vector<std::string>& argv,
                                  const SubprocessOptions& options = {});

  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  ~Subprocess();

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0 && !exit_; }

  // Non-blocking: the exit status if the child has ended (reaping it).
  std::optional<ExitStatus> poll();
  // Waits until the child ends or `timeout` passes (then a timeout status;
  // the child keeps running).
  Result<ExitStatus> waitFor(std::chrono::milliseconds timeout);
  // SIGKILL and reap; returns the final status. Safe to call repeatedly.
  ExitStatus kill();

 private:
  // Descriptors that replace the options' stdout/stderr paths (-1: use the path).
  // runSubprocess passes pipe ends here so it can capture output.
  struct StdioOverride {
    int stdoutFd = -1;
    int stderrFd = -1;
  };
  static Result<Subprocess> spawnImpl(const std::vector<std::string>& argv,
                                      const SubprocessOptions& options, StdioOverride stdio);
  friend Result<ProcessOutput> runSubprocess(const std::vector<std::string>& argv,
                                             std::chrono::milliseconds timeout,
                                             const SubprocessOptions& options,
                                             std::size_t captureLimitBytes);

  explicit Subprocess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
  std::optional<ExitStatus> exit_;
};

struct ProcessOutput {
  ExitStatus status;
  std::string stdoutText;  // truncated to the capture limit
  std::string stderrText;
};

// Runs a command to completion with a deadline, capturing up to
// `captureLimitBytes` of each of stdout and stderr. On timeout the child is
// killed and a timeout status names the command and the deadline.
Result<ProcessOutput> runSubprocess(const std::vector<std::string>& argv,
                                    std::chrono::milliseconds timeout,
                                    const SubprocessOptions& options = {},
                                    std::size_t captureLimitBytes = 1 << 20);

// Reads what non-blocking `fd` has now, keeping up to `limit` bytes in
// `sink` (the rest is read and dropped, so that the writer never blocks)
// and adding every byte read to `*total` when given; false once the pipe
// reached end of file.
bool drainPipe(int fd, std::string& sink, std::size_t limit, std::uint64_t* total = nullptr);

// SIGKILLs the process group of every child of this process, and the child:
// Subprocess starts each child in a group of its own, with everything it
// starts in turn (a build's make and its compilers). For a command that
// leaves on SIGINT/SIGTERM, whose children would otherwise run on (a
// terminal's Ctrl-C reaches only the foreground group). Returns how many
// children it found.
int killChildProcessGroups();

}  // namespace kiln
