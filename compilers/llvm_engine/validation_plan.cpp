#include "compilers/llvm_engine/validation_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <set>

#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Error.h"

namespace kiln::llvm_engine {
namespace {

std::optional<std::size_t> findAction(const std::vector<CampaignAction>& actions,
                                      std::string_view name) {
  for (std::size_t i = 0; i < actions.size(); ++i) {
    if (actions[i].name == name) return i;
  }
  return std::nullopt;
}

// Whether opt-19 -passes=<name> would take it (parsing only, nothing runs).
Status checkParses(const std::string& name) {
  llvm::PassBuilder builder;
  llvm::ModulePassManager manager;
  if (llvm::Error error = builder.parsePassPipeline(manager, name)) {
    return invalidArgument(
        fmt::format("cannot put back '{}': LLVM 19 does not parse it as a "
                    "pipeline ({})",
                    name, llvm::toString(std::move(error))));
  }
  return okStatus();
}

}  // namespace

std::string_view familyName(SequenceFamily family) {
  switch (family) {
    case SequenceFamily::kAlone:
      return "alone";
    case SequenceFamily::kAfterMem2reg:
      return "after-mem2reg";
    case SequenceFamily::kAfterSroa:
      return "after-sroa";
    case SequenceFamily::kTriple:
      return "triple";
    case SequenceFamily::kRandom:
      return "random";
  }
  return "?";
}

Result<std::vector<CampaignAction>> campaignActions(const PassTable& table,
                                                    const std::vector<std::string>& putBack) {
  std::vector<CampaignAction> actions;
  for (std::size_t i = 0; i < table.size(); ++i) actions.push_back({table.at(i).name, i});
  std::set<std::string, std::less<>> added;
  for (const std::string& name : putBack) {
    if (table.find(name)) {
      return invalidArgument(fmt::format("cannot put back '{}': it is an action already", name));
    }
    if (!added.insert(name).second) {
      return invalidArgument(fmt::format("'{}' is put back twice", name));
    }
    KILN_RETURN_IF_ERROR(checkParses(name));
    actions.push_back({name, std::nullopt});
  }
  return actions;
}

Result<std::vector<CampaignSequence>> planSequences(const std::vector<CampaignAction>& actions,
                                                    std::size_t programs,
                                                    const PlanOptions& options) {
  if (programs == 0) return invalidArgument("a validation campaign needs at least one program");
  if (actions.empty()) return invalidArgument("a validation campaign needs at least one action");
  const std::optional<std::size_t> mem2reg = findAction(actions, "mem2reg");
  const std::optional<std::size_t> sroa = findAction(actions, "sroa");
  if (!mem2reg || !sroa) {
    return invalidArgument("a validation campaign needs mem2reg and sroa among its actions");
  }
  std::vector<std::size_t> targets;
  for (const std::string& name : options.focus) {
    const std::optional<std::size_t> index = findAction(actions, name);
    if (!index) return invalidArgument(fmt::format("focus on '{}': no such action", name));
    targets.push_back(*index);
  }
  if (targets.empty()) {
    for (std::size_t i = 0; i < actions.size(); ++i) targets.push_back(i);
  }

  std::mt19937_64 rng(options.seed);
  std::uniform_int_distribution<std::size_t> anyAction(0, actions.size() - 1);
  const unsigned randomSteps = std::max(options.randomSteps, 1u);
  std::vector<CampaignSequence> plan;
  plan.reserve(options.sequences);
  for (std::size_t round = 0; plan.size() < options.sequences; ++round) {
    const SequenceFamily family = kSequenceFamilies[round % kSequenceFamilies.size()];
    for (const std::size_t target : targets) {
      if (plan.size() >= options.sequences) break;
      CampaignSequence sequence{family, target, (target + round) % programs, {}};
      switch (family) {
        case SequenceFamily::kAlone:
          sequence.actions = {target};
          break;
        case SequenceFamily::kAfterMem2reg:
          sequence.actions = {*mem2reg, target};
          break;
        case SequenceFamily::kAfterSroa:
          sequence.actions = {*sroa, target};
          break;
        case SequenceFamily::kTriple: {
          const std::size_t first = anyAction(rng);
          sequence.actions = {first, anyAction(rng), target};
          break;
        }
        case SequenceFamily::kRandom: {
          for (unsigned step = 1; step < randomSteps; ++step) {
            sequence.actions.push_back(anyAction(rng));
          }
          std::uniform_int_distribution<std::size_t> place(0, sequence.actions.size());
          const auto at = sequence.actions.begin() + static_cast<std::ptrdiff_t>(place(rng));
          sequence.actions.insert(at, target);
          break;
        }
      }
      plan.push_back(std::move(sequence));
    }
  }
  return plan;
}

}  // namespace kiln::llvm_engine
