#include "compilers/llvm_session/transition_cache.h"

#include <cstring>

namespace kiln::llvm_session {

namespace {

// The map node, the key's heap copy and the entry itself, roughly: so that
// thousands of "no change" entries still count against the byte bound.
constexpr std::uint64_t kEntryOverheadBytes = 160;

}  // namespace

Transition::Transition(std::string key, bool changed,
                       std::optional<llvm_engine::SerializedModule> after,
                       llvm_engine::StateDigest afterIdentity, Duration cost)
    : key_(std::move(key)),
      changed_(changed),
      after_(std::move(after)),
      afterIdentity_(afterIdentity),
      cost_(cost) {}

std::uint64_t Transition::sizeInBytes() const {
  std::uint64_t bytes = kEntryOverheadBytes + key_.size();
  if (after_) bytes += after_->name.size() + after_->bitcode.size() + after_->irText.size();
  return bytes;
}

std::string transitionKey(const llvm_engine::StateDigest& before, std::size_t pass) {
  std::string key(before.size() + sizeof(std::uint32_t), '\0');
  std::memcpy(key.data(), before.data(), before.size());
  const auto index = static_cast<std::uint32_t>(pass);
  std::memcpy(key.data() + before.size(), &index, sizeof(index));
  return key;
}

Duration estimatedHitCost(const HitCostModel& model, bool replacesModule,
                          std::uint64_t bitcodeBytes, std::uint64_t textBytes) {
  if (!replacesModule) return model.lookup;
  const double nanos = model.copyNanosPerByte * double(bitcodeBytes + textBytes) +
                       model.readNanosPerBitcodeByte * double(bitcodeBytes);
  return model.lookup + model.newContext +
         std::chrono::duration_cast<Duration>(std::chrono::duration<double, std::nano>(nanos));
}

bool worthRecording(Duration freshCost, Duration hitCost) { return freshCost > hitCost; }

Result<StepThroughCache> applyPassThroughCache(llvm_engine::ModuleState& state, std::size_t pass,
                                               TransitionCache& cache, const HitCostModel& model,
                                               const Clock& clock, const RunStep& run) {
  // Out-of-range indices and unusable states get their errors from the
  // fresh path, never a lookup.
  std::optional<llvm_engine::StateDigest> before;
  if (pass < state.passes().size() && cache.enabled()) before = state.identity();
  std::string key;
  if (before) {
    key = transitionKey(*before, pass);
    if (std::shared_ptr<const Transition> hit = cache.get(key)) {
      if (const llvm_engine::SerializedModule* after = hit->after()) {
        KILN_RETURN_IF_ERROR(state.adopt(*after, hit->afterIdentity()));
      }
      return StepThroughCache{{state.passes().at(pass).name, hit->changed()}, true};
    }
  }

  const TimePoint start = clock.now();
  Result<llvm_engine::PassOutcome> outcome = run ? run(state, pass) : state.applyPass(pass);
  const Duration cost = clock.now() - start;
  if (!outcome.ok()) return outcome.status();  // failures are never recorded
  if (!before) return StepThroughCache{*std::move(outcome), false};

  // A step that claims no change usually kept the bytes (and the identity,
  // so this costs nothing); one that changed them costs a hash, paid only
  // when recording.
  std::optional<llvm_engine::StateDigest> sameIdentity;
  if (!outcome->changed) sameIdentity = state.identity();
  const bool replaces = !(sameIdentity && *sameIdentity == *before);
  const llvm_engine::ModuleState::SerializedSize size =
      replaces ? state.serializedSize() : llvm_engine::ModuleState::SerializedSize{};
  if (!worthRecording(cost, estimatedHitCost(model, replaces, size.bitcodeBytes, size.textBytes))) {
    return StepThroughCache{*std::move(outcome), false};
  }
  std::optional<llvm_engine::SerializedModule> after;
  if (replaces) {
    KILN_ASSIGN_OR_RETURN(after, state.serialize());
  }
  const std::optional<llvm_engine::StateDigest> afterIdentity = state.identity();
  if (afterIdentity) {
    cache.insert(std::make_shared<const Transition>(std::move(key), outcome->changed,
                                                    std::move(after), *afterIdentity, cost));
  }
  return StepThroughCache{*std::move(outcome), false};
}

}  // namespace kiln::llvm_session
