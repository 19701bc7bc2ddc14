// kiln._kiln's bindings of include/kiln/programs/make_benchmark.h: a user's files or clang
// command line to LLVM 19 bitcode and its benchmark URI (kiln.make_benchmark,
// kiln.benchmark_from_clang_invocation wrap them in kiln.Benchmark).
#pragma once

#include <pybind11/pybind11.h>

namespace kiln::python {

void bindPrograms(pybind11::module_& m);

}  // namespace kiln::python
