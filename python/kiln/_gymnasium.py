"""gymnasium when it can be imported, kiln's own stand-ins when it cannot.

kiln's Env and VectorEnv derive from EnvBase and VectorEnvBase: gymnasium.Env
and gymnasium.vector.VectorEnv when gymnasium is installed (users pip install
it; Debian does not package it), else the small classes below, which give
the same attributes (np_random, unwrapped, metadata) so that kiln behaves the
same either way, short of being accepted by gymnasium's own tools.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

try:
    import gymnasium
    from gymnasium import spaces as gym_spaces
    from gymnasium.vector.utils import batch_space, concatenate, create_empty_array
except ImportError:  # kiln works without it: the stand-ins below
    gymnasium = None
    gym_spaces = None
    batch_space = concatenate = create_empty_array = None

#: True when kiln's envs, vector envs and spaces are gymnasium's.
AVAILABLE = gymnasium is not None

# gymnasium 1.1 names its autoreset modes (gymnasium.vector.AutoresetMode);
# 1.0 has only the next-step mode and no name for it: kiln says it by value.
if AVAILABLE and hasattr(gymnasium.vector, "AutoresetMode"):
    NEXT_STEP: Any = gymnasium.vector.AutoresetMode.NEXT_STEP
    SAME_STEP: Any = gymnasium.vector.AutoresetMode.SAME_STEP
else:
    NEXT_STEP, SAME_STEP = "NextStep", "SameStep"


def np_random(seed: Any) -> tuple[np.random.Generator, int]:
    """A generator and the seed it was made from (a fresh one when None), as
    gymnasium.utils.seeding.np_random gives."""
    if seed is not None and (not isinstance(seed, (int, np.integer)) or seed < 0):
        from .errors import InvalidArgument

        raise InvalidArgument(f"seed must be a non-negative int or None, got {seed!r}")
    seed_seq = np.random.SeedSequence(None if seed is None else int(seed))
    entropy = seed_seq.entropy  # an int: made from one int, or from the OS
    return np.random.Generator(np.random.PCG64(seed_seq)), int(entropy) if isinstance(entropy, int) else -1


class _FallbackRandom:
    """np_random / np_random_seed as gymnasium's Env and VectorEnv have them."""

    _np_random: Optional[np.random.Generator] = None
    _np_random_seed: Optional[int] = None

    @property
    def np_random(self) -> np.random.Generator:
        """The env's generator, made (unseeded) on first use."""
        if self._np_random is None:
            self._np_random, self._np_random_seed = np_random(None)
        return self._np_random

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        self._np_random, self._np_random_seed = value, -1

    @property
    def np_random_seed(self) -> Optional[int]:
        """The seed np_random was made from (-1 when set directly)."""
        if self._np_random is None:
            self._np_random, self._np_random_seed = np_random(None)
        return self._np_random_seed

    @property
    def unwrapped(self) -> Any:
        """The env itself (kiln's envs are not wrappers)."""
        return self


class _FallbackEnv(_FallbackRandom):
    """gymnasium.Env's attributes, without gymnasium."""

    metadata: dict[str, Any] = {"render_modes": []}
    render_mode: Optional[str] = None

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Any:
        """Seeds np_random when given a seed (what gymnasium.Env.reset does)."""
        if seed is not None:
            self._np_random, self._np_random_seed = np_random(seed)

    def render(self) -> Any:
        """kiln's envs draw nothing."""
        raise NotImplementedError("kiln's envs have no rendering (render_modes is empty)")


class _FallbackVectorEnv(_FallbackRandom):
    """gymnasium.vector.VectorEnv's attributes, without gymnasium."""

    metadata: dict[str, Any] = {}
    render_mode: Optional[str] = None
    closed: bool = False

    def reset(self, *, seed: Any = None, options: Optional[dict] = None) -> Any:
        """Seeds np_random when given an int seed (as gymnasium's VectorEnv)."""
        if isinstance(seed, (int, np.integer)):
            self._np_random, self._np_random_seed = np_random(int(seed))

    def render(self) -> Any:
        """kiln's envs draw nothing."""
        raise NotImplementedError("kiln's envs have no rendering (render_modes is empty)")


if AVAILABLE:
    EnvBase: Any = gymnasium.Env
    VectorEnvBase: Any = gymnasium.vector.VectorEnv
    SpaceBase: Any = gym_spaces.Space
else:
    EnvBase = _FallbackEnv
    VectorEnvBase = _FallbackVectorEnv
    SpaceBase = object


class NamedDiscreteBase(gym_spaces.Discrete if AVAILABLE else object):  # type: ignore[misc]
    """The base of the CompilerGym-style named action spaces (the compat
    env's Commandline, the wrappers' CommandlineSpace): gymnasium's Discrete
    when installed, so that `isinstance(env.action_space, Discrete)` holds
    as it did of CompilerGym's (a gym Discrete). Subclasses keep their own
    n, dtype, shape, sample and contains; they do not call Discrete's
    __init__, so the attributes gymnasium's helpers read are set here."""

    start = np.int64(0)
    _np_random = None
    _shape = ()
