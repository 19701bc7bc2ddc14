// Benchmark URIs in CompilerGym's form: `benchmark://kiln-bench-v0/crc32`,
// `generator://csmith-v0/42`, `file:///abs/path/x.bc`. A pure, strict parser:
// anything it accepts is safe to map onto a dataset and, for corpora, a path.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <kiln/status.h>

namespace kiln::datasets {

inline constexpr std::size_t kMaxUriLength = 4096;

struct BenchmarkUri {
  std::string scheme;   // "benchmark", "generator", "file"
  std::string dataset;  // "kiln-bench-v0"; empty for file URIs
  std::string name;     // "crc32", "42", "sub/dir/module"; the absolute path for file URIs

  // "benchmark://kiln-bench-v0" (file URIs: "file://").
  std::string datasetUri() const;
  // The canonical text; parseBenchmarkUri(toString()) gives back the same value.
  std::string toString() const;
  bool operator==(const BenchmarkUri&) const = default;
};

// Accepts `scheme://dataset/name` and `file:///absolute/path`. Rejects, with an
// invalid-argument status naming the problem: empty parts, bytes outside
// printable ASCII (controls, spaces, non-ASCII), `%` escapes, `?`/`#`, `\`,
// empty, `.` or `..` path segments, upper-case schemes, and URIs longer than
// kMaxUriLength. Total over all inputs (it is fuzzed).
Result<BenchmarkUri> parseBenchmarkUri(std::string_view text);

// A dataset name: [A-Za-z0-9] then [A-Za-z0-9._-]*, at most 128 bytes.
bool isValidDatasetName(std::string_view name);

}  // namespace kiln::datasets
