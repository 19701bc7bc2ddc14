// Files a client names, over a real loopback cluster: a worker reads file://
// benchmarks only below its --allow-files directories. A client naming a
// file outside them (existing or not, directly, through '..' or through a
// symlink) gets permission denied, and the worker and other sessions keep
// serving; files inside are read by the noop type (ServiceContext) and the
// llvm type (the datasets registry). Without the flag, a cluster listening
// on loopback reads the current directory, and a worker reachable from
// elsewhere reads nothing and says so when it starts.
#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <unistd.h>

#include <fstream>

#include "common/process/working_directory.h"
#include "tools/local_cluster/local_cluster.h"
#include "worker/noop_session.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kIr = "define i32 @f(i32 %x) {\n  %y = add i32 %x, 0\n  ret i32 %y\n}\n";

void writeFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string fileUri(const fs::path& path) { return "file://" + path.string(); }

class FileAccessCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    auto base = WorkingDirectory::create({}, "kiln-file-access-cluster");
    ASSERT_TRUE(base.ok()) << base.status().toString();
    base_.emplace(std::move(base).value());
    allowed_ = base_->path() / "allowed";
    outside_ = base_->path() / "outside";
    writeFile(allowed_ / "prog.ll", kIr);
    writeFile(outside_ / "secret.ll", kIr);
  }

  void startCluster(std::optional<std::vector<fs::path>> allowFiles) {
    LocalClusterOptions options;
    options.log.level = spdlog::level::off;
    options.worker.allowFiles = std::move(allowFiles);
    auto cluster = LocalCluster::start(options);
    ASSERT_TRUE(cluster.ok()) << cluster.status().toString();
    cluster_ = std::move(cluster).value();
    ASSERT_TRUE(cluster_->waitUntilReady(10s).ok());
    client::ClientOptions clientOptions;
    clientOptions.coordinator = cluster_->coordinatorEndpoint();
    clientOptions.requestTimeout = 60s;
    auto client = client::Client::connect(clientOptions);
    ASSERT_TRUE(client.ok()) << client.status().toString();
    client_ = std::move(client).value();
  }

  Result<std::unique_ptr<client::Session>> start(const std::string& type, const std::string& uri) {
    client::SessionOptions options{type, uri};
    return client_->startSession(options);
  }

  bool hasLlvm() {
    auto workers = client_->listCluster();
    if (!workers.ok() || workers->empty()) return false;
    const auto& types = workers->front().sessionTypes;
    return std::find(types.begin(), types.end(), "llvm") != types.end();
  }

  std::optional<WorkingDirectory> base_;
  fs::path allowed_, outside_;
  std::unique_ptr<LocalCluster> cluster_;
  std::unique_ptr<client::Client> client_;
};

TEST_F(FileAccessCluster, OutsideTheAllowedDirectoryIsDeniedAndTheWorkerKeepsServing) {
  startCluster(std::vector<fs::path>{allowed_});
  ASSERT_NE(client_, nullptr);
  client::SessionOptions steady{"noop", "benchmark://t/1"};
  steady.observations = {"Sum"};
  auto bystander = client_->startSession(steady);
  ASSERT_TRUE(bystander.ok()) << bystander.status().toString();

  fs::create_symlink(outside_ / "secret.ll", allowed_ / "absolute.ll");
  fs::create_symlink("../outside/secret.ll", allowed_ / "relative.ll");
  const std::vector<std::string> refused{
      fileUri(outside_ / "secret.ll"), fileUri(outside_ / "missing.ll"),
      fileUri(allowed_ / "absolute.ll"), fileUri(allowed_ / "relative.ll"), "file:///etc/passwd"};
  // '..' is refused too: by the file rule, or already by the URI syntax of
  // the datasets registry (invalid argument).
  const std::string dotDot = fileUri(allowed_ / ".." / "outside" / "secret.ll");
  std::vector<std::string> types{"noop"};
  if (hasLlvm()) types.push_back("llvm");
  for (const std::string& type : types) {
    for (const std::string& uri : refused) {
      auto session = start(type, uri);
      ASSERT_FALSE(session.ok()) << type << " read " << uri;
      EXPECT_EQ(session.status().code(), ErrorCode::kPermissionDenied)
          << type << " " << uri << ": " << session.status().toString();
      EXPECT_NE(session.status().message().find("--allow-files"), std::string::npos)
          << session.status().message();
    }
    auto traversal = start(type, dotDot);
    ASSERT_FALSE(traversal.ok()) << type << " read " << dotDot;
    EXPECT_TRUE(traversal.status().code() == ErrorCode::kPermissionDenied ||
                traversal.status().code() == ErrorCode::kInvalidArgument)
        << traversal.status().toString();
    // Whether the file outside exists does not show in the answer.
    auto existing = start(type, fileUri(outside_ / "secret.ll")).status().message();
    auto missing = start(type, fileUri(outside_ / "missing.ll")).status().message();
    existing.replace(existing.find("secret.ll"), 9, "X");
    missing.replace(missing.find("missing.ll"), 10, "X");
    EXPECT_EQ(existing, missing) << type;

    // Inside: read; a missing file inside is not-found as before.
    auto inside = start(type, fileUri(allowed_ / "prog.ll"));
    ASSERT_TRUE(inside.ok()) << type << ": " << inside.status().toString();
    EXPECT_EQ(start(type, fileUri(allowed_ / "missing.ll")).status().code(), ErrorCode::kNotFound);
  }

  // The bystander never noticed, and the worker still serves new sessions.
  auto step =
      (*bystander)
          ->step({Value(std::int64_t{2}), Value(std::int64_t{3})}, std::vector<std::string>{"Sum"});
  ASSERT_TRUE(step.ok()) << step.status().toString();
  EXPECT_EQ(step->observations[0].as<std::int64_t>(), 5);
  EXPECT_TRUE(start("noop", "benchmark://t/2").ok());
  auto workers = client_->listCluster();
  ASSERT_TRUE(workers.ok());
  EXPECT_EQ(workers->size(), 1u);
}

