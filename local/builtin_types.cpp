#include "local/builtin_types.h"

#include "worker/noop_session.h"

namespace kiln {

void registerBuiltinSessionTypes(SessionTypeRegistry& types) { types.add<NoopSession>("noop"); }

}  // namespace kiln
