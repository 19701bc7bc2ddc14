// The observation spaces of an LLVM state, by name, with what a caller may
// assume about each (deterministic: same state -> same value; platform
// dependent: the value may differ between hosts or LLVM builds), plus the
// helpers that turn feature vectors into kiln Values.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <kiln/status.h>
#include <kiln/value.h>

namespace kiln::llvm_engine {

class ModuleState;

struct ObservationSpec {
  std::string_view name;
  bool deterministic;
  bool platformDependent;
  std::string_view description;
};

// "Ir", "IrSha1", "Bitcode", "IrInstructionCount", "InstCount",
// "InstCountDict", "Autophase", "AutophaseDict", "ObjectTextSizeBytes".
std::span<const ObservationSpec> observationSpecs();

// The named observation of `state`; notFound for an unknown name.
Result<Value> observe(const ModuleState& state, std::string_view name);

Int64Tensor toTensor(std::vector<std::int64_t> values);  // shape [n]
ValueDict toDict(std::span<const std::string_view> names, const std::vector<std::int64_t>& values);

}  // namespace kiln::llvm_engine
