"""The compatibility env's calls around its episode: benchmarks of the
user's own (over kiln.make_benchmark), and what kiln has no counterpart
for, each raising NotImplementedError with the reason."""

import contextlib
from typing import Any, Iterator, List, Optional

from ._cg_errors import BenchmarkInitError
from ._compiler_gym_names import _unsupported
from .benchmarks import benchmark_from_clang_invocation as _kiln_benchmark_from_clang
from .benchmarks import make_benchmark as _make_kiln_benchmark
from .errors import CompileError, InvalidArgument


@contextlib.contextmanager
def _as_benchmark_init_error() -> Iterator[None]:
    """A program that does not compile or is no valid LLVM 19 module raises
    CompilerGym's BenchmarkInitError (an OSError), kiln's error its cause."""
    try:
        yield
    except (CompileError, InvalidArgument) as error:
        raise BenchmarkInitError(str(error)) from error


class Extras:
    """LlvmEnv's calls beside the episode (a mixin of the compatibility env)."""

    @staticmethod
    def make_benchmark(inputs: Any, copt: Optional[List[str]] = None,
                       system_includes: bool = True, timeout: int = 600) -> Any:
        """A benchmark of C/C++ sources, .ll or .bc files (kiln.make_benchmark:
        compiled here by clang-19, the bitcode sent with the reset)."""
        if not system_includes:
            _unsupported("make_benchmark(system_includes=False)",
                         "kiln compiles with clang-19's own include paths")
        with _as_benchmark_init_error():
            return _make_kiln_benchmark(inputs, copts=copt, timeout=float(timeout))

    @staticmethod
    def make_benchmark_from_command_line(cmd: Any, replace_driver: bool = True,
                                         system_includes: bool = True,
                                         timeout: int = 600) -> Any:
        """A benchmark of one compile command (kiln.benchmark_from_clang_invocation)."""
        if isinstance(cmd, str):
            cmd = cmd.split()
        with _as_benchmark_init_error():
            return _kiln_benchmark_from_clang(list(cmd), timeout=float(timeout))

    @property
    def runtime_observation_count(self) -> int:
        """NotImplementedError: kiln's Runtime runs as the benchmark's run spec says."""
        return _unsupported("env.runtime_observation_count",
                            "kiln's Runtime observation runs the program as many times as "
                            "the benchmark's run spec says")

    @runtime_observation_count.setter
    def runtime_observation_count(self, n: int) -> None:
        _unsupported("env.runtime_observation_count",
                     "kiln's Runtime observation runs the program as many times as the "
                     "benchmark's run spec says")

    @property
    def runtime_warmup_runs_count(self) -> int:
        """NotImplementedError, as runtime_observation_count."""
        return _unsupported("env.runtime_warmup_runs_count",
                            "kiln's Runtime observation takes its warm-up from the run spec")

    @runtime_warmup_runs_count.setter
    def runtime_warmup_runs_count(self, n: int) -> None:
        _unsupported("env.runtime_warmup_runs_count",
                     "kiln's Runtime observation takes its warm-up from the run spec")

    def send_param(self, key: str, value: str, resend_on_reset: bool = False) -> str:
        """NotImplementedError: CompilerGym's service parameters have no kiln counterpart."""
        return _unsupported("env.send_param()",
                            "CompilerGym's service parameters have no kiln counterpart")

    def send_params(self, *params: Any) -> List[str]:
        """NotImplementedError, as send_param()."""
        return _unsupported("env.send_params()",
                            "CompilerGym's service parameters have no kiln counterpart")
