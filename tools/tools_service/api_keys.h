// The API keys of `kiln tools serve` (--keys FILE): which caller a request
// comes from, taken from the key it presents (Authorization: Bearer KEY),
// never from a name it writes, and that caller's quotas. The file is the
// operator's, read once at start, private to its owner like the cluster key:
//   # KEY  CALLER  [concurrent=N] [rate=R] [batch=N]
//   3f9c...e1  trainer-a  concurrent=32 rate=200 batch=64
// Keys are kept only as BLAKE2b digests and compared in constant time
// (libsodium), every key each time, so neither timing nor a key's length
// tells a guesser how close it came.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>

namespace kiln::tools_service {

inline constexpr std::size_t kMinKeyLength = 16;  // a guessable key is no key
inline constexpr std::size_t kMaxKeyLength = 256;

// 0 in a field: the service's default (ToolsServiceOptions) applies.
struct CallerQuota {
  unsigned maxConcurrent = 0;  // calls of this caller in flight at once
  double callsPerSecond = 0;   // sustained rate, bursts of one second's worth
  unsigned maxBatch = 0;       // calls in one POST /v1/tools/batch
};

struct ApiKey {
  std::array<std::uint8_t, 32> digest{};
  std::string caller;
  CallerQuota quota;
};

class ApiKeys {
 public:
  // The lines of a key file; `source` names it in errors (with the line).
  // invalid-argument on a short or odd key, a bad caller name, an unknown or
  // bad quota field, a key or caller given twice, or no key at all.
  static Result<ApiKeys> parse(std::string_view text, std::string_view source);
  // Reads and parses `path`; invalid-argument when other users may read it.
  static Result<ApiKeys> load(const std::filesystem::path& path);

  // The key `presented` matches, or null. Every key is compared.
  const ApiKey* find(std::string_view presented) const;
  const std::vector<ApiKey>& keys() const { return keys_; }

 private:
  std::vector<ApiKey> keys_;
};

// BLAKE2b-256 of a key, as ApiKeys keeps it.
std::array<std::uint8_t, 32> keyDigest(std::string_view key);

}  // namespace kiln::tools_service
