// Which assembly text from a client's module may reach LLVM's assembler.
// LLVM assembles a module's own assembly with the worker's rights: module
// asm whenever a symbol table or an object is made, inline asm when code is
// generated (in process for the llvm type, in opt-19/llc-19 for the mlgo
// types). Some directives reach beyond the compile (`.include` and `.incbin`
// read any file the process can; `.print` and Darwin's `.secure_log_*` write
// outside it), macro machinery can build any directive name from its
// arguments, and fill directives turn a few bytes into gigabytes. Pure text
// functions, no LLVM: the module walk is module_policy.h.
//
// The scan looks at every '.' in the text, whatever the target's comment
// and separator characters (a directive hidden in what the scan takes for a
// comment is still seen; one the target reads as a comment is refused all
// the same). Directive names are compared case-insensitively, as LLVM's
// assembler looks them up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::llvm_engine {

// Bounds on what fill and alignment directives may ask of the assembler.
inline constexpr std::uint64_t kMaxFillDirectiveBytes = 1 << 20;  // .zero/.space/.fill/.nops/.org
inline constexpr std::uint64_t kMaxAlignExponent = 16;            // .align/.p2align (2^16 bytes)
inline constexpr std::uint64_t kMaxAlignBytes = 1 << 16;          // .balign

// Bounds on how deep the assembler's expressions can nest. It parses and
// evaluates them recursively (parseParenExpr, parseUnaryExpr,
// MCExpr::evaluateAsRelocatableImpl), and a symbol assigned an expression
// (`.set`, `=`, `.equ`, `.weakref`) is evaluated through its definition:
// `.long -----...1`, `1+1+...+1` or a chain of such assignments a few
// hundred kilobytes long overflow the stack, which no crash guard survives
// (the process dies). A statement may hold at most kMaxStatementOperators
// operator characters, and all assignment statements of a module together
// at most kMaxAssignmentCost (each costs its operators plus one), so no
// expression is deeper than their sum.
inline constexpr std::uint64_t kMaxStatementOperators = 1024;
inline constexpr std::uint64_t kMaxAssignmentCost = 4096;

enum class AsmSource {
  kModule,  // `module asm`: given to the assembler as written
  kInline,  // an inline asm template: `$` operands and `$(a$|b$)` variants first
};

struct AsmVerdict {
  // Why the text may not be assembled ("directive .incbin reads host
  // files"), nullopt when it may.
  std::optional<std::string> refused;
  // Bytes the accepted text's fill and alignment directives may emit, at
  // most (for a module-wide bound).
  std::uint64_t fillBytes = 0;
  // What the accepted text's assignments cost, counted against
  // kMaxAssignmentCost for the whole module: every inline asm and the module
  // asm share one symbol table.
  std::uint64_t assignmentCost = 0;
};

// `operandCount`: how many operands an inline asm template may name ($0 ..
// $operandCount-1); ignored for module asm.
AsmVerdict checkAssembly(std::string_view text, AsmSource source,
                         std::size_t operandCount = 1000000);

}  // namespace kiln::llvm_engine
