"""Python views of kiln spaces: `n`, `names`, `shape`, `contains()`,
`sample()` and name lookups over the space a worker describes.

Membership is decided by the same C++ check that workers apply to every
action, so `contains()` and the worker never disagree; sampling is numpy.

When gymnasium can be imported, envs hand out gymnasium's spaces instead
(`from_raw`): a Discrete, Box, Dict, Tuple, Text or Sequence (or, for bytes
and untyped values, a gymnasium Space of kiln's own) that also answers
kiln's questions (`name`, `kind`, `names`, `flags`, `index()`,
`space["gvn"]`, ...) from the kiln view it keeps in `space.kiln`.
"""

from __future__ import annotations

import string
from typing import Any, Optional

import numpy as np

from . import _kiln, _left_out_actions
from ._gymnasium import AVAILABLE, gym_spaces
from .errors import InvalidArgument, KilnError, NotFound, Unimplemented

# Unbounded integer ranges are sampled from a window this wide.
_INT_WINDOW = 2**31
# Boxes with a free dimension (-1) and unbounded strings get at most this length.
_FREE_LENGTH = 16
_TEXT = np.array(list(string.ascii_letters + string.digits))


class Space:
    """One action or observation space of a session type."""

    def __init__(self, raw: Any, seed: Optional[int] = None):
        if not isinstance(raw, _kiln.Space):
            raise InvalidArgument(f"Space wants a kiln._kiln.Space, got {type(raw).__name__}")
        self._raw = raw
        self._rng = np.random.default_rng(seed)
        self._index = {alias: i for i, alias in enumerate(raw.aliases) if alias}
        self._index.update({name: i for i, name in enumerate(raw.names)})
        self._members: Optional[list] = None

    # --- description -------------------------------------------------------
    @property
    def name(self) -> str:
        """The space's name, e.g. "PassesAll" or "Autophase"."""
        return self._raw.name

    @property
    def kind(self) -> str:
        """'discrete', 'named_discrete', 'int64', 'double', 'int64_box',
        'float_box', 'double_box', 'string', 'bytes', 'list', 'dict' or 'any'."""
        return self._raw.kind

    @property
    def deterministic(self) -> bool:
        """True if the same state always gives the same value."""
        return self._raw.deterministic

    @property
    def platform_dependent(self) -> bool:
        """True if the value depends on the machine (e.g. object code size)."""
        return self._raw.platform_dependent

    @property
    def since_last_observed(self) -> bool:
        """True for a reward: its value is measured since the session last
        computed it, so it depends on when it was observed, not only on the
        state (a restored session recomputes it where it was last observed)."""
        return self._raw.since_last_observed

    @property
    def default(self) -> Any:
        """The value the worker gives when it has none (or None)."""
        return self._raw.default

    @property
    def n(self) -> int:
        """Number of choices of a discrete space."""
        if self.kind not in ("discrete", "named_discrete"):
            raise AttributeError(f"space '{self.name}' is {self.kind}, not discrete: it has no n")
        return self._raw.n

    @property
    def names(self) -> list[str]:
        """The choice names of a named discrete space (else empty)."""
        return list(self._raw.names)

    @property
    def aliases(self) -> list[str]:
        """Another accepted name of each choice ('' = none), e.g. CompilerGym's
        flags; empty when the space has none."""
        return list(self._raw.aliases)

    @property
    def flags(self) -> list[str]:
        """CompilerGym's name for the aliases: the command-line flag of each
        choice (e.g. '-gvn' for 'gvn'); empty when the space has none."""
        return self.aliases

    @property
    def metadata(self) -> Any:
        """What the session type says about its choices (a dict), or None."""
        return self._raw.metadata

    @property
    def pipelines(self) -> list[str]:
        """The exact pass pipeline of each choice (llvm), or [] if not given."""
        metadata = self._raw.metadata
        if isinstance(metadata, dict):
            return list(metadata.get("pipelines", []))
        return []

    @property
    def shape(self) -> tuple:
        """Tensor shape (-1 = any length); () for scalars."""
        return tuple(self._raw.shape)

    @property
    def dtype(self) -> Any:
        """The numpy dtype of values of numeric kinds; None for the rest."""
        return {
            "discrete": np.dtype(np.int64),
            "named_discrete": np.dtype(np.int64),
            "int64": np.dtype(np.int64),
            "int64_box": np.dtype(np.int64),
            "double": np.dtype(np.float64),
            "double_box": np.dtype(np.float64),
            "float_box": np.dtype(np.float32),
        }.get(self.kind)

    @property
    def low(self) -> Any:
        """Inclusive lower bound of values (or of lengths for string/bytes); None = unbounded."""
        return self._bounds()[0]

    @property
    def high(self) -> Any:
        """Inclusive upper bound; None = unbounded."""
        return self._bounds()[1]

    @property
    def members(self) -> list[Space]:
        """The member spaces of a list or dict space."""
        if self._members is None:
            seeds = self._rng.integers(0, 2**63, size=len(self._raw.members))
            self._members = [Space(m, int(s)) for m, s in zip(self._raw.members, seeds)]
        return list(self._members)

    @property
    def raw(self) -> Any:
        """The extension's space (kiln._kiln.Space) this view is over."""
        return self._raw

    def _bounds(self):
        if self.kind in ("double", "float_box", "double_box"):
            return self._raw.double_range
        if self.kind in ("discrete", "named_discrete"):
            return (0, self._raw.n - 1)
        return self._raw.int_range

    # --- membership and lookups ------------------------------------------
    def contains(self, value: Any) -> bool:
        """True if a worker would accept `value` in this space."""
        try:
            self._raw.check(value)
        except KilnError:
            return False
        return True

    def __contains__(self, value: Any) -> bool:
        return self.contains(value)

    def check(self, value: Any) -> None:
        """Raises kiln.InvalidArgument saying what is wrong with `value`."""
        self._raw.check(value)

    def index(self, name: str) -> int:
        """Index of the choice called `name` (or aliased so, e.g. '-gvn') in a
        named discrete space; kiln.NotFound naming the nearest names otherwise."""
        if self.kind != "named_discrete":
            raise InvalidArgument(f"space '{self.name}' is {self.kind}: its choices have no names")
        if not isinstance(name, str):
            raise InvalidArgument(f"a choice name must be a str, got {type(name).__name__}")
        found = self._index.get(name)
        if found is not None:
            return found
        try:
            return self._raw.find_choice(name)  # raises NotFound with the near names
        except NotFound as error:
            # A pass docs/actions.md leaves out says why, not just that it is unknown.
            why = _left_out_actions.reason(name)
            if why is None:
                raise
            raise NotFound(f"{error}: {why}") from None

    def __getitem__(self, key: Any) -> Any:
        """space['name'] -> index (named discrete) or member (dict); space[i] -> name."""
        if self.kind == "dict" and isinstance(key, str):
            for member in self.members:
                if member.name == key:
                    return member
            raise NotFound(f"dict space '{self.name}' has no member {key!r}")
        if isinstance(key, str):
            return self.index(key)
        if self.kind == "named_discrete":
            if not isinstance(key, (int, np.integer)) or isinstance(key, bool):
                raise InvalidArgument(f"choice index must be an int, got {type(key).__name__}")
            if not 0 <= key < self.n:
                raise InvalidArgument(
                    f"choice {key} is out of range [0, {self.n}) of '{self.name}'"
                )
            return self._raw.names[key]
        if self.kind == "list":
            return self.members[key]
        raise InvalidArgument(f"space '{self.name}' ({self.kind}) cannot be indexed")

    def __len__(self) -> int:
        return self.n

    # --- sampling ---------------------------------------------------------
    def seed(self, seed: Optional[int] = None) -> Optional[int]:
        """Reseeds sample(); returns the seed for chaining like gym's spaces."""
        self._rng = np.random.default_rng(seed)
        self._members = None
        return seed

    def sample(self) -> Any:
        """A random member of the space (numpy arrays for tensors)."""
        kind = self.kind
        if kind in ("discrete", "named_discrete"):
            if self.n <= 0:
                raise InvalidArgument(f"space '{self.name}' has no choices to sample")
            return int(self._rng.integers(self.n))
        if kind == "int64":
            return int(self._int_values(()))
        if kind == "double":
            return float(self._double_values((), np.float64))
        if kind == "int64_box":
            return self._int_values(self._concrete_shape())
        if kind == "float_box":
            return self._double_values(self._concrete_shape(), np.float32)
        if kind == "double_box":
            return self._double_values(self._concrete_shape(), np.float64)
        if kind == "string":
            return "".join(self._rng.choice(_TEXT, size=self._length()))
        if kind == "bytes":
            return self._rng.integers(0, 256, size=self._length(), dtype=np.uint8).tobytes()
        if kind == "list":
            return [m.sample() for m in self.members]
        if kind == "dict":
            return {m.name: m.sample() for m in self.members}
        raise Unimplemented(f"space '{self.name}' ({kind}) cannot be sampled: it has no structure")

    def _concrete_shape(self):
        return tuple(
            int(self._rng.integers(1, _FREE_LENGTH + 1)) if d < 0 else d for d in self.shape
        )

    def _int_values(self, shape):
        low, high = self._raw.int_range
        if low is None and high is None:
            low, high = -_INT_WINDOW, _INT_WINDOW - 1
        elif low is None:
            low = high - _INT_WINDOW + 1
        elif high is None:
            high = low + _INT_WINDOW - 1
        values = self._rng.integers(low, high, size=shape, dtype=np.int64, endpoint=True)
        return values

    def _double_values(self, shape, dtype):
        low, high = self._raw.double_range
        if low is not None and high is not None:
            values = self._rng.uniform(low, high, size=shape)
        elif low is not None:
            values = low + self._rng.exponential(1.0, size=shape)
        elif high is not None:
            values = high - self._rng.exponential(1.0, size=shape)
        else:
            values = self._rng.standard_normal(size=shape)
        return np.asarray(values, dtype=dtype)

    def _length(self):
        low, high = self._raw.int_range
        low = 0 if low is None else low
        high = max(low, _FREE_LENGTH) if high is None else high
        return int(self._rng.integers(low, high, endpoint=True))

    # --- plumbing ---------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Space) and self._raw == other._raw

    def __hash__(self) -> int:
        return hash((self.name, self.kind))

    def __repr__(self) -> str:
        if self.kind in ("discrete", "named_discrete"):
            return f"Space({self.name!r}, {self.kind}, n={self.n})"
        if self.shape:
            return f"Space({self.name!r}, {self.kind}, shape={self.shape})"
        return f"Space({self.name!r}, {self.kind})"


