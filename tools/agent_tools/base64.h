// Base64 (RFC 4648, with padding) for modules sent as bitcode in a JSON
// string and bytes observed: JSON has no binary type. Pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kiln::agent_tools {

std::string base64Encode(std::string_view bytes);
// nullopt for text that is not base64 (a wrong character, a bad length or
// padding); whitespace (line breaks of wrapped base64) is skipped.
std::optional<std::string> base64Decode(std::string_view text);

}  // namespace kiln::agent_tools
