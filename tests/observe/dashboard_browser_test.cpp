// The live dashboard in a real browser: a local cluster with a nesting host
// and two experiments stepping, the page loaded in headless Chromium (which
// runs its JavaScript and fetches /api/status), the numbers in the rendered
// DOM checked against Client::clusterStatus() (what `kiln status` prints),
// and a screenshot saved in the build directory. Skipped, saying why, when
// Chromium is not installed.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/observe/http_probe.h"
#include "tools/local_cluster/local_cluster.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;

bool chromiumInstalled() { return std::system("command -v chromium >/dev/null 2>&1") == 0; }

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs headless Chromium on `url` with `action` (--dump-dom or
// --screenshot=...); returns its exit code. Virtual time lets the page's
// fetches and one-second refreshes run before the DOM is taken; `timeout`
// bounds the real time.
int runChromium(const std::string& url, const std::string& action,
                const std::filesystem::path& workDir, const std::filesystem::path& output) {
  std::string command =
      "timeout 90 chromium --headless --disable-gpu --no-sandbox --disable-dev-shm-usage "
      "--no-first-run --disable-extensions --user-data-dir='" +
      (workDir / "profile").string() + "' --window-size=1280,1000 --virtual-time-budget=4000 " +
      action + " '" + url + "' >'" + output.string() + "' 2>'" + (workDir / "stderr").string() +
      "'";
  return std::system(command.c_str());
}

std::string textOf(const std::string& dom, const std::string& id) {
  std::smatch match;
  std::regex pattern("id=\"" + id + "\">([^<]*)<");
  return std::regex_search(dom, match, pattern) ? match[1].str() : std::string("<absent>");
}

// The attribute of the table row of one experiment, e.g. data-sessions.
std::string rowAttribute(const std::string& dom, const std::string& experiment,
                         const std::string& attribute) {
  std::smatch match;
  std::regex row("<tr[^>]*data-experiment=\"" + experiment + "\"[^>]*>");
  if (!std::regex_search(dom, match, row)) return "<no row>";
  std::string tag = match[0].str();
  std::regex value(attribute + "=\"([^\"]*)\"");
  return std::regex_search(tag, match, value) ? match[1].str() : "<no attribute>";
}

ExperimentSpec experiment(const std::string& name, std::uint32_t weight) {
  ExperimentSpec spec;
  spec.name = name;
  spec.workers = 1;
  spec.weight = weight;
  spec.sessionTypes = {"noop"};
  return spec;
}

struct Stepper {
  std::unique_ptr<client::Client> client;
  std::vector<std::unique_ptr<client::Session>> sessions;
  std::thread thread;
};

TEST(DashboardBrowser, PageNumbersMatchClusterStatus) {
  if (!chromiumInstalled()) {
    GTEST_SKIP() << "chromium is not installed (Debian package 'chromium', listed in "
                    "scripts/setup): the dashboard was not checked in a browser";
  }
  LocalClusterOptions options;
  options.workers = 1;
  options.nestingHosts = 1;
  options.worker.slots = 4;
  options.log.level = spdlog::level::off;
  options.coordinator.heartbeatInterval = 200ms;
  options.worker.link.heartbeatInterval = 200ms;
  options.coordinator.metricsListen = "127.0.0.1:0";
  auto cluster = LocalCluster::start(options).value();
  ASSERT_TRUE(cluster->waitUntilReady(10s).ok());
  const int port = cluster->coordinatorMetricsPort();
  ASSERT_GT(port, 0);

  // alpha holds 2 sessions, beta 3; both step until told to stop (bounded
  // in count and time), each step busy for 2 ms so the hosts show work.
  std::atomic<bool> stop{false};
  std::vector<Stepper> steppers;
  for (auto [name, weight, count] : {std::tuple{"alpha", 1u, 2}, std::tuple{"beta", 2u, 3}}) {
    client::ClientOptions clientOptions;
    clientOptions.coordinator = cluster->coordinatorEndpoint();
    clientOptions.experiment = name;
    clientOptions.requestTimeout = 10s;
    Stepper stepper;
    stepper.client = std::move(client::Client::connect(clientOptions).value());
    ASSERT_TRUE(stepper.client->openExperiment(experiment(name, weight)).ok());
    ASSERT_TRUE(stepper.client->waitForExperiment(name, 1, 10s).ok());
    for (int i = 0; i < count; ++i) {
      auto session = stepper.client->startSession({"noop", "benchmark://noop/x"});
      ASSERT_TRUE(session.ok()) << session.status().toString();
      ASSERT_TRUE((*session)->setParameter("noop.busy_us", "2000").ok());
      stepper.sessions.push_back(std::move(session).value());
    }
    steppers.push_back(std::move(stepper));
  }
  for (Stepper& stepper : steppers) {
    stepper.thread = std::thread([&stepper, &stop] {
      auto until = std::chrono::steady_clock::now() + 120s;
      for (int i = 0; i < 200000 && !stop.load() && std::chrono::steady_clock::now() < until; ++i) {
        auto& session = stepper.sessions[i % stepper.sessions.size()];
        if (!session->step({Value(std::int64_t{1})}, std::vector<std::string>{}).ok()) return;
      }
    });
  }
  auto stopSteppers = [&] {
    stop.store(true);
    for (Stepper& stepper : steppers) {
      if (stepper.thread.joinable()) stepper.thread.join();
    }
  };

  // Wait until the heartbeats have carried every session to the coordinator,
  // then a few seconds more so that the timeline has samples to draw.
  auto operatorClient = [&] {
    client::ClientOptions o;
    o.coordinator = cluster->coordinatorEndpoint();
    return std::move(client::Client::connect(o).value());
  }();
  auto settled = [&](const client::ClusterStatus& status) {
    std::uint32_t sessions = 0;
    for (const auto& w : status.workers) sessions += w.liveSessions;
    return status.experiments.size() == 2 && sessions == 5;
  };
  for (int i = 0; i < 100 && !settled(operatorClient->clusterStatus().value()); ++i) {
    std::this_thread::sleep_for(100ms);
  }
  std::this_thread::sleep_for(3s);

  std::filesystem::path work =
      std::filesystem::temp_directory_path() / ("kiln-dashboard-" + std::to_string(::getpid()));
  std::filesystem::create_directories(work);
  std::string url = "http://127.0.0.1:" + std::to_string(port) + "/dashboard";
  int code = runChromium(url, "--dump-dom", work, work / "dom.html");
  auto status = operatorClient->clusterStatus();
  std::string dom = readFile(work / "dom.html");
  ASSERT_EQ(code, 0) << "chromium failed: " << readFile(work / "stderr");
  ASSERT_TRUE(status.ok());
  ASSERT_NE(dom.find("data-loaded=\"true\""), std::string::npos)
      << "the page never rendered a status:\n"
      << dom.substr(0, 2000);

  std::uint32_t sessions = 0, slots = 0;
  for (const auto& w : status->workers) {
    sessions += w.liveSessions;
    slots += w.slots;
  }
  EXPECT_EQ(textOf(dom, "total-hosts"), std::to_string(status->workers.size()));
  EXPECT_EQ(textOf(dom, "total-experiments"), std::to_string(status->experiments.size()));
  EXPECT_EQ(textOf(dom, "total-sessions"), std::to_string(sessions));
  EXPECT_EQ(textOf(dom, "total-slots"), std::to_string(slots));
  EXPECT_EQ(sessions, 5u);
  for (const auto& e : status->experiments) {
    std::uint32_t experimentSessions = 0;
    for (const auto& w : e.workers) experimentSessions += w.load.liveSessions;
    EXPECT_EQ(rowAttribute(dom, e.spec.name, "data-sessions"), std::to_string(experimentSessions))
        << e.spec.name;
    EXPECT_EQ(rowAttribute(dom, e.spec.name, "data-ready"), std::to_string(e.readyWorkers()));
    EXPECT_EQ(rowAttribute(dom, e.spec.name, "data-workers"), std::to_string(e.spec.workers));
  }
  for (const auto& w : status->workers) {
    std::smatch match;
    std::regex row("<tr data-host=\"" + std::to_string(w.workerId) +
                   "\" data-slots=\"(\\d+)\" data-sessions=\"(\\d+)\"");
    ASSERT_TRUE(std::regex_search(dom, match, row)) << "no row for host " << w.workerId;
    EXPECT_EQ(match[1].str(), std::to_string(w.slots));
    EXPECT_EQ(match[2].str(), std::to_string(w.liveSessions));
  }
  // The nesting host's chart has an area for each experiment.
  EXPECT_NE(dom.find("<path d=\"M"), std::string::npos);
  EXPECT_NE(dom.find("data-experiment=\"alpha\"></path>"), std::string::npos);
  EXPECT_NE(dom.find("data-experiment=\"beta\"></path>"), std::string::npos);

  std::filesystem::path screenshot =
      std::filesystem::path(KILN_OBSERVE_ARTIFACT_DIR) / "dashboard.png";
  std::filesystem::remove(screenshot);
  code = runChromium(url, "--screenshot='" + screenshot.string() + "'", work, work / "shot.log");
  stopSteppers();
  ASSERT_EQ(code, 0) << readFile(work / "stderr");
  std::string png = readFile(screenshot);
  ASSERT_GT(png.size(), 1000u) << "no screenshot at " << screenshot;
  EXPECT_EQ(png.substr(1, 3), "PNG");
  std::filesystem::remove_all(work);
}

}  // namespace
}  // namespace kiln
