"""An episode's state written down as CompilerGym's CompilerEnvState.

A state is a benchmark, the actions that led there as a command line, the
walltime of the episode and its cumulative reward (None if untracked). The
CSV form is CompilerGym's (header `benchmark,reward,walltime,commandline`,
RFC 4180 quoting, floats as Python's repr), byte for byte what kiln's C++
reader and writer use (include/kiln/client/env_state.h), so `kiln replay` reads what
Python writes and the other way round.

kiln writes the commandline as action names separated by single spaces
("mem2reg gvn"); readers also take CompilerGym's own form
("opt -mem2reg -gvn input.bc -o output.bc"), whose flags an action space
maps to names when one is given (else the env resolves them on replay),
and kiln.compiler_gym's opt-19 chain ("opt-19 -passes=mem2reg input.bc -o -
| opt-19 -passes=gvn - -o output.bc"), each stage's pipeline an action
(find_action looks it up among the space's pipelines).

Pure Python: no cluster, no extension module.
"""

import itertools
import math
import os
import re
from typing import Any, Iterator, List, Optional

from .errors import InvalidArgument, KilnError, NotFound

COLUMNS = ("benchmark", "reward", "walltime", "commandline")
HEADER = ",".join(COLUMNS)
# kiln's fifth column, written when a state's validity is known (`kiln eval`,
# kiln.evaluate); CompilerGym reads columns by name and leaves it.
VALIDITY_COLUMN = "validity"
VALIDITY_WORDS = ("valid", "verified-only", "invalid", "unvalidated")
# What a reader accepts (the same bounds as the C++ reader).
MAX_COMMANDLINE_BYTES = 1 << 20
MAX_COMMANDLINE_ACTIONS = 10_000
MAX_FILE_BYTES = 256 << 20
# Rewards closer than this are equal (CompilerGym's rule; walltime is ignored).
_REWARD_EPSILON = 1e-5
_OPT_PROGRAM = re.compile(r"^(?:.*/)?opt(?:-[0-9]+)?$")
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


class CompilerEnvState:
    """benchmark, commandline, walltime, reward: a point in an optimization
    space and how it was reached, and (kiln's) what validating it found, one
    of VALIDITY_WORDS or None. Two states are equal when their benchmark
    and commandline are and their rewards agree within 1e-5 (walltime and
    validity aside)."""

    __slots__ = ("benchmark", "commandline", "walltime", "reward", "validity")

    def __init__(self, benchmark: Any = None, commandline: Any = "", walltime: Any = 0.0,
                 reward: Any = None, validity: Any = None) -> None:
        if hasattr(benchmark, "uri"):
            benchmark = str(benchmark.uri)  # a Benchmark object, as CompilerGym takes
        if not isinstance(benchmark, str) or not benchmark:
            raise InvalidArgument(f"a state's benchmark must be a non-empty URI, got {benchmark!r}")
        if isinstance(commandline, (list, tuple)):
            commandline = " ".join(str(a) for a in commandline)
        if not isinstance(commandline, str):
            raise InvalidArgument(
                f"a state's commandline must be a string, got {type(commandline).__name__}"
            )
        self.benchmark = benchmark
        self.commandline = commandline
        self.walltime = float(walltime)
        if not self.walltime >= 0:
            raise InvalidArgument(f"Walltime cannot be negative: {walltime!r}")
        self.reward = None if reward is None else float(reward)
        if validity not in (None, "") and validity not in VALIDITY_WORDS:
            raise InvalidArgument(
                f"a state's validity is one of {', '.join(VALIDITY_WORDS)} or None, "
                f"got {validity!r}"
            )
        self.validity = validity or None

    @property
    def actions(self) -> Any:
        """The commandline's actions, in order (flags of the opt form as written)."""
        return parse_commandline(self.commandline)

    @staticmethod
    def csv_header() -> Any:
        """The CSV header line, without its line end."""
        return HEADER

    def to_csv(self, with_validity: Any = False) -> Any:
        """One CSV record, without its line end (as CompilerGym's to_csv);
        with_validity adds the validity column (to_csv() writes it when any
        state has one)."""
        reward = "" if self.reward is None else repr(self.reward)
        fields = [_csv_field(self.benchmark), reward, repr(self.walltime)]
        fields.append(_csv_field(self.commandline))
        if with_validity:
            fields.append(self.validity or "")
        return ",".join(fields)

    @classmethod
    def from_csv(cls, text: Any) -> Any:
        """The one state of a CSV record (a header line before it is allowed)."""
        states = parse_csv(text)
        if len(states) != 1:
            raise InvalidArgument(f"expected one state in {text[:80]!r}, found {len(states)}")
        return states[0]

    def json(self) -> Any:
        """The state as a dict of its fields."""
        return {
            "benchmark": self.benchmark,
            "commandline": self.commandline,
            "walltime": self.walltime,
            "reward": self.reward,
            "validity": self.validity,
        }

    @classmethod
    def from_json(cls, data: Any) -> Any:
        """The state of a dict as json() gives."""
        return cls(**data)

    def _replace(self, **changes: Any) -> Any:
        fields = self.json()
        fields.update(changes)
        return CompilerEnvState(**fields)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, CompilerEnvState):
            return NotImplemented
        if self.reward is None or other.reward is None:
            rewards_equal = self.reward is None and other.reward is None
        else:
            rewards_equal = abs(self.reward - other.reward) < _REWARD_EPSILON
        return (
            self.benchmark == other.benchmark
            and self.commandline == other.commandline
            and rewards_equal
        )

    def __hash__(self) -> int:
        return hash((self.benchmark, self.commandline))

    def __repr__(self) -> str:
        return (
            f"CompilerEnvState(benchmark={self.benchmark!r}, commandline={self.commandline!r}, "
            f"walltime={self.walltime!r}, reward={self.reward!r}"
            + ("" if self.validity is None else f", validity={self.validity!r}")
            + ")"
        )


