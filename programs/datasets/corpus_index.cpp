#include "programs/datasets/corpus_index.h"

#include <llvm/Support/Error.h>
#include <llvm/Support/JSON.h>

#include <algorithm>
#include <system_error>

#include <sys/stat.h>

#include "common/security/file_reader.h"
#include "programs/datasets/benchmark_uri.h"
#include "programs/datasets/file_source.h"

namespace kiln::datasets {
namespace {

constexpr std::string_view kMlgoDescription = "corpus_description.json";
constexpr std::uint64_t kMaxDescriptionBytes = std::uint64_t{256} << 20;
// A .cmd holds one compile command: a few KiB at most in real builds.
constexpr std::uint64_t kMaxCommandBytes = std::uint64_t{1} << 20;
// programs/runs/run_spec.h's kMaxSpecBytes.
constexpr std::uint64_t kMaxRunSpecBytes = std::uint64_t{4} << 20;

bool beneath(const std::filesystem::path& root, const std::filesystem::path& path) {
  auto [rootEnd, pathIt] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  return rootEnd == root.end();
}

}  // namespace

std::vector<std::string> splitCommandFile(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    std::size_t end = text.find('\0');
    std::string_view argument = text.substr(0, end);
    // Tools that write one argument a line leave a newline behind.
    while (!argument.empty() && (argument.back() == '\n' || argument.back() == '\r')) {
      argument.remove_suffix(1);
    }
    if (!argument.empty()) out.emplace_back(argument);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

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
  index.canonicalRoot_ = std::filesystem::canonical(corpus.root, ec);
  if (ec) index.canonicalRoot_ = corpus.root;
  auto description = corpus.root / kMlgoDescription;
  if (std::filesystem::exists(description, ec)) {
    KILN_RETURN_IF_ERROR(index.scanMlgo(description));
  } else {
    KILN_RETURN_IF_ERROR(index.scanDirectory());
  }
  for (const auto& [name, entry] : index.entries_) index.totalBytes_ += entry.bytes;
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
    auto format = formatFromExtension(it->path());
    if (!format.ok()) continue;
    std::error_code fileEc;
    if (!it->is_regular_file(fileEc)) continue;
    auto relative = it->path().lexically_relative(root_);
    auto benchmark = relative;
    benchmark.replace_extension();
    CorpusEntry entry{relative, *format, 0, false};
    if (it->is_symlink(fileEc)) {
      auto target = std::filesystem::canonical(it->path(), fileEc);
      if (fileEc || !beneath(canonicalRoot_, target)) {
        skip(relative.generic_string(), "a symlink that leads out of the corpus");
        continue;
      }
      entry.bytes = std::filesystem::file_size(target, fileEc);
    } else {
      entry.bytes = it->file_size(fileEc);
    }
    add(benchmark.generic_string(), std::move(entry));
  }
  // A name present as both .bc and .ll keeps the bitcode: add() skips the second,
  // so prefer .bc deterministically by re-pointing any .ll entry that has a .bc twin.
  for (auto& [benchmark, entry] : entries_) {
    if (entry.format != Format::kIr) continue;
    auto twin = entry.relative;
    twin.replace_extension(".bc");
    std::error_code twinEc;
    auto twinBytes = std::filesystem::file_size(root_ / twin, twinEc);
    if (!twinEc && std::filesystem::is_regular_file(root_ / twin, twinEc)) {
      entry = CorpusEntry{twin, Format::kBitcode, twinBytes, false};
    }
  }
  return okStatus();
}

Status CorpusIndex::scanMlgo(const std::filesystem::path& descriptionFile) {
  mlgo_ = true;
  // The operator's path stays out: clients may see why a corpus failed to load.
  auto where = "corpus " + name_ + ": " + std::string(kMlgoDescription);
  auto text = readFileBeneath(root_, descriptionFile.filename(), kMaxDescriptionBytes);
  if (!text.ok()) return withoutRoot(text.status());
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(*text);
  if (!parsed) {
    return invalidArgument(where + " is not valid JSON: " + llvm::toString(parsed.takeError()));
  }
  const llvm::json::Object* object = parsed->getAsObject();
  if (object == nullptr) return invalidArgument(where + " is not a JSON object");
  if (auto thinLto = object->getBoolean("has_thinlto")) thinLto_ = *thinLto;
  const llvm::json::Array* modules = object->getArray("modules");
  if (modules == nullptr) return invalidArgument(where + " has no \"modules\" array");
  const std::string rootPrefix = root_.string() + "/";
  for (const llvm::json::Value& module : *modules) {
    auto path = module.getAsString();
    if (!path) return invalidArgument(where + " lists a module that is not a string");
    std::string moduleName = path->str();
    // Module names come from a file: the URI rules refuse absolute paths and
    // '..' before any of them is looked up on disk.
    if (!parseBenchmarkUri("benchmark://" + name_ + "/" + moduleName).ok()) {
      skip(moduleName, "the name is not valid in a benchmark URI");
      continue;
    }
    // Two system calls a module (10,000-module corpora start in well under
    // a second): lstat of the .bc, stat of the .cmd; paths built once.
    const std::string bitcode = moduleName + ".bc";
    const std::string base = rootPrefix + moduleName;
    struct stat file {};
    if (::lstat((base + ".bc").c_str(), &file) != 0) {
      skip(moduleName, "listed in corpus_description.json, but " + bitcode + " is missing");
      continue;
    }
    if (S_ISLNK(file.st_mode)) {
      std::error_code ec;
      auto target = std::filesystem::canonical(root_ / bitcode, ec);
      if (ec || !beneath(canonicalRoot_, target) || ::stat(target.c_str(), &file) != 0) {
        skip(moduleName, bitcode + " is a symlink that leads out of the corpus");
        continue;
      }
    }
    if (!S_ISREG(file.st_mode)) {
      skip(moduleName, bitcode + " is not a regular file");
      continue;
    }
    struct stat command {};
    const bool hasFlags =
        ::stat((base + ".cmd").c_str(), &command) == 0 && S_ISREG(command.st_mode);
    CorpusEntry entry{bitcode, Format::kBitcode, static_cast<std::uint64_t>(file.st_size),
                      hasFlags};
    addValid(std::move(moduleName), std::move(entry));
  }
  return okStatus();
}

