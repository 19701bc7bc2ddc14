// Shared by the MLGO session tests: a local cluster hosting the built-in
// session types in a private working directory, a client on it, and helpers
// that play whole episodes with bounded step counts and time.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "tests/mlgo_channel/test_support.h"
#include "tools/local_cluster/local_cluster.h"

namespace kiln::mlgo_session::testing {

inline const std::filesystem::path kSourceDir = KILN_MLGOSESSION_TEST_SOURCE_DIR;

struct ClusterFixture {
  // `compileMemoryBytes`: the worker's --compile-memory-mb, in bytes;
  // `settings`: its other operator flags (--mlgo-opt, ...); `limits`: its
  // host limits (--max-compilers-per-client, ...), compileMemoryBytes aside.
  explicit ClusterFixture(unsigned slots = 2,
                          std::uint64_t compileMemoryBytes = HostLimits{}.compileMemoryBytes,
                          OperatorSettings settings = {}, HostLimits limits = {});
  // The worker's endpoint, for worker parameters (e.g. "mlgo.decision_timeout_ms").
  std::string worker() const { return cluster->workerEndpoints().front(); }
  // A symlink "fake-opt-<mode>" to fake_opt.py in the temp directory.
  std::string fakeOpt(const std::string& mode) const;
  // As the worker's operator (--mlgo-opt), in process: the opt of the mlgo
  // sessions started from now on. Clients cannot do this (mlgo.opt is
  // refused); the tests that try many compilers on one worker do.
  void useOpt(const std::string& program);
  // Entries left under the worker's working directory (recursively).
  std::size_t leftoverFiles() const;

  mlgo_channel::testing::TempDir temp;
  std::unique_ptr<LocalCluster> cluster;
  std::unique_ptr<client::Client> client;
};

struct EpisodeResult {
  std::int64_t decisions = 0;
  std::int64_t nativeSize = 0;
  std::int64_t defaultNativeSize = 0;
  std::int64_t reward = 0;
};

// Answers every decision with DefaultAdvice until the episode ends (at most
// 200,000 steps or 120 s), then reads the sizes and the reward.
Result<EpisodeResult> playDefaultEpisode(client::Session& session);

}  // namespace kiln::mlgo_session::testing
