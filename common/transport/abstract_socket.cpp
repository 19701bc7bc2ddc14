#include "common/transport/abstract_socket.h"

#include <fmt/format.h>

#include <cstddef>
#include <cstring>

namespace kiln {

Result<AbstractAddress> abstractAddress(std::string_view name) {
  AbstractAddress out;
  out.address.sun_family = AF_UNIX;
  // sun_path[0] stays 0: that is what makes the name abstract.
  if (name.empty() || name.size() + 1 > sizeof(out.address.sun_path)) {
    return invalidArgument(fmt::format("'{}' cannot name an abstract socket", name));
  }
  std::memcpy(out.address.sun_path + 1, name.data(), name.size());
  out.size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return out;
}

}  // namespace kiln