void CorpusIndex::skip(std::string module, std::string reason) {
  ++skippedCount_;
  if (skipped_.size() < kMaxProblemsKept) {
    skipped_.push_back({std::move(module), "skipped", std::move(reason)});
  }
}

void CorpusIndex::add(std::string benchmark, CorpusEntry entry) {
  if (!parseBenchmarkUri("benchmark://" + name_ + "/" + benchmark).ok()) {
    skip(entry.relative.generic_string(), "the name is not valid in a benchmark URI");
    return;
  }
  addValid(std::move(benchmark), std::move(entry));
}

void CorpusIndex::addValid(std::string benchmark, CorpusEntry entry) {
  if (entries_.count(benchmark) != 0) {
    skip(entry.relative.generic_string(), "a duplicate of benchmark '" + benchmark + "'");
    return;
  }
  entries_.emplace(std::move(benchmark), std::move(entry));
}

std::string CorpusIndex::description() const {
  // The operator's path stays on the host: clients see what it serves.
  std::string text = mlgo_ ? "MLGO corpus: " : "directory corpus: ";
  text += std::to_string(entries_.size()) + (mlgo_ ? " modules" : " .bc/.ll files");
  if (thinLto_) text += " (ThinLTO)";
  if (skippedCount_ > 0) {
    text += "; " + std::to_string(skippedCount_) + " skipped (see --problems)";
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

std::vector<std::pair<std::string, const CorpusEntry*>> CorpusIndex::entries(
    std::size_t limit) const {
  std::vector<std::pair<std::string, const CorpusEntry*>> out;
  for (const auto& [benchmark, entry] : entries_) {
    if (out.size() >= limit) break;
    out.emplace_back(benchmark, &entry);
  }
  return out;
}

Status CorpusIndex::withoutRoot(const Status& status) const {
  std::string message = status.message();
  const std::string root = root_.string();
  const std::string shown = "benchmark://" + name_;
  for (std::size_t at = message.find(root); !root.empty() && at != std::string::npos;
       at = message.find(root, at + shown.size())) {
    message.replace(at, root.size(), shown);
  }
  return Status(status.code(), message);
}

Result<std::string> CorpusIndex::read(const CorpusEntry& entry, std::uint64_t maxBytes) const {
  auto bytes = readBenchmarkBeneath(root_, entry.relative, entry.format, maxBytes);
  if (!bytes.ok()) return withoutRoot(bytes.status());
  return bytes;
}

Result<std::vector<std::string>> CorpusIndex::flags(const CorpusEntry& entry) const {
  if (!entry.hasFlags) return std::vector<std::string>{};
  auto command = entry.relative;
  command.replace_extension(".cmd");
  auto text = readFileBeneath(root_, command, kMaxCommandBytes);
  if (!text.ok()) return withoutRoot(text.status());
  return splitCommandFile(*text);
}

Result<std::optional<std::string>> CorpusIndex::runSpecText(const CorpusEntry& entry) const {
  auto spec = entry.relative;
  spec.replace_extension(".run.json");
  auto text = readFileBeneath(root_, spec, kMaxRunSpecBytes);
  if (!text.ok()) {
    if (text.status().code() == ErrorCode::kNotFound) return std::optional<std::string>{};
    return withoutRoot(text.status());
  }
  return std::optional<std::string>{std::move(*text)};
}

Result<std::string> CorpusIndex::readBeside(const CorpusEntry& entry, const std::string& name,
                                            std::uint64_t maxBytes) const {
  if (name.empty() || std::filesystem::path(name).is_absolute()) {
    return invalidArgument("a file beside a module is named by a relative path");
  }
  auto bytes = readFileBeneath(root_, entry.relative.parent_path() / name, maxBytes);
  if (bytes.ok()) return bytes;
  // Said in the corpus's terms: the operator's paths (and the file-access
  // advice for clients' file:// requests) stay out of the message.
  switch (bytes.status().code()) {
    case ErrorCode::kPermissionDenied:
      return permissionDenied("it leads out of the corpus (through '..' or a symlink)");
    case ErrorCode::kNotFound:
      return notFound("there is no such file beside the module");
    default:
      return withoutRoot(bytes.status());
  }
}

const CorpusEntry* CorpusIndex::find(std::string_view benchmark) const {
  auto it = entries_.find(benchmark);
  return it == entries_.end() ? nullptr : &it->second;
}

}  // namespace kiln::datasets
