// Shared helpers of the llvmenv tests: the benchmark programs compiled from
// data/*.c at build time, and one pass table per test process.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "compilers/llvm_engine/module_state.h"
#include "compilers/llvm_engine/pass_table.h"

namespace kiln::llvm_engine::testing {

inline std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline std::string benchmarkPath(const std::string& program) {
  return std::string(KILN_LLVMENV_DATA_DIR) + "/" + program + ".bc";
}

inline const std::vector<std::string>& benchmarkNames() {
  static const std::vector<std::string> names = {"matrix", "strings", "calls", "stencil"};
  return names;
}

// Building the table parses the registry; do it once per test process.
inline std::shared_ptr<const PassTable> passTable() {
  static const std::shared_ptr<const PassTable> table = [] {
    auto result = PassTable::fromRegistry();
    EXPECT_TRUE(result.ok()) << result.status().toString();
    return result.ok() ? *result : nullptr;
  }();
  return table;
}

inline std::unique_ptr<ModuleState> loadBitcodeFile(const std::string& path,
                                                    const std::string& name) {
  const std::string bytes = readFile(path);
  EXPECT_FALSE(bytes.empty()) << "missing " << path;
  auto state = ModuleState::fromBitcode(passTable(), bytes, name);
  EXPECT_TRUE(state.ok()) << state.status().toString();
  return state.ok() ? std::move(state).value() : nullptr;
}

// One of this directory's test programs (data/).
inline std::unique_ptr<ModuleState> loadBenchmark(const std::string& program) {
  return loadBitcodeFile(benchmarkPath(program), program + ".bc");
}

// One of kiln-bench-v0's programs (programs/bundled/), built with the tree.
inline std::unique_ptr<ModuleState> loadKilnBenchProgram(const std::string& program) {
  return loadBitcodeFile(std::string(KILN_BENCH_BC_DIR) + "/" + program + ".bc", program + ".bc");
}

inline std::size_t passIndex(const std::string& name) {
  auto index = passTable()->find(name);
  EXPECT_TRUE(index.has_value()) << "no pass " << name;
  return index.value_or(0);
}

}  // namespace kiln::llvm_engine::testing
