// What a client's module holds (issue 48), not only the flags around it: the
// first input byte picks what the rest is, and the module is checked where a
// worker checks it (llvm_engine::ModuleState::fromIrText, module_policy.h).
//   0: module-level assembly (`module asm`);
//   1: an inline asm template, with operand $0 a symbol and $1 a register;
//   2: a whole module as IR text (checked, not compiled).
// Properties checked, against LLVM itself rather than the policy's own
// reading: a refusal is invalid-argument; accepted assembly compiles on
// the confined code generation thread (compilers/llvm_engine/codegen.h), where any file
// the assembler tries to include or incbin is denied and reported ("Could
// not find include file"), so such a report means a directive that touches
// files got past the policy; and the object of accepted assembly stays
// within the policy's data bound.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/security/file_confinement.h"
#include "compilers/llvm_engine/codegen.h"
#include "compilers/llvm_engine/module_policy.h"
#include "compilers/llvm_engine/module_state.h"
#include "compilers/llvm_engine/pass_table.h"

namespace {

namespace le = kiln::llvm_engine;

std::shared_ptr<const le::PassTable> passes;

void require(bool condition, const char* what, std::string_view input) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_module_content: property violated: %s\ninput: %.*s\n", what,
                 static_cast<int>(std::min<std::size_t>(input.size(), 400)), input.data());
    std::abort();
  }
}

// Bytes of IR text that spell `text` as an LLVM string constant.
std::string quoted(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f || c == '"' || c == '\\') {
      out += '\\';
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    } else {
      out += c;
    }
  }
  return out;
}

std::string moduleFor(unsigned mode, std::string_view text) {
  const std::string triple = "target triple = \"x86_64-unknown-linux-gnu\"\n";
  if (mode == 0) {
    return triple + "module asm \"" + quoted(text) + "\"\ndefine i32 @main() {\n  ret i32 0\n}\n";
  }
  if (mode == 1) {
    return triple +
           "@kiln_sym = global i32 0\ndefine i32 @main() {\n  call void asm sideeffect \"" +
           quoted(text) + "\", \"s,r\"(ptr @kiln_sym, i32 7)\n  ret i32 0\n}\n";
  }
  return std::string(text);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  auto table = le::PassTable::fromRegistry();
  if (!table.ok()) {
    std::fprintf(stderr, "fuzz_module_content: %s\n", table.status().toString().c_str());
    std::abort();
  }
  passes = *table;
  // Without Landlock an include would be read, not reported: nothing to check.
  if (kiln::FileConfinement::kernelAbi() == 0) {
    std::fprintf(stderr, "fuzz_module_content: this kernel has no Landlock\n");
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const unsigned mode = data[0] % 3;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string ir = moduleFor(mode, text);
  auto state = le::ModuleState::fromIrText(passes, ir, "fuzz.ll");
  if (!state.ok()) {
    require(state.status().code() == kiln::ErrorCode::kInvalidArgument,
            "a refused module is not invalid-argument", text);
    return 0;
  }
  // Whole modules are checked, not compiled: LLVM's backend stops on much
  // that verifies (and a caught stop leaves memory behind on purpose), so
  // compiling them would find LLVM's limits, not the policy's.
  if (mode == 2) return 0;
  auto object = le::emitObject(*(*state)->module(), /*addressSanitizer=*/false);
  // Errors quote the source line: text that spells the report itself is
  // not evidence either way.
  if (!object.ok() && text.find("Could not find") == std::string_view::npos) {
    const std::string& message = object.status().message();
    require(message.find("Could not find include file") == std::string::npos &&
                message.find("Could not find incbin file") == std::string::npos,
            "an accepted module made the assembler open a file", text);
  }
  if (!object.ok()) return 0;
  // Code from the text is a few bytes per input byte; data is bounded.
  require(object->size() <= le::kDefaultModuleDataBytes + 64 * size + (1 << 16),
          "accepted assembly made an object over the data bound", text);
  return 0;
}
