"""CompilerGym's view of an llvm action space (its `Commandline` space):
`names` and `flags` are the opt flags ("-mem2reg"), as CompilerGym's
were; `to_string` / `from_string`, `commandline` / `from_commandline`;
a flag or name that no action has raises UnknownAction with the reason
docs/actions.md gives for leaving it out."""

from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

import numpy as np

from . import _left_out_actions
from ._gymnasium import NamedDiscreteBase
from .errors import NotFound


class UnknownAction(LookupError, ValueError):
    """A flag or name that the action space has no action for. Both a
    LookupError (what CompilerGym's from_commandline documents) and a
    ValueError (what its list lookups, `flags.index(...)`, raise)."""


def unknown_action(word: object, space_name: str, count: int) -> UnknownAction:
    """The error for `word`, with docs/actions.md's reason when it has one."""
    why = _left_out_actions.reason(word) if isinstance(word, str) else None
    if why is None:
        return UnknownAction(f"Unknown flag: `{word}` (action space {space_name} has {count} "
                             "actions; docs/actions.md lists them)")
    return UnknownAction(f"Unknown flag: `{word}`: no action of {space_name}: {why}")


class _Choices(list):
    """A list of flags whose index() also takes a pass name ("mem2reg") and
    names the reason a flag is missing."""

    space: Any = None

    def index(self, value: Any, *args: Any) -> int:  # type: ignore[override]
        try:
            return super().index(value, *args)
        except ValueError:
            if args or not isinstance(value, str):
                raise unknown_action(value, self.space.name, len(self)) from None
            return int(self.space.index(value))


class Commandline(NamedDiscreteBase):
    """An action space of the compatibility env: choice i is kiln's action i,
    named by its flag (CompilerGym's flag where it had one, else -<name>)."""

    def __init__(self, space: Any) -> None:
        self._space = space
        flags = list(space.flags) or [f"-{name}" for name in space.names]
        self._flags = [flag or f"-{name}" for flag, name in zip(flags, space.names)]
        self._index = {flag: i for i, flag in enumerate(self._flags)}
        for i, name in enumerate(space.names):
            self._index.setdefault(name, i)

    @property
    def space(self) -> Any:
        """The kiln.Space under this view."""
        return self._space

    @property
    def name(self) -> str:
        """The space's name: "PassesAll" or "PassesAndPipelines"."""
        return str(self._space.name)

    @property
    def n(self) -> int:
        """How many actions."""
        return len(self._flags)

    @property
    def names(self) -> List[str]:
        """Each action's flag, as CompilerGym's NamedDiscrete names were."""
        return self._choices(self._flags)

    @property
    def flags(self) -> List[str]:
        """Each action's opt flag ("-mem2reg")."""
        return self._choices(self._flags)

    @property
    def pass_names(self) -> List[str]:
        """Each action's LLVM 19 pass name ("mem2reg"), as kiln names it."""
        return list(self._space.names)

    @property
    def pipelines(self) -> List[str]:
        """Each action's exact `-passes=` text."""
        return list(self._space.pipelines)

    @property
    def descriptions(self) -> List[str]:
        """What each action runs (its `-passes=` text)."""
        return [f"opt-19 -passes={p}" for p in self._space.pipelines]

    @property
    def dtype(self) -> np.dtype:
        """int64, as gym's Discrete."""
        return np.dtype(np.int64)

    @property
    def shape(self) -> tuple:
        """() as gym's Discrete."""
        return ()

    def _choices(self, values: Iterable[str]) -> List[str]:
        choices = _Choices(values)
        choices.space = self
        return choices

    def index(self, word: str) -> int:
        """The action named by a flag ("-gvn") or a pass name ("gvn")."""
        if word in self._index:
            return self._index[word]
        raise unknown_action(word, self.name, self.n)

    def __getitem__(self, word: str) -> int:
        return self.index(word)

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Any:
        return iter(range(self.n))

    def contains(self, value: Any) -> bool:
        """Whether `value` is an action index of this space."""
        return (isinstance(value, (int, np.integer)) and not isinstance(value, bool)
                and 0 <= int(value) < self.n)

    def __contains__(self, value: Any) -> bool:
        return self.contains(value)

    def sample(self) -> int:
        """A uniformly random action index (seed() makes it repeatable)."""
        return int(self._space.sample())

    def seed(self, seed: Optional[int] = None) -> List[Optional[int]]:
        """Seeds sample()."""
        self._space.seed(seed)
        return [seed]

    def to_string(self, values: Union[int, Iterable[int]]) -> str:
        """The flags of an action or of a sequence of them, space-separated."""
        if isinstance(values, (int, np.integer)):
            return self._flags[int(values)]
        return " ".join(self._flags[int(v)] for v in values)

    def from_string(self, values: Union[str, Iterable[str]]) -> Union[int, List[int]]:
        """The index of a flag, or the indices of a list of flags."""
        if isinstance(values, str):
            return self.index(values)
        return [self.index(v) for v in values]

    def commandline(self, values: Union[int, Iterable[int]]) -> str:
        """CompilerGym's Commandline.commandline: the flags, space-separated."""
        return self.to_string(values)

    def from_commandline(self, commandline: str) -> List[int]:
        """The actions of a space-separated list of flags."""
        return [self.index(word) for word in commandline.split()]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Commandline):
            return self.name == other.name and self._flags == other._flags
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.name, self.n))

    def __repr__(self) -> str:
        return f"Commandline({self.name}, n={self.n})"


def commandline_words(commandline: str) -> List[str]:
    """The actions of a command line as written, without a space to resolve
    them: each stage's `-passes=` text, CompilerGym's flags, or the words."""
    import shlex  # pylint: disable=import-outside-toplevel

    words = shlex.split(commandline.replace("|", " | "))
    if words and words[0] == "opt":
        return [w for w in words[1:] if w.startswith("-") and w not in ("-o", "-S")]
    if words and words[0].startswith("opt-"):
        return [w.split("=", 1)[1] for w in words if w.startswith(("-passes=", "--passes="))]
    return words


def pipelines_to_actions(space: Commandline, stages: Sequence[str]) -> List[int]:
    """The action of each `-passes=` text (one per opt-19 stage)."""
    by_pipeline: Dict[str, int] = {}
    for i, pipeline in enumerate(space.pipelines):
        by_pipeline.setdefault(pipeline, i)
    actions = []
    for text in stages:
        if text not in by_pipeline:
            try:
                actions.append(space.index(text))  # a pass name that is its own pipeline
                continue
            except (UnknownAction, NotFound):
                raise unknown_action(text, space.name, space.n) from None
        actions.append(by_pipeline[text])
    return actions
