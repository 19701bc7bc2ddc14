// Which benchmarks an evaluation runs (pure): datasets as the workers list
// them (`benchmark://kiln-bench-v0`), generators with a range of seeds
// (`generator://csmith-v0` seeds 1-20 -> generator://csmith-v0/1 ... /20),
// and single URIs, in the order given, each once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>

namespace kiln::eval {

inline constexpr std::uint64_t kMaxGeneratorSeeds = 100000;

struct SeedRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;  // inclusive
  std::uint64_t count() const { return last - first + 1; }
};

// "7" or "1-20"; invalidArgument naming the text when it is not a range of at
// most kMaxGeneratorSeeds seeds.
Result<SeedRange> parseSeedRange(std::string_view text);

// A dataset URI has no benchmark part: "benchmark://kiln-bench-v0" (a trailing
// '/' is allowed). Generators are the "generator://" ones.
bool isDatasetUri(std::string_view uri);
bool isGeneratorUri(std::string_view uri);

// generator://csmith-v0 with seeds 1-3 -> .../1, .../2, .../3.
std::vector<std::string> generatorBenchmarks(std::string_view generator, const SeedRange& seeds);

// `uris` without repeats, first occurrence kept.
std::vector<std::string> withoutRepeats(const std::vector<std::string>& uris);

}  // namespace kiln::eval
