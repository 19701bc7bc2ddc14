// Writing JSON text by hand (reports, status): string escaping per RFC 8259.
#pragma once

#include <string>
#include <string_view>

namespace kiln {

// `text` as the inside of a JSON string literal (quotes not included);
// bytes that are not UTF-8 become U+FFFD (common/base/utf8.h).
std::string jsonEscape(std::string_view text);

}  // namespace kiln
