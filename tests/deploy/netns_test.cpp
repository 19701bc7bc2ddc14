// Several "machines" on one box without containers: the bed of network
// namespaces scripts/netbed makes (10.77.0.0/24, joined by a bridge that
// lives in its own namespace, so the host's own network is never touched). The coordinator
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
#include "tests/support/net_bed.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;
using deploytest::run;

constexpr int kNodes = 3;  // node 0: coordinator (and the client); 1..: hosts

std::string nodeAddress(int node) { return fmt::format("10.77.0.{}", node + 1); }

// The bed (scripts/netbed: namespaces on a bridge in a namespace of its own)
// and the processes inside it. Processes are stopped before the bed is
// removed (a namespace with a live process would linger).
class Network {
 public:
  explicit Network(std::unique_ptr<testsupport::NetBed> bed) : bed_(std::move(bed)) {}
  ~Network() {
    for (auto& process : processes_) deploytest::stopProcess(process, 5s);
  }

  // Starts argv inside node `node`; output goes to files in `logDir`.
  Subprocess* start(int node, const std::vector<std::string>& argv, const std::string& logName,
                    const std::filesystem::path& logDir) {
    std::vector<std::string> full = bed_->runOn(node + 1);
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
    std::vector<std::string> full = bed_->runOn(node + 1);
    full.insert(full.end(), argv.begin(), argv.end());
    return run(full, timeout);
  }

 private:
  std::unique_ptr<testsupport::NetBed> bed_;  // removed after the processes stop
  std::deque<Subprocess> processes_;          // stable addresses for start()'s pointer
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
  auto logs = std::filesystem::temp_directory_path() / fmt::format("kiln-netns-{}", ::getpid());
  std::filesystem::create_directories(logs);
  std::string kiln = KILN_BINARY;
  std::string host = deploytest::hostCommand(kiln);
  {
    auto bed = testsupport::NetBed::create(KILN_SOURCE_DIR "/scripts/netbed", kNodes);
    if (!bed.ok() && bed.status().code() == ErrorCode::kUnimplemented) {
      GTEST_SKIP() << bed.status().message();
    }
    ASSERT_TRUE(bed.ok()) << "cannot build the namespace bed here: " << bed.status().toString();
    Network network(std::move(*bed));
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
  EXPECT_EQ(list.find(fmt::format("kb{}", ::getpid())), std::string::npos) << list;
  std::filesystem::remove_all(logs);
}

}  // namespace
}  // namespace kiln
