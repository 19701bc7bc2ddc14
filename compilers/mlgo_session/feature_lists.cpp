// Lists copied from the headers Debian's opt-19 and llc-19 print (checked on
// this machine; llvm/Analysis/InlineModelFeatureMaps.h and
// CodeGen/MLRegallocEvictAdvisor.h define them).
#include "compilers/mlgo_session/feature_lists.h"

#include <fmt/format.h>

namespace kiln::mlgo_session {

namespace {

mlgo_channel::FeatureSpec makeSpec(std::string name, mlgo_channel::ElementType type,
                                   std::vector<std::int64_t> shape) {
  mlgo_channel::FeatureSpec spec;
  spec.name = std::move(name);
  spec.type = type;
  spec.shape = std::move(shape);
  (void)mlgo_channel::computeSizes(spec);
  return spec;
}

std::vector<mlgo_channel::FeatureSpec> inlinerFeatures() {
  static const char* const kNames[] = {
      "sroa_savings",
      "sroa_losses",
      "load_elimination",
      "call_penalty",
      "call_argument_setup",
      "load_relative_intrinsic",
      "lowered_call_arg_setup",
      "indirect_call_penalty",
      "jump_table_penalty",
      "case_cluster_penalty",
      "switch_default_dest_penalty",
      "switch_penalty",
      "unsimplified_common_instructions",
      "num_loops",
      "dead_blocks",
      "simplified_instructions",
      "constant_args",
      "constant_offset_ptr_args",
      "callsite_cost",
      "cold_cc_penalty",
      "last_call_to_static_bonus",
      "is_multiple_blocks",
      "nested_inlines",
      "nested_inline_cost_estimate",
      "threshold",
      "callee_basic_block_count",
      "callsite_height",
      "node_count",
      "nr_ctant_params",
      "cost_estimate",
      "edge_count",
      "caller_users",
      "caller_conditionally_executed_blocks",
      "caller_basic_block_count",
      "callee_conditionally_executed_blocks",
      "callee_users",
      "is_callee_avail_external",
      "is_caller_avail_external",
      "inlining_default",
  };
  std::vector<mlgo_channel::FeatureSpec> out;
  for (const char* name : kNames)
    out.push_back(makeSpec(name, mlgo_channel::ElementType::kInt64, {1}));
  return out;
}

std::vector<mlgo_channel::FeatureSpec> evictionFeatures() {
  using mlgo_channel::ElementType;
  const std::vector<std::int64_t> row{1, kEvictionCandidates};
  std::vector<mlgo_channel::FeatureSpec> out;
  auto add = [&](const char* name, ElementType type) { out.push_back(makeSpec(name, type, row)); };
  add("mask", ElementType::kInt64);
  add("is_free", ElementType::kInt64);
  add("nr_urgent", ElementType::kFloat);
  add("nr_broken_hints", ElementType::kFloat);
  add("is_hint", ElementType::kInt64);
  add("is_local", ElementType::kInt64);
  for (const char* name :
       {"nr_rematerializable", "nr_defs_and_uses", "weighed_reads_by_max", "weighed_writes_by_max",
        "weighed_read_writes_by_max", "weighed_indvars_by_max", "hint_weights_by_max",
        "start_bb_freq_by_max", "end_bb_freq_by_max", "hottest_bb_freq_by_max", "liverange_size",
        "use_def_density"}) {
    add(name, ElementType::kFloat);
  }
  add("max_stage", ElementType::kInt64);
  add("min_stage", ElementType::kInt64);
  out.push_back(makeSpec("progress", ElementType::kFloat, {1}));
  return out;
}

std::string describeSpec(const mlgo_channel::FeatureSpec& spec) {
  return fmt::format("{} {}[{}]", spec.name, mlgo_channel::elementTypeName(spec.type),
                     fmt::join(spec.shape, ","));
}

}  // namespace

const std::vector<mlgo_channel::FeatureSpec>& expectedFeatures(mlgo_channel::AdvisorKind kind) {
  static const std::vector<mlgo_channel::FeatureSpec> kInliner = inlinerFeatures();
  static const std::vector<mlgo_channel::FeatureSpec> kEviction = evictionFeatures();
  return kind == mlgo_channel::AdvisorKind::kInliner ? kInliner : kEviction;
}

Status checkHeader(const std::vector<mlgo_channel::FeatureSpec>& expected,
                   const mlgo_channel::ChannelHeader& header) {
  const auto& got = header.features;
  for (std::size_t i = 0; i < std::max(expected.size(), got.size()); ++i) {
    if (i >= got.size()) {
      return compileError(
          fmt::format("the compiler's channel header lacks feature #{} ({}): it has {} "
                      "features, kiln expects LLVM 19's {}",
                      i, describeSpec(expected[i]), got.size(), expected.size()));
    }
    if (i >= expected.size()) {
      return compileError(fmt::format(
          "the compiler's channel header has an unexpected extra feature #{} ({}); kiln expects "
          "LLVM 19's {} features",
          i, describeSpec(got[i]), expected.size()));
    }
    if (got[i].name != expected[i].name || got[i].type != expected[i].type ||
        got[i].shape != expected[i].shape) {
      return compileError(
          fmt::format("the compiler's channel header differs from LLVM 19's at feature #{}: got "
                      "{}, expected {}",
                      i, describeSpec(got[i]), describeSpec(expected[i])));
    }
  }
  if (header.advice.type != mlgo_channel::ElementType::kInt64 || header.advice.elementCount != 1) {
    return compileError("the compiler's advice tensor is " + describeSpec(header.advice) +
                        ", expected a single int64");
  }
  return okStatus();
}

Space featureSpace(const mlgo_channel::FeatureSpec& spec) {
  bool integer = spec.type != mlgo_channel::ElementType::kFloat &&
                 spec.type != mlgo_channel::ElementType::kDouble;
  if (integer) return Space::int64Box(spec.name, spec.shape, {});
  if (spec.type == mlgo_channel::ElementType::kFloat)
    return Space::floatBox(spec.name, spec.shape, {});
  return Space::doubleBox(spec.name, spec.shape, {});
}

}  // namespace kiln::mlgo_session
