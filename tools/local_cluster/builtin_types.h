// The session types that kiln's own worker binary and local mode host.
#pragma once

#include <kiln/kit/session_types.h>

namespace kiln {

void registerBuiltinSessionTypes(SessionTypeRegistry& types);

}  // namespace kiln
