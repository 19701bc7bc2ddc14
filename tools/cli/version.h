// What `kiln --version` prints: kiln's version, the wire protocol it speaks,
// and the LLVM its session types were built against.
#pragma once

#include <string>

namespace kiln::cli {

std::string versionText();

}  // namespace kiln::cli
