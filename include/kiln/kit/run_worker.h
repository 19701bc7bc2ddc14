// One line to serve a user-defined session type (public):
//
//   class MySession : public kiln::CompilationSession {
//    public:
//     static constexpr const char* kSessionTypeName = "my-compiler";
//     explicit MySession(MyContext& context);
//     ...
//   };
//   int main(int argc, char** argv) { return kiln::runWorker<MySession, MyContext>(argc, argv); }
//
// The worker takes the same flags as `kiln worker` (--coordinator, --slots, ...).
// This header needs only the kit (worker/kit/): the runtime behind runWorkerMain()
// comes with the library (kiln::session), not through includes.
#pragma once

#include <string>

#include <kiln/kit/service_context.h>
#include <kiln/kit/session_types.h>

namespace kiln {

// Parses `kiln worker`'s flags from `argv` and serves `types` until SIGINT or
// SIGTERM; returns the process's exit code (worker/worker_cli.cpp).
int runWorkerMain(int argc, char** argv, const std::string& description,
                  SessionTypeRegistry& types);

template <class Session, class Context = ServiceContext>
int runWorker(int argc, char** argv) {
  SessionTypeRegistry types;
  types.add<Session, Context>(Session::kSessionTypeName);
  return runWorkerMain(
      argc, argv, std::string("kiln worker for session type '") + Session::kSessionTypeName + "'",
      types);
}

}  // namespace kiln
