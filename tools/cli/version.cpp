#include "tools/cli/version.h"

#include <fmt/format.h>

#include <kiln/version.h>
#include "schema/kiln.capnp.h"
#ifdef KILN_WITH_LLVM
#include "llvm/Config/llvm-config.h"
#endif

namespace kiln::cli {

std::string versionText() {
#ifdef KILN_WITH_LLVM
  const std::string llvm = LLVM_VERSION_STRING;
#else
  const std::string llvm = "none (built without LLVM: -DKILN_WITH_LLVM=OFF)";
#endif
  return fmt::format("kiln {}\nprotocol {}\nLLVM {}", kKilnVersion, wire::PROTOCOL_VERSION, llvm);
}

}  // namespace kiln::cli
