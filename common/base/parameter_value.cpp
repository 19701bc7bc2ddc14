#include <kiln/parameter_value.h>

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

Status aboveCeiling(std::string_view key, std::uint64_t value, std::uint64_t ceiling,
                    std::string_view unit, std::string_view setBy) {
  return permissionDenied(
      fmt::format("{} = {} {} is above this worker's limit of {} {} (set by {}); a client may "
                  "only lower it",
                  key, value, unit, ceiling, unit, setBy));
}

}  // namespace kiln