def _csv_field(text: Any) -> Any:
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def to_csv(states: Any) -> Any:
    """The header (with the validity column when any state has a validity),
    then one record per state, each ending in '\\n'."""
    states = list(states)
    with_validity = any(s.validity for s in states)
    header = HEADER + ("," + VALIDITY_COLUMN if with_validity else "")
    return header + "\n" + "".join(s.to_csv(with_validity) + "\n" for s in states)


def write_csv(path_or_file: Any, states: Any) -> None:
    """Writes to_csv(states) to a path (replacing it) or an open text file."""
    text = to_csv(list(states))
    if hasattr(path_or_file, "write"):
        path_or_file.write(text)
        return
    with open(path_or_file, "w", encoding="utf-8", newline="") as out:
        out.write(text)


def read_csv(path_or_file: Any, action_space: Any = None) -> Any:
    """Every state of a CSV file (a path or an open text file); see parse_csv."""
    if hasattr(path_or_file, "read"):
        text = path_or_file.read(MAX_FILE_BYTES + 1)
        name = getattr(path_or_file, "name", "<file>")
    else:
        name = os.fspath(path_or_file)
        try:
            with open(name, encoding="utf-8", newline="") as source:
                text = source.read(MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            raise NotFound(f"cannot open states file {name}: no such file") from None
        except (IsADirectoryError, PermissionError, UnicodeDecodeError) as error:
            raise InvalidArgument(f"cannot read states file {name}: {error}") from None
    if len(text) > MAX_FILE_BYTES:
        raise InvalidArgument(
            f"{name}: more than the {MAX_FILE_BYTES} bytes a states file may have"
        )
    try:
        return parse_csv(text, action_space)
    except KilnError as error:
        raise type(error)(f"{name}: {error}") from None


def parse_csv(text: Any, action_space: Any = None) -> Any:
    """Every state of a CSV text. The header is optional (without it the
    columns are in CompilerGym's order); with it, columns are found by name.
    A bad record raises kiln.InvalidArgument("line N: <what is wrong>")."""
    records = _split_records(text)
    if not records:
        return []
    header = _read_header(records[0])
    order = header if header else list(range(4)) + [None]
    expected = len(records[0][1]) if header else 4
    states = []
    for line, fields in records[1:] if header else records:
        if len(fields) != expected:
            raise InvalidArgument(
                f"line {line}: {len(fields)} columns, expected {expected} ({HEADER})"
            )
        benchmark = fields[order[0]].strip(" \t")
        if not benchmark:
            raise InvalidArgument(f"line {line}: the benchmark is empty")
        reward = _number(fields[order[1]], "reward", line)
        walltime = _number(fields[order[2]], "walltime", line)
        walltime = 0.0 if walltime is None else walltime
        if walltime < 0:
            raise InvalidArgument(f"line {line}: walltime {walltime!r} is negative")
        try:
            actions = parse_commandline(fields[order[3]], action_space)
        except KilnError as error:
            raise InvalidArgument(f"line {line}: {error}") from None
        validity = None if order[4] is None else fields[order[4]].strip(" \t")
        if validity and validity not in VALIDITY_WORDS:
            raise InvalidArgument(
                f"line {line}: validity '{validity}' is none of {', '.join(VALIDITY_WORDS)}"
            )
        states.append(CompilerEnvState(benchmark, " ".join(actions), walltime, reward, validity))
    return states


def parse_commandline(commandline: Any, action_space: Any = None) -> Any:
    """The actions of a commandline in either form; with an action space (a
    kiln.Space) each is checked and given as the choice's name."""
    if len(commandline.encode("utf-8")) > MAX_COMMANDLINE_BYTES:
        raise InvalidArgument(
            f"the commandline is {len(commandline.encode('utf-8'))} bytes, more than the "
            f"{MAX_COMMANDLINE_BYTES} allowed"
        )
    control = _CONTROL.search(commandline)
    if control:
        raise InvalidArgument(
            f"the commandline has a control character (byte 0x{ord(control.group()):02x}) "
            f"at offset {len(commandline[: control.start()].encode('utf-8'))}"
        )
    words = commandline.replace("\t", " ").split()
    if words and _OPT_PROGRAM.match(words[0]) and any(_is_passes(w) for w in words):
        named = _chain_pipelines(words)
    elif words and _OPT_PROGRAM.match(words[0]):
        named, rest = [], iter(words[1:])
        for word in rest:
            if word == "-o":
                if next(rest, None) is None:
                    raise InvalidArgument("the commandline ends with '-o' and no file")
            elif word.startswith("-") and len(word) > 1:
                named.append(word)
    else:
        named = words
    if len(named) > MAX_COMMANDLINE_ACTIONS:
        raise InvalidArgument(
            f"the commandline has {len(named)} actions, more than the "
            f"{MAX_COMMANDLINE_ACTIONS} allowed"
        )
    if action_space is None:
        return named
    try:
        return [action_space.names[find_action(action_space, word)] for word in named]
    except NotFound as error:
        raise InvalidArgument(str(error)) from None


def find_action(action_space: Any, word: str) -> int:
    """The choice named `word` (a name or alias), else the action whose
    pipeline is `word` ("early-cse<memssa>", as the compatibility env's
    opt-19 chains give it); else the space's NotFound."""
    try:
        return int(action_space.index(word))
    except NotFound:
        pipelines = list(getattr(action_space, "pipelines", None) or [])
        if word in pipelines:
            return pipelines.index(word)
        raise


def _is_passes(word: str) -> bool:
    return word.startswith(("-passes=", "--passes="))


def _unquoted_pipeline(value: str) -> str:
    """A `-passes=` value as the shell reads it (shlex.quote single-quotes
    a pipeline with <, > or parentheses)."""
    if len(value) >= 2 and value[0] == value[-1] == "'":
        value = value[1:-1]
    if not value or any(c in value for c in "'\"\\"):
        raise InvalidArgument(f"-passes='{value}' is not one action's pipeline")
    return value


def _chain_pipelines(words: List[str]) -> List[str]:
    """kiln.compiler_gym's chain, "opt-19 -passes=a input.bc -o - | opt-19
    -passes=b - -o output.bc": each stage's pipeline, in order (as
    client/env_state.cpp reads it)."""
    pipelines, i = [], 0
    while i < len(words):
        if not _OPT_PROGRAM.match(words[i]):
            raise InvalidArgument(
                f"'{words[i][:40]}' begins a stage of the commandline: each stage is one "
                "`opt-19 -passes=<action's pipeline>`, piped into the next")
        pipeline = None
        i += 1
        while i < len(words) and words[i] != "|":
            word = words[i]
            if word == "-o":
                i += 1
                if i == len(words):
                    raise InvalidArgument("the commandline ends with '-o' and no file")
            elif _is_passes(word):
                if pipeline is not None:
                    raise InvalidArgument("a stage of the commandline has two -passes=")
                pipeline = _unquoted_pipeline(word.split("=", 1)[1])
            elif word not in ("-", "-S") and word.startswith("-"):
                raise InvalidArgument(
                    f"'{word[:40]}' in a -passes= commandline: each stage is one "
                    "`opt-19 -passes=<pipeline>`")
            i += 1
        if pipeline is None:
            raise InvalidArgument("a stage of the commandline has no -passes=")
        pipelines.append(pipeline)
        i += 1  # the "|"
    return pipelines


def _number(text: Any, column: Any, line: Any) -> Any:
    text = text.strip(" \t")
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or "_" in text:
        raise InvalidArgument(f"line {line}: {column} '{text}' is not a finite number")
    return value


def _read_header(record: Any) -> Any:
    line, fields = record
    names = [f.strip(" \t") for f in fields]
    if not any(n in COLUMNS for n in names):
        return None
    order: List[Optional[int]] = [None] * 5
    for position, name in enumerate(names):
        if name == VALIDITY_COLUMN and order[4] is None:
            order[4] = position
            continue
        if name not in COLUMNS:
            raise InvalidArgument(
                f"line {line}: the header has an unknown column '{name}' "
                f"(a state file's columns are {HEADER})"
            )
        column = COLUMNS.index(name)
        if order[column] is not None:
            raise InvalidArgument(f"line {line}: the header names column '{name}' twice")
        order[column] = position
    for expected, found in zip(COLUMNS, order):
        if found is None:
            raise InvalidArgument(
                f"line {line}: the header lacks column '{expected}' (expected {HEADER})"
            )
    return order


def _split_records(text: Any) -> Any:
    """[(line, fields)] of RFC 4180 records, blank lines skipped."""
    records, line, i, n = [], 1, 0, len(text)
    while i < n:
        start, fields = line, []
        while True:
            if i < n and text[i] == '"':
                quote_line, i, parts, closed = line, i + 1, [], False
                while i < n:
                    c = text[i]
                    i += 1
                    if c == '"':
                        if i < n and text[i] == '"':
                            parts.append('"')
                            i += 1
                            continue
                        closed = True
                        break
                    if c == "\n":
                        line += 1
                    parts.append(c)
                if not closed:
                    raise InvalidArgument(
                        f"line {quote_line}: a quoted field is never closed (a '\"' is missing)"
                    )
                if i < n and text[i] not in ",\n\r":
                    raise InvalidArgument(
                        f"line {line}: text after the closing quote of a field "
                        "(quote a '\"' inside a quoted field as '\"\"')"
                    )
                fields.append("".join(parts))
            else:
                end = i
                while end < n and text[end] not in ",\n\r":
                    end += 1
                fields.append(text[i:end])
                i = end
            if i < n and text[i] == ",":
                i += 1
                continue
            if i < n and text[i] == "\r":
                i += 1
            if i < n and text[i] == "\n":
                i += 1
                line += 1
            break
        if fields != [""]:
            records.append((start, fields))
    return records



# --- CompilerGym's classes over the same CSV --------------------------------------


class CompilerGymEnvState(CompilerEnvState):
    """CompilerGym's CompilerEnvState (kiln.compiler_gym.CompilerEnvState):
    the commandline is kept as written (CompilerGym's `opt ...`, kiln's
    `opt-19 -passes=...` chain or action names), json() is a JSON string,
    and a reward compares only when both states have one."""

    __slots__ = ()

    @property
    def actions(self) -> Any:
        """The commandline's actions as written: each opt-19 stage's
        `-passes=` text, CompilerGym's flags, or the words of a list."""
        from ._cg_space import commandline_words  # pylint: disable=import-outside-toplevel

        return commandline_words(self.commandline)

    @property
    def has_reward(self) -> Any:
        """Whether the state records a reward."""
        return self.reward is not None

    def json(self):  # pylint: disable=invalid-overridden-method
        """The state as a JSON object text (CompilerGym's pydantic .json())."""
        import json

        fields = {"benchmark": self.benchmark, "commandline": self.commandline,
                  "walltime": self.walltime, "reward": self.reward}
        return json.dumps(fields)

    def dict(self) -> Any:
        """The state as a dict (CompilerGym's pydantic .dict())."""
        return {"benchmark": self.benchmark, "commandline": self.commandline,
                "walltime": self.walltime, "reward": self.reward}

    @classmethod
    def from_json(cls, data: Any) -> Any:
        """The state of json()'s text (or of a dict of its fields)."""
        import json

        return cls(**(json.loads(data) if isinstance(data, (str, bytes)) else data))

    def _replace(self, **changes: Any) -> Any:
        fields = self.dict()
        fields.update(changes)
        return CompilerGymEnvState(**fields)

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, CompilerEnvState):
            return False
        rewards_equal = (self.reward is None or other.reward is None
                         or abs(self.reward - other.reward) < _REWARD_EPSILON)
        return (self.benchmark == other.benchmark and self.commandline == other.commandline
                and rewards_equal)

    def __ne__(self, other: Any) -> Any:
        return not self == other

    __hash__ = CompilerEnvState.__hash__


