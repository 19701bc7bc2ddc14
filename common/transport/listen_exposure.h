// Whether a listening endpoint is reachable from other machines, and what
// kiln says about it at start: without a cluster key, listening beyond
// loopback lets anyone who reaches the port run sessions and read traffic.
#pragma once

#include <string>

#include <kiln/logging.h>

namespace kiln {

// True for tcp:// on 127.0.0.0/8, ::1 or localhost, and for inproc:// and
// ipc:// (same host only). Wildcards and other addresses are not loopback.
bool isLoopbackEndpoint(const std::string& endpoint);

// Logs where `role` listens: info when loopback or CURVE-secured, a loud
// multi-line warning when reachable from the network without a key.
void announceExposure(const std::string& role, const std::string& endpoint, bool secured,
                      Logger& logger);

}  // namespace kiln
