#include "compilers/llvm_engine/ir_text.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/SHA1.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::llvm_engine {
namespace {

// Removes the first line starting with `prefix` (with its newline), if any,
// among the module header lines (they come before the first blank line).
void eraseHeaderLine(std::string& text, std::string_view prefix) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    const std::size_t next = end == std::string::npos ? text.size() : end + 1;
    std::string_view line(text.data() + pos, next - pos);
    if (line == "\n") return;  // end of the header block
    if (line.starts_with(prefix)) {
      text.erase(pos, next - pos);
      return;
    }
    pos = next;
  }
}

}  // namespace

std::string canonicalIrText(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, /*AAW=*/nullptr, /*ShouldPreserveUseListOrder=*/false);
  os.flush();
  eraseHeaderLine(text, "; ModuleID = ");
  eraseHeaderLine(text, "source_filename = ");
  return text;
}

std::string sha1Hex(std::string_view text) {
  llvm::SHA1 hasher;
  hasher.update(llvm::StringRef(text.data(), text.size()));
  const auto digest = hasher.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

std::string writeBitcode(const llvm::Module& module) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  llvm::WriteBitcodeToFile(module, os, /*ShouldPreserveUseListOrder=*/true);
  os.flush();
  return bytes;
}

}  // namespace kiln::llvm_engine
