#include "common/base/near_names.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace kiln {
namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::string normalized(std::string_view name) {
  while (name.starts_with('-')) name.remove_prefix(1);
  std::string out(name);
  std::transform(out.begin(), out.end(), out.begin(), lower);
  return out;
}

}  // namespace

std::size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitute = diagonal + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::vector<std::string> nearNames(std::string_view wanted, const std::vector<std::string>& known,
                                   std::size_t limit) {
  const std::string target = normalized(wanted);
  if (target.empty()) return {};
  const std::size_t budget = std::max<std::size_t>(2, target.size() / 3);
  struct Candidate {
    std::size_t distance;
    std::size_t order;
  };
  std::vector<Candidate> near;
  for (std::size_t i = 0; i < known.size(); ++i) {
    const std::string name = normalized(known[i]);
    std::size_t distance = editDistance(target, name);
    const bool contains = name.find(target) != std::string::npos ||
                          (!name.empty() && target.find(name) != std::string::npos);
    // A containment counts as close, behind every true near-miss.
    if (distance > budget && contains) distance = budget + 1;
    if (distance <= budget + 1 && (distance <= budget || contains)) near.push_back({distance, i});
  }
  std::stable_sort(near.begin(), near.end(),
                   [](const Candidate& a, const Candidate& b) { return a.distance < b.distance; });
  std::vector<std::string> out;
  for (const Candidate& c : near) {
    if (out.size() == limit) break;
    if (std::find(out.begin(), out.end(), known[c.order]) == out.end())
      out.push_back(known[c.order]);
  }
  return out;
}

std::string didYouMean(std::string_view wanted, const std::vector<std::string>& known) {
  const std::vector<std::string> near = nearNames(wanted, known);
  if (near.empty()) return "";
  std::string text = " (did you mean ";
  for (std::size_t i = 0; i < near.size(); ++i) {
    text += (i == 0 ? "'" : ", '") + near[i] + "'";
  }
  return text + "?)";
}

}  // namespace kiln
