// A user's own program as a benchmark: C/C++ sources, .ll and .bc files
// (several linked into one module with llvm-link-19), or one clang command
// line, to LLVM 19 bitcode that travels inline to any worker
// (client::SessionOptions::program). The tools run here, on the client's
// host, as bounded child processes; the worker only sees the bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <kiln/programs/tool_limits.h>
#include <kiln/status.h>

namespace kiln::programs {

// The dataset of users' own programs; a benchmark's URI is
// benchmark://user-v0/<stem>-<16 hex digits of its bitcode's BLAKE2b hash>,
// so it changes with the content (workers cache inline bytes under the URI).
inline constexpr std::string_view kUserDataset = "user-v0";

struct UserBenchmark {
  std::string uri;
  std::string bitcode;  // LLVM 19 bitcode, verified
};

struct MakeBenchmarkOptions {
  std::vector<std::string> copts;  // extra compiler flags for the C/C++ sources
  std::string clang = "clang-19";
  std::string clangxx = "clang++-19";
  std::string llvmLink = "llvm-link-19";
  std::string bcanalyzer = "llvm-bcanalyzer-19";     // names a refused module's producer
  ToolLimits limits;                                 // for each tool run
  std::uint64_t maxBytes = std::uint64_t{64} << 20;  // as the workers' default
  // Relative paths in `files` and in copts are taken from here; empty: the
  // process's current directory.
  std::filesystem::path workingDirectory;
};

// The files as one module: sources compiled like programs/make/clang_command.h
// does (-O0 front end with optnone off unless copts say -O), then every
// module linked and verified by llvm-link-19. compile-error with clang's
// diagnostics trimmed; invalid-argument for a file kiln cannot use (not
// C/C++/.ll/.bc), a .ll or .bc LLVM 19 cannot read (quoting LLVM: for
// bitcode of a newer LLVM it names the producer), modules that do not link,
// or a result over maxBytes; not-found for a missing file or tool.
Result<UserBenchmark> makeBenchmark(const std::vector<std::filesystem::path>& files,
                                    const MakeBenchmarkOptions& options = {});

// One compile command of one C/C++ source (programs/make/clang_command.h says
// what is accepted), run from `workingDirectory`, as a benchmark.
Result<UserBenchmark> benchmarkFromClangInvocation(const std::vector<std::string>& argv,
                                                   const std::filesystem::path& workingDirectory,
                                                   const MakeBenchmarkOptions& options = {});

// benchmark://user-v0/<stem>-<hash of bitcode>; the stem keeps
// [A-Za-z0-9._-] of `name`'s stem (others become '_'), at most 64 of them.
std::string userBenchmarkUri(const std::filesystem::path& name, std::string_view bitcode);

}  // namespace kiln::programs
