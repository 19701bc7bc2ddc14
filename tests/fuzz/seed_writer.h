// Where tests/fuzz/make_seed_corpus writes: one file per seed under
// <corpus>/<target>/<name>. Shared by the seed writers of each group of targets.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace kiln::fuzz {

class SeedWriter {
 public:
  explicit SeedWriter(std::filesystem::path root) : root_(std::move(root)) {}
  void put(const std::string& target, const std::string& name, const std::string& bytes) {
    std::filesystem::create_directories(root_ / target);
    std::ofstream(root_ / target / name, std::ios::binary) << bytes;
    ++written_;
  }
  int written() const { return written_; }

 private:
  std::filesystem::path root_;
  int written_ = 0;
};

// The seeds of the targets for what reaches kiln besides its own protocol
// frames (tests/fuzz/outside_seeds.cpp): HTTP requests, job specs, parameters,
// the isolation link, key files.
void writeOutsideSeeds(SeedWriter& out);

}  // namespace kiln::fuzz
