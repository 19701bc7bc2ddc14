// Reading benchmark files from the worker's file system with the size checked
// before anything is read, and telling bitcode from textual IR.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <kiln/status.h>
#include "programs/datasets/dataset_types.h"

namespace kiln::datasets {

// The whole file, if it is a readable regular file of at most `maxBytes` bytes.
// not-found for a missing path, permission-denied when unreadable,
// invalid-argument when it is not a regular file or is too big. Only for
// paths the worker chose itself (its scratch files): a path a client or a
// corpus names goes through readBenchmarkBeneath.
Result<std::string> readBoundedFile(const std::filesystem::path& path, std::uint64_t maxBytes);

// kBitcode for ".bc", kIr for ".ll"; invalid-argument otherwise.
Result<Format> formatFromExtension(const std::filesystem::path& path);

// True if `bytes` start with the bitcode magic (raw or wrapped).
bool looksLikeBitcode(std::string_view bytes);

// invalid-argument unless `bytes` can be a module in `format` (bitcode magic,
// no NUL in IR text); `name` is for the message.
Status checkBenchmarkBytes(std::string_view bytes, Format format, const std::string& name);

// Reads `path` as a benchmark in `format`, checking the bitcode magic.
Result<std::string> readBenchmarkFile(const std::filesystem::path& path, Format format,
                                      std::uint64_t maxBytes);

// The same for `relative` below `root`, read with readFileBeneath
// (common/security/file_reader.h): permission-denied when it leads out of `root`.
Result<std::string> readBenchmarkBeneath(const std::filesystem::path& root,
                                         const std::filesystem::path& relative, Format format,
                                         std::uint64_t maxBytes);

}  // namespace kiln::datasets
