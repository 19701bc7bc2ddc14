"""kiln.compiler_gym.util: the helpers of compiler_gym.util that scripts
import (statistics, timer, shell_format, truncate, gym_type_hints,
tabulate, capture_output, temporary_working_directory), written for kiln
with CompilerGym's behaviour. Its submodules are this one module under
their names (kiln.compiler_gym.util.statistics, ...); util.flags is
_cg_flags' (absl's flags, when absl is installed). What kiln does not
ship (CompilerGym's downloads and runfiles) raises NotImplementedError
saying so."""

import contextlib
import io
import os
import shlex
import tempfile
import time as _time
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

import numpy as np

from . import _cg_missing

# --- gym_type_hints ---------------------------------------------------------
ActionType = Any
ObservationType = Any
RewardType = float
DoneType = bool
InfoType = Dict[str, Any]
StepType = Tuple[Optional[ObservationType], Optional[RewardType], DoneType, InfoType]
OptionalArgumentValue = None


# --- statistics -----------------------------------------------------------------
def geometric_mean(array_like: Iterable[float]) -> float:
    """Geometric mean; 0 for no values or when any is not positive."""
    values = np.asarray(list(array_like) if not hasattr(array_like, "__len__") else array_like)
    if not values.size or not np.all(values > 0):
        return 0
    logs = np.log(values)
    return float(np.exp(logs.sum() / len(logs)))


def arithmetic_mean(array_like: Iterable[float]) -> float:
    """Mean; 0 for no values."""
    values = np.asarray(array_like)
    return 0 if not values.size else float(values.mean())


def stdev(array_like: Iterable[float]) -> float:
    """Population standard deviation; 0 for no values."""
    values = np.asarray(array_like)
    return 0 if not values.size else float(values.std())


# --- timer ----------------------------------------------------------------------
def humanize_duration(seconds: float) -> str:
    """"12.3ms", "4.000s", "75.0s"."""
    value, sign = abs(seconds), "-" if seconds < 0 else ""
    if value < 1e-6:
        return f"{sign}{value * 1e9:.1f}ns"
    if value < 1e-3:
        return f"{sign}{value * 1e6:.1f}us"
    if value < 1:
        return f"{sign}{value * 1e3:.1f}ms"
    if value < 60:
        return f"{sign}{value:.3f}s"
    return f"{sign}{value:.1f}s"


def humanize_duration_hms(seconds: float) -> str:
    """"h:mm:ss"."""
    seconds = int(seconds)
    return f"{seconds // 3600}:{(seconds % 3600) // 60:02d}:{seconds % 60:02d}"


class Timer:
    """A scoped timer: `with Timer() as t: ...; print(t)`; with a label it
    prints "<label> in <time>" at the end through print_fn."""

    def __init__(self, label: Optional[str] = None,
                 print_fn: Callable[[str], None] = print) -> None:
        self._start_time: Optional[float] = None
        self._elapsed: Optional[float] = None
        self.label = label
        self.print_fn = print_fn

    def reset(self) -> "Timer":
        """Starts (again) from now."""
        self._start_time = _time.time()
        return self

    def __enter__(self) -> "Timer":
        return self.reset()

    @property
    def time(self) -> float:
        """Seconds elapsed (until the with block ended, if it did)."""
        if self._elapsed:
            return self._elapsed
        if self._start_time:
            return _time.time() - self._start_time
        return 0

    def __exit__(self, *args: Any) -> None:
        self._elapsed = _time.time() - (self._start_time or _time.time())
        if self.label:
            self.print_fn(f"{self.label} in {self}")

    def __str__(self) -> str:
        return humanize_duration(self.time)


# --- shell_format ----------------------------------------------------------------
class ShellFormatCodes:
    """Terminal escape codes."""

    PURPLE = "\033[95m"
    CYAN = "\033[96m"
    DARKCYAN = "\033[36m"
    BLUE = "\033[94m"
    GREEN = "\033[92m"
    YELLOW = "\033[93m"
    RED = "\033[91m"
    BOLD = "\033[1m"
    UNDERLINE = "\033[4m"
    END = "\033[0m"


def emph(stringable: Any) -> str:
    """Bold blue text."""
    return f"{ShellFormatCodes.BOLD}{ShellFormatCodes.BLUE}{stringable}{ShellFormatCodes.END}"


def plural(quantity: int, singular: str, plural: str) -> str:  # noqa: F811 (CompilerGym's names)
    """`singular` for 1, else `plural`."""
    return singular if quantity == 1 else plural


