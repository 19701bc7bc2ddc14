// A worker refuses, before it binds anything, settings it cannot honour
// (checkWorkerConfig): each refusal names the flag.
#include <gtest/gtest.h>

#include <functional>

#include "worker/config_check.h"
#include "worker/worker_server.h"

namespace kiln {
namespace {

void expectRefused(const std::function<void(WorkerConfig&)>& change, const std::string& flag) {
  WorkerConfig config;
  change(config);
  Status status = checkWorkerConfig(config);
  ASSERT_FALSE(status.ok()) << flag;
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(status.message().find(flag), std::string::npos) << status.toString();
}

TEST(CheckWorkerConfig, TheDefaultsPass) { EXPECT_TRUE(checkWorkerConfig(WorkerConfig{}).ok()); }

TEST(CheckWorkerConfig, EveryNumericSettingOutOfRangeIsRefusedByItsFlag) {
  const std::uint64_t huge = std::uint64_t{1} << 63;
  expectRefused([](WorkerConfig& c) { c.slots = 0; }, "--slots");
  expectRefused([](WorkerConfig& c) { c.slots = 100000; }, "--slots");
  expectRefused([](WorkerConfig& c) { c.frames.maxMessageBytes = 0; }, "--max-message-bytes");
  expectRefused([&](WorkerConfig& c) { c.frames.maxMessageBytes = huge; }, "--max-message-bytes");
  expectRefused([](WorkerConfig& c) { c.limits.maxBenchmarkBytes = 0; }, "--max-benchmark-bytes");
  expectRefused([](WorkerConfig& c) { c.limits.maxModuleDataBytes = 0; },
                "--max-module-data-bytes");
  expectRefused([&](WorkerConfig& c) { c.limits.maxModuleDataBytes = huge; },
                "--max-module-data-bytes");
  expectRefused([&](WorkerConfig& c) { c.limits.maxBenchmarkBytes = huge; },
                "--max-benchmark-bytes");
  expectRefused([](WorkerConfig& c) { c.cacheBytes = 0; }, "--cache-bytes");
  expectRefused([&](WorkerConfig& c) { c.cacheBytes = huge; }, "--cache-bytes");
  expectRefused([](WorkerConfig& c) { c.limits.maxSessions = 0; }, "--max-sessions");
  expectRefused([](WorkerConfig& c) { c.limits.maxSessionsPerClient = 0; },
                "--max-sessions-per-client");
  expectRefused([&](WorkerConfig& c) { c.limits.compileMemoryBytes = huge; },
                "--compile-memory-mb");
  expectRefused([](WorkerConfig& c) { c.limits.defaultDeadline = Duration::zero(); },
                "--deadline-seconds");
  expectRefused([](WorkerConfig& c) { c.limits.maxDeadline = std::chrono::hours(24 * 365); },
                "--max-deadline-seconds");
  expectRefused([](WorkerConfig& c) { c.limits.leaseTimeout = Duration::zero(); },
                "--lease-seconds");
  expectRefused([](WorkerConfig& c) { c.link.heartbeatInterval = Duration::zero(); },
                "--heartbeat-seconds");
  expectRefused([](WorkerConfig& c) { c.settings.mlgoDecisionTimeout = milliseconds(0); },
                "--mlgo-decision-timeout-ms");
  expectRefused(
      [](WorkerConfig& c) { c.settings.mlgoCompileTimeout = milliseconds(std::int64_t{1} << 40); },
      "--mlgo-compile-timeout-ms");
  expectRefused([](WorkerConfig& c) { c.settings.mlgoOpt.clear(); }, "--mlgo-opt");
  expectRefused([](WorkerConfig& c) { c.settings.mlgoLlc = std::string(1, '\0'); }, "--mlgo-llc");
}

TEST(CheckWorkerConfig, TheLongestDeadlineIsNoShorterThanTheDefault) {
  WorkerConfig config;
  config.limits.defaultDeadline = std::chrono::seconds(300);
  config.limits.maxDeadline = std::chrono::seconds(60);
  Status status = checkWorkerConfig(config);
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(status.message().find("shorter than --deadline-seconds"), std::string::npos)
      << status.toString();
  config.limits.defaultDeadline = std::chrono::seconds(60);
  EXPECT_TRUE(checkWorkerConfig(config).ok());
}

}  // namespace
}  // namespace kiln
