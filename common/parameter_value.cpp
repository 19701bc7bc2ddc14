#include "common/parameter_value.h"

#include <fmt/format.h>

#include <charconv>

namespace kiln {

Result<std::uint64_t> parseUnsignedParameter(const std::string& key, const std::string& value,
                                             std::string_view wanted) {
  std::uint64_t number = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (value.empty() || error != std::errc() || end != value.data() + value.size()) {
    return invalidArgument(fmt::format("parameter '{}' wants {}, got '{}'", key, wanted, value));
  }
  return number;
}

}  // namespace kiln
