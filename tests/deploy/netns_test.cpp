// Several "machines" on one box without containers: network namespaces on a
// private subnet (10.77.0.0/24) joined by a bridge that lives in its own
// namespace, so the host's own network is never touched. The coordinator
// runs in one namespace, hosts in the others bound to their own addresses,
// and `kiln demo` steps sessions across them. Namespaces and processes are
// removed on every path; skips when not root or `ip netns` is unavailable.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <deque>
#include <regex>

#include <fmt/format.h>

#include "tests/deploy/deploy_support.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;
using deploytest::run;

// Returns the error text of a set-up step from the enclosing function.
#define KILN_DEPLOY_TRY(expr)                  \
  do {                                         \
    if (auto e = (expr); !e.empty()) return e; \
  } while (false)

constexpr int kNodes = 3;  // node 0: coordinator (and the client); 1..: hosts

std::string nodeAddress(int node) { return fmt::format("10.77.0.{}", node + 1); }

// The namespaces and the processes inside them. Processes are stopped before
// the namespaces are deleted (a namespace with a live process would linger).
class Network {
 public:
  Network() : prefix_(fmt::format("kiln{}", ::getpid() % 100000)) {}
  ~Network() {
    for (auto& process : processes_) deploytest::stopProcess(process, 5s);
    for (const auto& name : created_) run({"ip", "netns", "delete", name}, 10s);
  }

  std::string node(int i) const { return fmt::format("{}n{}", prefix_, i); }
  std::string switchName() const { return prefix_ + "sw"; }

  // Empty on success, else the command that failed and why.
  std::string build() {
    for (int i = 0; i < kNodes; ++i) run({"ip", "netns", "delete", node(i)}, 10s);  // stale
    run({"ip", "netns", "delete", switchName()}, 10s);
    KILN_DEPLOY_TRY(addNamespace(switchName()));
    KILN_DEPLOY_TRY(ip({"-n", switchName(), "link", "add", "br0", "type", "bridge"}));
    KILN_DEPLOY_TRY(ip({"-n", switchName(), "link", "set", "br0", "up"}));
    for (int i = 0; i < kNodes; ++i) {
      std::string ns = node(i);
      std::string port = fmt::format("p{}", i);
      KILN_DEPLOY_TRY(addNamespace(ns));
      KILN_DEPLOY_TRY(ip({"-n", switchName(), "link", "add", port, "type", "veth", "peer", "name",
                          "eth0", "netns", ns}));
      KILN_DEPLOY_TRY(ip({"-n", switchName(), "link", "set", port, "master", "br0", "up"}));
      KILN_DEPLOY_TRY(ip({"-n", ns, "addr", "add", nodeAddress(i) + "/24", "dev", "eth0"}));
      KILN_DEPLOY_TRY(ip({"-n", ns, "link", "set", "eth0", "up"}));
      KILN_DEPLOY_TRY(ip({"-n", ns, "link", "set", "lo", "up"}));
    }
    return "";
  }

  // Starts argv inside namespace `node`; output goes to files in `logDir`.
  Subprocess* start(int node, const std::vector<std::string>& argv, const std::string& logName,
                    const std::filesystem::path& logDir) {
    std::vector<std::string> full = {"ip", "netns", "exec", this->node(node)};
    full.insert(full.end(), argv.begin(), argv.end());
    SubprocessOptions options;
    options.stdoutPath = logDir / (logName + ".out");
    options.stderrPath = logDir / (logName + ".err");
    auto process = Subprocess::spawn(full, options);
    if (!process.ok()) return nullptr;
    processes_.push_back(std::move(process).value());
    return &processes_.back();
  }

  ProcessOutput exec(int node, const std::vector<std::string>& argv,
                     std::chrono::milliseconds timeout) {
    std::vector<std::string> full = {"ip", "netns", "exec", this->node(node)};
    full.insert(full.end(), argv.begin(), argv.end());
    return run(full, timeout);
  }

