#include "local/builtin_types.h"

#include "worker/noop_session.h"

#ifdef KILN_WITH_LLVM_SESSION
#include "llvmsession/llvm_session.h"
#endif

#ifdef KILN_WITH_MLGO_SESSION
#include "mlgosession/compile_session.h"
#include "mlgosession/interactive_session.h"
#endif

namespace kiln {

void registerBuiltinSessionTypes(SessionTypeRegistry& types) {
  types.add<NoopSession, NoopContext>("noop");
#ifdef KILN_WITH_LLVM_SESSION
  types.add<llvmsession::LlvmSession, llvmsession::LlvmContext>(
      llvmsession::LlvmSession::kSessionTypeName);
#endif
#ifdef KILN_WITH_MLGO_SESSION
  using namespace mlgosession;
  types.add<MlgoInlineSession, MlgoContext>(MlgoInlineSession::kSessionTypeName);
  types.add<MlgoRegallocSession, MlgoContext>(MlgoRegallocSession::kSessionTypeName);
  types.add<MlgoCompileSession, MlgoContext>(MlgoCompileSession::kSessionTypeName);
#endif
}

}  // namespace kiln