TEST_F(FileAccessCluster, TheLlvmTypeReadsAFileInside) {
  startCluster(std::vector<fs::path>{allowed_});
  ASSERT_NE(client_, nullptr);
  if (!hasLlvm()) GTEST_SKIP() << "this build has no llvm session type";
  client::SessionOptions options{"llvm", fileUri(allowed_ / "prog.ll")};
  options.observations = {"IrInstructionCount"};
  auto session = client_->startSession(options);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  EXPECT_EQ((*session)->initialObservations()[0].as<std::int64_t>(), 2);
}

TEST_F(FileAccessCluster, NoneAllowsNothingEvenOnLoopback) {
  startCluster(std::vector<fs::path>{});
  ASSERT_NE(client_, nullptr);
  EXPECT_EQ(start("noop", fileUri(allowed_ / "prog.ll")).status().code(),
            ErrorCode::kPermissionDenied);
  EXPECT_TRUE(start("noop", "benchmark://t/1").ok());
}

// The process's current directory, for one test.
class InDirectory {
 public:
  explicit InDirectory(const fs::path& directory) : previous_(fs::current_path()) {
    fs::current_path(directory);
  }
  ~InDirectory() { fs::current_path(previous_); }

 private:
  fs::path previous_;
};

TEST_F(FileAccessCluster, ByDefaultALoopbackClusterReadsTheCurrentDirectory) {
  InDirectory here(allowed_);
  startCluster(std::nullopt);
  ASSERT_NE(client_, nullptr);
  EXPECT_TRUE(start("noop", fileUri(allowed_ / "prog.ll")).ok());
  EXPECT_EQ(start("noop", fileUri(outside_ / "secret.ll")).status().code(),
            ErrorCode::kPermissionDenied);
}

// What a worker logs at start about files, with its listening endpoints.
std::string startupLog(WorkerConfig config) {
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);
  Logger logger = std::make_shared<spdlog::logger>("worker", sink);
  logger->set_level(spdlog::level::info);
  zmq::context_t zmq(1);
  SteadyClock clock;
  SessionTypeRegistry types;
  types.add<NoopSession, NoopContext>("noop");
  auto server = WorkerServer::create(std::move(config), types, zmq, clock, logger);
  if (!server.ok()) return "create failed: " + server.status().toString();
  std::string text;
  for (const std::string& line : sink->last_formatted()) text += line;
  return text;
}

TEST_F(FileAccessCluster, AWorkerReachableFromElsewhereReadsNothingUnlessTold) {
  InDirectory here(allowed_);
  WorkerConfig loopback;
  loopback.listen = "tcp://127.0.0.1:0";
  EXPECT_NE(startupLog(loopback).find("only below " + allowed_.string()), std::string::npos)
      << startupLog(loopback);
  // A loopback listener advertised under another address: clients come from
  // elsewhere (a forwarded port), so the default allows nothing.
  WorkerConfig advertised = loopback;
  advertised.advertise = "tcp://192.0.2.1:7800";
  EXPECT_NE(startupLog(advertised).find("reads no client-named files"), std::string::npos)
      << startupLog(advertised);
  advertised.allowFiles = std::vector<fs::path>{outside_};
  EXPECT_NE(startupLog(advertised).find("only below " + outside_.string()), std::string::npos);
  // A directory that does not exist stops the start with the flag's name.
  advertised.allowFiles = std::vector<fs::path>{base_->path() / "missing"};
  std::string failed = startupLog(advertised);
  EXPECT_NE(failed.find("create failed: invalid argument"), std::string::npos) << failed;
  EXPECT_NE(failed.find("--allow-files"), std::string::npos) << failed;
}

}  // namespace
}  // namespace kiln
