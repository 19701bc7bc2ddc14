// The error kinds exist once: kAllErrorCodes (include/kiln/status.h). The wire
// protocol's ErrorCode enum must list the same kinds under the same numbers
// and names (checked through Cap'n Proto's schema, not by hand), and every
// kind must cross the wire unchanged. Python's classes are checked against
// the same list in tests/python/test_errors.py.
#include <capnp/message.h>
#include <capnp/schema.h>
#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include <kiln/status.h>
#include "common/base/wire_convert.h"
#include "schema/kiln.capnp.h"

namespace kiln {
namespace {

// "permission denied" -> "permissionDenied", the schema's spelling.
std::string camelCase(std::string_view words) {
  std::string out;
  bool upper = false;
  for (char c : words) {
    if (c == ' ') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out;
}

TEST(ErrorCodesTest, TheWireProtocolListsTheSameKindsUnderTheSameNumbersAndNames) {
  const auto enumerants = capnp::Schema::from<wire::ErrorCode>().getEnumerants();
  ASSERT_EQ(enumerants.size(), std::size(kAllErrorCodes));
  for (std::size_t i = 0; i < std::size(kAllErrorCodes); ++i) {
    const ErrorCode code = kAllErrorCodes[i];
    EXPECT_EQ(static_cast<std::size_t>(code), i) << "kAllErrorCodes is in numeric order";
    EXPECT_EQ(enumerants[i].getOrdinal(), i);
    EXPECT_EQ(std::string(enumerants[i].getProto().getName().cStr()),
              camelCase(errorCodeName(code)))
        << "ErrorCode " << i;
  }
}

TEST(ErrorCodesTest, EveryKindCrossesTheWireUnchanged) {
  for (ErrorCode code : kAllErrorCodes) {
    if (code == ErrorCode::kOk) continue;
    capnp::MallocMessageBuilder message;
    auto error = message.initRoot<wire::Error>();
    toWire(Status(code, "why"), error);
    const Status back = fromWire(error.asReader());
    EXPECT_EQ(back.code(), code) << errorCodeName(code);
    EXPECT_EQ(back.message(), "why");
  }
}

TEST(ErrorCodesTest, NamesAreDistinct) {
  for (ErrorCode a : kAllErrorCodes) {
    for (ErrorCode b : kAllErrorCodes) {
      if (a != b) {
        EXPECT_NE(errorCodeName(a), errorCodeName(b));
      }
    }
  }
}

}  // namespace
}  // namespace kiln
