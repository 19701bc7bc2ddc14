// A deliberately raw HTTP/1.1 client for the observability tests: it sends
// exactly the bytes it is given to 127.0.0.1, so tests can also send garbage,
// and reads until the server closes. Bounded by a receive timeout.
#pragma once

#include <string>

namespace kiln::observe_test {

struct HttpReply {
  int status = 0;  // 0 = no parsable answer
  std::string body;
  std::string raw;
};

// Sends `bytes` to 127.0.0.1:port and returns what came back: reads until
// the server closes, a whole response (headers and Content-Length bytes) has
// arrived, or `timeoutSeconds` pass without data (the server may keep an
// answered connection open for its keep-alive time).
HttpReply exchange(int port, const std::string& bytes, int timeoutSeconds = 5);
// GET `path` with Connection: close.
HttpReply get(int port, const std::string& path);
// The value of the first sample line starting with `series` (a metric name
// with its labels, e.g. kiln_slots or kiln_errors_total{kind="not_found"});
// -1 when the exposition has no such line.
double sampleValue(const std::string& exposition, const std::string& series);

}  // namespace kiln::observe_test
