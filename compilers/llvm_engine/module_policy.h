// What of a client's module may reach LLVM: a module is hostile input, as
// hostile as the messages that carry it. Every module a client sends is
// checked right after it is parsed and verified, before anything else reads
// it (llvm sessions: ModuleState::fromBitcode/fromIrText; mlgo sessions:
// checkModule, before opt-19/llc-19 see it), in a plain worker and in every
// child of `kiln nest` alike. A refusal is invalid-argument naming the
// construct; nothing is stripped, so what runs is what the client sent.
//
// Refused:
// - assembly (module asm, inline asm) that asm_policy.h refuses, and inline
//   asm whose operands print a symbol that could start a directive;
// - metadata that makes a pass or the linker open files the module names:
//   !llvm.gcov (insert-gcov-profiling writes its notes and data files there),
//   !llvm.dependent-libraries and !llvm.linker.options (lld and link.exe
//   load the libraries they name);
// - more data than the operator's --max-module-data-bytes (default
//   kDefaultModuleDataBytes) for the code generator to write (initialized
//   globals, their alignment, function alignment and patchable entries,
//   assembler fills), which would otherwise appear only once the object is
//   made, in the worker's memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <kiln/status.h>

namespace llvm {
class Module;
}

namespace kiln::llvm_engine {

// The default of --max-module-data-bytes (HostLimits::maxModuleDataBytes).
inline constexpr std::uint64_t kDefaultModuleDataBytes = std::uint64_t{256} << 20;

// LLVM's IR text parser recurses once per bracket ((, [, {, <) it is
// inside: 400 KB of `[1 x [1 x ...` overflowed the worker's stack before any
// module existed to check. ok, or invalid-argument naming the depth, for
// text nested at most kMaxIrTextNesting deep (outside strings and comments).
inline constexpr std::size_t kMaxIrTextNesting = 256;
Status checkIrTextNesting(std::string_view text, std::string_view name);

// ok, or invalid-argument "module 'NAME': ... ; kiln refuses it (docs/security.md, A client's
// module)". `maxDataBytes` is the operator's --max-module-data-bytes.
Status checkClientModule(const llvm::Module& module, std::string_view name,
                         std::uint64_t maxDataBytes = kDefaultModuleDataBytes);

}  // namespace kiln::llvm_engine
