// What a validation campaign (compilers/llvm_engine/validation_campaign.h) runs, as pure
// policy: the actions it may take and the sequences of them it tries, in
// order. Some passes only go wrong on IR that other passes shaped first
// (promoted allocas, rotated loops), so each action is tried alone, after
// mem2reg, after sroa, as the last of a sampled triple and somewhere inside
// a random episode, one family per round, so that a campaign cut short by
// its time limit has still tried every action about as often.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kiln/status.h>
#include "compilers/llvm_engine/pass_table.h"

namespace kiln::llvm_engine {

// One action a campaign may take: a pass of the table, or a registry pass
// put back from outside it (to show what the campaign finds when a denied
// pass is an action again).
struct CampaignAction {
  std::string name;
  std::optional<std::size_t> tableIndex;  // nullopt: run `name` as a pipeline
};

// The table's actions in table order, then `putBack`. invalid-argument for a
// name put back that is already an action, twice, or that LLVM cannot parse.
Result<std::vector<CampaignAction>> campaignActions(const PassTable& table,
                                                    const std::vector<std::string>& putBack);

enum class SequenceFamily { kAlone, kAfterMem2reg, kAfterSroa, kTriple, kRandom };

inline constexpr std::array kSequenceFamilies = {
    SequenceFamily::kAlone, SequenceFamily::kAfterMem2reg, SequenceFamily::kAfterSroa,
    SequenceFamily::kTriple, SequenceFamily::kRandom};

// "alone", "after-mem2reg", "after-sroa", "triple", "random".
std::string_view familyName(SequenceFamily family);

struct CampaignSequence {
  SequenceFamily family;
  std::size_t target;                // the action this sequence was planned for
  std::size_t program;               // index into the campaign's programs
  std::vector<std::size_t> actions;  // indices into the campaign's actions
};

struct PlanOptions {
  std::size_t sequences = 1000;  // at most this many, over every round
  unsigned randomSteps = 20;     // length of a random episode
  std::uint64_t seed = 1;
  // Plan sequences only for these actions (names); empty: for every action.
  // Predecessors are still drawn from every action.
  std::vector<std::string> focus;
};

// Round r gives every targeted action one sequence of family
// kSequenceFamilies[r % 5] on program (target + r) % programs: triples end
// with the target after two random actions, random episodes hold it at a
// random place among randomSteps - 1 random actions. Deterministic in the
// seed. invalid-argument without programs or actions, without mem2reg or
// sroa among the actions, or for a focus name that is no action.
Result<std::vector<CampaignSequence>> planSequences(const std::vector<CampaignAction>& actions,
                                                    std::size_t programs,
                                                    const PlanOptions& options);

}  // namespace kiln::llvm_engine
