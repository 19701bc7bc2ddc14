// Polls in short slices rather than blocking in waitpid so the deadline holds
// even when the kill switch never fires.
#include "compilers/mlgo_session/run_tool.h"

#include <fmt/format.h>

#include <stdlib.h>
#include <unistd.h>

#include "common/process/subprocess.h"
#include "common/security/file_confinement.h"
#include "compilers/mlgo_channel/interactive_compiler.h"

namespace kiln::mlgo_session {

Status runTool(const ToolRun& run) {
  if (run.argv.empty()) return invalidArgument("runTool needs a command");
  // A unique name without shared counters: several jobs may share a directory.
  std::string pattern = (run.workingDirectory / "tool-XXXXXX.stderr").string();
  int fd = ::mkstemps(pattern.data(), 7);
  if (fd < 0) {
    return internalError("cannot create a log file in " + run.workingDirectory.string());
  }
  ::close(fd);
  std::filesystem::path stderrPath = pattern;
  SubprocessOptions options;
  options.workingDirectory = run.workingDirectory;
  options.stderrPath = stderrPath;
  options.memoryLimitBytes = run.memoryLimitBytes;
  options.dieWithParent = true;
  auto removeLog = [&] {
    std::error_code ignored;
    std::filesystem::remove(stderrPath, ignored);
  };
  // The tool reads a client's module: it may read only what a compiler needs
  // and write only its working directory (common/security/file_confinement.h).
  Result<std::optional<FileConfinement>> confinement =
      FileConfinement::prepareIfSupported(compilerPaths(run.workingDirectory, run.argv.front()));
  if (!confinement.ok()) {
    removeLog();
    return confinement.status();
  }
  if (*confinement) options.confinement = &**confinement;
  Result<Subprocess> spawned = Subprocess::spawn(run.argv, options);
  if (!spawned.ok()) {
    removeLog();
    return spawned.status();
  }
  Subprocess child = std::move(spawned).value();
  if (run.killSwitch != nullptr) run.killSwitch->arm(child.pid());
  while (true) {
    TimePoint now = run.clock != nullptr ? run.clock->now() : std::chrono::steady_clock::now();
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(run.deadline - now);
    if (left.count() <= 0) {
      child.kill();
      removeLog();
      return timeoutError(
          fmt::format("{} did not finish before its deadline; it was killed", run.argv.front()));
    }
    Result<ExitStatus> exit = child.waitFor(std::min(left, std::chrono::milliseconds(50)));
    if (!exit.ok()) continue;
    std::string tail = mlgo_channel::readTail(stderrPath, 2048);
    removeLog();
    if (exit->success()) return okStatus();
    if (run.killSwitch != nullptr && run.killSwitch->fired()) {
      return compileError(run.argv.front() + " was cancelled (killed)");
    }
    std::string message = run.argv.front() + " " + exit->describe();
    if (!tail.empty()) message += "; stderr tail:\n" + tail;
    return compileError(message);
  }
}

}  // namespace kiln::mlgo_session
