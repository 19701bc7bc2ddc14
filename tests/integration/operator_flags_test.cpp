// The operator's flags of the `kiln` servers: a number out of range stops
// the command at start-up with a message that names the flag, before it
// binds or forks anything.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <kiln/client/client.h>
#include "common/process/subprocess.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/wait.h"

namespace kiln {
namespace {

using namespace std::chrono_literals;

void expectRefusedAtStart(std::vector<std::string> args, const std::string& flag) {
  args.insert(args.begin(), KILN_BINARY);
  auto ran = runSubprocess(args, 20s);
  ASSERT_TRUE(ran.ok()) << ran.status().toString();
  EXPECT_FALSE(ran->status.success()) << args[1] << " " << flag << " started";
  const std::string said = ran->stderrText + ran->stdoutText;
  EXPECT_NE(said.find(flag), std::string::npos) << args[1] << " " << flag << ": " << said;
}

TEST(OperatorFlags, NumbersOutOfRangeStopTheServerWithTheFlagsName) {
  const std::string huge = "9223372036854775808";  // 2^63
  for (const char* command : {"worker", "nest"}) {
    SCOPED_TRACE(command);
    expectRefusedAtStart({command, "--max-message-bytes", "0"}, "--max-message-bytes");
    expectRefusedAtStart({command, "--max-message-bytes", huge}, "--max-message-bytes");
    expectRefusedAtStart({command, "--max-benchmark-bytes", "0"}, "--max-benchmark-bytes");
    expectRefusedAtStart({command, "--max-benchmark-bytes", huge}, "--max-benchmark-bytes");
    expectRefusedAtStart({command, "--cache-bytes", "0"}, "--cache-bytes");
    expectRefusedAtStart({command, "--cache-bytes", huge}, "--cache-bytes");
    expectRefusedAtStart({command, "--max-deadline-seconds", "0"}, "--max-deadline-seconds");
    expectRefusedAtStart({command, "--mlgo-decision-timeout-ms", "0"},
                         "--mlgo-decision-timeout-ms");
    expectRefusedAtStart({command, "--mlgo-compile-timeout-ms", huge}, "--mlgo-compile-timeout-ms");
    // Both in range, but the longest deadline would be shorter than the default.
    expectRefusedAtStart({command, "--listen", "tcp://127.0.0.1:0", "--max-deadline-seconds", "10",
                          "--deadline-seconds", "300"},
                         "--max-deadline-seconds");
  }
  for (const char* command : {"worker", "nest", "local"}) {
    SCOPED_TRACE(command);
    expectRefusedAtStart({command, "--max-sessions-per-client", "0"}, "--max-sessions-per-client");
    expectRefusedAtStart({command, "--max-compilers-per-client", huge},
                         "--max-compilers-per-client");
    expectRefusedAtStart({command, "--max-compilers", "-1"}, "--max-compilers");
    expectRefusedAtStart({command, "--lease-seconds", "0"}, "--lease-seconds");
    expectRefusedAtStart({command, "--max-benchmark-bytes-per-client", "0"},
                         "--max-benchmark-bytes-per-client");
    expectRefusedAtStart({command, "--max-module-data-bytes", "0"}, "--max-module-data-bytes");
    expectRefusedAtStart({command, "--max-module-data-bytes", huge}, "--max-module-data-bytes");
  }
  for (const char* command : {"coordinator", "local"}) {
    SCOPED_TRACE(command);
    expectRefusedAtStart({command, "--max-experiments-per-client", "0"},
                         "--max-experiments-per-client");
    expectRefusedAtStart({command, "--max-experiment-workers", "5000"}, "--max-experiment-workers");
  }
  expectRefusedAtStart({"local", "--slots", "0"}, "--slots");
  expectRefusedAtStart({"local", "--compile-memory-mb", huge}, "--compile-memory-mb");
  expectRefusedAtStart({"local", "--mlgo-decision-timeout-ms", "-1"}, "--mlgo-decision-timeout-ms");
  expectRefusedAtStart({"coordinator", "--liveness", "0"}, "--liveness");
  expectRefusedAtStart({"coordinator", "--heartbeat-seconds", "0"}, "--heartbeat-seconds");
}

TEST(OperatorFlags, ABadDatasetStopsTheServerWithTheFlagsName) {
  for (const char* command : {"worker", "nest", "local"}) {
    SCOPED_TRACE(command);
    expectRefusedAtStart({command, "--dataset", "no-equals-sign"}, "--dataset");
    expectRefusedAtStart({command, "--dataset", "a/b=/tmp"}, "--dataset");
    expectRefusedAtStart({command, "--dataset", "a=/kiln/no/such/directory"}, "--dataset");
    expectRefusedAtStart({command, "--dataset", "a=/tmp", "--dataset", "a=/tmp"}, "--dataset");
  }
}

// `kiln local` takes the limit flags of `kiln worker` and hands them to its
// workers (issue 48: it had none): with --max-sessions-per-client 1, one
// client's second session is refused, and the refusal names the flag.
TEST(OperatorFlags, KilnLocalServesUnderTheWorkersLimitFlags) {
  testsupport::ScratchDir scratch("kiln-flags");
  SubprocessOptions options;
  options.stdoutPath = scratch.path() / "out";
  options.stderrPath = scratch.path() / "err";
  const std::vector<std::string> args = {KILN_BINARY,
                                         "local",
                                         "--listen",
                                         "tcp://127.0.0.1:0",
                                         "--workers",
                                         "1",
                                         "--nesting-hosts",
                                         "0",
                                         "--max-sessions-per-client",
                                         "1",
                                         "--max-compilers",
                                         "0",
                                         "--lease-seconds",
                                         "5",
                                         "--max-message-bytes",
                                         "65536",
                                         "--cache-bytes",
                                         "2000000",
                                         "--deadline-seconds",
                                         "20"};
  auto local = Subprocess::spawn(args, options);
  ASSERT_TRUE(local.ok()) << local.status().toString();
  const std::regex announced("coordinator (tcp://[0-9.]+:[0-9]+)");
  std::string coordinator;
  testsupport::waitUntil(
      [&] {
        std::ifstream out(options.stdoutPath);
        std::stringstream text;
        text << out.rdbuf();
        std::smatch match;
        const std::string said = text.str();
        if (std::regex_search(said, match, announced)) coordinator = match[1];
        return !coordinator.empty() || local->poll().has_value();
      },
      std::chrono::seconds(30));
  if (coordinator.empty()) {
    std::ifstream err(options.stderrPath);
    std::stringstream said;
    said << err.rdbuf();
    FAIL() << "kiln local did not start: " << said.str();
  }
  client::ClientOptions clientOptions;
  clientOptions.coordinator = coordinator;
  clientOptions.requestTimeout = std::chrono::seconds(10);
  auto client = client::Client::connect(clientOptions);
  ASSERT_TRUE(client.ok()) << client.status().toString();
  ASSERT_TRUE(testsupport::waitUntil(
      [&] {
        auto workers = (*client)->listCluster();
        return workers.ok() && !workers->empty();
      },
      std::chrono::seconds(30)));
  auto first = (*client)->startSession({"noop", "benchmark://flags/a"});
  ASSERT_TRUE(first.ok()) << first.status().toString();
  auto second = (*client)->startSession({"noop", "benchmark://flags/b"});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), ErrorCode::kOverloaded) << second.status().toString();
  EXPECT_NE(second.status().message().find("--max-sessions-per-client"), std::string::npos)
      << second.status().toString();
  local->kill();
}

}  // namespace
}  // namespace kiln
