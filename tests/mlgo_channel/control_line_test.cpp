// The one parser of the channel's control lines, shared by the blocking
// reader and the loop's readiness scan: what it accepts, what it refuses and
// that a refusal names the line.
#include "compilers/mlgo_channel/control_line.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

#include "tests/mlgo_channel/test_support.h"

namespace kiln::mlgo_channel {
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

// The decision lines LLVM writes are read without the JSON parser; every
// line near that form must still mean what JSON says it means.
TEST(ControlLineTest, CanonicalNumberLinesAgreeWithJson) {
  ChannelHeader scored = headerWith(/*score=*/true);
  struct Case {
    std::string_view line;
    std::optional<std::int64_t> number;  // nullopt: refused
  };
  for (const Case& c :
       {Case{R"({"observation":0})", 0}, Case{R"({"observation":263})", 263},
        Case{R"({"observation":-4})", -4}, Case{R"({"observation":-0})", 0},
        Case{R"({"observation":9223372036854775807})", INT64_MAX},
        Case{R"({"observation":9223372036854775808})", std::nullopt},
        // llvm::json, which decides what the quick path leaves to it, takes
        // leading zeros and a plus sign (strict JSON refuses both; LLVM's
        // writer writes neither).
        Case{R"({"observation":007})", 7}, Case{R"({"observation":+7})", 7},
        Case{R"({"observation":7 })", 7}, Case{R"({"observation":})", std::nullopt},
        Case{R"({"observation":-})", std::nullopt}, Case{R"({"observation":7}})", std::nullopt},
        Case{R"({"observation":7,"x":1})", std::nullopt}, Case{R"({"outcome":12})", 12}}) {
    Result<ControlLine> parsed = parseControlLine(c.line, scored);
    ASSERT_EQ(parsed.ok(), c.number.has_value()) << c.line << ": " << parsed.status().toString();
    if (c.number) {
      EXPECT_EQ(parsed->number, *c.number) << c.line;
    }
  }
  // An outcome line without a score announced stays refused.
  EXPECT_FALSE(parseControlLine(R"({"outcome":12})", headerWith(/*score=*/false)).ok());
}

}  // namespace
}  // namespace kiln::mlgo_channel
