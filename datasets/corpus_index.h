// Corpora registered by name: a directory of .bc/.ll files, or the layout that
// MLGO's corpus tools write (corpus_description.json listing modules, with
// <module>.bc and <module>.cmd beside it). Scanned once; the index is immutable,
// so lookups from many threads need no lock. Files added later are not seen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "datasets/dataset_types.h"

namespace kiln::datasets {

struct CorpusEntry {
  std::filesystem::path relative;  // below the corpus root
  Format format = Format::kBitcode;
};

class CorpusIndex {
 public:
  // not-found if the root is missing; invalid-argument for a bad name or a
  // malformed corpus_description.json.
  static Result<CorpusIndex> scan(const CorpusDirectory& corpus);

  const std::string& name() const { return name_; }
  std::size_t size() const { return entries_.size(); }
  bool isMlgo() const { return mlgo_; }
  // "MLGO corpus: 120 modules (ThinLTO)", without the directory; mentions skipped files.
  std::string description() const;
  // Benchmark names (relative paths without extension), sorted, at most `limit`.
  std::vector<std::string> names(std::size_t limit) const;
  const CorpusEntry* find(std::string_view name) const;
  // The entry's module, read only below the corpus root (a symlink out of it
  // is refused: permission-denied) and checked against its format.
  Result<std::string> read(const CorpusEntry& entry, std::uint64_t maxBytes) const;

 private:
  CorpusIndex() = default;
  Status scanDirectory();
  Status scanMlgo(const std::filesystem::path& descriptionFile);
  // Adds `name` if it forms a valid URI and is not taken; counts it as skipped otherwise.
  void add(std::string name, CorpusEntry entry);

  std::string name_;
  std::filesystem::path root_;
  bool mlgo_ = false;
  bool thinLto_ = false;
  std::size_t skipped_ = 0;
  std::map<std::string, CorpusEntry, std::less<>> entries_;
};

}  // namespace kiln::datasets
