// Both builds write into the request's directory under the request's stem and
// remove what they wrote on every path, so a session may run them beside its
// own compiler.
#include "compilers/mlgo_session/reference_build.h"

#include <fstream>
#include <iterator>

#include "compilers/mlgo_channel/interactive_compiler.h"
#include "compilers/mlgo_session/native_size.h"
#include "compilers/mlgo_session/run_tool.h"

namespace kiln::mlgo_session {

namespace {

// Reads and measures `path`, then removes it.
Result<Build> takeOutput(const std::filesystem::path& path, std::int64_t decisions) {
  Build build;
  build.decisions = decisions;
  {
    std::ifstream file(path, std::ios::binary);
    build.output.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  }
  Result<std::int64_t> size = nativeTextSize(path);
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  if (!size.ok()) return size.status();
  build.nativeSize = *size;
  return build;
}

}  // namespace

std::vector<std::string> advisorModuleFlags(mlgo_channel::AdvisorKind kind,
                                            const ModuleToolFlags& flags) {
  return kind == mlgo_channel::AdvisorKind::kInliner ? flags.optTargetFlags() : flags.llcFlags();
}

Result<Build> referenceBuild(const BuildRequest& request) {
  mlgo_channel::CompilerOptions options;
  options.kind = request.kind;
  options.sessionDirectory = request.workDirectory;
  options.input = request.input;
  options.compiler = request.compiler;
  options.extraFlags = request.flags;
  options.channelBaseName = request.stem + "-channel";
  options.outputStem = request.stem;
  options.memoryLimitBytes = request.memoryLimitBytes;
  KillSwitch* killSwitch = request.killSwitch;
  options.onSpawn = [killSwitch](pid_t pid) {
    if (killSwitch != nullptr) killSwitch->arm(pid);
  };
  KILN_ASSIGN_OR_RETURN(mlgo_channel::InteractiveCompiler compiler,
                        mlgo_channel::InteractiveCompiler::start(options, request.deadline));
  while (true) {
    KILN_ASSIGN_OR_RETURN(std::optional<mlgo_channel::Observation> decision,
                          compiler.next(request.deadline));
    if (!decision) break;
    KILN_ASSIGN_OR_RETURN(std::int64_t answer, compiler.defaultAdvice(*decision));
    KILN_RETURN_IF_ERROR(compiler.advise(Value(answer), request.deadline));
  }
  KILN_ASSIGN_OR_RETURN(mlgo_channel::CompileOutcome outcome, compiler.finish(request.deadline));
  return takeOutput(outcome.output, outcome.decisions);
}

Result<Build> llvmDefaultBuild(const BuildRequest& request) {
  mlgo_channel::AdvisorDescription advisor = mlgo_channel::describeAdvisor(request.kind);
  std::filesystem::path output = request.workDirectory / (request.stem + advisor.outputExtension);
  ToolRun run;
  run.argv = {request.compiler.empty() ? advisor.defaultCompiler : request.compiler};
  std::vector<std::string> args =
      mlgo_channel::llvmDefaultArguments(advisor, request.flags, request.input, output);
  run.argv.insert(run.argv.end(), args.begin(), args.end());
  run.workingDirectory = request.workDirectory;
  run.deadline = request.deadline;
  run.memoryLimitBytes = request.memoryLimitBytes;
  run.killSwitch = request.killSwitch;
  Status ran = runTool(run);
  if (!ran.ok()) {
    std::error_code ignored;
    std::filesystem::remove(output, ignored);
    return ran;
  }
  return takeOutput(output, 0);
}

}  // namespace kiln::mlgo_session
