"""Python views of kiln spaces: `n`, `names`, `shape`, `contains()`,
`sample()` and name lookups over the space a worker describes.

Membership is decided by the same C++ check that workers apply to every
action, so `contains()` and the worker never disagree; sampling is numpy.
"""

import string

import numpy as np

from . import _kiln
from .errors import InvalidArgument, KilnError, NotFound, Unimplemented

# Unbounded integer ranges are sampled from a window this wide.
_INT_WINDOW = 2**31
# Boxes with a free dimension (-1) and unbounded strings get at most this length.
_FREE_LENGTH = 16
_TEXT = np.array(list(string.ascii_letters + string.digits))


class Space:
    """One action or observation space of a session type."""

    def __init__(self, raw, seed=None):
        if not isinstance(raw, _kiln.Space):
            raise InvalidArgument(f"Space wants a kiln._kiln.Space, got {type(raw).__name__}")
        self._raw = raw
        self._rng = np.random.default_rng(seed)
        self._index = {alias: i for i, alias in enumerate(raw.aliases) if alias}
        self._index.update({name: i for i, name in enumerate(raw.names)})
        self._members = None

    # --- description -------------------------------------------------------
    @property
    def name(self):
        return self._raw.name

    @property
    def kind(self):
        """'discrete', 'named_discrete', 'int64', 'double', 'int64_box',
        'float_box', 'double_box', 'string', 'bytes', 'list', 'dict' or 'any'."""
        return self._raw.kind

    @property
    def deterministic(self):
        return self._raw.deterministic

    @property
    def platform_dependent(self):
        return self._raw.platform_dependent

    @property
    def since_last_observed(self):
        """True for a reward: its value is measured since the session last
        computed it, so it depends on when it was observed, not only on the
        state (a restored session recomputes it where it was last observed)."""
        return self._raw.since_last_observed

    @property
    def default(self):
        return self._raw.default

    @property
    def n(self):
        """Number of choices of a discrete space."""
        if self.kind not in ("discrete", "named_discrete"):
            raise AttributeError(f"space '{self.name}' is {self.kind}, not discrete: it has no n")
        return self._raw.n

    @property
    def names(self):
        """The choice names of a named discrete space (else empty)."""
        return list(self._raw.names)

    @property
    def aliases(self):
        """Another accepted name of each choice ('' = none), e.g. CompilerGym's
        flags; empty when the space has none."""
        return list(self._raw.aliases)

    @property
    def flags(self):
        """CompilerGym's name for the aliases: the command-line flag of each
        choice (e.g. '-gvn' for 'gvn'); empty when the space has none."""
        return self.aliases

    @property
    def metadata(self):
        """What the session type says about its choices (a dict), or None."""
        return self._raw.metadata

    @property
    def pipelines(self):
        """The exact pass pipeline of each choice (llvm), or [] if not given."""
        metadata = self._raw.metadata
        if isinstance(metadata, dict):
            return list(metadata.get("pipelines", []))
        return []

    @property
    def shape(self):
        """Tensor shape (-1 = any length); () for scalars."""
        return tuple(self._raw.shape)

    @property
    def dtype(self):
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
    def low(self):
        """Inclusive lower bound of values (or of lengths for string/bytes); None = unbounded."""
        return self._bounds()[0]

    @property
    def high(self):
        """Inclusive upper bound; None = unbounded."""
        return self._bounds()[1]

    @property
    def members(self):
        """The member spaces of a list or dict space."""
        if self._members is None:
            seeds = self._rng.integers(0, 2**63, size=len(self._raw.members))
            self._members = [Space(m, int(s)) for m, s in zip(self._raw.members, seeds)]
        return list(self._members)

    @property
    def raw(self):
        return self._raw

    def _bounds(self):
        if self.kind in ("double", "float_box", "double_box"):
            return self._raw.double_range
        if self.kind in ("discrete", "named_discrete"):
            return (0, self._raw.n - 1)
        return self._raw.int_range

    # --- membership and lookups ------------------------------------------
    def contains(self, value):
        """True if a worker would accept `value` in this space."""
        try:
            self._raw.check(value)
        except KilnError:
            return False
        return True

    def __contains__(self, value):
        return self.contains(value)

    def check(self, value):
        """Raises kiln.InvalidArgument saying what is wrong with `value`."""
        self._raw.check(value)

    def index(self, name):
        """Index of the choice called `name` (or aliased so, e.g. '-gvn') in a
        named discrete space; kiln.NotFound naming the nearest names otherwise."""
        if self.kind != "named_discrete":
            raise InvalidArgument(f"space '{self.name}' is {self.kind}: its choices have no names")
        if not isinstance(name, str):
            raise InvalidArgument(f"a choice name must be a str, got {type(name).__name__}")
        found = self._index.get(name)
        if found is not None:
            return found
        return self._raw.find_choice(name)  # raises NotFound with the near names

    def __getitem__(self, key):
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

    def __len__(self):
        return self.n

    # --- sampling ---------------------------------------------------------
    def seed(self, seed=None):
        """Reseeds sample(); returns the seed for chaining like gym's spaces."""
        self._rng = np.random.default_rng(seed)
        self._members = None
        return seed

    def sample(self):
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
    def __eq__(self, other):
        return isinstance(other, Space) and self._raw == other._raw

    def __hash__(self):
        return hash((self.name, self.kind))

    def __repr__(self):
        if self.kind in ("discrete", "named_discrete"):
            return f"Space({self.name!r}, {self.kind}, n={self.n})"
        if self.shape:
            return f"Space({self.name!r}, {self.kind}, shape={self.shape})"
        return f"Space({self.name!r}, {self.kind})"
