// Pure descriptions of the two ML advisors kiln can drive interactively: the
// inliner in opt and the register-allocation eviction advisor in llc. No I/O:
// a session type builds its command line and default action from these.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "mlgo/channel.h"

namespace kiln::mlgo {

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
  // (llvm-project PR 141453). Checked on Debian's opt-19: answering this slot
  // reproduces -enable-ml-inliner=default byte for byte.
  std::optional<std::string> defaultDecisionSlot;
  // The flags that enable the advisor and the channel, without the channel base.
  std::vector<std::string> advisorFlags;
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

}  // namespace kiln::mlgo
