// Pure descriptions of the two ML advisors kiln can drive interactively: the
// inliner in opt and the register-allocation eviction advisor in llc. No I/O:
// a session type builds its command lines (the interactive one and LLVM's own
// default build) and its reference answer from these.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <kiln/status.h>
#include "compilers/mlgo_channel/channel.h"

namespace kiln::mlgo_channel {

enum class AdvisorKind : std::uint8_t { kInliner, kRegallocEviction };

struct AdvisorDescription {
  AdvisorKind kind = AdvisorKind::kInliner;
  std::string name;             // "inliner", "regalloc-eviction"
  std::string defaultCompiler;  // "opt-19", "llc-19"
  std::string adviceName;       // the header's advice tensor name
  std::string outputExtension;  // ".bc", ".o"
  // The feature the header announces as the compiler's own decision, if any
  // ("inlining_default" for the inliner; llc 19 has none).
  std::optional<std::string> defaultDecisionFeature;
  // Where the default decision really is. LLVM before 21 writes it into the
  // slot of InlineCostFeatureIndex::NumberOfFeatures, i.e. over
  // "callee_basic_block_count", and leaves "inlining_default" at 0
  // (llvm-project PR 141453). Answering this slot at every decision gives the
  // "interactive default": LLVM's heuristic inside the ML advisor, which is
  // not always -enable-ml-inliner=default's build, because the ML advisor
  // never asks about some call sites (unreachable ones, and every one once
  // the module grew past -ml-advisor-size-increase-threshold) and does not
  // inline them. docs/mlgo.md has the measured difference.
  std::optional<std::string> defaultDecisionSlot;
  // The flags that enable the advisor and the channel, without the channel base.
  std::vector<std::string> advisorFlags;
  // LLVM's own build on the same pipeline: its default heuristic, no channel.
  std::vector<std::string> llvmDefaultFlags;
};

// The description for `kind` as spoken by LLVM `llvmMajorVersion`.
AdvisorDescription describeAdvisor(AdvisorKind kind, int llvmMajorVersion = 19);

// The arguments after argv[0]: advisor flags, channel base, extra flags, input
// and output. Extra flags come after kiln's so a caller can override an option.
std::vector<std::string> compilerArguments(const AdvisorDescription& description,
                                           const std::filesystem::path& channelBase,
                                           const std::vector<std::string>& extraFlags,
                                           const std::filesystem::path& input,
                                           const std::filesystem::path& output);

// The same compile with LLVM's default advisor instead of the channel:
// llvmDefaultFlags, extra flags, input and output.
std::vector<std::string> llvmDefaultArguments(const AdvisorDescription& description,
                                              const std::vector<std::string>& extraFlags,
                                              const std::filesystem::path& input,
                                              const std::filesystem::path& output);

// The compiler's own decision for `observation` as an int64 (0/1 for the
// inliner); unimplemented when the advisor exposes none, invalid-argument when
// the header lacks the feature.
Result<std::int64_t> defaultDecision(const AdvisorDescription& description,
                                     const ChannelHeader& header, const Observation& observation);
// defaultDecision() in two halves, so that a caller answering many decisions
// looks the feature up by name once: where the decision is in `header` (the
// same errors), then the decision at that index.
Result<std::size_t> defaultDecisionIndex(const AdvisorDescription& description,
                                         const ChannelHeader& header);
Result<std::int64_t> defaultDecisionAt(const ChannelHeader& header, const Observation& observation,
                                       std::size_t index);

// The eviction advisor's reference answer: the live range being allocated
// (the last candidate, "evict nothing") when the mask allows it, else the first
// allowed candidate. llc 19 sends no decision of its own, so this is kiln's
// fixed policy, not LLVM's default heuristic. nullopt when nothing is allowed.
std::optional<std::int64_t> evictionReferenceAnswer(const Int64Tensor& mask);

// The reference answer: what kiln's "default" plays at every decision and
// what DefaultAdvice shows (the compiler's own decision for the inliner,
// evictionReferenceAnswer() for eviction). In two halves like
// defaultDecision(): the feature it is read from, then the answer.
Result<std::size_t> referenceFeatureIndex(const AdvisorDescription& description,
                                          const ChannelHeader& header);
Result<std::int64_t> referenceAnswerAt(const AdvisorDescription& description,
                                       const ChannelHeader& header, const Observation& observation,
                                       std::size_t index);

}  // namespace kiln::mlgo_channel
