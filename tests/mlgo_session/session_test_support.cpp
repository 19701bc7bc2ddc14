#include "tests/mlgo_session/session_test_support.h"

#include <gtest/gtest.h>

#include <thread>

#include "compilers/mlgo_session/mlgo_context.h"

namespace kiln::mlgo_session::testing {

using namespace std::chrono_literals;

ClusterFixture::ClusterFixture(unsigned slots, std::uint64_t compileMemoryBytes,
                               OperatorSettings settings, HostLimits limits) {
  LocalClusterOptions options;
  options.worker.limits = std::move(limits);
  options.worker.limits.compileMemoryBytes = compileMemoryBytes;
  options.worker.settings = std::move(settings);
  // These tests lower the mlgo time limits as a client: their worker is theirs alone.
  options.worker.limits.clientTuning = true;
  options.log.level = spdlog::level::off;
  options.worker.slots = slots;
  options.worker.workingDirectoryBase = temp.path() / "work";
  std::filesystem::create_directories(options.worker.workingDirectoryBase);
  cluster = std::move(LocalCluster::start(options).value());
  (void)cluster->waitUntilReady(10s);
  client::ClientOptions clientOptions;
  clientOptions.coordinator = cluster->coordinatorEndpoint();
  clientOptions.requestTimeout = 60s;
  client = std::move(client::Client::connect(clientOptions).value());
}

std::string ClusterFixture::fakeOpt(const std::string& mode) const {
  std::filesystem::path link = temp.path() / ("fake-opt-" + mode);
  std::error_code ignored;
  std::filesystem::create_symlink(kSourceDir / "fake_opt.py", link, ignored);
  return link.string();
}

void ClusterFixture::useOpt(const std::string& program) {
  const ReadySessionType* type = cluster->sessionTypes(0)->find("mlgo-inline");
  ASSERT_NE(type, nullptr);
  auto& context = static_cast<MlgoContext&>(*type->context);
  MlgoConfig config = context.config();
  config.opt = program;
  context.setConfig(std::move(config));
}

std::size_t ClusterFixture::leftoverFiles() const {
  std::size_t count = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(temp.path() / "work", ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    // The worker's own working directory is expected; anything inside it is not.
    if (it.depth() >= 1) ++count;
  }
  return count;
}

Result<EpisodeResult> playDefaultEpisode(client::Session& session) {
  EpisodeResult result;
  const auto& initial = session.initialObservations();
  if (initial.size() != 1) return invalidArgument("start the session observing DefaultAdvice");
  std::int64_t advice = initial.front().as<std::int64_t>();
  auto until = std::chrono::steady_clock::now() + 120s;
  bool ended = false;
  for (int step = 0; step < 200000 && std::chrono::steady_clock::now() < until; ++step) {
    KILN_ASSIGN_OR_RETURN(client::StepResult stepped,
                          session.step({Value(advice)}, std::vector<std::string>{"DefaultAdvice"}));
    if (stepped.endOfEpisode) {
      ended = true;
      break;
    }
    advice = stepped.observations.front().as<std::int64_t>();
  }
  if (!ended) return timeoutError("the episode did not end within the step and time bounds");
  KILN_ASSIGN_OR_RETURN(
      client::StepResult figures,
      session.step({}, std::vector<std::string>{"Decisions", "NativeSize", "DefaultNativeSize",
                                                "Reward:NativeSizeSaved"}));
  result.decisions = figures.observations[0].as<std::int64_t>();
  result.nativeSize = figures.observations[1].as<std::int64_t>();
  result.defaultNativeSize = figures.observations[2].as<std::int64_t>();
  result.reward = figures.observations[3].as<std::int64_t>();
  return result;
}

}  // namespace kiln::mlgo_session::testing
