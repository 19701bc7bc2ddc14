// Defence in depth for compilers that read a client's module (issue 48):
// whatever a module makes opt-19/llc-19/the linker try, the kernel lets the
// child read only what a compiler needs (system programs and libraries) and
// write only its own scratch directory. Landlock: a ruleset is built in the
// parent before fork (it allocates and can fail with a message); the forked
// child enters it with two async-signal-safe system calls before exec, and
// it holds for everything the child runs. It also denies TCP (ABI 4+),
// signals and abstract UNIX sockets outside the child (ABI 6+): a compiler
// talks to its worker only through the pipes and FIFOs it was given.
//
// Where the kernel has no Landlock (before 5.13, or not enabled) prepare()
// says so and children run unconfined; the caller logs it once.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <kiln/status.h>
#include "common/base/unique_fd.h"

namespace kiln {

struct ConfinementPaths {
  // Read and execute below these (missing entries are skipped).
  std::vector<std::filesystem::path> readable;
  // Read, write, create and remove below these.
  std::vector<std::filesystem::path> writable;
};

// What a compiler needs to start and run: /usr, /lib, /lib64, /bin, /sbin,
// /etc/ld.so.cache, /dev/urandom, /proc/cpuinfo, /sys/devices/system/cpu
// (LLVM's host detection) and the directories of `program` (as named and as
// resolved: the operator's --mlgo-opt may live anywhere); `scratch` and
// /dev/null writable.
ConfinementPaths compilerPaths(const std::filesystem::path& scratch, const std::string& program);

class FileConfinement {
 public:
  // The Landlock ABI of this kernel, 0 when it has none.
  static int kernelAbi();
  // A ruleset for `paths` (none: no file may be opened at all);
  // unimplemented (naming the kernel's answer) where Landlock is missing.
  static Result<FileConfinement> prepare(const ConfinementPaths& paths);

  // Confines the calling thread and what it starts: no new privileges,
  // then the ruleset. For a forked child before exec, or a thread that ends
  // with its work (in-process code generation, compilers/llvm_engine/codegen.h): Landlock
  // holds for the thread, not for the rest of the process. Async-signal-safe;
  // false (errno set) when the kernel refused.
  bool enter() const;
  int abi() const { return abi_; }

  // prepare(), with nullopt where the kernel has no Landlock (the caller
  // runs the child unconfined; MlgoContext logs that once).
  static Result<std::optional<FileConfinement>> prepareIfSupported(const ConfinementPaths& paths);

 private:
  FileConfinement(UniqueFd ruleset, int abi) : ruleset_(std::move(ruleset)), abi_(abi) {}
  UniqueFd ruleset_;
  int abi_ = 0;
};

}  // namespace kiln