# --- gymnasium's spaces ------------------------------------------------------
# Length given to gymnasium's Text when kiln's string space has no upper bound
# (Text needs one); kiln's own sample() still draws short strings.
_TEXT_MAX_LENGTH = 2**31 - 1
# Text checks characters against a set: kiln's strings (IR, JSON) hold any.
_TEXT_CHARSET = string.printable


class _KilnView:
    """What kiln's gymnasium spaces add to gymnasium's: `space.kiln`, kiln's
    view of the space, which answers the attributes gymnasium's class lacks
    (name, kind, names, flags, aliases, index(), pipelines, members, ...)."""

    _kiln: Optional[Space] = None

    @property
    def kiln(self) -> Space:
        """kiln's view of this space (kiln.Space): names, flags, kind, check()."""
        return self._view("kiln")

    def _view(self, wanted: str) -> Space:
        view = self.__dict__.get("_kiln")
        if view is None:
            raise AttributeError(
                f"{wanted!r}: this {type(self).__name__} lost kiln's view of it when it was "
                "pickled (kiln's spaces travel to other processes as plain gymnasium spaces)"
            )
        return view

    def __getattr__(self, name: str) -> Any:
        # Asked for before __dict__ is filled while unpickling or copying;
        # "kiln" when the property above raised.
        if name.startswith("_") or name == "kiln":
            raise AttributeError(name)
        return getattr(self._view(name), name)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_kiln", None)  # a C++ object: it does not pickle
        return state

    def __deepcopy__(self, memo: dict) -> Any:
        import copy

        clone = type(self).__new__(type(self))
        memo[id(self)] = clone
        state = {k: v for k, v in self.__dict__.items() if k != "_kiln"}
        clone.__dict__.update(copy.deepcopy(state, memo))
        if "_kiln" in self.__dict__:
            clone.__dict__["_kiln"] = self.__dict__["_kiln"]  # read-only: shared
        return clone

    def _kiln_sample(self) -> Any:
        """kiln's own sample() drawn from this space's np_random."""
        view = self.kiln
        view._rng = self.np_random  # type: ignore[attr-defined]
        view._members = None
        return view.sample()

    def _kiln_repr(self, gymnasium_repr: str) -> str:
        view = self.__dict__.get("_kiln")
        return gymnasium_repr if view is None else f"{gymnasium_repr[:-1]}, name={view.name!r})"


