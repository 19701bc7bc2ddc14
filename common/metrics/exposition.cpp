#include "common/metrics/exposition.h"

#include <charconv>
#include <cmath>

#include "common/base/utf8.h"

namespace kiln::metrics {

namespace {

bool isLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view typeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// `{a="x",b="y"}` with an optional trailing `le`; nothing at all when empty.
void appendLabels(std::string& out, const std::vector<std::string>& names,
                  const std::vector<std::string>& values, const std::string* le) {
  if (names.empty() && le == nullptr) return;
  out += '{';
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) {
    if (i) out += ',';
    out += names[i];
    out += "=\"";
    out += escapeLabelValue(values[i]);
    out += '"';
  }
  if (le != nullptr) {
    if (!names.empty()) out += ',';
    out += "le=\"";
    out += *le;
    out += '"';
  }
  out += '}';
}

void appendSample(std::string& out, const std::string& name, std::string_view suffix,
                  const std::vector<std::string>& labelNames, const SeriesSnapshot& series,
                  const std::string* le, const std::string& value) {
  out += name;
  out += suffix;
  appendLabels(out, labelNames, series.labelValues, le);
  out += ' ';
  out += value;
  out += '\n';
}

}  // namespace

std::string escapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string escapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (std::size_t at = 0; at < value.size();) {
    const char c = value[at];
    if (static_cast<unsigned char>(c) >= 0x80) {
      at += appendUtf8Sequence(out, value.substr(at));
      continue;
    }
    ++at;
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string formatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (error != std::errc()) return "NaN";  // cannot happen with 64 bytes; never emit garbage
  return std::string(buffer, end);
}

bool isValidMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = isLetter(c) || c == '_' || c == ':' || (i > 0 && isDigit(c));
    if (!ok) return false;
  }
  return true;
}

bool isValidLabelName(std::string_view name) {
  if (name.empty() || name.starts_with("__")) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = isLetter(c) || c == '_' || (i > 0 && isDigit(c));
    if (!ok) return false;
  }
  return true;
}

std::string renderText(const std::vector<FamilySnapshot>& families) {
  std::string out;
  for (const auto& family : families) {
    if (family.series.empty()) continue;
    out += "# HELP ";
    out += family.name;
    out += ' ';
    out += escapeHelp(family.help);
    out += "\n# TYPE ";
    out += family.name;
    out += ' ';
    out += typeName(family.type);
    out += '\n';
    for (const auto& series : family.series) {
      if (family.type != MetricType::kHistogram) {
        appendSample(out, family.name, "", family.labelNames, series, nullptr,
                     formatValue(series.value));
        continue;
      }
      std::uint64_t total = 0;
      for (std::size_t b = 0; b < series.cumulativeCounts.size(); ++b) {
        bool last = b + 1 == series.cumulativeCounts.size();
        std::string le =
            last || b >= family.bounds.size() ? std::string("+Inf") : formatValue(family.bounds[b]);
        total = series.cumulativeCounts[b];
        appendSample(out, family.name, "_bucket", family.labelNames, series, &le,
                     std::to_string(total));
      }
      appendSample(out, family.name, "_sum", family.labelNames, series, nullptr,
                   formatValue(series.sum));
      appendSample(out, family.name, "_count", family.labelNames, series, nullptr,
                   std::to_string(total));
    }
  }
  return out;
}

}  // namespace kiln::metrics
