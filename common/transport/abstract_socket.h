// Addresses in Linux's abstract socket namespace ("@name" in texts): no file
// to create, remove or leave behind; per network namespace. Used by a
// worker's same-host direct channels and the clients that connect to them.
#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <string_view>

#include <kiln/status.h>

namespace kiln {

struct AbstractAddress {
  sockaddr_un address{};
  socklen_t size = 0;
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&address); }
};

// `name` without the '@'; invalidArgument when it is empty or too long.
Result<AbstractAddress> abstractAddress(std::string_view name);

}  // namespace kiln
