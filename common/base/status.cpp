#include <kiln/status.h>

#include <iterator>

namespace kiln {

std::string_view errorCodeName(ErrorCode code) {
  const auto value = static_cast<std::size_t>(code);
  return value < std::size(kErrorCodeTexts) ? kErrorCodeTexts[value] : "unknown";
}

bool isRetryable(ErrorCode code) {
  return code == ErrorCode::kTimeout || code == ErrorCode::kDisconnected ||
         code == ErrorCode::kOverloaded;
}

std::string Status::toString() const {
  if (ok()) return "ok";
  std::string text(errorCodeName(code_));
  text += ": ";
  text += message_;
  return text;
}

}  // namespace kiln
