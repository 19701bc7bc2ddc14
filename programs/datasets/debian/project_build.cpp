#include "programs/datasets/debian/project_build.h"

#include <deque>
#include <fstream>

#include "common/process/subprocess.h"

namespace kiln::debian {

namespace fs = std::filesystem;

namespace {

Status appendLine(const fs::path& log, const std::string& line) {
  std::ofstream out(log, std::ios::app);
  out << line << "\n";
  if (!out) return permissionDenied("cannot write the build log " + log.string());
  return okStatus();
}

// The step with stdout and stderr both appended to the log, in order: the
// shell opens the log once for both, which two separate opens could not do.
std::vector<std::string> loggedCommand(const fs::path& log, const std::vector<std::string>& argv) {
  std::vector<std::string> out = {"sh", "-c", "log=$1; shift; exec \"$@\" >>\"$log\" 2>&1",
                                  "kiln-build-step", log.string()};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

std::string joined(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& word : argv) out += (out.empty() ? "" : " ") + word;
  return out;
}

// The recorded compiles, or an error when there are none.
Status checkCompileCommands(const fs::path& file, const fs::path& log) {
  std::error_code error;
  std::uintmax_t size = fs::file_size(file, error);
  if (error) {
    return compileError("the build wrote no " + file.filename().string() + "; its log ends:\n" +
                        fileTail(log, 15));
  }
  std::ifstream in(file);
  std::string text(std::min<std::uintmax_t>(size, 4096), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (text.find("\"file\"") == std::string::npos) {
    return compileError("the build recorded no compile in " + file.string() + "; its log ends:\n" +
                        fileTail(log, 15));
  }
  return okStatus();
}

}  // namespace

std::string fileTail(const fs::path& file, std::size_t count) {
  std::ifstream in(file);
  std::deque<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(std::move(line));
    if (lines.size() > count) lines.pop_front();
  }
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

Result<BuiltProject> buildProject(const Recipe& recipe, const fs::path& sourceTree,
                                  const fs::path& scratch, const fs::path& log,
                                  const Toolchain& toolchain, unsigned jobs,
                                  const BuildLimits& limits) {
  auto started = std::chrono::steady_clock::now();
  std::error_code error;
  fs::remove_all(scratch, error);
  fs::create_directories(scratch.parent_path(), error);
  // cp -a, not std::filesystem::copy: the copy must keep the files' times, or
  // make finds configure.ac newer than the shipped configure and reruns
  // automake, which the machine may not have (xz, pcre2).
  auto copied =
      runSubprocess({"cp", "-a", "--", sourceTree.string(), scratch.string()}, limits.perStep);
  if (!copied.ok()) return copied.status();
  if (!copied->status.success()) {
    return permissionDenied("cannot copy " + sourceTree.string() + " to " + scratch.string() +
                            ": " + copied->stderrText);
  }
  fs::create_directories(log.parent_path(), error);
  fs::remove(log, error);
  BuiltProject built;
  built.directory = scratch / recipe.directory;
  if (!fs::is_directory(built.directory, error)) {
    return invalidArgument("the recipe of " + recipe.project + " builds in " + recipe.directory +
                           ", which " + recipe.sourcePackage + "'s source does not have");
  }
  for (const BuildStep& step : buildSteps(recipe, toolchain, jobs)) {
    KILN_RETURN_IF_ERROR(appendLine(log, "+ " + joined(step.argv)));
    SubprocessOptions options;
    options.workingDirectory = built.directory;
    options.memoryLimitBytes = limits.memoryBytes;
    options.dieWithParent = true;
    auto output = runSubprocess(loggedCommand(log, step.argv), limits.perStep, options);
    if (!output.ok()) {
      if (output.status().code() == ErrorCode::kTimeout) {
        return timeoutError(recipe.project + "'s " + step.name + " ran past " +
                            std::to_string(limits.perStep.count()) + " s; its log ends:\n" +
                            fileTail(log, 15));
      }
      return output.status();
    }
    if (!output->status.success()) {
      return compileError(recipe.project + "'s " + step.name + " " + output->status.describe() +
                          "; its log (" + log.string() + ") ends:\n" + fileTail(log, 15));
    }
  }
  built.compileCommands = built.directory / compileCommandsPath(recipe);
  KILN_RETURN_IF_ERROR(checkCompileCommands(built.compileCommands, log));
  built.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  return built;
}

}  // namespace kiln::debian
