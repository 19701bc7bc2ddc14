// The operator's flags of the `kiln` servers: a number out of range stops
// the command at start-up with a message that names the flag, before it
// binds or forks anything.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/subprocess.h"

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

}  // namespace
}  // namespace kiln
