#include "compilers/llvm_session/module_cache.h"

namespace kiln::llvm_session {

Result<std::string> handleModuleCacheParameter(ParsedModuleCache& cache, const std::string& key,
                                               const std::string& value) {
  return handleCacheParameter(cache, kModuleCachePrefix, key, value);
}

}  // namespace kiln::llvm_session
