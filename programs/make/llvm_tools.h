// LLVM 19's command-line tools as bounded child processes: the checks that a
// module is bitcode LLVM 19 reads and verifies, and a clang run whose
// diagnostics come back trimmed. Mechanism only (common/process/subprocess.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/programs/tool_limits.h>
#include <kiln/status.h>
#include "programs/make/clang_command.h"

namespace kiln::programs {

// True for LLVM bitcode: the raw magic 'B' 'C' 0xC0 0xDE or the wrapper
// header 0x0B17C0DE (Darwin's), both as the reader checks them.
bool hasBitcodeMagic(std::string_view bytes);

// Runs `argv` in `workingDirectory`; ok when it exits 0. Otherwise:
// not-found when the program does not exist; timeout naming the deadline;
// `failure` (the caller's code: compile-error for clang, invalid-argument for
// a module a checker rejects) with the tool's trimmed stderr, or how it died.
Status runTool(const std::vector<std::string>& argv, const std::filesystem::path& workingDirectory,
               const ToolLimits& limits, ErrorCode failure, std::string_view what);

// Runs the bitcode compile; when clang calls some of the build's flags
// unknown (GCC's own, from a build compiled with gcc), drops them and tries
// again, a few times at most, adding each dropped flag to `dropped`. Errors
// as runTool's, with compile-error for what clang rejects.
Status compileToBitcode(BitcodeCompile& compile, const ToolLimits& limits,
                        std::vector<std::string>& dropped);

// `opt -passes=verify -disable-output file`: ok when LLVM 19 reads and
// verifies the module; invalid-argument quoting LLVM's reason otherwise
// (for bitcode of a newer LLVM, the reader names its producer).
Status verifyModule(const std::filesystem::path& file, const std::string& opt,
                    const ToolLimits& limits);

// The producer a bitcode file's identification block names ("LLVM19.1.7"),
// read by llvm-bcanalyzer; nullopt when the file is no bitcode, has no such
// block, or the tool fails.
std::optional<std::string> bitcodeProducer(const std::filesystem::path& file,
                                           const std::string& bcanalyzer, const ToolLimits& limits);

}  // namespace kiln::programs
