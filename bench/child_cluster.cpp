#include "bench/child_cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <thread>

namespace kiln::bench {

std::filesystem::path selfExecutable() { return std::filesystem::read_symlink("/proc/self/exe"); }

Result<ChildCluster> ChildCluster::create(std::filesystem::path kiln) {
  KILN_ASSIGN_OR_RETURN(auto directory, WorkingDirectory::create({}, "kiln-bench"));
  return ChildCluster(std::move(kiln), std::move(directory));
}

Result<ChildProcess*> ChildCluster::spawn(const std::vector<std::string>& args) {
  std::vector<std::string> argv{kiln_.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  SubprocessOptions options;
  const unsigned number = spawned_++;
  options.stdoutPath = directory_.path() / fmt::format("child-{}.out", number);
  options.stderrPath = directory_.path() / fmt::format("child-{}.err", number);
  KILN_ASSIGN_OR_RETURN(Subprocess process, Subprocess::spawn(argv, options));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream out(options.stdoutPath);
    std::string word, endpoint;
    if (out >> word >> endpoint) {
      children_.push_back(std::make_unique<ChildProcess>(
          ChildProcess{std::move(process), endpoint, options.stdoutPath, options.stderrPath}));
      return children_.back().get();
    }
    if (auto exited = process.poll()) {
      return internalError(fmt::format("'{}' {} before announcing its endpoint",
                                       fmt::join(args, " "), exited->describe()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return timeoutError(fmt::format("'{}' did not announce its endpoint", fmt::join(args, " ")));
}

void ChildCluster::retire(ChildProcess* child) {
  auto it = std::find_if(children_.begin(), children_.end(),
                         [child](const auto& owned) { return owned.get() == child; });
  if (it == children_.end()) return;
  (*it)->process.kill();
  std::error_code ignored;
  std::filesystem::remove((*it)->stdoutPath, ignored);
  std::filesystem::remove((*it)->stderrPath, ignored);
  children_.erase(it);
}

ChildCluster::~ChildCluster() {
  // Workers first, so that none outlives the coordinator by much.
  for (auto it = children_.rbegin(); it != children_.rend(); ++it) (*it)->process.kill();
}

std::vector<std::string> benchWorkerArgs(const std::string& coordinator, unsigned slots) {
  return {"worker",  "--coordinator",       coordinator,
          "--slots", std::to_string(slots), "--heartbeat-seconds",
          "0.2",     "--log-level",         "off"};
}

Status waitForWorkers(client::Client& client, std::size_t count, Duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto listed = client.listCluster();
    if (listed.ok() && listed->size() == count) return okStatus();
    if (std::chrono::steady_clock::now() > deadline) {
      return timeoutError(fmt::format("{} workers did not all register within {} s", count,
                                      std::chrono::duration<double>(timeout).count()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Status waitForLiveSessions(client::Client& client, std::uint32_t expected, Duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto workers = client.listCluster();
    if (workers.ok() && !workers->empty() && (*workers)[0].liveSessions == expected) {
      return okStatus();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return timeoutError(fmt::format("worker never reported {} live sessions", expected));
}

}  // namespace kiln::bench
