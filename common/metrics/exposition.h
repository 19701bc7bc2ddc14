// The Prometheus text exposition format, version 0.0.4: HELP and TYPE lines,
// one sample per line, label values escaped, histograms as cumulative
// _bucket{le=...} series ending in +Inf, then _sum and _count. Pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/metrics/snapshot.h"

namespace kiln::metrics {

// The Content-Type a scrape endpoint answers with.
inline constexpr std::string_view kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

// Whole exposition, families in the given order, each line ending in '\n'.
// Families without series are left out (there is nothing to scrape yet).
std::string renderText(const std::vector<FamilySnapshot>& families);

// HELP text: backslash and newline escaped.
std::string escapeHelp(std::string_view help);
// Label value: backslash, double quote and newline escaped; bytes that are
// not UTF-8 become U+FFFD (Prometheus refuses a scrape otherwise).
std::string escapeLabelValue(std::string_view value);
// Sample value: shortest text that reads back to the same double; "+Inf",
// "-Inf" and "NaN" as the format spells them.
std::string formatValue(double value);

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool isValidMetricName(std::string_view name);
// [a-zA-Z_][a-zA-Z0-9_]*, and not starting with "__" (reserved).
bool isValidLabelName(std::string_view name);

}  // namespace kiln::metrics
