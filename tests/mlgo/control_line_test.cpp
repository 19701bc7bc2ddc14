// The one parser of the channel's control lines, shared by the blocking
// reader and the loop's readiness scan: what it accepts, what it refuses and
// that a refusal names the line.
#include "mlgo/control_line.h"

#include <gtest/gtest.h>

#include "tests/mlgo/test_support.h"

namespace kiln::mlgo {
namespace {

using testing::specJson;

ChannelHeader headerWith(bool score) {
  std::string line = "{\"features\":[" + specJson("a", "int64_t", {2}) + "]" +
                     (score ? ",\"score\":" + specJson("s", "float", {1}) : "") +
                     ",\"advice\":" + specJson("d", "int64_t", {1}) + "}";
  return parseHeader(line).value();
}

TEST(ControlLineTest, ReadsTheThreeKindsAsJson) {
  ChannelHeader header = headerWith(/*score=*/true);
  Result<ControlLine> context = parseControlLine(R"({"context":"f\u0031 \"x\""})", header);
  ASSERT_TRUE(context.ok()) << context.status().toString();
  EXPECT_EQ(context->kind, ControlKind::kContext);
  EXPECT_EQ(context->context, "f1 \"x\"");  // escapes are JSON's, not text
  Result<ControlLine> observation = parseControlLine(" { \"observation\" : 17 } ", header);
  ASSERT_TRUE(observation.ok()) << observation.status().toString();
  EXPECT_EQ(observation->kind, ControlKind::kObservation);
  EXPECT_EQ(observation->number, 17);
  Result<ControlLine> outcome = parseControlLine(R"({"outcome":3})", header);
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->kind, ControlKind::kOutcome);
  EXPECT_EQ(bytesAfterLine(*context, header, 16), 0u);
  EXPECT_EQ(bytesAfterLine(*observation, header, 16), 17u);  // tensors and their '\n'
  EXPECT_EQ(bytesAfterLine(*outcome, header, 16), 5u);       // the float score and '\n'
}

TEST(ControlLineTest, RefusesWhatIsNotARecordAndNamesIt) {
  ChannelHeader header = headerWith(/*score=*/false);
  for (std::string_view line :
       {std::string_view("garbage"), std::string_view(R"({"observation":1)"),
        std::string_view(R"({"observation":"1"})"), std::string_view(R"({"observation":1.5})"),
        std::string_view(R"({"context":7})"), std::string_view(R"({"observation":1,"x":2})"),
        std::string_view(R"({"outcome":0})"), std::string_view(R"({"unknown":0})"),
        std::string_view("[1]"), std::string_view("")}) {
    Result<ControlLine> parsed = parseControlLine(line, header);
    ASSERT_FALSE(parsed.ok()) << "accepted " << line;
    EXPECT_EQ(parsed.status().code(), ErrorCode::kCompileError) << line;
    EXPECT_NE(parsed.status().message().find("MLGO channel protocol"), std::string::npos);
  }
  // Garbage bytes are shown printable and cut short in the message.
  std::string binary = "\x01\x02" + std::string(200, 'z');
  std::string message = parseControlLine(binary, header).status().message();
  EXPECT_NE(message.find("\"??zzz"), std::string::npos) << message;
  EXPECT_NE(message.find("...\""), std::string::npos) << message;
}

}  // namespace
}  // namespace kiln::mlgo
