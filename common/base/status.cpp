#include "common/base/status.h"

namespace kiln {

std::string_view errorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "ok";
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kTimeout:
      return "timeout";
    case ErrorCode::kDisconnected:
      return "disconnected";
    case ErrorCode::kOverloaded:
      return "overloaded";
    case ErrorCode::kCompileError:
      return "compile error";
    case ErrorCode::kPermissionDenied:
      return "permission denied";
    case ErrorCode::kUnimplemented:
      return "unimplemented";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "unknown";
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
