#include "datasets/corpus_index.h"

#include <llvm/Support/Error.h>
#include <llvm/Support/JSON.h>

#include <system_error>

#include "common/file_reader.h"
#include "datasets/benchmark_uri.h"
#include "datasets/file_source.h"

namespace kiln::datasets {
namespace {

constexpr std::string_view kMlgoDescription = "corpus_description.json";
constexpr std::uint64_t kMaxDescriptionBytes = std::uint64_t{256} << 20;

}  // namespace

Result<CorpusIndex> CorpusIndex::scan(const CorpusDirectory& corpus) {
  if (!isValidDatasetName(corpus.name)) {
    return invalidArgument("corpus name '" + corpus.name +
                           "' is not a valid dataset name ([A-Za-z0-9][A-Za-z0-9._-]*)");
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(corpus.root, ec)) {
    return notFound("corpus " + corpus.name + ": " + corpus.root.string() + " is not a directory");
  }
  CorpusIndex index;
  index.name_ = corpus.name;
  index.root_ = corpus.root;
  auto description = corpus.root / kMlgoDescription;
  if (std::filesystem::exists(description, ec)) {
    KILN_RETURN_IF_ERROR(index.scanMlgo(description));
  } else {
    KILN_RETURN_IF_ERROR(index.scanDirectory());
  }
  return index;
}

Status CorpusIndex::scanDirectory() {
  std::error_code ec;
  // Directory symlinks are not followed: a link cycle must not hang the worker.
  std::filesystem::recursive_directory_iterator it(
      root_, std::filesystem::directory_options::skip_permission_denied, ec);
  if (ec)
    return permissionDenied("corpus " + name_ + ": cannot list " + root_.string() + ": " +
                            ec.message());
  for (; it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (ec)
      return permissionDenied("corpus " + name_ + ": error listing " + root_.string() + ": " +
                              ec.message());
    std::error_code fileEc;
    if (!it->is_regular_file(fileEc)) continue;
    auto format = formatFromExtension(it->path());
    if (!format.ok()) continue;
    auto relative = it->path().lexically_relative(root_);
    auto benchmark = relative;
    benchmark.replace_extension();
    add(benchmark.generic_string(), CorpusEntry{relative, *format});
  }
  // A name present as both .bc and .ll keeps the bitcode: add() skips the second,
  // so prefer .bc deterministically by re-pointing any .ll entry that has a .bc twin.
  for (auto& [benchmark, entry] : entries_) {
    if (entry.format != Format::kIr) continue;
    auto twin = entry.relative;
    twin.replace_extension(".bc");
    if (std::filesystem::is_regular_file(root_ / twin, ec)) {
      entry = CorpusEntry{twin, Format::kBitcode};
    }
  }
  return okStatus();
}

Status CorpusIndex::scanMlgo(const std::filesystem::path& descriptionFile) {
  mlgo_ = true;
  auto where = "corpus " + name_ + ": " + descriptionFile.string();
  KILN_ASSIGN_OR_RETURN(std::string text,
                        readFileBeneath(root_, descriptionFile.filename(), kMaxDescriptionBytes));
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed) {
    return invalidArgument(where + " is not valid JSON: " + llvm::toString(parsed.takeError()));
  }
  const llvm::json::Object* object = parsed->getAsObject();
  if (object == nullptr) return invalidArgument(where + " is not a JSON object");
  if (auto thinLto = object->getBoolean("has_thinlto")) thinLto_ = *thinLto;
  const llvm::json::Array* modules = object->getArray("modules");
  if (modules == nullptr) return invalidArgument(where + " has no \"modules\" array");
  for (const llvm::json::Value& module : *modules) {
    auto path = module.getAsString();
    if (!path) return invalidArgument(where + " lists a module that is not a string");
    std::string moduleName = path->str();
    // Module names come from a file; add() rejects absolute paths and '..' via the URI rules.
    add(moduleName, CorpusEntry{moduleName + ".bc", Format::kBitcode});
  }
  return okStatus();
}

void CorpusIndex::add(std::string benchmark, CorpusEntry entry) {
  auto uri = parseBenchmarkUri("benchmark://" + name_ + "/" + benchmark);
  if (!uri.ok() || entries_.count(benchmark) != 0) {
    ++skipped_;
    return;
  }
  entries_.emplace(std::move(benchmark), std::move(entry));
}

std::string CorpusIndex::description() const {
  // The operator's path stays on the host: clients see what it serves.
  std::string text = mlgo_ ? "MLGO corpus: " : "directory corpus: ";
  text += std::to_string(entries_.size()) + (mlgo_ ? " modules" : " .bc/.ll files");
  if (thinLto_) text += " (ThinLTO)";
  if (skipped_ > 0) {
    text += "; " + std::to_string(skipped_) + " skipped (names not valid in URIs, or duplicates)";
  }
  return text;
}

std::vector<std::string> CorpusIndex::names(std::size_t limit) const {
  std::vector<std::string> out;
  for (const auto& [benchmark, entry] : entries_) {
    if (out.size() >= limit) break;
    out.push_back(benchmark);
  }
  return out;
}

Result<std::string> CorpusIndex::read(const CorpusEntry& entry, std::uint64_t maxBytes) const {
  return readBenchmarkBeneath(root_, entry.relative, entry.format, maxBytes);
}

const CorpusEntry* CorpusIndex::find(std::string_view benchmark) const {
  auto it = entries_.find(benchmark);
  return it == entries_.end() ? nullptr : &it->second;
}

}  // namespace kiln::datasets
