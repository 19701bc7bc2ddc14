// `kiln bench NAME ...`: runs kiln-bench, the benchmarks' own program, from
// beside this binary. The benchmarks (and the test support they use) are
// not linked into kiln, so an installed kiln carries none of them.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tools/cli/commands.h"

namespace kiln::cli {

namespace {

[[noreturn]] void runKilnBench(const std::vector<std::string>& args) {
  const std::filesystem::path program =
      std::filesystem::read_symlink("/proc/self/exe").parent_path() / "kiln-bench";
  std::vector<char*> argv;
  std::string name = program.string();
  argv.push_back(name.data());
  std::vector<std::string> copies(args);
  for (std::string& arg : copies) argv.push_back(arg.data());
  argv.push_back(nullptr);
  ::execv(name.c_str(), argv.data());
  fmt::print(stderr,
             "kiln bench: cannot run {}: {}. The benchmarks are a program of their own, built "
             "beside kiln in a build of the source (target kiln-bench); they are not installed.\n",
             name, std::strerror(errno));
  std::exit(2);
}

}  // namespace

void addBenchCommand(CLI::App& app) {
  auto* bench = app.add_subcommand(
      "bench", "run a benchmark and print its figures (kiln-bench NAME ...; --help lists them)");
  // Everything after `bench` is kiln-bench's, --help included.
  bench->prefix_command();
  bench->set_help_flag();
  bench->callback([bench] { runKilnBench(bench->remaining()); });
}

}  // namespace kiln::cli
