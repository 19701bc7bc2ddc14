#include "tools/eval/benchmark_set.h"

#include <fmt/format.h>

#include <charconv>
#include <set>

namespace kiln::eval {
namespace {

bool parseSeed(std::string_view text, std::uint64_t& seed) {
  if (text.empty() || text.size() > 19) return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seed);
  return error == std::errc() && end == text.data() + text.size();
}

std::string_view withoutTrailingSlash(std::string_view uri) {
  return uri.ends_with('/') ? uri.substr(0, uri.size() - 1) : uri;
}

}  // namespace

Result<SeedRange> parseSeedRange(std::string_view text) {
  SeedRange range;
  auto dash = text.find('-');
  std::string_view first = text.substr(0, dash);
  std::string_view last = dash == std::string_view::npos ? first : text.substr(dash + 1);
  if (!parseSeed(first, range.first) || !parseSeed(last, range.last)) {
    return invalidArgument(
        fmt::format("seed range '{}' is not N or N-M with decimal seeds (e.g. 1-20)", text));
  }
  if (range.last < range.first) {
    return invalidArgument(fmt::format("seed range '{}' ends before it starts", text));
  }
  if (range.last - range.first >= kMaxGeneratorSeeds) {
    return invalidArgument(
        fmt::format("seed range '{}' has more than {} seeds", text, kMaxGeneratorSeeds));
  }
  return range;
}

bool isDatasetUri(std::string_view uri) {
  auto scheme = uri.find("://");
  if (scheme == std::string_view::npos || scheme == 0) return false;
  std::string_view rest = withoutTrailingSlash(uri.substr(scheme + 3));
  return !rest.empty() && rest.find('/') == std::string_view::npos;
}

bool isGeneratorUri(std::string_view uri) { return uri.starts_with("generator://"); }

std::vector<std::string> generatorBenchmarks(std::string_view generator, const SeedRange& seeds) {
  std::string_view base = withoutTrailingSlash(generator);
  std::vector<std::string> uris;
  uris.reserve(seeds.count());
  for (std::uint64_t seed = seeds.first; seed <= seeds.last; ++seed) {
    uris.push_back(fmt::format("{}/{}", base, seed));
    if (seed == UINT64_MAX) break;
  }
  return uris;
}

std::vector<std::string> withoutRepeats(const std::vector<std::string>& uris) {
  std::set<std::string> seen;
  std::vector<std::string> unique;
  for (const std::string& uri : uris) {
    if (seen.insert(uri).second) unique.push_back(uri);
  }
  return unique;
}

}  // namespace kiln::eval
