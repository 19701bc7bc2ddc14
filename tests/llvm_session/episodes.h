// Shared helpers of the tests that run whole `llvm` episodes in-process: a
// process's llvm context without a worker around it, sessions started from
// kiln-bench-v0 programs, random pass sequences, and a step's outcome and
// observations rendered as text, so that two runs compare whole.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "compilers/llvm_session/llvm_session.h"
#include "tests/llvm_session/support.h"

namespace kiln::llvm_session::testing {

// One process's llvm context, without a worker around it.
class Process {
 public:
  explicit Process(const std::string& tag) : scratch_(tag) {
    resources_ = std::make_unique<ContextResources>(
        ContextResources{scratch_.path(), cache_, makeNullLogger("llvm-" + tag), clock_});
    context_ = std::make_unique<LlvmContext>(*resources_);
    const Status init = context_->init();
    EXPECT_TRUE(init.ok()) << init.toString();
  }
  LlvmContext& context() { return *context_; }

  std::unique_ptr<LlvmSession> start(const std::string& program) {
    auto session = std::make_unique<LlvmSession>(*context_);
    Benchmark benchmark{benchUri(program),
                        std::make_shared<const std::string>(readFile(benchPath(program)))};
    const Status init = session->init(0, benchmark);
    EXPECT_TRUE(init.ok()) << init.toString();
    return session;
  }

 private:
  ScratchDir scratch_;
  BenchmarkCache cache_;
  SteadyClock clock_;
  std::unique_ptr<ContextResources> resources_;
  std::unique_ptr<LlvmContext> context_;
};

// A value in full (describe() abbreviates strings and tensors).
inline std::string render(const Value& value) {
  if (const auto* tensor = value.getIf<Int64Tensor>()) {
    std::string out;
    for (std::int64_t v : tensor->values) out += std::to_string(v) + ",";
    return out;
  }
  if (const auto* text = value.getIf<std::string>()) return *text;
  return value.describe();
}

// Everything a step shows a client, as text, so that two runs compare whole.
inline std::string describeStep(LlvmSession& session, const Status& status,
                                const ActionOutcome& outcome, bool observe) {
  std::string out = status.ok() ? "ok" : "error " + status.toString();
  out += outcome.endOfEpisode ? " end" : "";
  out += outcome.actionHadNoEffect ? " no-effect" : " effect";
  if (!status.ok() || !observe) return out;
  const auto spaces = session.observationSpaces();
  for (const char* name : {"IrSha1", "IrInstructionCount", "Reward:IrInstructionCount",
                           "Reward:IrInstructionCountOz", "Autophase"}) {
    std::size_t index = 0;
    while (index < spaces.size() && spaces[index].name != name) ++index;
    Value value;
    const Status observed = session.computeObservation(index, value);
    out += std::string(" | ") + name + "=" + (observed.ok() ? render(value) : observed.toString());
  }
  return out;
}

inline std::string withoutRewards(const std::string& step) {
  std::string out;
  std::size_t start = 0;
  while (start <= step.size()) {
    std::size_t end = step.find(" | ", start);
    if (end == std::string::npos) end = step.size();
    const std::string part = step.substr(start, end - start);
    if (!part.starts_with("Reward:")) out += part + " | ";
    start = end + 3;
  }
  return out;
}

// A random pass sequence in which a pass is often repeated (no-effect steps).
inline std::vector<std::int64_t> randomSequence(std::size_t passes, unsigned seed, int length) {
  std::mt19937 rng(seed);
  std::vector<std::int64_t> actions;
  for (int i = 0; i < length; ++i) {
    if (!actions.empty() && rng() % 4 == 0) {
      actions.push_back(actions.back());
    } else {
      actions.push_back(static_cast<std::int64_t>(rng() % passes));
    }
  }
  return actions;
}

inline std::vector<std::string> runEpisode(Process& process, const std::string& program,
                                           const std::vector<std::int64_t>& actions,
                                           bool observeEachStep) {
  auto session = process.start(program);
  std::vector<std::string> trace;
  for (std::int64_t action : actions) {
    ActionOutcome outcome;
    const Status status = session->applyAction(Value(action), outcome);
    trace.push_back(describeStep(*session, status, outcome, observeEachStep));
    if (!status.ok()) return trace;
  }
  // The final state, observed in any case.
  trace.push_back(describeStep(*session, okStatus(), ActionOutcome{}, true));
  return trace;
}

}  // namespace kiln::llvm_session::testing
