#include "tools/tools_service/api_keys.h"

#include <fmt/format.h>
#include <sodium.h>

#include <charconv>
#include <set>
#include <sstream>

#include <kiln/curve_keys.h>

namespace kiln::tools_service {

namespace {

bool isKeyCharacter(char c) { return c > ' ' && c < 127; }

bool isCallerName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

template <class T>
bool parseNumber(std::string_view text, T& value) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

// One `name=value` quota field into `quota`; the error names the field.
Status parseQuotaField(std::string_view field, CallerQuota& quota) {
  const auto equals = field.find('=');
  const std::string_view name = field.substr(0, equals);
  const std::string_view value = equals == std::string_view::npos ? "" : field.substr(equals + 1);
  bool ok = false;
  if (name == "concurrent") {
    ok = parseNumber(value, quota.maxConcurrent) && quota.maxConcurrent > 0;
  } else if (name == "batch") {
    ok = parseNumber(value, quota.maxBatch) && quota.maxBatch > 0;
  } else if (name == "rate") {
    ok = parseNumber(value, quota.callsPerSecond) && quota.callsPerSecond > 0 &&
         quota.callsPerSecond <= 1e6;
  } else {
    return invalidArgument(fmt::format(
        "unknown quota '{}' (known: concurrent=N, rate=CALLS_PER_SECOND, batch=N)", field));
  }
  if (!ok) return invalidArgument(fmt::format("quota '{}' needs a positive number", field));
  return okStatus();
}

Result<ApiKey> parseLine(const std::string& line) {
  std::istringstream words(line);
  std::string key, caller, field;
  words >> key >> caller;
  if (key.size() < kMinKeyLength || key.size() > kMaxKeyLength) {
    return invalidArgument(fmt::format("a key is {} to {} characters, this one {}", kMinKeyLength,
                                       kMaxKeyLength, key.size()));
  }
  for (char c : key) {
    if (!isKeyCharacter(c)) return invalidArgument("a key is printable ASCII without spaces");
  }
  if (!isCallerName(caller)) {
    return invalidArgument(
        fmt::format("caller name '{}' is not 1-64 of [A-Za-z0-9._-] after the key", caller));
  }
  ApiKey entry{keyDigest(key), caller, {}};
  while (words >> field) KILN_RETURN_IF_ERROR(parseQuotaField(field, entry.quota));
  return entry;
}

}  // namespace

std::array<std::uint8_t, 32> keyDigest(std::string_view key) {
  std::array<std::uint8_t, 32> digest{};
  crypto_generichash(digest.data(), digest.size(),
                     reinterpret_cast<const unsigned char*>(key.data()), key.size(), nullptr, 0);
  return digest;
}

Result<ApiKeys> ApiKeys::parse(std::string_view text, std::string_view source) {
  ApiKeys keys;
  std::set<std::string> callers;
  std::istringstream lines{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    const auto start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos || line[start] == '#') continue;
    Result<ApiKey> entry = parseLine(line);
    if (!entry.ok()) {
      return invalidArgument(
          fmt::format("--keys {} line {}: {}", source, number, entry.status().message()));
    }
    if (!callers.insert(entry->caller).second) {
      return invalidArgument(
          fmt::format("--keys {} line {}: caller '{}' has a key already (one key per caller)",
                      source, number, entry->caller));
    }
    for (const ApiKey& other : keys.keys_) {
      if (other.digest == entry->digest) {
        return invalidArgument(fmt::format("--keys {} line {}: this key is also caller '{}''s",
                                           source, number, other.caller));
      }
    }
    keys.keys_.push_back(std::move(*entry));
  }
  if (keys.keys_.empty()) {
    return invalidArgument(
        fmt::format("--keys {}: no key in it (a line is KEY CALLER [concurrent=N] [rate=R] "
                    "[batch=N])",
                    source));
  }
  return keys;
}

Result<ApiKeys> ApiKeys::load(const std::filesystem::path& path) {
  KILN_ASSIGN_OR_RETURN(std::string text,
                        readOwnersFile(path, "--keys file", "the callers' API keys",
                                       "(it holds secrets: only its owner may read it)"));
  return parse(text, path.string());
}

const ApiKey* ApiKeys::find(std::string_view presented) const {
  const auto digest = keyDigest(presented);
  const ApiKey* found = nullptr;
  for (const ApiKey& key : keys_) {
    // No early exit: the time taken does not depend on which key matched.
    if (sodium_memcmp(key.digest.data(), digest.data(), digest.size()) == 0) found = &key;
  }
  return found;
}

}  // namespace kiln::tools_service
