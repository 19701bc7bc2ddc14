// Flag spellings checked against Debian's opt-19 and llc-19 (see
// shared/notes/mlgo-interactive.md).
#include "compilers/mlgo_channel/advisor_kind.h"

namespace kiln::mlgo_channel {

AdvisorDescription describeAdvisor(AdvisorKind kind, int llvmMajorVersion) {
  AdvisorDescription d;
  d.kind = kind;
  const std::string suffix = "-" + std::to_string(llvmMajorVersion);
  switch (kind) {
    case AdvisorKind::kInliner:
      d.name = "inliner";
      d.defaultCompiler = "opt" + suffix;
      d.adviceName = "inlining_decision";
      d.outputExtension = ".bc";
      d.defaultDecisionFeature = "inlining_default";
      d.defaultDecisionSlot =
          llvmMajorVersion < 21 ? "callee_basic_block_count" : "inlining_default";
      d.advisorFlags = {"-passes=scc-oz-module-inliner", "-enable-ml-inliner=release",
                        "-inliner-interactive-include-default"};
      d.llvmDefaultFlags = {"-passes=scc-oz-module-inliner", "-enable-ml-inliner=default"};
      break;
    case AdvisorKind::kRegallocEviction:
      d.name = "regalloc-eviction";
      d.defaultCompiler = "llc" + suffix;
      d.adviceName = "index_to_evict";
      d.outputExtension = ".o";
      d.advisorFlags = {"-regalloc-enable-advisor=release", "-filetype=obj"};
      d.llvmDefaultFlags = {"-regalloc-enable-advisor=default", "-filetype=obj"};
      break;
  }
  return d;
}

std::vector<std::string> compilerArguments(const AdvisorDescription& description,
                                           const std::filesystem::path& channelBase,
                                           const std::vector<std::string>& extraFlags,
                                           const std::filesystem::path& input,
                                           const std::filesystem::path& output) {
  std::vector<std::string> args = description.advisorFlags;
  const char* baseFlag = description.kind == AdvisorKind::kInliner
                             ? "-inliner-interactive-channel-base="
                             : "-regalloc-evict-interactive-channel-base=";
  args.push_back(baseFlag + channelBase.string());
  args.insert(args.end(), extraFlags.begin(), extraFlags.end());
  args.push_back(input.string());
  args.push_back("-o");
  args.push_back(output.string());
  return args;
}

std::vector<std::string> llvmDefaultArguments(const AdvisorDescription& description,
                                              const std::vector<std::string>& extraFlags,
                                              const std::filesystem::path& input,
                                              const std::filesystem::path& output) {
  std::vector<std::string> args = description.llvmDefaultFlags;
  args.insert(args.end(), extraFlags.begin(), extraFlags.end());
  args.push_back(input.string());
  args.push_back("-o");
  args.push_back(output.string());
  return args;
}

Result<std::size_t> defaultDecisionIndex(const AdvisorDescription& description,
                                         const ChannelHeader& header) {
  if (!description.defaultDecisionSlot) {
    return unimplemented("the " + description.name + " advisor does not expose a default decision");
  }
  const std::string& slot = *description.defaultDecisionSlot;
  std::optional<std::size_t> index = header.featureIndex(slot);
  if (!index) {
    return invalidArgument("the channel header has no feature \"" + slot +
                           "\" holding the default decision");
  }
  return *index;
}

Result<std::int64_t> defaultDecisionAt(const ChannelHeader& header, const Observation& observation,
                                       std::size_t index) {
  KILN_ASSIGN_OR_RETURN(Value value, decodeFeature(header, observation, index));
  const auto* tensor = value.getIf<Int64Tensor>();
  if (tensor == nullptr || tensor->values.size() != 1) {
    return invalidArgument("feature \"" + header.features[index].name +
                           "\" is not a single integer: " + value.describe());
  }
  return tensor->values.front();
}

Result<std::int64_t> defaultDecision(const AdvisorDescription& description,
                                     const ChannelHeader& header, const Observation& observation) {
  KILN_ASSIGN_OR_RETURN(std::size_t index, defaultDecisionIndex(description, header));
  return defaultDecisionAt(header, observation, index);
}

std::optional<std::int64_t> evictionReferenceAnswer(const Int64Tensor& mask) {
  if (mask.values.empty()) return std::nullopt;
  if (mask.values.back() != 0) return static_cast<std::int64_t>(mask.values.size() - 1);
  for (std::size_t i = 0; i < mask.values.size(); ++i) {
    if (mask.values[i] != 0) return static_cast<std::int64_t>(i);
  }
  return std::nullopt;
}

Result<std::size_t> referenceFeatureIndex(const AdvisorDescription& description,
                                          const ChannelHeader& header) {
  if (description.kind == AdvisorKind::kInliner) return defaultDecisionIndex(description, header);
  std::optional<std::size_t> index = header.featureIndex("mask");
  if (!index) return invalidArgument("the channel header has no feature \"mask\"");
  return *index;
}

Result<std::int64_t> referenceAnswerAt(const AdvisorDescription& description,
                                       const ChannelHeader& header, const Observation& observation,
                                       std::size_t index) {
  if (description.kind == AdvisorKind::kInliner) {
    return defaultDecisionAt(header, observation, index);
  }
  KILN_ASSIGN_OR_RETURN(Value value, decodeFeature(header, observation, index));
  const auto* mask = value.getIf<Int64Tensor>();
  if (mask == nullptr) return invalidArgument("feature \"mask\" is not an integer tensor");
  std::optional<std::int64_t> answer = evictionReferenceAnswer(*mask);
  if (!answer) return compileError("the eviction decision allows no candidate (mask is all 0)");
  return *answer;
}

}  // namespace kiln::mlgo_channel
