#include "programs/runs/program_build.h"

#include <fmt/format.h>

#include <fstream>

namespace kiln::runs {

Result<BuiltProgram> linkProgram(std::string_view object, const RunSpec& spec, bool asan,
                                 const std::filesystem::path& directory, std::string_view name,
                                 const LinkSettings& settings) {
  const std::filesystem::path objectFile = directory / fmt::format("{}.o", name);
  {
    std::ofstream out(objectFile, std::ios::binary);
    out.write(object.data(), static_cast<std::streamsize>(object.size()));
    if (!out) return internalError(fmt::format("cannot write {}", objectFile.string()));
  }
  BuiltProgram built;
  built.executable = directory / std::string(name);
  std::vector<std::string> argv{settings.driver, objectFile.string(), "-o",
                                built.executable.string()};
  // No position-independent executable: the object is not PIC.
  argv.push_back("-no-pie");
  if (asan) argv.push_back("-fsanitize=address");
  for (const std::string& library : spec.libraries) argv.push_back("-l" + library);
  const auto began = std::chrono::steady_clock::now();
  // The object is the client's program: the linker reads system libraries
  // and writes only the build directory.
  programs::ToolLimits limits = settings.limits;
  limits.confined = true;
  KILN_RETURN_IF_ERROR(programs::runTool(argv, directory, limits, ErrorCode::kCompileError,
                                         fmt::format("linking the module ({})", settings.driver)));
  built.linkTime = std::chrono::steady_clock::now() - began;
  return built;
}

}  // namespace kiln::runs
