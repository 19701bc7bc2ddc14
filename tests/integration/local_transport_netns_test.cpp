// A client in another network namespace than its worker cannot reach the
// worker's abstract ipc:// socket (those are per namespace), so it must fall
// back to TCP. Two namespaces joined by a veth pair stand for two machines
// (the host's own network is never touched): a thread of this process enters
// the first and runs coordinator and worker there, another enters the second
// and runs the client. Skips when not root or `ip netns` is unavailable.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <fmt/format.h>

#include <future>
#include <thread>

#include <kiln/client/client.h>
#include "common/process/subprocess.h"
#include "common/transport/local_transport.h"
#include "coordinator/coordinator_server.h"
#include "tools/local_cluster/builtin_types.h"
#include "worker/worker_server.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;

const std::string kServerAddress = "10.79.0.1";

bool runs(const std::vector<std::string>& argv) {
  auto output = runSubprocess(argv, 10s);
  return output.ok() && output->status.success();
}

// Two namespaces and a veth pair between them; deleted on destruction.
class NamespacePair {
 public:
  NamespacePair()
      : server_(fmt::format("kilnipc{}s", ::getpid() % 100000)),
        client_(fmt::format("kilnipc{}c", ::getpid() % 100000)) {}
  ~NamespacePair() {
    for (const auto& name : created_) runs({"ip", "netns", "delete", name});
  }
  const std::string& server() const { return server_; }
  const std::string& client() const { return client_; }

  // Empty on success, else the step that failed.
  std::string build() {
    for (const auto& name : {server_, client_}) {
      runs({"ip", "netns", "delete", name});  // stale from a crashed run
      if (!runs({"ip", "netns", "add", name})) return "ip netns add " + name;
      created_.push_back(name);
    }
    std::vector<std::vector<std::string>> steps = {
        {"ip", "-n", server_, "link", "add", "eth0", "type", "veth", "peer", "name", "eth0",
         "netns", client_},
        {"ip", "-n", server_, "addr", "add", kServerAddress + "/24", "dev", "eth0"},
        {"ip", "-n", client_, "addr", "add", "10.79.0.2/24", "dev", "eth0"},
    };
    for (const auto& name : {server_, client_}) {
      steps.push_back({"ip", "-n", name, "link", "set", "eth0", "up"});
      steps.push_back({"ip", "-n", name, "link", "set", "lo", "up"});
    }
    for (const auto& step : steps) {
      if (!runs(step)) return fmt::format("{}", fmt::join(step, " "));
    }
    return "";
  }

 private:
  std::string server_, client_;
  std::vector<std::string> created_;
};

// Moves the calling thread (and the threads it starts later, such as
// ZeroMQ's I/O threads) into the named network namespace.
Status enterNamespace(const std::string& name) {
  std::string path = "/run/netns/" + name;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return internalError("cannot open " + path);
  int entered = ::setns(fd, CLONE_NEWNET);
  ::close(fd);
  if (entered != 0) return internalError("setns into " + name + " failed");
  return okStatus();
}

// Coordinator and worker on a thread inside `ns`, listening on its address.
class ServersInNamespace {
 public:
  explicit ServersInNamespace(std::string ns) : thread_([this, ns] { run(ns); }) {}
  ~ServersInNamespace() {
    stop_.set_value();
    thread_.join();
  }
  // The coordinator's endpoint, or why the servers did not start.
  Result<std::string> coordinator() { return ready_.get_future().get(); }

 private:
  void run(const std::string& ns) {
    auto started = start(ns);
    bool ok = started.ok();
    ready_.set_value(std::move(started));
    if (ok) {
      std::thread coordinatorThread([this] { coordinator_->run(); });
      std::thread workerThread([this] { worker_->run(); });
      stop_.get_future().wait();
      worker_->stop();
      workerThread.join();
      coordinator_->stop();
      coordinatorThread.join();
    } else {
      stop_.get_future().wait();
    }
    worker_.reset();
    coordinator_.reset();
  }
  Result<std::string> start(const std::string& ns) {
    KILN_RETURN_IF_ERROR(enterNamespace(ns));
    zmq_.emplace(1);  // its I/O threads start in this namespace
    CoordinatorConfig coordinatorConfig;
    coordinatorConfig.listen = fmt::format("tcp://{}:0", kServerAddress);
    coordinatorConfig.heartbeatInterval = 100ms;
    KILN_ASSIGN_OR_RETURN(coordinator_, CoordinatorServer::create(coordinatorConfig, *zmq_, clock_,
                                                                  makeNullLogger("coordinator")));
    WorkerConfig workerConfig;
    workerConfig.listen = fmt::format("tcp://{}:0", kServerAddress);
    workerConfig.coordinator = coordinator_->endpoint();
    workerConfig.link.heartbeatInterval = 100ms;
    registerBuiltinSessionTypes(types_);
    KILN_ASSIGN_OR_RETURN(worker_, WorkerServer::create(workerConfig, types_, *zmq_, clock_,
                                                        makeNullLogger("worker")));
    if (worker_->localEndpoint().empty()) return internalError("the worker bound no ipc endpoint");
    return coordinator_->endpoint();
  }

