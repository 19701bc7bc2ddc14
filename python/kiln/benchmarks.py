"""Your own programs as benchmarks: C/C++ sources, .ll and .bc files, or a
clang command line, compiled here to LLVM 19 bitcode that travels inline to
whichever worker hosts the session (local or remote).

    bench = kiln.make_benchmark("prog.c", copts=["-O2"])
    with kiln.make("llvm-ic-v0", benchmark=bench) as env:
        env.reset()

The tools (clang-19, clang++-19, llvm-link-19) run on this machine with a
timeout and a memory limit; a source that does not compile raises
kiln.CompileError with clang's first diagnostics, bitcode LLVM 19 cannot read
(another LLVM's, or corrupt) or a module over max_bytes raises
kiln.InvalidArgument.
"""

import os

from . import _kiln

# As the workers' own default (--max-benchmark-bytes); a worker with a lower
# limit still refuses a larger benchmark.
DEFAULT_MAX_BYTES = 64 << 20


class Benchmark:
    """A program for an env: its URI (benchmark://user-v0/<stem>-<hash>) and its
    LLVM 19 bitcode. The URI changes with the bitcode, since workers cache
    inline programs under it. Pass it to kiln.make(..., benchmark=) or
    env.reset(benchmark=)."""

    def __init__(self, uri, program):
        if not isinstance(uri, str) or not uri:
            raise TypeError(f"uri must be a non-empty string, got {uri!r}")
        if not isinstance(program, (bytes, bytearray)) or not program:
            raise TypeError("program must be non-empty bytes of LLVM bitcode")
        self._uri = uri
        self._program = bytes(program)

    @property
    def uri(self):
        return self._uri

    @property
    def program(self):
        """The module's LLVM 19 bitcode (bytes)."""
        return self._program

    def write(self, path):
        """Writes the bitcode to `path` (a .bc file that kiln.Benchmark.load reads back)."""
        with open(path, "wb") as f:
            f.write(self._program)

    @classmethod
    def load(cls, path, timeout=120.0, max_bytes=DEFAULT_MAX_BYTES):
        """A .bc or .ll file as a benchmark, checked by LLVM 19 (as make_benchmark)."""
        return make_benchmark(path, timeout=timeout, max_bytes=max_bytes)

    def __eq__(self, other):
        return isinstance(other, Benchmark) and (self._uri, self._program) == (
            other._uri,
            other._program,
        )

    def __hash__(self):
        return hash(self._uri)

    def __repr__(self):
        return f"Benchmark({self._uri!r}, {len(self._program)} bytes)"


def _paths(path_or_paths):
    if isinstance(path_or_paths, (str, os.PathLike)):
        return [os.fspath(path_or_paths)]
    paths = [os.fspath(p) for p in path_or_paths]
    if not paths:
        raise ValueError("make_benchmark needs at least one file")
    return paths


def make_benchmark(path_or_paths, copts=None, timeout=120.0, max_bytes=DEFAULT_MAX_BYTES):
    """One benchmark of C/C++ sources, .ll and .bc files (several are linked
    into one module). copts: extra compiler flags for the sources (e.g.
    ["-O2", "-DN=100", "-Iinclude"]); without an -O flag the front end works
    as at -O0 with every function left optimizable. timeout: seconds for each
    tool run."""
    uri, program = _kiln.make_benchmark(
        _paths(path_or_paths), [str(c) for c in (copts or [])], float(timeout), int(max_bytes)
    )
    return Benchmark(uri, program)


def benchmark_from_clang_invocation(args, cwd=None, timeout=120.0, max_bytes=DEFAULT_MAX_BYTES):
    """The benchmark of one compile command of one C/C++ source, e.g.
    ["clang", "-O2", "-Iinclude", "-c", "prog.c", "-o", "prog.o"] (the
    compiler's name is replaced by clang-19; output, dependency and linker
    flags are dropped). cwd: where the command runs (default: here)."""
    if isinstance(args, str):
        raise TypeError("args must be a list of arguments, not one string")
    uri, program = _kiln.benchmark_from_clang_invocation(
        [str(a) for a in args], os.fspath(cwd) if cwd is not None else "", float(timeout),
        int(max_bytes)
    )
    return Benchmark(uri, program)
