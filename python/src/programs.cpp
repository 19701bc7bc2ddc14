#include "python/src/programs.h"

#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <kiln/programs/make_benchmark.h>
#include "python/src/status_error.h"

namespace py = pybind11;

namespace kiln::python {
namespace {

programs::MakeBenchmarkOptions benchmarkOptions(std::vector<std::string> copts, double timeout,
                                                std::uint64_t maxBytes) {
  if (!(timeout > 0) || timeout > 3600) {
    throw StatusError(invalidArgument("timeout must be within (0, 3600] seconds"));
  }
  if (maxBytes == 0) throw StatusError(invalidArgument("max_bytes must be positive"));
  programs::MakeBenchmarkOptions options;
  options.copts = std::move(copts);
  options.limits.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout * 1000));
  options.maxBytes = maxBytes;
  return options;
}

// (uri, bitcode as bytes); the compile runs without the GIL.
py::tuple toPython(Result<programs::UserBenchmark> made) {
  programs::UserBenchmark benchmark = unwrap(std::move(made));
  return py::make_tuple(benchmark.uri, py::bytes(benchmark.bitcode));
}

}  // namespace

void bindPrograms(py::module_& m) {
  m.def(
      "make_benchmark",
      [](const std::vector<std::filesystem::path>& files, std::vector<std::string> copts,
         double timeout, std::uint64_t maxBytes) {
        auto options = benchmarkOptions(std::move(copts), timeout, maxBytes);
        Result<programs::UserBenchmark> made = internalError("not run");
        {
          py::gil_scoped_release release;
          made = programs::makeBenchmark(files, options);
        }
        return toPython(std::move(made));
      },
      py::arg("files"), py::arg("copts"), py::arg("timeout"), py::arg("max_bytes"),
      "C/C++ sources, .ll and .bc files as one LLVM 19 module: (uri, bitcode).");
  m.def(
      "benchmark_from_clang_invocation",
      [](const std::vector<std::string>& argv, const std::filesystem::path& cwd, double timeout,
         std::uint64_t maxBytes) {
        auto options = benchmarkOptions({}, timeout, maxBytes);
        Result<programs::UserBenchmark> made = internalError("not run");
        {
          py::gil_scoped_release release;
          made = programs::benchmarkFromClangInvocation(argv, cwd, options);
        }
        return toPython(std::move(made));
      },
      py::arg("args"), py::arg("cwd"), py::arg("timeout"), py::arg("max_bytes"),
      "One compile command of one C/C++ source as an LLVM 19 module: (uri, bitcode).");
  m.def(
      "user_benchmark_uri",
      [](const std::filesystem::path& name, const py::bytes& bitcode) {
        return programs::userBenchmarkUri(name, std::string(bitcode));
      },
      py::arg("name"), py::arg("bitcode"),
      "The benchmark://user-v0/<stem>-<hash> URI of these bytes.");
}

}  // namespace kiln::python
