// How a kiln::Status reaches Python: the extension throws StatusError and a
// translator registered with the module raises the class of kiln.errors that
// names the error kind (kiln.NotFound, kiln.SessionLost, kiln.Overloaded...).
#pragma once

#include <cstddef>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <kiln/status.h>

namespace kiln::python {

class StatusError : public std::exception {
 public:
  explicit StatusError(Status status) : status_(std::move(status)) {}
  // A step that failed after some of its actions ran: the exception carries
  // how many (`actions_applied`), as they stay applied.
  StatusError(Status status, std::size_t actionsApplied)
      : status_(std::move(status)), actionsApplied_(actionsApplied) {}
  const Status& status() const { return status_; }
  const std::optional<std::size_t>& actionsApplied() const { return actionsApplied_; }
  const char* what() const noexcept override { return status_.message().c_str(); }

 private:
  Status status_;
  std::optional<std::size_t> actionsApplied_;
};

// The name of the kiln.errors class for `code` ("NotFound", "SessionLost", ...).
std::string_view errorClassName(ErrorCode code);

inline void throwIfError(const Status& status) {
  if (!status.ok()) throw StatusError(status);
}

template <class T>
T unwrap(Result<T> result) {
  if (!result.ok()) throw StatusError(result.status());
  return std::move(result).value();
}

// Installs the StatusError -> kiln.errors translation; call once at import.
void registerStatusTranslator();

}  // namespace kiln::python