class CompilerEnvStateWriter:
    """CompilerGym's writer: a header row before the first state (unless
    header=False), then one row per write_state(); `with` closes the file."""

    def __init__(self, f: Any, header: Any = True) -> None:
        import csv

        self.f = f
        self.writer = csv.writer(self.f, lineterminator="\n")
        self.header = header

    def write_state(self, state: Any, flush: Any = False) -> Any:
        """Writes one state (benchmark, reward, walltime, commandline)."""
        if self.header:
            self.writer.writerow(COLUMNS)
            self.header = False
        reward = "" if state.reward is None else state.reward
        self.writer.writerow((state.benchmark, reward, state.walltime, state.commandline))
        if flush:
            self.f.flush()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *args: Any) -> Any:
        self.f.close()


class CompilerEnvStateReader:
    """CompilerGym's reader: iterates the states of an open CSV file, with a
    header (any column order, any case) or without one (CompilerGym's
    order); read_paths() reads files, "-" (stdin) and http(s) .csv URLs.
    Commandlines are kept as written."""

    state_type = CompilerGymEnvState

    def __init__(self, f: Any) -> None:
        import csv

        self.f = f
        self.reader = csv.reader(self.f)

    def __iter__(self) -> Any:
        for benchmark, reward, walltime, commandline in self._rows():
            yield self.state_type(
                benchmark=benchmark,
                reward=None if reward == "" else float(reward),
                walltime=0 if walltime == "" else float(walltime),
                commandline=commandline,
            )

    def _rows(self) -> Any:
        try:
            first = next(self.reader)
        except StopIteration:
            return
        if len(first) != len(COLUMNS):
            shown = repr(first) if len(repr(first)) <= 80 else repr(first)[:77] + "..."
            raise InvalidArgument(
                f"Expected {len(COLUMNS)} columns in the first row of CSV: {shown}")
        names = [v.lower() for v in first]
        if set(names) == set(COLUMNS):
            order = [names.index(c) for c in COLUMNS]
            rows: Iterator[List[str]] = ([row[i] for i in order] for row in self.reader)
        else:
            rows = itertools.chain([first], self.reader)
        for row in rows:
            if len(row) != len(COLUMNS):
                raise InvalidArgument(
                    f"line {self.reader.line_num}: {len(row)} columns, expected {len(COLUMNS)}")
            yield row

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *args: Any) -> Any:
        self.f.close()

    @staticmethod
    def read_paths(paths: Any) -> Any:
        """The states of each path in turn: "-" is stdin, an http(s) URL
        ending in .csv is fetched (urllib; CompilerGym used requests),
        anything else is opened as a file (FileNotFoundError if absent)."""
        import io
        import sys
        import urllib.request

        for path in paths:
            if path == "-":
                yield from iter(CompilerEnvStateReader(sys.stdin))
            elif re.match(r"^(http|https)://[a-zA-Z0-9.-_/]+(\.csv)$", path):
                with urllib.request.urlopen(path, timeout=60) as response:  # noqa: S310
                    text = response.read(MAX_FILE_BYTES + 1).decode("utf-8")
                yield from iter(CompilerEnvStateReader(io.StringIO(text)))
            else:
                with open(path, encoding="utf-8", newline="") as f:
                    yield from iter(CompilerEnvStateReader(f))
