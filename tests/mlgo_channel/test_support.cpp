#include "tests/mlgo_channel/test_support.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "compilers/mlgo_channel/fifo.h"

namespace kiln::mlgo_channel::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "kiln-mlgo-XXXXXX").string();
  char* made = ::mkdtemp(pattern.data());
  if (made == nullptr) std::abort();
  path_ = made;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::vector<std::string> TempDir::entries() const {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(path_)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string specJson(const std::string& name, const std::string& type,
                     const std::vector<std::int64_t>& shape) {
  std::string dims;
  for (std::int64_t d : shape) dims += (dims.empty() ? "" : ",") + std::to_string(d);
  return "{\"name\":\"" + name + "\",\"type\":\"" + type + "\",\"port\":0,\"shape\":[" + dims +
         "]}";
}

std::string smallHeader() {
  return "{\"features\":[" + specJson("a", "int64_t", {1}) + "," + specJson("f", "float", {1, 2}) +
         "," + specJson("small", "int32_t", {3}) +
         "],\"advice\":" + specJson("decision", "int64_t", {1}) + "}\n";
}

std::string smallRecord(std::int64_t index, std::int64_t a, float f0, float f1,
                        std::int32_t small0) {
  return "{\"observation\":" + std::to_string(index) + "}\n" + bytesOf(a) + bytesOf(f0) +
         bytesOf(f1) + bytesOf(small0) + bytesOf(std::int32_t{-1}) + bytesOf(std::int32_t{7}) +
         "\n";
}

bool FakeCompilerThread::Ends::write(const std::string& bytes) const {
  // writeAll turns a vanished host into an error instead of a SIGPIPE.
  return writeAll(records, bytes, std::chrono::steady_clock::now() + std::chrono::seconds(10), {},
                  "fake records")
      .ok();
}

std::optional<std::string> FakeCompilerThread::Ends::readAdvice(std::size_t n) const {
  std::string out(n, '\0');
  std::size_t done = 0;
  while (done < n) {
    ssize_t got = ::read(advice, out.data() + done, n - done);
    if (got == 0) return std::nullopt;
    if (got < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;
    }
    done += static_cast<std::size_t>(got);
  }
  return out;
}

void FakeCompilerThread::Ends::closeRecords() {
  if (records >= 0) ::close(records);
  records = -1;
}

FakeCompilerThread::FakeCompilerThread(std::filesystem::path base,
                                       std::function<void(Ends&)> script)
    : thread_([base = std::move(base), script = std::move(script)] {
        Ends ends;
        // The thread may start before the test has created the FIFOs.
        auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (!std::filesystem::exists(base.string() + ".out") &&
               std::chrono::steady_clock::now() < giveUp) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        // LLVM's order: BASE.in for reading first, then BASE.out for writing, both blocking.
        ends.advice = ::open((base.string() + ".in").c_str(), O_RDONLY | O_CLOEXEC);
        ends.records = ::open((base.string() + ".out").c_str(), O_WRONLY | O_CLOEXEC);
        if (ends.advice >= 0 && ends.records >= 0) script(ends);
        if (ends.advice >= 0) ::close(ends.advice);
        ends.closeRecords();
      }) {}

FakeCompilerThread::~FakeCompilerThread() {
  if (thread_.joinable()) thread_.join();
}

bool noChildProcesses() {
  int status = 0;
  return ::waitpid(-1, &status, WNOHANG) == -1 && errno == ECHILD;
}

}  // namespace kiln::mlgo_channel::testing