  SteadyClock clock_;
  std::optional<zmq::context_t> zmq_;
  SessionTypeRegistry types_;
  std::unique_ptr<CoordinatorServer> coordinator_;
  std::unique_ptr<WorkerServer> worker_;
  std::promise<Result<std::string>> ready_;
  std::promise<void> stop_;
  std::thread thread_;
};

struct ClientView {
  std::string error;
  std::string myIdentity;
  client::WorkerStatus worker;
  std::string sessionEndpoint;
  std::string connectedAddress;
  std::int64_t sum = -1;
  bool direct = false;  // the steps went over a direct TCP channel
};

// Runs the client side on a thread inside `ns`.
ClientView runClientIn(const std::string& ns, const std::string& coordinator) {
  ClientView view;
  std::thread([&] {
    auto fail = [&](const Status& status) { view.error = status.toString(); };
    if (Status entered = enterNamespace(ns); !entered.ok()) return fail(entered);
    view.myIdentity = currentHostIdentity();
    client::ClientOptions options;
    options.coordinator = coordinator;
    options.requestTimeout = 5s;
    auto client = client::Client::connect(options);
    if (!client.ok()) return fail(client.status());
    auto deadline = std::chrono::steady_clock::now() + 10s;
    auto workers = (*client)->listCluster();
    while (workers.ok() && workers->empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
      workers = (*client)->listCluster();
    }
    if (!workers.ok()) return fail(workers.status());
    if (workers->empty()) return fail(timeoutError("no worker registered"));
    view.worker = workers->front();
    auto session = (*client)->startSession({"noop", "benchmark://t/netns"});
    if (!session.ok()) return fail(session.status());
    auto stepped = (*session)->step({Value(std::int64_t{6})}, std::vector<std::string>{"Sum"});
    if (!stepped.ok()) return fail(stepped.status());
    view.sum = stepped->observations[0].as<std::int64_t>();
    view.sessionEndpoint = (*session)->endpoint();
    view.direct = (*client)->usesDirectChannel(view.sessionEndpoint);
    for (int i = 0; i < 600 && view.connectedAddress.empty(); ++i) {
      view.connectedAddress = (*client)->connectedAddress(view.sessionEndpoint);
      if (view.connectedAddress.empty()) std::this_thread::sleep_for(5ms);
    }
  }).join();
  return view;
}

TEST(LocalTransportNetnsTest, ClientInAnotherNetworkNamespaceFallsBackToTcp) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create network namespaces";
  if (!runs({"ip", "netns", "list"})) {
    GTEST_SKIP() << "`ip netns` is not available (apt-get install iproute2)";
  }
  NamespacePair namespaces;
  std::string problem = namespaces.build();
  if (!problem.empty()) GTEST_SKIP() << "cannot set up namespaces: " << problem;

  ServersInNamespace servers(namespaces.server());
  auto coordinator = servers.coordinator();
  ASSERT_TRUE(coordinator.ok()) << coordinator.status().toString();
  ClientView view = runClientIn(namespaces.client(), *coordinator);
  ASSERT_EQ(view.error, "");
  // The worker offered its ipc route, from a host that differs only in the
  // network namespace; the client saw that and kept to TCP.
  EXPECT_EQ(view.worker.localEndpoint.rfind("ipc://@", 0), 0u) << view.worker.localEndpoint;
  ASSERT_FALSE(view.myIdentity.empty());
  EXPECT_NE(view.worker.hostIdentity, view.myIdentity);
  EXPECT_EQ(view.worker.hostIdentity.substr(0, view.worker.hostIdentity.find('/')),
            view.myIdentity.substr(0, view.myIdentity.find('/')));  // same boot
  EXPECT_EQ(view.sum, 6);
  EXPECT_EQ(view.sessionEndpoint.rfind("tcp://" + kServerAddress + ":", 0), 0u);
  EXPECT_EQ(view.connectedAddress, view.sessionEndpoint);
  // As from another machine: its requests went over a direct TCP channel.
  EXPECT_TRUE(view.direct);
}

}  // namespace
}  // namespace kiln
