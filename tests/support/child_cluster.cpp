#include "tests/support/child_cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <future>
#include <thread>

namespace kiln::testsupport {

// Forks every child of the cluster from one thread that lives as long as
// the cluster. PR_SET_PDEATHSIG fires when the *thread* that forked a child
// ends, not its process: forked by a passing thread (the supervisor's),
// a child would die with that thread; forked here, it dies when the cluster
// is destroyed or when the process ends in any way (signal, SIGKILL, abort),
// so no coordinator or worker outlives an interrupted benchmark.
class ChildCluster::Spawner {
 public:
  Spawner() : thread_([this] { run(); }) {}
  ~Spawner() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  Result<Subprocess> spawn(const std::vector<std::string>& argv, SubprocessOptions options) {
    options.dieWithParent = true;
    Task task([&argv, &options] { return Subprocess::spawn(argv, options); });
    auto spawned = task.get_future();
    {
      std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    wake_.notify_one();
    return spawned.get();
  }

 private:
  using Task = std::packaged_task<Result<Subprocess>()>;
  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, nothing left to run
      Task task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Task> tasks_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

std::filesystem::path selfExecutable() { return std::filesystem::read_symlink("/proc/self/exe"); }

Result<ChildCluster> ChildCluster::create(std::filesystem::path kiln,
                                          std::filesystem::path keepErrorsIn) {
  KILN_ASSIGN_OR_RETURN(auto directory, WorkingDirectory::create({}, "kiln-bench"));
  if (!keepErrorsIn.empty()) {
    std::error_code error;
    std::filesystem::create_directories(keepErrorsIn, error);
    if (error) {
      return invalidArgument(fmt::format("cannot create the log directory '{}': {}",
                                         keepErrorsIn.string(), error.message()));
    }
  }
  return ChildCluster(std::move(kiln), std::move(directory), std::move(keepErrorsIn));
}

ChildCluster::ChildCluster(std::filesystem::path kiln, WorkingDirectory directory,
                           std::filesystem::path keepErrorsIn)
    : kiln_(std::move(kiln)),
      directory_(std::move(directory)),
      keepErrorsIn_(std::move(keepErrorsIn)),
      spawner_(std::make_unique<Spawner>()),
      mutex_(std::make_unique<std::mutex>()) {}

ChildCluster::ChildCluster(ChildCluster&&) noexcept = default;

Result<ChildProcess*> ChildCluster::spawn(const std::vector<std::string>& args,
                                          const std::vector<std::string>& wrapper) {
  std::vector<std::string> argv = wrapper;
  // What a child leaves in its temporary directory (a working directory
  // after a SIGKILL, a nesting host's kiln-isolate-*) goes with the
  // cluster's own directory, however the child ended.
  const std::filesystem::path temporary = directory_.path() / "tmp";
  std::error_code error;
  std::filesystem::create_directories(temporary, error);
  if (error) {
    return internalError(fmt::format("cannot create '{}' for the children: {}", temporary.string(),
                                     error.message()));
  }
  argv.insert(argv.end(), {"env", "TMPDIR=" + temporary.string()});
  argv.push_back(kiln_.string());
  argv.insert(argv.end(), args.begin(), args.end());
  SubprocessOptions options;
  unsigned number;
  {
    std::lock_guard lock(*mutex_);
    number = spawned_++;
  }
  options.stdoutPath = directory_.path() / fmt::format("child-{}.out", number);
  options.stderrPath = directory_.path() / fmt::format("{}-{}.err", number, args.at(0));
  KILN_ASSIGN_OR_RETURN(Subprocess process, spawner_->spawn(argv, options));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream out(options.stdoutPath);
    std::string word, endpoint;
    if (out >> word >> endpoint) {
      std::lock_guard lock(*mutex_);
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
  std::unique_ptr<ChildProcess> retired;
  {
    std::lock_guard lock(*mutex_);
    auto it = std::find_if(children_.begin(), children_.end(),
                           [child](const auto& owned) { return owned.get() == child; });
    if (it == children_.end()) return;
    retired = std::move(*it);
    children_.erase(it);
  }
  retired->process.kill();
  dropOutputs(*retired);
}

void ChildCluster::dropOutputs(const ChildProcess& child) const {
  std::error_code ignored;
  std::filesystem::remove(child.stdoutPath, ignored);
  if (!keepErrorsIn_.empty()) {
    std::filesystem::rename(child.stderrPath, keepErrorsIn_ / child.stderrPath.filename(), ignored);
  }
  std::filesystem::remove(child.stderrPath, ignored);
}

ChildCluster::~ChildCluster() {
  // Workers first, so that none outlives the coordinator by much.
  for (auto it = children_.rbegin(); it != children_.rend(); ++it) {
    (*it)->process.kill();
    dropOutputs(**it);
  }
}

std::vector<std::string> benchWorkerArgs(const std::string& coordinator, unsigned slots,
                                         const std::string& logLevel) {
  return {"worker",  "--coordinator",       coordinator,
          "--slots", std::to_string(slots), "--heartbeat-seconds",
          "0.2",     "--log-level",         logLevel};
}

Result<CoordinatorAndWorker> spawnCoordinatorAndWorker(
    ChildCluster& cluster, unsigned slots, const std::vector<std::string>& workerFlags) {
  KILN_ASSIGN_OR_RETURN(
      ChildProcess * coordinator,
      cluster.spawn({"coordinator", "--listen", "tcp://127.0.0.1:0", "--log-level", "warn"}));
  std::vector<std::string> args{"worker",  "--coordinator",       coordinator->endpoint,
                                "--slots", std::to_string(slots), "--log-level",
                                "warn"};
  args.insert(args.end(), workerFlags.begin(), workerFlags.end());
  KILN_ASSIGN_OR_RETURN(ChildProcess * worker, cluster.spawn(args));
  return CoordinatorAndWorker{coordinator, worker};
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

}  // namespace kiln::testsupport
