// Helpers for the MLGO tests: a private temporary directory, wire-format
// builders, and a fake compiler thread that opens the FIFOs the way LLVM does
// (BASE.in for reading, blocking, then BASE.out for writing).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <kiln/clock.h>

namespace kiln::mlgo_channel::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  // Names of the entries in the directory, sorted.
  std::vector<std::string> entries() const;

 private:
  std::filesystem::path path_;
};

inline TimePoint in(std::chrono::milliseconds d) { return std::chrono::steady_clock::now() + d; }

// {"name":..,"type":..,"port":0,"shape":[..]}
std::string specJson(const std::string& name, const std::string& type,
                     const std::vector<std::int64_t>& shape);
// A header with int64 "a" [1], float "f" [1,2], int32 "small" [3] and int64 advice [1].
std::string smallHeader();
// One observation record for smallHeader(): line, 8 + 8 + 12 bytes, '\n'.
std::string smallRecord(std::int64_t index, std::int64_t a, float f0, float f1,
                        std::int32_t small0);

template <class T>
std::string bytesOf(T value) {
  return std::string(reinterpret_cast<const char*>(&value), sizeof(T));
}

// The compiler's side, run on a thread. The script gets the two blocking fds;
// ends are closed when it returns. Joined in the destructor, so declare it
// before the channel: the channel's destruction (closing its ends) is what
// unblocks a script stuck in read or write.
class FakeCompilerThread {
 public:
  struct Ends {
    int advice = -1;   // BASE.in, read end
    int records = -1;  // BASE.out, write end
    bool write(const std::string& bytes) const;
    // Exactly n bytes of advice, nullopt on EOF.
    std::optional<std::string> readAdvice(std::size_t n) const;
    void closeRecords();
  };
  FakeCompilerThread(std::filesystem::path base, std::function<void(Ends&)> script);
  ~FakeCompilerThread();

 private:
  std::thread thread_;
};

// True when this process has no child at all, neither running nor a zombie.
bool noChildProcesses();

}  // namespace kiln::mlgo_channel::testing
