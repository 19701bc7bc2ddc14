// Shared helpers of the llvm session tests: an in-process cluster serving the
// built-in types (llvm among them), kiln-bench-v0 bitcode from the build tree,
// and opt-19 runs in a scratch directory.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "tools/local_cluster/local_cluster.h"

namespace kiln::llvm_session::testing {

using namespace std::chrono_literals;

inline std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline std::filesystem::path benchPath(const std::string& name) {
  return std::filesystem::path(KILN_BENCH_BC_DIR) / (name + ".bc");
}

inline std::string benchUri(const std::string& name) { return "benchmark://kiln-bench-v0/" + name; }

struct Cluster {
  std::unique_ptr<LocalCluster> cluster;
  std::unique_ptr<client::Client> client;
  std::string worker;
};

// An in-process cluster and a client of it; `configure` changes the
// options (an operator's datasets, limits) before it starts.
inline Cluster startCluster(const std::function<void(LocalClusterOptions&)>& configure) {
  LocalClusterOptions options;
  options.log.level = spdlog::level::off;
  options.worker.slots = 2;
  options.worker.limits.clientTuning = true;  // the cache tests bound its caches as a client
  configure(options);
  Cluster c;
  auto cluster = LocalCluster::start(options);
  EXPECT_TRUE(cluster.ok()) << cluster.status().toString();
  if (!cluster.ok()) return c;
  c.cluster = std::move(cluster).value();
  EXPECT_TRUE(c.cluster->waitUntilReady(10s).ok());
  client::ClientOptions clientOptions;
  clientOptions.coordinator = c.cluster->coordinatorEndpoint();
  clientOptions.requestTimeout = 60s;
  c.client = std::move(client::Client::connect(clientOptions).value());
  c.worker = c.cluster->workerEndpoints().at(0);
  return c;
}

inline Cluster startCluster(std::uint64_t maxBenchmarkBytes = 64u << 20, unsigned slots = 2) {
  return startCluster([&](LocalClusterOptions& options) {
    options.worker.slots = slots;
    options.worker.limits.maxBenchmarkBytes = maxBenchmarkBytes;
  });
}

inline client::SessionOptions llvmOptions(const std::string& uri) {
  client::SessionOptions options;
  options.sessionType = "llvm";
  options.benchmark = uri;
  return options;
}

// The index of pass `name` in the session's action space (its LLVM name,
// with or without parameters, or its CompilerGym flag).
inline std::int64_t passIndex(const client::Session& session, const std::string& name) {
  const auto& names = session.spaces().actionSpaces.at(0).names;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name || names[i].starts_with(name + "<") ||
        names[i].find("(" + name + ")") != std::string::npos ||
        names[i].find("(" + name + "<") != std::string::npos) {
      return static_cast<std::int64_t>(i);
    }
  }
  ADD_FAILURE() << "no pass " << name;
  return 0;
}

inline bool run(const std::string& command) {
  const int status = std::system((command + " 2>/dev/null").c_str());
  return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag)
      : path_(std::filesystem::temp_directory_path() /
              ("kiln-llvmsession-" + std::to_string(::getpid()) + "-" + tag)) {
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace kiln::llvm_session::testing
