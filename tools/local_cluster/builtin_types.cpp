#include "tools/local_cluster/builtin_types.h"

#include "worker/noop_session.h"

#ifdef KILN_WITH_LLVM_SESSION
#include "compilers/llvm_session/llvm_session.h"
#endif

#ifdef KILN_WITH_MLGO_SESSION
#include "compilers/mlgo_session/compile_session.h"
#include "compilers/mlgo_session/interactive_session.h"
#endif

namespace kiln {

void registerBuiltinSessionTypes(SessionTypeRegistry& types) {
  types.add<NoopSession, NoopContext>("noop");
#if defined(KILN_WITH_LLVM_SESSION) || defined(KILN_WITH_MLGO_SESSION)
  // One registry for the process: the llvm and mlgo contexts serve the same
  // datasets, and a corpus of 10,000 modules is scanned once, not per context.
  auto datasets = std::make_shared<datasets::SharedDatasetRegistry>();
#endif
#ifdef KILN_WITH_LLVM_SESSION
  types.add<llvm_session::LlvmSession, llvm_session::LlvmContext>(
      llvm_session::LlvmSession::kSessionTypeName, [datasets](ContextResources& resources) {
        return std::make_unique<llvm_session::LlvmContext>(resources, datasets);
      });
#endif
#ifdef KILN_WITH_MLGO_SESSION
  using namespace mlgo_session;
  // Each session drives an opt or llc of its own (inline and regalloc keep it
  // alive between steps; compile runs one per step): the worker bounds them
  // per client (--max-compilers-per-client).
  const SessionFootprint compiler{.compilerProcesses = 1};
  types.add<MlgoInlineSession, MlgoContext>(
      MlgoInlineSession::kSessionTypeName,
      [datasets](ContextResources& resources) {
        return std::make_unique<MlgoContext>(resources, datasets);
      },
      compiler);
  types.add<MlgoRegallocSession, MlgoContext>(MlgoRegallocSession::kSessionTypeName, compiler);
  types.add<MlgoCompileSession, MlgoContext>(MlgoCompileSession::kSessionTypeName, compiler);
#endif
}

}  // namespace kiln
