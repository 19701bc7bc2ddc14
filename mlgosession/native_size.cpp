// Section names are matched as llvmenv does (".text" and ".text.*") so sizes
// from bitcode and from llc's objects are comparable.
#include "mlgosession/native_size.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include <fstream>

#include "llvmenv/codegen.h"

namespace kiln::mlgosession {

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
  auto file = llvm::object::ObjectFile::createObjectFile(buffer->getMemBufferRef());
  if (!file) {
    return compileError(object.filename().string() +
                        " is not an object file: " + llvm::toString(file.takeError()));
  }
  return llvmenv::textSectionBytes(**file);
}

Result<std::int64_t> bitcodeTextSize(const std::filesystem::path& bitcode) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<llvm::MemoryBuffer> buffer, readFile(bitcode));
  llvm::LLVMContext context;
  auto module = llvm::parseBitcodeFile(buffer->getMemBufferRef(), context);
  if (!module) {
    return compileError(bitcode.filename().string() +
                        " is not LLVM bitcode: " + llvm::toString(module.takeError()));
  }
  return llvmenv::objectTextSizeBytes(**module);
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

}  // namespace kiln::mlgosession
