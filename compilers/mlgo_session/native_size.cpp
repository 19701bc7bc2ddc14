// Section names are matched as llvmenv does (".text" and ".text.*") so sizes
// from bitcode and from llc's objects are comparable.
//
// The files read here come from the client: a job's native-size step may
// read the benchmark as sent, and the compilers' outputs are made from it.
// LLVM's readers may crash or report_fatal_error on hostile bytes, so every
// read runs inside the crash guard (compilers/llvm_engine/crash_guard.h), as llvmenv's
// module reads do; what a failed read touched is leaked, never reused.
#include "compilers/mlgo_session/native_size.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <fstream>

#include "common/base/sanitizers.h"
#include "compilers/llvm_engine/codegen.h"
#include "compilers/llvm_engine/crash_guard.h"

namespace kiln::mlgo_session {

namespace {

Result<std::unique_ptr<llvm::MemoryBuffer>> readFile(const std::filesystem::path& path) {
  auto buffer = llvm::MemoryBuffer::getFile(path.string(), /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    return notFound("cannot read " + path.string() + ": " + buffer.getError().message());
  }
  return std::move(*buffer);
}

}  // namespace

Result<std::int64_t> objectTextSize(const std::filesystem::path& object) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<llvm::MemoryBuffer> buffer, readFile(object));
  const std::string name = object.filename().string();
  std::string parseError;
  std::int64_t size = 0;
  // The sections are walked inside the guard too: their headers are the
  // client's bytes as much as the file header is.
  Status guard = llvm_engine::runGuarded("reading object file " + name, [&] {
    auto file = llvm::object::ObjectFile::createObjectFile(buffer->getMemBufferRef());
    if (!file) {
      parseError = llvm::toString(file.takeError());
      return;
    }
    size = llvm_engine::textSectionBytes(**file);
  });
  if (!guard.ok()) {
    // The reader may have left the buffer's users half done: keep it alive.
    declareLeakedOnPurpose(buffer.release());
    return guard;
  }
  if (!parseError.empty()) return compileError(name + " is not an object file: " + parseError);
  return size;
}

Result<std::int64_t> bitcodeTextSize(const std::filesystem::path& bitcode) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<llvm::MemoryBuffer> buffer, readFile(bitcode));
  const std::string name = bitcode.filename().string();
  // Errors the reader reports as diagnostics would otherwise make LLVM's
  // default handler exit the process; it outlives the context.
  llvm_engine::DiagnosticCollector diagnostics;
  auto context = std::make_unique<llvm::LLVMContext>();
  diagnostics.install(*context);
  std::unique_ptr<llvm::Module> module;
  std::string parseError;
  Status guard = llvm_engine::runGuarded("reading bitcode " + name, [&] {
    auto parsed = llvm::parseBitcodeFile(buffer->getMemBufferRef(), *context);
    if (!parsed) {
      parseError = "is not LLVM bitcode: " + llvm::toString(parsed.takeError());
      return;
    }
    module = std::move(*parsed);
    // Code generation assumes a valid module; the reader does not check.
    std::string report;
    llvm::raw_string_ostream os(report);
    if (llvm::verifyModule(*module, &os)) {
      os.flush();
      parseError = "is not a valid LLVM module: " + report;
    }
  });
  if (!guard.ok()) {
    declareLeakedOnPurpose(module.release());
    declareLeakedOnPurpose(context.release());
    declareLeakedOnPurpose(buffer.release());
    return guard;
  }
  if (!parseError.empty()) return compileError(name + " " + parseError);
  if (diagnostics.hasErrors()) return compileError(name + ": " + diagnostics.takeErrors());
  return llvm_engine::objectTextSizeBytes(*module);
}

Result<std::int64_t> nativeTextSize(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  if (in.gcount() == 4 && magic[0] == 'B' && magic[1] == 'C' && magic[2] == '\xc0' &&
      magic[3] == '\xde') {
    return bitcodeTextSize(file);
  }
  return objectTextSize(file);
}

}  // namespace kiln::mlgo_session
