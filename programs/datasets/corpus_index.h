// Corpora registered by name: a directory of .bc/.ll files, or the layout that
// MLGO's corpus tools write (corpus_description.json listing modules, with
// <module>.bc and <module>.cmd beside it). Scanned once: per module its size
// and whether it has its compile flags (.cmd); per corpus the total bytes and
// every file it skipped with the reason (bounded). The index is immutable, so
// lookups from many threads need no lock. Files added later are not seen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>
#include "programs/datasets/dataset_types.h"

namespace kiln::datasets {

struct CorpusEntry {
  std::filesystem::path relative;  // below the corpus root
  Format format = Format::kBitcode;
  std::uint64_t bytes = 0;  // the file's size when scanned
  bool hasFlags = false;    // <module>.cmd beside it (MLGO layout)
};

class CorpusIndex {
 public:
  // not-found if the root is missing; invalid-argument for a bad name or a
  // malformed corpus_description.json.
  static Result<CorpusIndex> scan(const CorpusDirectory& corpus);

  const std::string& name() const { return name_; }
  std::size_t size() const { return entries_.size(); }
  std::uint64_t totalBytes() const { return totalBytes_; }
  // "MLGO corpus: 120 modules (ThinLTO)", without the directory; mentions skipped files.
  std::string description() const;
  // Benchmark names (relative paths without extension), sorted, at most `limit`.
  std::vector<std::string> names(std::size_t limit) const;
  // The same with each module's entry.
  std::vector<std::pair<std::string, const CorpusEntry*>> entries(std::size_t limit) const;
  const CorpusEntry* find(std::string_view name) const;
  // Files the scan left out and why (a name not valid in a URI, a duplicate,
  // a module the description lists without its .bc, a symlink out of the
  // corpus), at most kMaxProblemsKept; skippedCount() counts them all.
  const std::vector<BenchmarkProblem>& skipped() const { return skipped_; }
  std::size_t skippedCount() const { return skippedCount_; }
  // The entry's module, read only below the corpus root (a symlink out of it
  // is refused: permission-denied) and checked against its format. Messages
  // name the module, never the operator's directory.
  Result<std::string> read(const CorpusEntry& entry, std::uint64_t maxBytes) const;
  // The module's compile arguments from its .cmd (NUL-separated, as
  // ml-compiler-opt writes them); empty when it has none.
  Result<std::vector<std::string>> flags(const CorpusEntry& entry) const;
  // The text of the module's run spec, <module>.run.json beside it
  // (programs/runs/run_spec.h), read when asked (not by the scan); nullopt when
  // there is none.
  Result<std::optional<std::string>> runSpecText(const CorpusEntry& entry) const;
  // The file `name` (relative, e.g. "inputs/large.txt") in the module's
  // directory, read only below the corpus root: a run spec's "stdin_file".
  Result<std::string> readBeside(const CorpusEntry& entry, const std::string& name,
                                 std::uint64_t maxBytes) const;

 private:
  CorpusIndex() = default;
  Status scanDirectory();
  Status scanMlgo(const std::filesystem::path& descriptionFile);
  // Adds `name` if it forms a valid URI and is not taken; records why not otherwise.
  void add(std::string name, CorpusEntry entry);
  // The same for a name already checked against the URI rules.
  void addValid(std::string name, CorpusEntry entry);
  void skip(std::string module, std::string reason);
  // The operator's directory replaced by the corpus's URI in a message.
  Status withoutRoot(const Status& status) const;

  std::string name_;
  std::filesystem::path root_;
  std::filesystem::path canonicalRoot_;
  bool mlgo_ = false;
  bool thinLto_ = false;
  std::uint64_t totalBytes_ = 0;
  std::size_t skippedCount_ = 0;
  std::vector<BenchmarkProblem> skipped_;
  std::map<std::string, CorpusEntry, std::less<>> entries_;
};

// The NUL-separated arguments of a .cmd file (empty strings dropped).
std::vector<std::string> splitCommandFile(std::string_view text);

}  // namespace kiln::datasets
