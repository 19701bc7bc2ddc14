// Whether bytes are a module LLVM 19 accepts, checked in-process the way a
// session would load it (bitcode or IR text parsed, then the verifier), for
// the session types that hand a module to a child opt/llc (mlgo) and for
// `kiln datasets check`. Bitcode from another LLVM is named by its producer.
// A module checkClientModule (module_policy.h) refuses is refused here too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <kiln/status.h>
#include "compilers/llvm_engine/module_policy.h"

namespace kiln::llvm_engine {

// The producer string that bitcode carries ("LLVM19.1.7", "LLVM17.0.6"),
// nullopt when it has none or is not readable bitcode.
std::optional<std::string> bitcodeProducer(std::string_view bytes);

// `error` (a parse failure of `bytes`) with a sentence added when the bytes
// are bitcode that another LLVM produced: "bitcode from another LLVM version
// (producer 'LLVM99.0.0'; this worker reads LLVM 19.1.7)". Other errors
// come back as they are.
Status explainForeignBitcode(const Status& error, std::string_view bytes);

// ok when `bytes` (bitcode if they start with its magic, else IR text) parse
// and pass the verifier; otherwise invalid-argument naming `name` and what
// LLVM said. Runs guarded (crash_guard.h): a crash inside LLVM comes back as
// an error, and damages the process as runGuarded describes. `maxDataBytes`:
// the operator's --max-module-data-bytes (module_policy.h).
Status checkModule(std::string_view bytes, const std::string& name,
                   std::uint64_t maxDataBytes = kDefaultModuleDataBytes);

}  // namespace kiln::llvm_engine
