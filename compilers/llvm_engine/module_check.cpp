#include "compilers/llvm_engine/module_check.h"

#include "common/base/sanitizers.h"
#include "compilers/llvm_engine/crash_guard.h"
#include "compilers/llvm_engine/module_policy.h"
#include "llvm/AsmParser/Parser.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::llvm_engine {
namespace {

bool startsWithBitcodeMagic(std::string_view bytes) {
  if (bytes.size() < 4) return false;
  auto b = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  return (b(0) == 'B' && b(1) == 'C' && b(2) == 0xC0 && b(3) == 0xDE) ||
         (b(0) == 0xDE && b(1) == 0xC0 && b(2) == 0x17 && b(3) == 0x0B);
}

// LLVM's reports span lines (the source line, a caret); listings keep one
// problem a line.
std::string oneLine(const std::string& text) {
  std::string out;
  bool blank = false;
  for (char c : text) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      blank = !out.empty();
      continue;
    }
    if (blank) out += ' ';
    blank = false;
    out += c;
  }
  return out;
}

constexpr std::string_view kThisProducer = "LLVM" LLVM_VERSION_STRING;

}  // namespace

std::optional<std::string> bitcodeProducer(std::string_view bytes) {
  if (!startsWithBitcodeMagic(bytes)) return std::nullopt;
  std::optional<std::string> producer;
  // The identification block is read without the module: cheap, but still
  // LLVM's reader on untrusted bytes, hence guarded.
  Status guard = runGuarded("reading the bitcode producer", [&] {
    llvm::MemoryBufferRef buffer(llvm::StringRef(bytes.data(), bytes.size()), "module");
    llvm::Expected<std::string> found = llvm::getBitcodeProducerString(buffer);
    if (found) {
      if (!found->empty()) producer = *found;
    } else {
      llvm::consumeError(found.takeError());
    }
  });
  if (!guard.ok()) return std::nullopt;
  return producer;
}

Status explainForeignBitcode(const Status& error, std::string_view bytes) {
  if (error.ok()) return error;
  std::optional<std::string> producer = bitcodeProducer(bytes);
  if (!producer || *producer == kThisProducer) return error;
  return Status(error.code(),
                error.message() + " (bitcode from another LLVM version: producer '" + *producer +
                    "'; this worker reads " + std::string(kThisProducer) +
                    " and older bitcode; regenerate the module with an LLVM 19 toolchain)");
}

Status checkModule(std::string_view bytes, const std::string& name, std::uint64_t maxDataBytes) {
  if (bytes.empty()) return invalidArgument("module '" + name + "' is empty");
  const bool bitcode = startsWithBitcodeMagic(bytes);
  if (!bitcode) KILN_RETURN_IF_ERROR(checkIrTextNesting(bytes, name));
  auto context = std::make_unique<llvm::LLVMContext>();
  DiagnosticCollector diagnostics;
  diagnostics.install(*context);
  std::unique_ptr<llvm::Module> module;
  std::string parseError;
  std::string verifyReport;
  bool invalid = false;
  Status guard = runGuarded(bitcode ? "reading bitcode" : "parsing IR text", [&] {
    if (bitcode) {
      llvm::MemoryBufferRef buffer(llvm::StringRef(bytes.data(), bytes.size()), name);
      auto parsed = llvm::parseBitcodeFile(buffer, *context);
      if (parsed) {
        module = std::move(*parsed);
      } else {
        parseError = llvm::toString(parsed.takeError());
      }
    } else {
      // A copy: the lexer needs a NUL-terminated buffer.
      auto buffer =
          llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(bytes.data(), bytes.size()), name);
      llvm::SMDiagnostic diagnostic;
      module = llvm::parseAssembly(buffer->getMemBufferRef(), diagnostic, *context);
      if (module == nullptr) {
        llvm::raw_string_ostream os(parseError);
        diagnostic.print(/*ProgName=*/nullptr, os, /*ShowColors=*/false);
      }
    }
    if (module != nullptr) {
      llvm::raw_string_ostream os(verifyReport);
      invalid = llvm::verifyModule(*module, &os);
    }
  });
  if (!guard.ok()) {
    // Objects a caught crash touched are never used again, not even freed.
    declareLeakedOnPurpose(module.release());
    declareLeakedOnPurpose(context.release());
    return invalidArgument("module '" + name + "': " + guard.message());
  }
  if (!parseError.empty()) {
    parseError = oneLine(parseError);
    Status parse = invalidArgument("module '" + name + "' is not valid LLVM " +
                                   (bitcode ? "bitcode: " : "IR: ") + parseError);
    return bitcode ? explainForeignBitcode(parse, bytes) : parse;
  }
  if (diagnostics.hasErrors()) {
    return invalidArgument("module '" + name + "': " + diagnostics.takeErrors());
  }
  if (invalid) {
    verifyReport = oneLine(verifyReport);
    return invalidArgument("module '" + name + "' is not a valid LLVM module: " + verifyReport);
  }
  // opt-19 and llc-19 would assemble and obey what is in it with the
  // worker's rights (module_policy.h).
  return checkClientModule(*module, name, maxDataBytes);
}

}  // namespace kiln::llvm_engine
