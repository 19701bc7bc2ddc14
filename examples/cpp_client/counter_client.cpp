// A program that drives sessions through kiln's C++ client (kiln::client),
// built against kiln's public headers only. It starts a session of the
// `counter` type (examples/cpp_session), appends 'a' and 'b', and prints the
// text and its length:
//
//   kiln-counter-client tcp://127.0.0.1:7700
#include <cstdio>

#include <kiln/client/client.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s COORDINATOR (e.g. tcp://127.0.0.1:7700)\n", argv[0]);
    return 2;
  }
  kiln::client::ClientOptions options;
  options.coordinator = argv[1];
  auto client = kiln::client::Client::connect(options);
  if (!client.ok()) {
    std::fprintf(stderr, "cannot connect: %s\n", client.status().toString().c_str());
    return 1;
  }
  auto session = (*client)->startSession({"counter", "benchmark://example/x"});
  if (!session.ok()) {
    std::fprintf(stderr, "cannot start a counter session: %s\n",
                 session.status().toString().c_str());
    return 1;
  }
  auto step = (*session)->step({kiln::Value(std::int64_t{0}), kiln::Value(std::int64_t{1})},
                               std::vector<std::string>{"Text", "Length"});
  if (!step.ok()) {
    std::fprintf(stderr, "the step failed: %s\n", step.status().toString().c_str());
    return 1;
  }
  std::printf("text %s length %lld\n", step->observations[0].as<std::string>().c_str(),
              static_cast<long long>(step->observations[1].as<std::int64_t>()));
  return (*session)->end().ok() ? 0 : 1;
}
