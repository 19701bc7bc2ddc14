// The session type "mlgo-compile": one batch compile job per session. Start
// it on a benchmark, then send one Step whose action is the job spec (JSON,
// see pipeline.h); the job runs on the worker and the step returns its
// NativeSize, TrainingLog and JobLog. cancel() kills the job's compilers.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <kiln/kit/compilation_session.h>
#include "compilers/mlgo_session/kill_switch.h"
#include "compilers/mlgo_session/mlgo_context.h"
#include "compilers/mlgo_session/pipeline.h"

namespace kiln::mlgo_session {

// The providers a worker's context offers to jobs (tools, clock, directory,
// the benchmark with its own flags, ...).
Dependencies contextDependencies(const MlgoConfig& config, const Clock& clock,
                                 std::filesystem::path workDirectory,
                                 std::shared_ptr<const std::string> benchmark,
                                 KillSwitch& killSwitch, ModuleToolFlags moduleFlags = {});

class MlgoCompileSession final : public CompilationSession {
 public:
  static constexpr const char* kSessionTypeName = "mlgo-compile";
  explicit MlgoCompileSession(MlgoContext& context) : context_(context) {}
  ~MlgoCompileSession() override;

  std::vector<Space> actionSpaces() const override;
  std::vector<Space> observationSpaces() const override;
  std::string compilerVersion() const override { return "LLVM 19 batch jobs"; }

  Status init(std::size_t actionSpaceIndex, const Benchmark& benchmark) override;
  Status applyAction(const Value& action, ActionOutcome& outcome) override;
  Status computeObservation(std::size_t spaceIndex, Value& observation) override;
  void cancel() override { killSwitch_.fire(); }

 private:
  MlgoContext& context_;
  MlgoConfig config_;
  Benchmark benchmark_;
  ModuleToolFlags moduleFlags_;  // from the module's .cmd (a corpus module's own flags)
  std::filesystem::path directory_;
  std::optional<JobOutputs> outputs_;
  bool done_ = false;
  KillSwitch killSwitch_;
};

}  // namespace kiln::mlgo_session
