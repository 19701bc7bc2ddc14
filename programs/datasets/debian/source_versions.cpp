#include "programs/datasets/debian/source_versions.h"

#include <algorithm>
#include <cctype>

namespace kiln::debian {

namespace {

// The order of one character in a non-digit run: "~" first, then the end of
// the run, then letters, then everything else.
int characterOrder(std::string_view s, std::size_t i) {
  if (i >= s.size() || std::isdigit(static_cast<unsigned char>(s[i]))) return 0;
  char c = s[i];
  if (c == '~') return -1;
  if (std::isalpha(static_cast<unsigned char>(c))) return c;
  return c + 256;
}

// dpkg's verrevcmp: alternating non-digit and digit runs.
int compareFragment(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    while ((i < a.size() && !std::isdigit(static_cast<unsigned char>(a[i]))) ||
           (j < b.size() && !std::isdigit(static_cast<unsigned char>(b[j])))) {
      int ac = characterOrder(a, i), bc = characterOrder(b, j);
      if (ac != bc) return ac - bc;
      ++i;
      ++j;
    }
    while (i < a.size() && a[i] == '0') ++i;
    while (j < b.size() && b[j] == '0') ++j;
    int firstDifference = 0;
    while (i < a.size() && std::isdigit(static_cast<unsigned char>(a[i])) && j < b.size() &&
           std::isdigit(static_cast<unsigned char>(b[j]))) {
      if (firstDifference == 0) firstDifference = a[i] - b[j];
      ++i;
      ++j;
    }
    if (i < a.size() && std::isdigit(static_cast<unsigned char>(a[i]))) return 1;
    if (j < b.size() && std::isdigit(static_cast<unsigned char>(b[j]))) return -1;
    if (firstDifference != 0) return firstDifference;
  }
  return 0;
}

struct Parts {
  long epoch = 0;
  std::string_view upstream, revision;
};

Parts split(std::string_view version) {
  Parts parts;
  if (std::size_t colon = version.find(':'); colon != std::string_view::npos) {
    std::string_view epoch = version.substr(0, colon);
    for (char c : epoch) {
      if (!std::isdigit(static_cast<unsigned char>(c))) break;
      parts.epoch = parts.epoch * 10 + (c - '0');
      if (parts.epoch > 1'000'000) break;  // no real epoch is this large; stop before overflow
    }
    version.remove_prefix(colon + 1);
  }
  std::size_t dash = version.rfind('-');
  parts.upstream = version.substr(0, dash);
  if (dash != std::string_view::npos) parts.revision = version.substr(dash + 1);
  return parts;
}

std::string_view fieldValue(std::string_view line, std::string_view field) {
  if (line.substr(0, field.size()) != field) return {};
  line.remove_prefix(field.size());
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
  return line;
}

}  // namespace

int compareDebianVersions(std::string_view a, std::string_view b) {
  Parts pa = split(a), pb = split(b);
  if (pa.epoch != pb.epoch) return pa.epoch < pb.epoch ? -1 : 1;
  if (int c = compareFragment(pa.upstream, pb.upstream); c != 0) return c;
  return compareFragment(pa.revision, pb.revision);
}

std::vector<std::string> sourceVersionsNewestFirst(std::string_view showsrcOutput,
                                                   std::string_view package) {
  std::vector<std::string> versions;
  std::string_view currentPackage, currentVersion;
  auto flush = [&] {
    if (currentPackage == package && !currentVersion.empty()) {
      versions.emplace_back(currentVersion);
    }
    currentPackage = currentVersion = {};
  };
  while (true) {
    std::size_t end = showsrcOutput.find('\n');
    std::string_view line = showsrcOutput.substr(0, end);
    if (line.empty() || line == "\r") flush();
    if (auto p = fieldValue(line, "Package:"); !p.empty()) currentPackage = p;
    if (auto v = fieldValue(line, "Version:"); !v.empty()) currentVersion = v;
    if (end == std::string_view::npos) break;
    showsrcOutput.remove_prefix(end + 1);
  }
  flush();
  std::sort(versions.begin(), versions.end(), [](const std::string& x, const std::string& y) {
    return compareDebianVersions(x, y) > 0;
  });
  versions.erase(std::unique(versions.begin(), versions.end()), versions.end());
  return versions;
}

}  // namespace kiln::debian
