// `--metrics-listen ADDR:PORT` as typed by an operator: parsed and checked
// before anything binds, so a bad flag fails with a message naming what was
// wrong instead of an HTTP server that silently does not start.
#pragma once

#include <string>
#include <string_view>

#include <kiln/status.h>

namespace kiln::metrics {

struct ListenAddress {
  std::string host;  // IPv4 address or host name; "[::1]" style is refused (IPv4 only)
  int port = 0;      // 0 = any free port
};

// "127.0.0.1:9100", "localhost:0", "0.0.0.0:9100". Fails with
// invalid-argument on a missing or non-numeric port, a port above 65535, an
// empty host, or characters that cannot belong to a host name.
Result<ListenAddress> parseListenAddress(std::string_view text);

// Whether the address keeps the endpoint on this machine (the metrics and
// the dashboard have no authentication).
bool isLoopbackHost(std::string_view host);

}  // namespace kiln::metrics