if AVAILABLE:

    class Discrete(_KilnView, gym_spaces.Discrete):
        """gymnasium's Discrete over a kiln discrete space; space["gvn"] is
        the index of the choice called (or flagged) so, space[i] its name."""

        def contains(self, x: Any) -> bool:
            """gymnasium's check, and the worker's (which refuses a bool)."""
            return bool(super().contains(x)) and self.kiln.contains(_plain(x))

        def __getitem__(self, key: Any) -> Any:
            return self.kiln[key]

        def __len__(self) -> int:
            return int(self.n)

        def __repr__(self) -> str:
            return self._kiln_repr(super().__repr__())

    class Box(_KilnView, gym_spaces.Box):
        """gymnasium's Box over a kiln number or fixed-shape tensor space.
        A scalar observation stays a Python number (as CompilerGym gives it):
        contains() takes one as the 0-d array it stands for."""

        def contains(self, x: Any) -> bool:
            """The worker's check first (a list is no tensor), then gymnasium's."""
            if not self.kiln.contains(_plain(x)):
                return False
            if self.shape == () and isinstance(x, (int, float, np.number)):
                x = np.asarray(x)  # its own dtype: a float is no member of an int Box
            return bool(super().contains(x))

        def __repr__(self) -> str:
            return self._kiln_repr(super().__repr__())

    class Sequence(_KilnView, gym_spaces.Sequence):
        """gymnasium's Sequence (stacked) over a kiln tensor of free length."""

        def __repr__(self) -> str:
            return self._kiln_repr(super().__repr__())

    class Text(_KilnView, gym_spaces.Text):
        """gymnasium's Text over a kiln string space: any character, the
        length bounds kiln's (membership is kiln's check)."""

        def contains(self, x: Any) -> bool:
            """A str the worker's check accepts (any character)."""
            return isinstance(x, str) and self.kiln.contains(x)

        def sample(self, mask: Any = None) -> str:
            """kiln's sample (short strings when unbounded); gymnasium's with a mask."""
            if mask is not None:
                return super().sample(mask)
            return self._kiln_sample()

        def __repr__(self) -> str:
            return f"Text({self.min_length}, {self.max_length}, name={self.kiln.name!r})"

    class Dict(_KilnView, gym_spaces.Dict):
        """gymnasium's Dict over a kiln dict space, in the worker's order."""

        def __repr__(self) -> str:
            return self._kiln_repr(super().__repr__())

    class Tuple(_KilnView, gym_spaces.Tuple):
        """gymnasium's Tuple over a kiln list space."""

        def __repr__(self) -> str:
            return self._kiln_repr(super().__repr__())

    class Bytes(_KilnView, gym_spaces.Space):
        """A kiln bytes space (Bitcode, Programl): gymnasium has no space
        of bytes, so this one is kiln's; membership is kiln's check."""

        def __init__(self, view: Space, seed: Any = None):
            super().__init__(None, None, seed)
            self._kiln = view

        def contains(self, x: Any) -> bool:
            """Bytes the worker's check accepts (its length bounds)."""
            return isinstance(x, bytes) and self.kiln.contains(x)

        def sample(self, mask: Any = None, probability: Any = None) -> bytes:
            """Random bytes within the length bounds, from np_random."""
            return self._kiln_sample()

        def __eq__(self, other: Any) -> bool:
            return type(other) is type(self) and other.__dict__.get("_kiln") == self._kiln

        def __hash__(self) -> int:
            return hash(self.kiln)

        def __repr__(self) -> str:
            return f"Bytes(name={self.kiln.name!r})"

    class Anything(Bytes):
        """A kiln space with no structure ('any'): whatever the worker sends."""

        def contains(self, x: Any) -> bool:
            """What the worker's check accepts."""
            return self.kiln.contains(x)

        def __repr__(self) -> str:
            return f"Anything(name={self.kiln.name!r})"

    class NoObservation(gym_spaces.Space):
        """The observation space of an env that observes nothing
        (observation_space=None): its only member is None."""

        def __init__(self, seed: Any = None):
            super().__init__(None, None, seed)

        @property
        def is_np_flattenable(self) -> bool:
            """False: nothing to flatten."""
            return False

        def contains(self, x: Any) -> bool:
            """True for None only."""
            return x is None

        def sample(self, mask: Any = None, probability: Any = None) -> None:
            """None, the only member."""
            return None

        def __eq__(self, other: Any) -> bool:
            return isinstance(other, NoObservation)

        def __hash__(self) -> int:
            return hash(NoObservation)

        def __repr__(self) -> str:
            return "NoObservation()"


