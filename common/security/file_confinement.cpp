#include "common/security/file_confinement.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace kiln {
namespace {

// The uapi header of the build host may predate the kernel's ABI: the
// fields and bits kiln uses, as the kernel defines them.
struct RulesetAttr {
  std::uint64_t handledAccessFs;
  std::uint64_t handledAccessNet;  // ABI 4
  std::uint64_t scoped;            // ABI 6
};
struct PathBeneathAttr {
  std::uint64_t allowedAccess;
  std::int32_t parentFd;
} __attribute__((packed));

constexpr std::uint64_t kExecute = 1ULL << 0;
constexpr std::uint64_t kWriteFile = 1ULL << 1;
constexpr std::uint64_t kReadFile = 1ULL << 2;
constexpr std::uint64_t kReadDir = 1ULL << 3;
constexpr std::uint64_t kAbi1Fs = (1ULL << 13) - 1;  // EXECUTE .. MAKE_SYM
constexpr std::uint64_t kRefer = 1ULL << 13;         // ABI 2
constexpr std::uint64_t kTruncate = 1ULL << 14;      // ABI 3
constexpr std::uint64_t kIoctlDev = 1ULL << 15;      // ABI 5
constexpr std::uint64_t kNetBindTcp = 1ULL << 0;
constexpr std::uint64_t kNetConnectTcp = 1ULL << 1;
constexpr std::uint64_t kScopeAbstractUnixSocket = 1ULL << 0;
constexpr std::uint64_t kScopeSignal = 1ULL << 1;
constexpr int kRuleTypePathBeneath = 1;
constexpr unsigned kCreateRulesetVersion = 1U << 0;

std::uint64_t handledFs(int abi) {
  std::uint64_t fs = kAbi1Fs;
  if (abi >= 2) fs |= kRefer;
  if (abi >= 3) fs |= kTruncate;
  if (abi >= 5) fs |= kIoctlDev;
  return fs;
}

bool isDirectory(const std::filesystem::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Rights that apply to a file (a rule on a file may not name directory rights).
std::uint64_t forFile(std::uint64_t rights) {
  return rights & (kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev);
}

}  // namespace

ConfinementPaths compilerPaths(const std::filesystem::path& scratch, const std::string& program) {
  ConfinementPaths paths;
  paths.readable = {"/usr",         "/lib",
                    "/lib64",       "/bin",
                    "/sbin",        "/etc/ld.so.cache",
                    "/dev/urandom", "/sys/devices/system/cpu",
                    "/proc/cpuinfo"};
  paths.writable = {scratch, "/dev/null"};
  std::filesystem::path named(program);
  if (named.has_parent_path()) {
    paths.readable.push_back(named.parent_path());
    std::error_code ec;
    std::filesystem::path real = std::filesystem::canonical(named, ec);
    if (!ec) paths.readable.push_back(real.parent_path());
  }
  return paths;
}

int FileConfinement::kernelAbi() {
  long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

Result<FileConfinement> FileConfinement::prepare(const ConfinementPaths& paths) {
  long version = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  if (version < 0) {
    return unimplemented(std::string("this kernel has no Landlock (") + std::strerror(errno) +
                         "): compilers run without file confinement");
  }
  const int abi = static_cast<int>(version);
  RulesetAttr attr{};
  attr.handledAccessFs = handledFs(abi);
  std::size_t size = sizeof(std::uint64_t);
  if (abi >= 4) {
    attr.handledAccessNet = kNetBindTcp | kNetConnectTcp;
    size = 2 * sizeof(std::uint64_t);
  }
  if (abi >= 6) {
    attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
    size = sizeof(RulesetAttr);
  }
  int fd = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0U));
  if (fd < 0) {
    return internalError(std::string("landlock_create_ruleset failed: ") + std::strerror(errno));
  }
  UniqueFd ruleset(fd);
  const std::uint64_t read = kExecute | kReadFile | kReadDir;
  const std::uint64_t all = handledFs(abi);
  auto add = [&](const std::filesystem::path& path, std::uint64_t rights) -> Status {
    UniqueFd target(::open(path.c_str(), O_PATH | O_CLOEXEC));
    if (target.get() < 0) return okStatus();  // absent here: nothing to allow
    PathBeneathAttr rule{};
    rule.allowedAccess = isDirectory(path) ? rights : forFile(rights);
    rule.parentFd = target.get();
    if (::syscall(SYS_landlock_add_rule, ruleset.get(), kRuleTypePathBeneath, &rule, 0U) != 0) {
      return internalError("landlock_add_rule on " + path.string() + ": " + std::strerror(errno));
    }
    return okStatus();
  };
  for (const auto& path : paths.readable) KILN_RETURN_IF_ERROR(add(path, read));
  for (const auto& path : paths.writable) KILN_RETURN_IF_ERROR(add(path, all));
  return FileConfinement(std::move(ruleset), abi);
}

Result<std::optional<FileConfinement>> FileConfinement::prepareIfSupported(
    const ConfinementPaths& paths) {
  Result<FileConfinement> prepared = prepare(paths);
  if (prepared.ok()) return std::optional<FileConfinement>(std::move(prepared).value());
  if (prepared.status().code() == ErrorCode::kUnimplemented) {
    return std::optional<FileConfinement>();
  }
  return prepared.status();
}

bool FileConfinement::enter() const {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
  return ::syscall(SYS_landlock_restrict_self, ruleset_.get(), 0U) == 0;
}

}  // namespace kiln