def indent(string: str, n: int = 4) -> str:
    """Each line of `string` indented by n spaces."""
    return "\n".join(" " * n + line for line in str(string).split("\n"))


def join_cmd(cmd: Iterable[str]) -> str:
    """A command's arguments as one shell-quoted line."""
    return shlex.join(list(cmd))


# --- truncate ---------------------------------------------------------------------
def truncate(string: Any, max_line_len: int = 60, max_lines: int = 1,
             tail: bool = False) -> str:
    """`string` cut to max_lines lines of max_line_len characters, "..." where cut."""
    return truncate_lines(str(string).split("\n"), max_line_len, max_lines, tail)


def truncate_lines(lines: Iterable[str], max_line_len: int = 60, max_lines: int = 1,
                   tail: bool = False) -> str:
    """Each line cut to max_line_len characters ("..." where cut), at most
    max_lines of them (the last ones with tail); when lines are left out at
    the end, the last line kept ends in "..."."""
    if max_line_len <= 3:
        raise ValueError("Lines must be greater than 3 characeters long.")

    def cut(line: str) -> str:
        return line if len(line) <= max_line_len else line[: max_line_len - 3] + "..."

    lines = [str(line) for line in lines]
    kept = lines[-max_lines:] if tail else lines[:max_lines]
    out = [cut(line) for line in kept]
    if not tail and len(lines) > max_lines and out:
        out[-1] = cut(out[-1] + "...")
    return "\n".join(out)


# --- tabulate, capture_output, temporary_working_directory -----------------------
def tabulate(rows: Iterable[Any], headers: Any = (), tablefmt: str = "grid") -> str:
    """The rows as a table, by the tabulate package (as CompilerGym's did)."""
    try:
        from tabulate import tabulate as _tabulate  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise NotImplementedError(
            "compiler_gym.util.tabulate prints through the tabulate package, which is not "
            "installed (Debian: python3-tabulate; pip: tabulate)") from None
    return str(_tabulate(rows, headers=headers, tablefmt=tablefmt))


class CapturedOutput:
    """What a capture_output() block printed: .stdout and .stderr (set when
    the block ends)."""

    def __init__(self) -> None:
        self.stdout = ""
        self.stderr = ""


@contextlib.contextmanager
def capture_output() -> Iterator[CapturedOutput]:
    """Captures what Python code prints to sys.stdout and sys.stderr."""
    captured, out, err = CapturedOutput(), io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield captured
    finally:
        captured.stdout, captured.stderr = out.getvalue(), err.getvalue()


@contextlib.contextmanager
def temporary_working_directory(directory: Optional[Path] = None) -> Iterator[Path]:
    """Runs the block in `directory` (a new temporary one, removed after,
    when None), then returns to the working directory it started in."""
    start = os.getcwd()
    with contextlib.ExitStack() as stack:
        if directory is None:
            directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="kiln-")))
        os.chdir(directory)
        try:
            yield Path(directory)
        finally:
            os.chdir(start)


# --- what kiln does not have ----------------------------------------------------------
# Every util.<module> _cg_missing names: `from compiler_gym.util import
# debug_util` takes the name from this module, not through the import finder.
_WHY_MISSING = {name[len("util."):]: why for name, why in _cg_missing.MODULES.items()
                if name.startswith("util.")}


def __getattr__(name: str) -> Any:
    """Names CompilerGym's util has and kiln does not: NotImplementedError saying why."""
    if name == "flags":  # absl's flags: a module when absl is installed
        from . import _cg_flags  # pylint: disable=import-outside-toplevel

        return _cg_flags.load("util.flags")
    if name in _WHY_MISSING:
        raise NotImplementedError(
            f"kiln.compiler_gym.util.{name} is not available on kiln: {_WHY_MISSING[name]}")
    raise AttributeError(f"module 'kiln.compiler_gym.util' has no attribute {name!r}")


SUBMODULES: List[str] = ["statistics", "timer", "shell_format", "gym_type_hints"]
# compiler_gym.util.truncate is both a module and, imported from it, a
# function: the function stands for the module, with the module's names.
truncate.truncate = truncate  # type: ignore[attr-defined]
truncate.truncate_lines = truncate_lines  # type: ignore[attr-defined]
# The same for compiler_gym.util.tabulate, .capture_output and
# .temporary_working_directory.
tabulate.tabulate = tabulate  # type: ignore[attr-defined]
capture_output.capture_output = capture_output  # type: ignore[attr-defined]
capture_output.CapturedOutput = CapturedOutput  # type: ignore[attr-defined]
temporary_working_directory.temporary_working_directory = (  # type: ignore[attr-defined]
    temporary_working_directory)