def _plain(x: Any) -> Any:
    """A 0-d array as the number it holds (what the worker's check takes)."""
    return x.item() if isinstance(x, np.ndarray) and x.ndim == 0 else x


def _bound(value: Any, unbounded: float) -> Any:
    return unbounded if value is None else value


def _box(view: Space, shape: tuple, seed: Any) -> Any:
    low, high = view.low, view.high
    if view.kind in ("int64", "int64_box"):
        dtype: Any = np.int64
    else:
        dtype = view.dtype if view.dtype is not None else np.float64
    return Box(low=_bound(low, -np.inf), high=_bound(high, np.inf), shape=shape, dtype=dtype,
               seed=seed)


def _to_gymnasium(view: Space, seed: Any) -> Any:
    kind = view.kind
    if kind in ("discrete", "named_discrete") and view.n > 0:
        return Discrete(view.n, seed=seed)
    if kind in ("int64", "double"):
        return _box(view, (), seed)
    if kind in ("int64_box", "float_box", "double_box"):
        shape = view.shape
        if all(d >= 0 for d in shape):
            return _box(view, shape, seed)
        if len(shape) >= 1 and shape[0] < 0 and all(d >= 0 for d in shape[1:]):
            # A tensor of free length: a sequence of its rows.
            return Sequence(_box(view, shape[1:], None), seed=seed, stack=True)
    if kind == "string":
        low, high = view.low, view.high
        return Text(max_length=_TEXT_MAX_LENGTH if high is None else int(high),
                    min_length=0 if low is None else int(low), charset=_TEXT_CHARSET, seed=seed)
    if kind == "dict":
        # A list of pairs: a mapping would be sorted by gymnasium.
        return Dict([(m.name, from_raw(m.raw)) for m in view.members], seed=seed)
    if kind == "list":
        return Tuple(tuple(from_raw(m.raw) for m in view.members), seed=seed)
    if kind == "bytes":
        return Bytes(view, seed)
    return Anything(view, seed)


def from_raw(raw: Any, seed: Optional[int] = None) -> Any:
    """The space an env hands out for `raw` (a kiln._kiln.Space): gymnasium's
    (see the module doc) when gymnasium can be imported, kiln.Space otherwise."""
    view = Space(raw, seed)
    if not AVAILABLE:
        return view
    space = _to_gymnasium(view, seed)
    if isinstance(space, _KilnView):
        space._kiln = view
    return space


def no_observation() -> Any:
    """The observation space of an env that observes nothing: gymnasium's
    contract wants a space (NoObservation, whose only member is None);
    without gymnasium, None."""
    return NoObservation() if AVAILABLE else None


def view_of(space: Any) -> Optional[Space]:
    """kiln's view (kiln.Space) of a space from from_raw(), or None."""
    if isinstance(space, Space):
        return space
    return space.__dict__.get("_kiln") if space is not None else None


def carry_rng(old: Any, new: Any) -> Any:
    """Gives `new` the sampling generator of `old` (an env's action space
    replaced by another keeps drawing from the seeded sequence); returns new."""
    if isinstance(new, Space) and isinstance(old, Space):
        new._rng = old._rng
    elif not isinstance(new, Space) and not isinstance(old, Space):
        new._np_random = old._np_random
    return new
