// Error values for expected failures. A small closed set of codes tells the
// caller what to do next (fix the request, retry later, reconnect, give up);
// the message says what was wrong. Exceptions are reserved for bugs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include <kiln/error_codes.h>

namespace kiln {

// ErrorCode and kAllErrorCodes are generated from schema/error_codes.txt,
// the list the wire protocol and Python are also made from.
std::string_view errorCodeName(ErrorCode code);

// True for the codes after which the same request may succeed later.
bool isRetryable(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "not found: session 12 does not exist".
  std::string toString() const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline Status okStatus() { return {}; }
inline Status invalidArgument(std::string m) { return {ErrorCode::kInvalidArgument, std::move(m)}; }
inline Status notFound(std::string m) { return {ErrorCode::kNotFound, std::move(m)}; }
inline Status timeoutError(std::string m) { return {ErrorCode::kTimeout, std::move(m)}; }
inline Status disconnected(std::string m) { return {ErrorCode::kDisconnected, std::move(m)}; }
inline Status overloaded(std::string m) { return {ErrorCode::kOverloaded, std::move(m)}; }
inline Status compileError(std::string m) { return {ErrorCode::kCompileError, std::move(m)}; }
inline Status permissionDenied(std::string m) {
  return {ErrorCode::kPermissionDenied, std::move(m)};
}
inline Status unimplemented(std::string m) { return {ErrorCode::kUnimplemented, std::move(m)}; }
inline Status internalError(std::string m) { return {ErrorCode::kInternal, std::move(m)}; }

// A value or the Status that explains why there is none.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value)
      : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : state_(std::in_place_index<1>, std::move(status)) {}  // NOLINT

  bool ok() const { return state_.index() == 0; }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<1>(state_);
  }
  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace kiln

#define KILN_CONCAT_INNER(a, b) a##b
#define KILN_CONCAT(a, b) KILN_CONCAT_INNER(a, b)

// Returns the Status of `expr` from the enclosing function when it is not ok.
#define KILN_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::kiln::Status kiln_status_ = (expr);        \
    if (!kiln_status_.ok()) return kiln_status_; \
  } while (false)

// `KILN_ASSIGN_OR_RETURN(auto x, makeX());` unwraps a Result or returns its Status.
#define KILN_ASSIGN_OR_RETURN(lhs, expr) \
  KILN_ASSIGN_OR_RETURN_IMPL(KILN_CONCAT(kiln_result_, __LINE__), lhs, expr)
#define KILN_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
