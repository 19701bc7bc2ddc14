#include "datasets/registry.h"

#include <algorithm>

#include "benchmarks/kiln_bench_v0.h"
#include "common/file_access.h"
#include "datasets/benchmark_uri.h"
#include "datasets/file_source.h"
#include "datasets/generators.h"

namespace kiln::datasets {
namespace {

std::string datasetUri(std::string_view scheme, std::string_view name) {
  return std::string(scheme) + "://" + std::string(name);
}

}  // namespace

Result<DatasetRegistry> DatasetRegistry::create(DatasetConfig config) {
  DatasetRegistry registry(std::move(config));
  for (const CorpusDirectory& corpus : registry.config_.corpora) {
    if (corpus.name == kKilnBenchDataset || registry.findCorpus(corpus.name) != nullptr) {
      return invalidArgument("corpus name '" + corpus.name + "' is already taken");
    }
    KILN_ASSIGN_OR_RETURN(CorpusIndex index, CorpusIndex::scan(corpus));
    registry.corpora_.push_back(std::move(index));
  }
  return registry;
}

const CorpusIndex* DatasetRegistry::findCorpus(std::string_view name) const {
  for (const CorpusIndex& corpus : corpora_) {
    if (corpus.name() == name) return &corpus;
  }
  return nullptr;
}

std::vector<DatasetInfo> DatasetRegistry::list() const {
  std::vector<DatasetInfo> out;
  out.push_back({datasetUri("benchmark", kKilnBenchDataset),
                 static_cast<std::int64_t>(benchmarks::kilnBenchV0().size()),
                 "kiln's own small C programs (checksums, sorting, graphs, kernels, parsers), "
                 "unoptimized bitcode"});
  out.push_back({datasetUri("generator", kCsmithDataset), std::nullopt,
                 "random C programs from csmith, compiled to unoptimized bitcode; name = seed"});
  out.push_back({datasetUri("generator", kLlvmStressDataset), std::nullopt,
                 "random IR from llvm-stress (textual IR); name = seed"});
  for (const CorpusIndex& corpus : corpora_) {
    out.push_back({datasetUri("benchmark", corpus.name()), static_cast<std::int64_t>(corpus.size()),
                   corpus.description()});
  }
  return out;
}

Result<std::vector<std::string>> DatasetRegistry::benchmarkUris(std::string_view dataset,
                                                                std::size_t limit) const {
  constexpr std::string_view kPrefix = "benchmark://";
  std::string_view name = dataset;
  if (name.starts_with(kPrefix)) {
    name.remove_prefix(kPrefix.size());
  } else if (name.starts_with("generator://")) {
    return invalidArgument(std::string(dataset) +
                           " is an unbounded generator; ask for <dataset>/<seed> directly");
  } else {
    return invalidArgument("dataset '" + std::string(dataset.substr(0, 200)) +
                           "' is not of the form benchmark://<name>; see list()");
  }
  std::vector<std::string> uris;
  if (name == kKilnBenchDataset) {
    for (const auto& program : benchmarks::kilnBenchV0()) {
      if (uris.size() >= limit) break;
      uris.push_back(std::string(dataset) + "/" + std::string(program.name));
    }
    return uris;
  }
  const CorpusIndex* corpus = findCorpus(name);
  if (corpus == nullptr) return notFound("no dataset " + std::string(dataset.substr(0, 200)));
  for (std::string& benchmark : corpus->names(limit)) {
    uris.push_back(std::string(dataset) + "/" + benchmark);
  }
  return uris;
}

Result<BenchmarkBytes> DatasetRegistry::resolve(std::string_view text) const {
  KILN_ASSIGN_OR_RETURN(BenchmarkUri uri, parseBenchmarkUri(text));
  std::string canonical = uri.toString();
  if (uri.scheme == "file") {
    // The operator's directories answer first: a path outside them gets the
    // same refusal whatever is (or is not) there.
    KILN_ASSIGN_OR_RETURN(AllowedFile file, checkFileRequest(config_.fileAccess, uri.name));
    KILN_ASSIGN_OR_RETURN(Format format, formatFromExtension(uri.name));
    KILN_ASSIGN_OR_RETURN(std::string bytes, readBenchmarkBeneath(file.root, file.relative, format,
                                                                  config_.maxBenchmarkBytes));
    return BenchmarkBytes{canonical, std::move(bytes), format};
  }
  if (uri.scheme == "benchmark") return resolveBenchmark(uri.dataset, uri.name, canonical);
  if (uri.scheme == "generator") {
    bool csmith = uri.dataset == kCsmithDataset;
    if (!csmith && uri.dataset != kLlvmStressDataset) {
      return notFound("no generator " + uri.datasetUri() + "; known: generator://" +
                      std::string(kCsmithDataset) + ", generator://" +
                      std::string(kLlvmStressDataset));
    }
    KILN_ASSIGN_OR_RETURN(std::uint32_t seed, parseSeed(uri.name));
    return csmith ? generateCsmith(config_, seed) : generateLlvmStress(config_, seed);
  }
  return invalidArgument("benchmark URI scheme '" + uri.scheme +
                         "' is not supported; use benchmark://, generator:// or file://");
}

Result<BenchmarkBytes> DatasetRegistry::resolveBenchmark(const std::string& dataset,
                                                         const std::string& name,
                                                         const std::string& canonical) const {
  if (dataset == kKilnBenchDataset) {
    const auto* program = benchmarks::findKilnBenchV0(name);
    if (program == nullptr) {
      return notFound("no benchmark '" + name + "' in benchmark://" + dataset +
                      "; benchmarkUris() lists them");
    }
    if (program->bitcode.size() > config_.maxBenchmarkBytes) {
      return invalidArgument(canonical + " is " + std::to_string(program->bitcode.size()) +
                             " bytes, over the benchmark size limit");
    }
    std::string bytes(reinterpret_cast<const char*>(program->bitcode.data()),
                      program->bitcode.size());
    return BenchmarkBytes{canonical, std::move(bytes), Format::kBitcode};
  }
  const CorpusIndex* corpus = findCorpus(dataset);
  if (corpus == nullptr) {
    return notFound("no dataset benchmark://" + dataset + "; list() names the known datasets");
  }
  const CorpusEntry* entry = corpus->find(name);
  if (entry == nullptr) return notFound("no benchmark '" + name + "' in benchmark://" + dataset);
  KILN_ASSIGN_OR_RETURN(std::string bytes, corpus->read(*entry, config_.maxBenchmarkBytes));
  return BenchmarkBytes{canonical, std::move(bytes), entry->format};
}

}  // namespace kiln::datasets
