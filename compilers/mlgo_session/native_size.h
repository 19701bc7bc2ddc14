// The figure MLGO's size reward is made of: bytes of ".text*" sections of the
// object code. Bitcode is compiled in process (llvmenv's codegen, llc -O2
// defaults); object files are read with llvm::object. Thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>

#include <kiln/status.h>

namespace kiln::mlgo_session {

// .text bytes of an ELF/Mach-O/COFF object file; compile-error if unreadable.
Result<std::int64_t> objectTextSize(const std::filesystem::path& object);

// .text bytes of the native code for an LLVM bitcode file.
Result<std::int64_t> bitcodeTextSize(const std::filesystem::path& bitcode);

// Dispatches on the file's magic bytes (bitcode or object).
Result<std::int64_t> nativeTextSize(const std::filesystem::path& file);

}  // namespace kiln::mlgo_session
