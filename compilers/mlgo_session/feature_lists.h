// The feature tensors LLVM 19's interactive advisors announce in their channel
// header. Session types must declare observation spaces before any compiler
// runs, so they declare these and check the child's header against them.
#pragma once

#include <vector>

#include <kiln/space.h>
#include <kiln/status.h>
#include "compilers/mlgo_channel/advisor_kind.h"
#include "compilers/mlgo_channel/channel_header.h"

namespace kiln::mlgo_session {

// The features in wire order (names, types, shapes) as opt-19 / llc-19 send them.
const std::vector<mlgo_channel::FeatureSpec>& expectedFeatures(mlgo_channel::AdvisorKind kind);

// Ok when `header` lists exactly `expected` (names, types, shapes, order) and an
// advice of one int64; otherwise a compile-error naming the first difference,
// so a compiler of another LLVM version is refused at session start.
Status checkHeader(const std::vector<mlgo_channel::FeatureSpec>& expected,
                   const mlgo_channel::ChannelHeader& header);

// The observation space of one feature tensor.
Space featureSpace(const mlgo_channel::FeatureSpec& spec);

// Candidates of the eviction advisor (the size of "mask" and the other [1, N] features).
inline constexpr std::int64_t kEvictionCandidates = 33;

}  // namespace kiln::mlgo_session
