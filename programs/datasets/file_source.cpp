#include "programs/datasets/file_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/security/file_reader.h"

namespace kiln::datasets {
namespace {

Status openError(const std::filesystem::path& path, int err) {
  std::string message = "cannot open " + path.string() + ": " + std::strerror(err);
  if (err == ENOENT || err == ENOTDIR) return notFound(message);
  if (err == EACCES || err == EPERM) return permissionDenied(message);
  return invalidArgument(message);
}

}  // namespace

Result<std::string> readBoundedFile(const std::filesystem::path& path, std::uint64_t maxBytes) {
  // O_NONBLOCK so that opening a FIFO cannot hang the worker; the checks
  // apply to the descriptor actually read.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return openError(path, errno);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  return readBoundedDescriptor(fd, path.string(), maxBytes);
}

Result<Format> formatFromExtension(const std::filesystem::path& path) {
  auto ext = path.extension().string();
  if (ext == ".bc") return Format::kBitcode;
  if (ext == ".ll") return Format::kIr;
  return invalidArgument(path.string() + " has extension '" + ext +
                         "'; benchmarks must be .bc (bitcode) or .ll (textual IR)");
}

bool looksLikeBitcode(std::string_view bytes) {
  if (bytes.size() < 4) return false;
  auto b = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
  bool raw = b(0) == 'B' && b(1) == 'C' && b(2) == 0xC0 && b(3) == 0xDE;
  bool wrapped = b(0) == 0xDE && b(1) == 0xC0 && b(2) == 0x17 && b(3) == 0x0B;
  return raw || wrapped;
}

Status checkBenchmarkBytes(std::string_view bytes, Format format, const std::string& name) {
  if (format == Format::kBitcode && !looksLikeBitcode(bytes)) {
    return invalidArgument(name + " does not start with the LLVM bitcode magic");
  }
  if (format == Format::kIr && bytes.find('\0') != std::string::npos) {
    return invalidArgument(name + " contains NUL bytes; it is not textual IR");
  }
  return okStatus();
}

Result<std::string> readBenchmarkFile(const std::filesystem::path& path, Format format,
                                      std::uint64_t maxBytes) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, readBoundedFile(path, maxBytes));
  KILN_RETURN_IF_ERROR(checkBenchmarkBytes(bytes, format, path.string()));
  return bytes;
}

Result<std::string> readBenchmarkBeneath(const std::filesystem::path& root,
                                         const std::filesystem::path& relative, Format format,
                                         std::uint64_t maxBytes) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, readFileBeneath(root, relative, maxBytes));
  KILN_RETURN_IF_ERROR(checkBenchmarkBytes(bytes, format, (root / relative).string()));
  return bytes;
}

}  // namespace kiln::datasets
