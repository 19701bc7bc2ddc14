// System calls only: runs in the forked program process (sandbox_child.cpp).
#include "programs/sandbox/file_view.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "common/security/file_confinement.h"

namespace kiln::sandbox {
namespace {

// Rights newer than this system's <linux/landlock.h> may know: their bits
// are fixed by the kernel's ABI (3: truncate, 5: ioctl on devices).
constexpr std::uint64_t kTruncate = 1ULL << 14;
constexpr std::uint64_t kIoctlDevice = 1ULL << 15;

constexpr std::uint64_t kReadOnly = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;

// Every file-system right the kernel's ABI `abi` handles: what is not
// granted below is then denied.
std::uint64_t handledRights(int abi) {
  std::uint64_t rights = (1ULL << 13) - 1;  // ABI 1: execute .. make_sym
  if (abi >= 2) rights |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) rights |= kTruncate;
  if (abi >= 5) rights |= kIoctlDevice;
  return rights;
}

// Allows `rights` (limited to what the ruleset handles, and to a file's
// rights for a file) below `path`; a path the host lacks is skipped.
bool allow(int ruleset, const char* path, std::uint64_t rights, std::uint64_t handled) {
  const int fd = ::open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || errno == ENOTDIR;
  struct landlock_path_beneath_attr rule {};
  rule.allowed_access = rights & handled;
  rule.parent_fd = fd;
  long added = ::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
  if (added != 0 && errno == EINVAL) {
    // A file, not a directory: only the rights that apply to files.
    rule.allowed_access &= LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                           LANDLOCK_ACCESS_FS_READ_FILE | kTruncate | kIoctlDevice;
    added = ::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
  }
  const int err = errno;
  ::close(fd);
  errno = err;
  return added == 0;
}

// "/proc/<pid>" of the calling process into `path`, without malloc.
void ownProcDirectory(char (&path)[32]) {
  const char prefix[] = "/proc/";
  std::size_t at = 0;
  for (const char* c = prefix; *c != '\0'; ++c) path[at++] = *c;
  char digits[16];
  int count = 0;
  for (long pid = ::getpid(); pid > 0 || count == 0; pid /= 10) {
    digits[count++] = static_cast<char>('0' + pid % 10);
  }
  while (count > 0) path[at++] = digits[--count];
  path[at] = '\0';
}

}  // namespace

int landlockAbi() { return FileConfinement::kernelAbi(); }

bool restrictFiles(const FileView& view) {
  const std::uint64_t handled = handledRights(view.abi);
  struct landlock_ruleset_attr attributes {};
  attributes.handled_access_fs = handled;
  const int ruleset =
      static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attributes, sizeof(attributes), 0));
  if (ruleset < 0) return false;
  bool ok = true;
  for (const char* directory : kLibraryDirectories) {
    ok = ok && allow(ruleset, directory, kReadOnly | LANDLOCK_ACCESS_FS_EXECUTE, handled);
  }
  for (const char* file : kLoaderFiles) ok = ok && allow(ruleset, file, kReadOnly, handled);
  for (const char* device : kDeviceFiles) {
    ok = ok && allow(ruleset, device,
                     kReadOnly | LANDLOCK_ACCESS_FS_WRITE_FILE | kTruncate | kIoctlDevice, handled);
  }
  // Its own /proc/<pid> (sanitizers read /proc/self/maps); not the other
  // processes' (without namespaces, the host's, the worker's included).
  char proc[32];
  ownProcDirectory(proc);
  ok = ok && allow(ruleset, proc, kReadOnly, handled);
  ok = ok && allow(ruleset, view.program, kReadOnly | LANDLOCK_ACCESS_FS_EXECUTE, handled);
  ok = ok && allow(ruleset, view.scratch, handled, handled);
  ok = ok && ::syscall(SYS_landlock_restrict_self, ruleset, 0) == 0;
  const int err = errno;
  ::close(ruleset);
  errno = err;
  return ok;
}

}  // namespace kiln::sandbox
