#include "compilers/llvm_engine/observations.h"

#include <array>
#include <string>

#include "compilers/llvm_engine/module_state.h"

namespace kiln::llvm_engine {
namespace {

constexpr std::array kSpecs = {
    ObservationSpec{"Ir", true, false,
                    "canonical textual IR (opt -S without ModuleID/source_filename)"},
    ObservationSpec{"IrSha1", true, false, "hex SHA-1 of Ir"},
    ObservationSpec{"Bitcode", true, false,
                    "bytes the module was read from: the input until the first step, then kiln's "
                    "writer output"},
    ObservationSpec{"IrInstructionCount", true, false, "number of IR instructions"},
    ObservationSpec{"InstCount", true, false, "int64[70]: totals and per-opcode counts"},
    ObservationSpec{"InstCountDict", true, false, "InstCount keyed by feature name"},
    ObservationSpec{"Autophase", true, false, "int64[56]: Autophase features"},
    ObservationSpec{"AutophaseDict", true, false, "Autophase keyed by feature name"},
    ObservationSpec{"ObjectTextSizeBytes", true, true,
                    ".text bytes of the object compiled in-process for the host target"},
};

template <class T>
Result<Value> wrap(Result<T> result) {
  if (!result.ok()) return result.status();
  return Value(std::move(result).value());
}

}  // namespace

std::span<const ObservationSpec> observationSpecs() { return kSpecs; }

Result<Value> observe(const ModuleState& state, std::string_view name) {
  if (name == "Ir") return wrap(state.ir());
  if (name == "IrSha1") return wrap(state.irSha1());
  if (name == "Bitcode") return wrap(state.bitcode());
  if (name == "IrInstructionCount") return wrap(state.instructionCount());
  if (name == "InstCount") return wrap(state.instCount());
  if (name == "InstCountDict") return wrap(state.instCountDict());
  if (name == "Autophase") return wrap(state.autophase());
  if (name == "AutophaseDict") return wrap(state.autophaseDict());
  if (name == "ObjectTextSizeBytes") return wrap(state.objectTextSizeBytes());
  return notFound("no observation space '" + std::string(name) + "' for LLVM states");
}

Int64Tensor toTensor(std::vector<std::int64_t> values) {
  Int64Tensor tensor;
  tensor.shape = {static_cast<std::int64_t>(values.size())};
  tensor.values = std::move(values);
  return tensor;
}

ValueDict toDict(std::span<const std::string_view> names, const std::vector<std::int64_t>& values) {
  ValueDict dict;
  dict.reserve(names.size());
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) {
    dict.push_back({std::string(names[i]), Value(values[i])});
  }
  return dict;
}

}  // namespace kiln::llvm_engine
