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
#pragma once

#include "worker/worker_cli.h"

namespace kiln {

template <class Session, class Context = ServiceContext>
int runWorker(int argc, char** argv) {
  CLI::App app{std::string("kiln worker for session type '") + Session::kSessionTypeName + "'"};
  WorkerCommandLine options;
  addWorkerOptions(app, options);
  CLI11_PARSE(app, argc, argv);
  SessionTypeRegistry types;
  types.add<Session, Context>(Session::kSessionTypeName);
  return serveWorker(options, types);
}

}  // namespace kiln
