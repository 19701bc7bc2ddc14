// A cluster of real kiln processes started as children of the benchmark (the
// coordinator, workers, and a raw ZeroMQ echo server as the baseline), each
// found by the endpoint it prints on its first line of output. The children
// die with the process that started them, however it ends (SIGKILL too), and
// their temporary directory (TMPDIR) is the cluster's own, removed with it.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <kiln/client/client.h>
#include "common/process/subprocess.h"
#include "common/process/working_directory.h"

namespace kiln::testsupport {

struct ChildProcess {
  Subprocess process;
  std::string endpoint;
  std::filesystem::path stdoutPath, stderrPath;
};

class ChildCluster {
 public:
  // `kiln` is the path of the kiln binary to run. With `keepErrorsIn`, each
  // child's stderr is moved there when it is retired or the cluster ends
  // (`<n>-<first argument>.err`) instead of being removed.
  static Result<ChildCluster> create(std::filesystem::path kiln,
                                     std::filesystem::path keepErrorsIn = {});
  // Runs `kiln <args...>` and waits for its "<word> <endpoint>" first line.
  // Safe from any thread.
  // `wrapper` is a command that runs it, e.g. `ip netns exec NS` (it must
  // exec kiln, so that the child's pid is kiln's).
  Result<ChildProcess*> spawn(const std::vector<std::string>& args,
                              const std::vector<std::string>& wrapper = {});
  // Kills `child` (if still running), reaps it and forgets it with its output
  // files, so that a cluster whose workers are replaced keeps a bounded size.
  void retire(ChildProcess* child);
  // Where the children's output files are kept; removed with the cluster.
  const std::filesystem::path& directory() const { return directory_.path(); }
  ChildCluster(ChildCluster&&) noexcept;
  ~ChildCluster();

 private:
  class Spawner;
  ChildCluster(std::filesystem::path kiln, WorkingDirectory directory,
               std::filesystem::path keepErrorsIn);
  // Removes `child`'s output files, keeping its stderr if asked to.
  void dropOutputs(const ChildProcess& child) const;
  std::filesystem::path kiln_;
  WorkingDirectory directory_;
  std::filesystem::path keepErrorsIn_;
  std::unique_ptr<Spawner> spawner_;
  std::unique_ptr<std::mutex> mutex_;  // guards children_ and spawned_
  std::vector<std::unique_ptr<ChildProcess>> children_;
  unsigned spawned_ = 0;  // names output files; never reused
};

// `kiln worker` arguments for a benchmark cluster: quiet, with heartbeats
// fast enough that a killed worker is noticed within a second.
std::vector<std::string> benchWorkerArgs(const std::string& coordinator, unsigned slots,
                                         const std::string& logLevel = "off");

// A coordinator on loopback and one worker of `slots` registered with it,
// both quiet, as the latency benches run them; `workerFlags` go on the
// worker's command line.
struct CoordinatorAndWorker {
  ChildProcess* coordinator = nullptr;
  ChildProcess* worker = nullptr;
};
Result<CoordinatorAndWorker> spawnCoordinatorAndWorker(
    ChildCluster& cluster, unsigned slots, const std::vector<std::string>& workerFlags = {});

// Polls the coordinator until `count` workers (nesting hosts included) are
// registered, or times out.
Status waitForWorkers(client::Client& client, std::size_t count, Duration timeout);

// Polls the cluster until its first worker reports `expected` live sessions
// (load reports lag a heartbeat), or times out.
Status waitForLiveSessions(client::Client& client, std::uint32_t expected, Duration timeout);

// The path of the running executable.
std::filesystem::path selfExecutable();

}  // namespace kiln::testsupport
