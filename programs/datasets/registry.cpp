#include "programs/datasets/registry.h"

#include <optional>

#include <algorithm>

#include <kiln/file_access.h>
#include "programs/bundled/kiln_bench_v0.h"
#include "programs/datasets/benchmark_uri.h"
#include "programs/datasets/file_source.h"
#include "programs/datasets/generators.h"

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
                 static_cast<std::int64_t>(bundled::kilnBenchV0().size()),
                 "kiln's own small C programs (checksums, sorting, graphs, kernels, parsers), "
                 "unoptimized bitcode"});
  out.push_back({datasetUri("generator", kCsmithDataset), std::nullopt,
                 "random C programs from csmith, compiled to unoptimized bitcode; name = seed"});
  out.push_back({datasetUri("generator", kLlvmStressDataset), std::nullopt,
                 "random IR from llvm-stress (textual IR); name = seed"});
  std::uint64_t suiteBytes = 0;
  for (const auto& program : bundled::kilnBenchV0()) suiteBytes += program.bitcode.size();
  out.front().bytes = suiteBytes;
  std::lock_guard lock(rejections_->mutex);
  for (const CorpusIndex& corpus : corpora_) {
    DatasetInfo info{datasetUri("benchmark", corpus.name()),
                     static_cast<std::int64_t>(corpus.size()),
                     corpus.description(),
                     corpus.totalBytes(),
                     corpus.skippedCount(),
                     0};
    if (auto count = rejections_->counts.find(corpus.name()); count != rejections_->counts.end()) {
      info.rejected = count->second;
    }
    out.push_back(std::move(info));
  }
  return out;
}

Result<const CorpusIndex*> DatasetRegistry::corpusOf(std::string_view dataset) const {
  constexpr std::string_view kPrefix = "benchmark://";
  if (dataset.starts_with("generator://")) {
    return invalidArgument(std::string(dataset.substr(0, 200)) +
                           " is an unbounded generator; ask for <dataset>/<seed> directly");
  }
  if (!dataset.starts_with(kPrefix)) {
    return invalidArgument("dataset '" + std::string(dataset.substr(0, 200)) +
                           "' is not of the form benchmark://<name>; see list()");
  }
  const CorpusIndex* corpus = findCorpus(dataset.substr(kPrefix.size()));
  if (corpus == nullptr) return notFound("no dataset " + std::string(dataset.substr(0, 200)));
  return corpus;
}

Result<std::vector<BenchmarkListing>> DatasetRegistry::benchmarks(std::string_view dataset,
                                                                  std::size_t limit) const {
  std::vector<BenchmarkListing> out;
  if (dataset == datasetUri("benchmark", kKilnBenchDataset)) {
    for (const auto& program : bundled::kilnBenchV0()) {
      if (out.size() >= limit) break;
      out.push_back(
          {std::string(dataset) + "/" + std::string(program.name), program.bitcode.size()});
    }
    return out;
  }
  KILN_ASSIGN_OR_RETURN(const CorpusIndex* corpus, corpusOf(dataset));
  for (auto& [name, entry] : corpus->entries(limit)) {
    out.push_back({std::string(dataset) + "/" + name, entry->bytes});
  }
  return out;
}

Result<std::vector<BenchmarkProblem>> DatasetRegistry::problems(std::string_view dataset) const {
  if (dataset == datasetUri("benchmark", kKilnBenchDataset)) return std::vector<BenchmarkProblem>{};
  KILN_ASSIGN_OR_RETURN(const CorpusIndex* corpus, corpusOf(dataset));
  std::vector<BenchmarkProblem> out = corpus->skipped();
  std::lock_guard lock(rejections_->mutex);
  if (auto found = rejections_->byCorpus.find(corpus->name());
      found != rejections_->byCorpus.end()) {
    for (const auto& [module, reason] : found->second) out.push_back({module, "rejected", reason});
  }
  return out;
}

void DatasetRegistry::recordRejection(std::string_view text, const std::string& reason) const {
  auto uri = parseBenchmarkUri(text);
  if (!uri.ok() || uri->scheme != "benchmark") return;
  const CorpusIndex* corpus = findCorpus(uri->dataset);
  if (corpus == nullptr || corpus->find(uri->name) == nullptr) return;
  std::lock_guard lock(rejections_->mutex);
  auto& modules = rejections_->byCorpus[corpus->name()];
  if (modules.count(uri->name) != 0) return;
  ++rejections_->counts[corpus->name()];
  if (modules.size() < kMaxProblemsKept) modules.emplace(uri->name, reason.substr(0, 2000));
}

std::optional<DatasetRegistry::OwnModule> DatasetRegistry::ownModule(std::string_view text,
                                                                     std::string_view bytes) const {
  auto uri = parseBenchmarkUri(text);
  if (!uri.ok() || uri->scheme != "benchmark") return std::nullopt;
  const CorpusIndex* corpus = findCorpus(uri->dataset);
  const CorpusEntry* entry = corpus == nullptr ? nullptr : corpus->find(uri->name);
  if (entry == nullptr) return std::nullopt;
  auto own = corpus->read(*entry, config_.maxBenchmarkBytes);
  if (!own.ok() || *own != bytes) return std::nullopt;
  return OwnModule{corpus, entry};
}

void DatasetRegistry::recordRejectedBytes(std::string_view text, std::string_view bytes,
                                          const std::string& reason) const {
  if (ownModule(text, bytes)) recordRejection(text, reason);
}

Result<std::vector<std::string>> DatasetRegistry::moduleFlags(std::string_view text,
                                                              std::string_view bytes) const {
  auto own = ownModule(text, bytes);
  if (!own) return std::vector<std::string>{};
  return own->corpus->flags(*own->entry);
}

Result<std::optional<DatasetRegistry::ModuleRunSpec>> DatasetRegistry::moduleRunSpec(
    std::string_view text, std::string_view bytes) const {
  auto own = ownModule(text, bytes);
  if (!own) return std::optional<ModuleRunSpec>{};
  KILN_ASSIGN_OR_RETURN(std::optional<std::string> spec, own->corpus->runSpecText(*own->entry));
  if (!spec) return std::optional<ModuleRunSpec>{};
  return std::optional<ModuleRunSpec>{ModuleRunSpec{
      std::move(*spec),
      [corpus = own->corpus, entry = own->entry](const std::string& name, std::uint64_t maxBytes) {
        return corpus->readBeside(*entry, name, maxBytes);
      }}};
}

Result<std::vector<std::string>> DatasetRegistry::benchmarkUris(std::string_view dataset,
                                                                std::size_t limit) const {
  KILN_ASSIGN_OR_RETURN(std::vector<BenchmarkListing> listed, benchmarks(dataset, limit));
  std::vector<std::string> uris;
  uris.reserve(listed.size());
  for (BenchmarkListing& benchmark : listed) uris.push_back(std::move(benchmark.uri));
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
    const auto* program = bundled::findKilnBenchV0(name);
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