 private:
  std::string addNamespace(const std::string& name) {
    auto added = run({"ip", "netns", "add", name}, 10s);
    if (!added.status.success()) return "ip netns add " + name + ": " + added.stderrText;
    created_.push_back(name);
    return "";
  }
  std::string ip(std::vector<std::string> args) {
    args.insert(args.begin(), "ip");
    auto result = run(args, 10s);
    if (result.status.success()) return "";
    return fmt::format("{}: {}", fmt::join(args, " "), result.stderrText);
  }

  std::string prefix_;
  std::vector<std::string> created_;
  std::deque<Subprocess> processes_;  // stable addresses for start()'s pointer
};

int countEndpoints(const std::string& json, const std::string& address) {
  int count = 0;
  std::string needle = "\"endpoint\": \"tcp://" + address + ":";
  for (auto at = json.find(needle); at != std::string::npos; at = json.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

TEST(NetnsDeployTest, DemoStepsAcrossHostsInSeparateNamespaces) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create network namespaces";
  if (!run({"ip", "netns", "list"}, 10s).status.success()) {
    GTEST_SKIP() << "`ip netns` is not available (apt-get install iproute2)";
  }
  auto logs = std::filesystem::temp_directory_path() / fmt::format("kiln-netns-{}", ::getpid());
  std::filesystem::create_directories(logs);
  std::string kiln = KILN_BINARY;
  std::string host = deploytest::hostCommand(kiln);
  {
    Network network;
    if (auto error = network.build(); !error.empty()) {
      GTEST_SKIP() << "cannot build namespaces and veth pairs here: " << error;
    }
    std::string coordinator = fmt::format("tcp://{}:7700", nodeAddress(0));
    ASSERT_NE(network.start(0,
                            {kiln, "coordinator", "--listen", coordinator, "--log-level", "warn",
                             "--heartbeat-seconds", "0.2"},
                            "coordinator", logs),
              nullptr);
    for (int i = 1; i < kNodes; ++i) {
      ASSERT_NE(network.start(i,
                              {kiln, host, "--coordinator", coordinator, "--slots", "2", "--listen",
                               fmt::format("tcp://{}:0", nodeAddress(i)), "--log-level", "warn",
                               "--heartbeat-seconds", "0.2"},
                              fmt::format("host{}", i), logs),
                nullptr);
    }
    std::string json;
    bool registered = deploytest::waitUntil(
        [&] {
          json = network.exec(0, {kiln, "status", "--coordinator", coordinator, "--json"}, 10s)
                     .stdoutText;
          for (int i = 1; i < kNodes; ++i) {
            if (countEndpoints(json, nodeAddress(i)) != 1) return false;
          }
          return true;
        },
        30s);
    ASSERT_TRUE(registered) << "hosts did not register from their namespaces: " << json << "\n"
                            << deploytest::readFile(logs / "host1.err");

    auto demo = network.exec(
        0,
        {kiln, "demo", "--noop", "--coordinator", coordinator, "--sessions", "6", "--steps", "40"},
        60s);
    ASSERT_TRUE(demo.status.success()) << demo.status.describe() << "\n"
                                       << demo.stdoutText << demo.stderrText;
    EXPECT_NE(demo.stdoutText.find("cluster: " + coordinator), std::string::npos)
        << demo.stdoutText;
    EXPECT_NE(demo.stdoutText.find("240 steps over 6 sessions"), std::string::npos);
    // Sessions were placed on both hosts and stepped there, each host
    // reached at its own namespace address (the session table's WORKER
    // column; the coordinator's step totals lag by a heartbeat).
    for (int i = 1; i < kNodes; ++i) {
      std::regex stepped(
          fmt::format(R"(benchmark://demo-v0/program-\d+ +tcp://10\.77\.0\.{}:\d+ +40 )", i + 1));
      EXPECT_TRUE(std::regex_search(demo.stdoutText, stepped))
          << "no session stepped 40 times on node " << i << ":\n"
          << demo.stdoutText;
    }
  }
  // Every path above ends here: no namespace of this test is left.
  auto list = run({"ip", "netns", "list"}, 10s).stdoutText;
  EXPECT_EQ(list.find(fmt::format("kiln{}", ::getpid() % 100000)), std::string::npos) << list;
  std::filesystem::remove_all(logs);
}

}  // namespace
}  // namespace kiln
