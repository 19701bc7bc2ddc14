// A corpus module's own compile flags (its .cmd: clang driver flags such as
// -O2, --target=, -march=, -mcpu=, -fPIC, or the cc1 flags of ml-compiler-opt's
// corpora such as -triple, -target-cpu, -target-feature, -mrelocation-model)
// mapped onto the opt and llc the mlgo types run. Pure. The .cmd is input
// from a file: only an allow-list is mapped, each value checked; anything
// else (-load, -o, -fplugin, response files, ...) is ignored and listed,
// never passed to a tool.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kiln::mlgo_session {

struct ModuleToolFlags {
  std::optional<std::string> optLevel;  // "-O0".."-O3", "-Os", "-Oz" (opt spells them so)
  std::optional<std::string> triple;
  std::optional<std::string> cpu;
  std::vector<std::string> features;  // "+avx2", "-sse4a"
  bool pic = false;
  std::vector<std::string> ignored;  // arguments not on the allow-list, as given

  // Target flags for opt (-mtriple=, -mcpu=, -mattr=): what the inliner's
  // cost model sees; the pass pipeline stays kiln's.
  std::vector<std::string> optTargetFlags() const;
  // For llc: the -O level (llc knows -O0..-O3: -Os/-Oz are -O2, as clang
  // passes them to codegen), target flags and -relocation-model=pic.
  std::vector<std::string> llcFlags() const;
};

// Maps `command` (the .cmd's arguments, argv[0] and the input included or
// not). The last -O level, target, CPU wins, as with clang.
ModuleToolFlags mapModuleFlags(const std::vector<std::string>& command);

}  // namespace kiln::mlgo_session
