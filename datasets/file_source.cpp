#include "datasets/file_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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
  // O_NONBLOCK so that opening a FIFO cannot hang the worker; fstat on the open
  // descriptor so the checks apply to the file actually read.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return openError(path, errno);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};

  struct stat st {};
  if (::fstat(fd, &st) != 0) return openError(path, errno);
  if (!S_ISREG(st.st_mode)) {
    return invalidArgument(path.string() + " is not a regular file");
  }
  auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > maxBytes) {
    return invalidArgument(path.string() + " is " + std::to_string(size) +
                           " bytes, over the benchmark size limit of " + std::to_string(maxBytes));
  }
  std::string bytes(size, '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t got = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      return permissionDenied("cannot read " + path.string() + ": " + std::strerror(errno));
    }
    if (got == 0) break;  // shrank while reading: return what is there
    done += static_cast<std::size_t>(got);
  }
  bytes.resize(done);
  // A file that grew past its fstat size is still held to the limit.
  char extra;
  ssize_t more = ::read(fd, &extra, 1);
  if (more > 0) {
    return invalidArgument(path.string() + " grew while being read; refusing a moving target");
  }
  return bytes;
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

Result<std::string> readBenchmarkFile(const std::filesystem::path& path, Format format,
                                      std::uint64_t maxBytes) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, readBoundedFile(path, maxBytes));
  if (format == Format::kBitcode && !looksLikeBitcode(bytes)) {
    return invalidArgument(path.string() + " does not start with the LLVM bitcode magic");
  }
  if (format == Format::kIr && bytes.find('\0') != std::string::npos) {
    return invalidArgument(path.string() + " contains NUL bytes; it is not textual IR");
  }
  return bytes;
}

}  // namespace kiln::datasets
