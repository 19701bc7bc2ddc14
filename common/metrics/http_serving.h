// The mechanics of serving a cpp-httplib server on a thread of its own, as
// kiln's HTTP endpoints do (the metrics endpoint, `kiln tools serve`):
// binding without SO_REUSEPORT, starting so that a stop() right after
// cannot be lost, and stopping until the thread has left. Internal: the
// header includes httplib, so only .cpp files built with httplib's flags
// (PkgConfig::KILN_HTTPLIB) include it.
#pragma once

#include <httplib.h>

#include <chrono>
#include <string>
#include <string_view>
#include <thread>

#include <kiln/status.h>

namespace kiln {

// Binds `server` to host:port (port 0: any free port) with SO_REUSEADDR but
// not httplib's default SO_REUSEPORT, which would let a second server bind a
// port in use and take half its requests. The bound port, or -1.
int bindWithoutReusePort(httplib::Server& server, const std::string& host, int port);

// Runs listen_after_bind() on `thread` and waits until the server runs:
// httplib's stop() only stops a running server. On timeout it stops the
// thread and says so, naming `what` and the port.
Status serveOnThread(httplib::Server& server, std::thread& thread,
                     std::chrono::milliseconds startTimeout, std::string_view what, int port);

// Stops the server and joins its thread; nothing when no thread runs. Until
// listen_after_bind has set its running flag a stop() is a no-op, so it
// keeps asking until the thread leaves.
void stopServing(httplib::Server& server, std::thread& thread);

}  // namespace kiln
