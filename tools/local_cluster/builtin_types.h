// The session types that kiln's own worker binary and local mode host.
#pragma once

#include "worker/kit/session_types.h"

namespace kiln {

void registerBuiltinSessionTypes(SessionTypeRegistry& types);

}  // namespace kiln
