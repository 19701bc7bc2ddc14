// Well-formed UTF-8 as Unicode's table 3-7 defines it, and the replacement
// of what is not, on which JSON and Prometheus label values rely.
#include "common/base/utf8.h"

#include <gtest/gtest.h>

#include "common/base/json_text.h"

namespace kiln {
namespace {

TEST(Utf8Test, SequenceLengthsFollowTheTable) {
  EXPECT_EQ(utf8SequenceLength("a"), 1u);
  EXPECT_EQ(utf8SequenceLength(std::string_view("\0", 1)), 1u);
  EXPECT_EQ(utf8SequenceLength("\xC3\xBC"), 2u);          // ü
  EXPECT_EQ(utf8SequenceLength("\xE6\x9D\xB1"), 3u);      // 東
  EXPECT_EQ(utf8SequenceLength("\xED\x9F\xBF"), 3u);      // U+D7FF, just below the surrogates
  EXPECT_EQ(utf8SequenceLength("\xF0\x9F\x94\xA5"), 4u);  // U+1F525
  EXPECT_EQ(utf8SequenceLength("\xF4\x8F\xBF\xBF"), 4u);  // U+10FFFF
  for (std::string_view bad :
       {"\x80", "\xBF", "\xC0\xAF", "\xC1\xBF", "\xC3", "\xC3(", "\xE0\x80\xAF", "\xE2\x82",
        "\xED\xA0\x80", "\xF0\x8F\xBF\xBF", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xFF", ""}) {
    EXPECT_EQ(utf8SequenceLength(bad), 0u) << testing::PrintToString(std::string(bad));
  }
}

TEST(Utf8Test, JsonKeepsUtf8AndReplacesEveryOtherByte) {
  EXPECT_EQ(jsonEscape("n\xC3\xBCrnberg \"1\""), "n\xC3\xBCrnberg \\\"1\\\"");
  // Each byte that starts no sequence is one U+FFFD; what follows is kept.
  EXPECT_EQ(jsonEscape("a\xFF\xFE"
                       "b\xE2\x82\n"),
            "a\xEF\xBF\xBD\xEF\xBF\xBD"
            "b\xEF\xBF\xBD\xEF\xBF\xBD\\n");
  EXPECT_EQ(jsonEscape("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace kiln
