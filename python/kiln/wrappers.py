"""Env wrappers as CompilerGym users know them, each a thin layer over a
kiln.Env (or over another wrapper, or over kiln.compiler_gym's env):

    TimeLimit                      end the episode after N steps
    IterateOverBenchmarks          reset() takes the next benchmark of an iterable
    CycleOverBenchmarks            ... of a list, round and round
    CycleOverBenchmarksIterator    ... of a fresh iterator each time one runs out
    RandomOrderBenchmarks          ... a random one of a list (seedable)
    CommandlineWithTerminalAction  one more action that ends the episode
    ConstrainedCommandline         only a subset of the passes
    ForkOnStep                     a fork before every step, so undo() backtracks
    Counter                        counts reset / step / fork / close calls
    ValidateBenchmarkAfterEveryStep  ends the episode when the program stops validating

and the bases to write one: EnvWrapper (CompilerGym's CompilerEnvWrapper),
ActionWrapper, ObservationWrapper, RewardWrapper.

A kiln.Env steps gymnasium-style, (observation, reward, terminated,
truncated, info); kiln.compiler_gym's env steps gym-0.21-style, (observation,
reward, done, info). The wrappers keep whichever form the env they wrap uses.
"""

import abc
import itertools
import threading
from typing import Any, Dict, List, Optional

import numpy as np

from ._gymnasium import NamedDiscreteBase
from .errors import InvalidArgument, NotFound

# Attributes a wrapper sets on the env it wraps rather than on itself, as
# CompilerGym's wrappers do: `wrapped.observation_space = "Autophase"`.
_FORWARDED_SETTERS = ("observation_space", "reward_space", "benchmark", "episode_reward",
                      "observation_space_spec", "reward_space_spec")


class EnvWrapper:
    """The base of every wrapper: everything not overridden goes to `env`."""

    def __init__(self, env: Any) -> None:
        object.__setattr__(self, "env", env)

    def __getattr__(self, name: Any) -> Any:
        # Only called for attributes the wrapper does not have itself.
        if name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)

    def __setattr__(self, name: Any, value: Any) -> None:
        if name in _FORWARDED_SETTERS and name not in self.__dict__ and not _is_space(value):
            setattr(self.env, name, value)
        else:
            # A space object (gym's `self.observation_space = Box(...)` in a
            # wrapper that changes the observation) is the wrapper's own.
            object.__setattr__(self, name, value)

    @property
    def unwrapped(self) -> Any:
        """The innermost env."""
        env = self.env
        while isinstance(env, EnvWrapper):
            env = env.env
        return env

    def reset(self, *args: Any, **kwargs: Any) -> Any:
        """Starts an episode of the wrapped env."""
        return self.env.reset(*args, **kwargs)

    def step(self, action: Any, *args: Any, **kwargs: Any) -> Any:
        """One action: the wrapped env's step result (observation_spaces=,
        reward_spaces= ... go through to a kiln.compiler_gym env)."""
        return self.multistep([action], *args, **kwargs)

    def multistep(self, actions: Any, *args: Any, **kwargs: Any) -> Any:
        """Several actions in one round trip, through the wrapped env."""
        return self.env.multistep(actions, *args, **kwargs)

    def fork(self) -> Any:
        """The same wrapper over a fork of the wrapped env."""
        return type(self)(self.env.fork())

    def close(self) -> None:
        """Closes the wrapped env."""
        self.env.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> Any:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__}{self.env!r}>"


def _is_space(value: Any) -> bool:
    """A space object (gymnasium's, kiln's, gym's), not a space's name or spec."""
    return callable(getattr(value, "sample", None)) and callable(getattr(value, "contains", None))


def _gym_method(cls: Any, gym_name: str, compiler_gym_name: str) -> None:
    """A subclass written for gym's wrapper defines gym_name (observation(),
    reward()): that is its CompilerGym conversion too."""
    if gym_name in cls.__dict__ and callable(cls.__dict__[gym_name]) and not any(
            compiler_gym_name in c.__dict__ for c in cls.__mro__[:-1]
            if c not in (ObservationWrapper, RewardWrapper)):
        setattr(cls, compiler_gym_name, cls.__dict__[gym_name])


# CompilerGym's name for the base of every wrapper.
CompilerEnvWrapper = EnvWrapper


def _gym_0_21(env: Any) -> Any:
    """Whether `env` (or what it wraps) is a kiln.compiler_gym env, whose
    reset() returns the observation alone and step() a 4-tuple."""
    from ._cg_env import CompilerEnv  # pylint: disable=import-outside-toplevel

    return isinstance(getattr(env, "unwrapped", env), CompilerEnv)


class ActionWrapper(EnvWrapper):
    """Translates actions: subclasses define action(a) (this space's action
    -> the wrapped env's) and may define reverse_action(a)."""

    def multistep(self, actions: Any, *args: Any, **kwargs: Any) -> Any:
        """The wrapped env's multistep of the translated actions."""
        return self.env.multistep([self.action(a) for a in actions], *args, **kwargs)

    def action(self, action: Any) -> Any:
        """This space's action -> the wrapped env's (subclasses define it)."""
        raise NotImplementedError(f"{type(self).__name__} must define action()")

    def reverse_action(self, action: Any) -> Any:
        """The wrapped env's action -> this space's (subclasses may define it)."""
        raise NotImplementedError(f"{type(self).__name__} does not define reverse_action()")


class ObservationWrapper(EnvWrapper, abc.ABC):
    """Translates observations: subclasses define convert_observation(o)
    (or gym's name for it, observation(o)), applied to what reset() and
    step() return."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _gym_method(cls, "observation", "convert_observation")

    def reset(self, *args: Any, **kwargs: Any) -> Any:
        """The wrapped env's reset, its observation converted."""
        result = self.env.reset(*args, **kwargs)
        if _gym_0_21(self.env):
            return self.convert_observation(result)
        observation, info = result
        return self.convert_observation(observation), info

    def multistep(self, actions: Any, *args: Any, **kwargs: Any) -> Any:
        """The wrapped env's multistep, its observation converted."""
        result = self.env.multistep(actions, *args, **kwargs)
        return (self.convert_observation(result[0]),) + tuple(result[1:])

    @abc.abstractmethod
    def convert_observation(self, observation: Any) -> Any:
        """The observation in this wrapper's space (subclasses define it)."""
        raise NotImplementedError(f"{type(self).__name__} must define convert_observation()")


class RewardWrapper(EnvWrapper, abc.ABC):
    """Translates rewards: subclasses define convert_reward(r) (or gym's
    name for it, reward(r)); the episode's reward (env.episode_reward) sums
    the converted rewards."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _gym_method(cls, "reward", "convert_reward")

    def multistep(self, actions: Any, *args: Any, **kwargs: Any) -> Any:
        """The wrapped env's multistep, its reward converted."""
        result = list(self.env.multistep(actions, *args, **kwargs))
        reward = result[1]
        inner = self.unwrapped
        if reward is not None and getattr(inner, "episode_reward", None) is not None:
            converted = self.convert_reward(reward)
            inner.episode_reward += converted - reward
            result[1] = converted
        return tuple(result)

    @abc.abstractmethod
    def convert_reward(self, reward: Any) -> Any:
        """The reward in this wrapper's terms (subclasses define it)."""
        raise NotImplementedError(f"{type(self).__name__} must define convert_reward()")


class ValidateBenchmarkAfterEveryStep(EnvWrapper):
    """Validates the program after every step (its benchmark's ivalidate(),
    kiln's run of the program on the benchmark's inputs); the first error
    ends the episode with info["error_details"] and `reward_penalty` as the
    step's reward, as CompilerGym's wrapper."""

    def __init__(self, env: Any, reward_penalty: Any = -1e3) -> None:
        super().__init__(env)
        self.reward_penalty = reward_penalty

    def multistep(self, actions: Any, *args: Any, **kwargs: Any) -> Any:
        """The wrapped env's multistep, then a validation of where it got."""
        observation, reward, done, info = self.env.multistep(actions, *args, **kwargs)
        if done:
            return observation, reward, done, info
        error = next(iter(self.env.benchmark.ivalidate(self.env)), None)
        if error is None:
            return observation, reward, done, info
        info["error_details"] = error
        return observation, self.reward_penalty, True, info

    def fork(self) -> Any:
        """The same wrapper, with its penalty, over a fork of the wrapped env."""
        return ValidateBenchmarkAfterEveryStep(self.env.fork(), self.reward_penalty)


def _mark_done(result: Any, info_key: Any = None, truncated: Any = False) -> Any:
    """`result` (a 4- or 5-tuple step result) with the episode over."""
    if len(result) == 5:
        observation, reward, terminated, was_truncated, info = result
        if info_key:
            info[info_key] = True
        if truncated:
            return observation, reward, terminated, not terminated, info
        return observation, reward, True, was_truncated, info
    observation, reward, done, info = result
    if truncated:
        info["TimeLimit.truncated"] = not done
    elif info_key and not done:
        info[info_key] = True
    return observation, reward, True, info


class TimeLimit(EnvWrapper):
    """Ends the episode once `max_episode_steps` actions were applied since
    reset() (a multistep counts each of its actions): gymnasium-style envs say
    truncated=True, gym-0.21-style ones done=True with
    info["TimeLimit.truncated"]."""

    def __init__(self, env: Any, max_episode_steps: Any) -> None:
        super().__init__(env)
        if not isinstance(max_episode_steps, (int, np.integer)) or max_episode_steps < 1:
            raise InvalidArgument(
                f"max_episode_steps must be a positive int, got {max_episode_steps!r}"
            )
        self._max_episode_steps = int(max_episode_steps)
        self._elapsed_steps: Optional[int] = None

    @property
    def max_episode_steps(self) -> Any:
        """The number of actions after which the episode ends."""
        return self._max_episode_steps

    @property
    def elapsed_steps(self) -> Any:
        """Actions applied since reset() (None before the first)."""
        return self._elapsed_steps

    def reset(self, *args: Any, **kwargs: Any) -> Any:
        """Starts an episode of the wrapped env and the count from 0."""
        self._elapsed_steps = 0
        return self.env.reset(*args, **kwargs)

    def multistep(self, actions: Any, *args: Any, **kwargs: Any) -> Any:
        """The wrapped env's multistep, the episode ended once the limit is reached."""
        if self._elapsed_steps is None:
            raise InvalidArgument("no episode in progress: call env.reset() first")
        actions = list(actions)
        result = self.env.multistep(actions, *args, **kwargs)
        self._elapsed_steps += len(actions)
        if self._elapsed_steps >= self._max_episode_steps:
            return _mark_done(result, truncated=True)
        return result

    def fork(self) -> Any:
        """A fork of the wrapped env with this limit and count."""
        forked = TimeLimit(self.env.fork(), self._max_episode_steps)
        forked._elapsed_steps = self._elapsed_steps
        return forked


class IterateOverBenchmarks(EnvWrapper):
    """Each reset() starts the next benchmark of `benchmarks` (any iterable,
    even an endless one); reset() raises StopIteration once it runs out.
    A fork gets its own copy of the rest of the sequence, unless
    `fork_shares_iterator`, when both draw from one."""

    def __init__(self, env: Any, benchmarks: Any, fork_shares_iterator: Any = False) -> None:
        super().__init__(env)
        self.benchmarks = iter(benchmarks)
        self.fork_shares_iterator = fork_shares_iterator
        self._lock = threading.Lock()

    def _next_benchmark(self) -> Any:
        with self._lock:
            return next(self.benchmarks)

    def reset(self, benchmark: Any = None, **kwargs: Any) -> Any:
        """Starts an episode on the next benchmark; StopIteration when none is left."""
        if benchmark is not None:
            raise TypeError(
                f"{type(self).__name__} chooses the benchmark; reset() got benchmark={benchmark!r}"
            )
        return self.env.reset(benchmark=self._next_benchmark(), **kwargs)

    def fork(self) -> Any:
        """A fork of the wrapped env with the rest of the sequence (its own copy, or shared)."""
        if self.fork_shares_iterator:
            theirs = self.benchmarks
        else:
            with self._lock:
                self.benchmarks, theirs = itertools.tee(self.benchmarks)
        forked = IterateOverBenchmarks.__new__(type(self))
        IterateOverBenchmarks.__init__(forked, self.env.fork(), (), self.fork_shares_iterator)
        forked.benchmarks = theirs
        if self.fork_shares_iterator:
            forked._lock = self._lock
        return forked


class CycleOverBenchmarks(IterateOverBenchmarks):
    """Each reset() starts the next benchmark of `benchmarks`, from the first
    again after the last."""

    def __init__(self, env: Any, benchmarks: Any, fork_shares_iterator: Any = False) -> None:
        benchmarks = list(benchmarks)
        if not benchmarks:
            raise InvalidArgument("CycleOverBenchmarks needs at least one benchmark")
        super().__init__(env, itertools.cycle(benchmarks), fork_shares_iterator)


class CycleOverBenchmarksIterator(EnvWrapper):
    """Like CycleOverBenchmarks over an iterator that make_benchmark_iterator()
    makes, and makes anew each time one runs out."""

    def __init__(self, env: Any, make_benchmark_iterator: Any) -> None:
        super().__init__(env)
        self.make_benchmark_iterator = make_benchmark_iterator
        self.benchmarks = iter(make_benchmark_iterator())

    def reset(self, benchmark: Any = None, **kwargs: Any) -> Any:
        """Starts an episode on the next benchmark, making a new iterator when one runs out."""
        if benchmark is not None:
            raise TypeError(
                f"CycleOverBenchmarksIterator chooses the benchmark; reset() got "
                f"benchmark={benchmark!r}"
            )
        try:
            chosen = next(self.benchmarks)
        except StopIteration:
            self.benchmarks = iter(self.make_benchmark_iterator())
            try:
                chosen = next(self.benchmarks)
            except StopIteration:
                raise InvalidArgument("make_benchmark_iterator() made an empty iterator") from None
        return self.env.reset(benchmark=chosen, **kwargs)

    def fork(self) -> Any:
        """A fork of the wrapped env with a fresh iterator."""
        return CycleOverBenchmarksIterator(self.env.fork(), self.make_benchmark_iterator)


class RandomOrderBenchmarks(IterateOverBenchmarks):
    """Each reset() starts a benchmark drawn uniformly from `benchmarks`
    (read whole at construction) with `rng` (a numpy Generator, or a seed)."""

    def __init__(self, env: Any, benchmarks: Any, rng: Any = None) -> None:
        self._all_benchmarks = list(benchmarks)
        if not self._all_benchmarks:
            raise InvalidArgument("RandomOrderBenchmarks needs at least one benchmark")
        if not isinstance(rng, np.random.Generator):
            rng = np.random.default_rng(rng)
        self._rng = rng
        draws = (self._all_benchmarks[int(rng.integers(len(self._all_benchmarks)))]
                 for _ in itertools.count())
        super().__init__(env, draws)

    def fork(self) -> Any:
        """A fork of the wrapped env drawing with a generator seeded from this one's."""
        seed = int(self._rng.integers(2**63))
        rng = np.random.default_rng(seed)
        return RandomOrderBenchmarks(self.env.fork(), self._all_benchmarks, rng)


class CommandlineSpace(NamedDiscreteBase):
    """A named discrete action space built by a wrapper from another one's
    choices (CompilerGym's Commandline): n, names, flags, index(), sample()."""

    kind = "named_discrete"

    def __init__(self, name: Any, names: Any, flags: Any, seed: Any = None) -> None:
        if len(names) != len(flags):
            raise InvalidArgument("a commandline space needs as many flags as names")
        self.name = name
        self._names = list(names)
        self._flags = list(flags)
        self._index: Dict[Any, int] = {}
        for i, (n, f) in enumerate(zip(self._names, self._flags)):
            self._index.setdefault(n, i)
            self._index.setdefault(f, i)
        self._rng = np.random.default_rng(seed)

    @property
    def n(self) -> Any:
        """How many choices."""
        return len(self._names)

    @property
    def names(self) -> Any:
        """Each choice's name."""
        return list(self._names)

    @property
    def flags(self) -> Any:
        """Each choice's command-line flag."""
        return list(self._flags)

    @property
    def dtype(self) -> Any:
        """int64, as gym's Discrete."""
        return np.dtype(np.int64)

    @property
    def shape(self) -> Any:
        """(), as gym's Discrete."""
        return ()

    def index(self, name: Any) -> Any:
        """The index of the choice with this name or flag; kiln.NotFound otherwise."""
        try:
            return self._index[name]
        except (KeyError, TypeError):
            raise NotFound(
                f"action space '{self.name}' has no choice named {name!r} ({self.n} choices)"
            ) from None

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return self.index(key)
        if not isinstance(key, (int, np.integer)) or not 0 <= key < self.n:
            raise InvalidArgument(f"choice {key!r} is out of range [0, {self.n}) of '{self.name}'")
        return self._names[key]

    def __len__(self) -> int:
        return self.n

    def contains(self, value: Any) -> bool:
        """Whether `value` is a choice index of this space."""
        return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and (
            0 <= value < self.n
        )

    def __contains__(self, value: Any) -> bool:
        return self.contains(value)

    def seed(self, seed: Any = None) -> Any:
        """Seeds sample()."""
        self._rng = np.random.default_rng(seed)
        return seed

    def sample(self) -> Any:
        """A uniformly random choice index."""
        return int(self._rng.integers(self.n))

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, CommandlineSpace):
            return NotImplemented
        return (self.name, self._names, self._flags) == (other.name, other._names, other._flags)

    def __hash__(self) -> int:
        return hash((self.name, self.n))

    def __repr__(self) -> str:
        return f"CommandlineSpace({self.name!r}, n={self.n})"


def _names_and_flags(space: Any) -> Any:
    names = list(space.names)
    if not names:
        raise TypeError(f"action space '{space.name}' is not a commandline (named) space")
    # A choice without a flag (alias) gets CompilerGym's form of its name.
    flags = list(getattr(space, "flags", None) or [])
    if len(flags) != len(names):
        flags = [""] * len(names)
    return names, [flag or f"-{name}" for name, flag in zip(names, flags)]


def _as_index(space: Any, action: Any) -> Any:
    if isinstance(action, str):
        return space.index(action)
    if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
        return int(action)
    raise InvalidArgument(f"an action is a choice index or name, got {type(action).__name__}")


class CommandlineWithTerminalAction(EnvWrapper):
    """Adds a last action, `terminal` (default "end-of-episode"), that ends the
    episode: a step with it applies what came before it, nothing after, and
    says info["terminal_action"] = True."""

    def __init__(self, env: Any, terminal: Any = "end-of-episode",
                 terminal_flag: Any = "# end-of-episode") -> None:
        super().__init__(env)
        names, flags = _names_and_flags(env.action_space)
        self.action_space = CommandlineSpace(
            f"{type(self).__name__}<{env.action_space.name}>",
            names + [terminal],
            flags + [terminal_flag],
        )
        self._terminal = terminal
        self._terminal_flag = terminal_flag

    @property
    def terminal_action(self) -> Any:
        """The index of the action that ends the episode (the last)."""
        return self.action_space.n - 1

    def multistep(self, actions: Any, *args: Any, **kwargs: Any) -> Any:
        """Applies the actions before the terminal one; that one ends the episode."""
        indices = [_as_index(self.action_space, a) for a in actions]
        terminal = self.terminal_action
        ends = terminal in indices
        if ends:
            indices = indices[: indices.index(terminal)]
        result = self.env.multistep(indices, *args, **kwargs)
        return _mark_done(result, info_key="terminal_action") if ends else result

    def fork(self) -> Any:
        """The same wrapper over a fork of the wrapped env."""
        return CommandlineWithTerminalAction(self.env.fork(), self._terminal, self._terminal_flag)


class ConstrainedCommandline(EnvWrapper):
    """Only the passes named in `flags` (pass names or flags of the wrapped
    action space), re-numbered 0..len(flags)-1; env.actions says them in
    the new numbering."""

    def __init__(self, env: Any, flags: Any, name: Any = None) -> None:
        super().__init__(env)
        flags = list(flags)
        if not flags:
            raise TypeError("ConstrainedCommandline needs at least one flag")
        inner = env.action_space
        names, inner_flags = _names_and_flags(inner)
        self._flags = flags
        self._forward = [_as_index(inner, f) for f in flags]
        self._reverse = {v: i for i, v in enumerate(self._forward)}
        self.action_space = CommandlineSpace(
            f"{type(self).__name__}<{name or inner.name}, {len(flags)}>",
            [names[a] for a in self._forward],
            [inner_flags[a] for a in self._forward],
        )
        self._name = name

    def action(self, action: Any) -> Any:
        """This space's action(s) -> the wrapped space's."""
        if isinstance(action, (list, tuple)):
            return [self.action(a) for a in action]
        index = _as_index(self.action_space, action)
        if not 0 <= index < len(self._forward):
            raise InvalidArgument(
                f"action {action!r} is out of range [0, {len(self._forward)}) of "
                f"'{self.action_space.name}'"
            )
        return self._forward[index]

    def reverse_action(self, action: Any) -> Any:
        """The wrapped space's action(s) -> this space's."""
        if isinstance(action, (list, tuple)):
            return [self.reverse_action(a) for a in action]
        try:
            return self._reverse[int(action)]
        except KeyError:
            raise InvalidArgument(
                f"action {action} of the wrapped space is not one of this constrained space's"
            ) from None

    @property
    def actions(self) -> Any:
        """The episode's actions in this space's numbering."""
        return self.reverse_action(list(self.env.actions))

    def multistep(self, actions: Any, *args: Any, **kwargs: Any) -> Any:
        """The wrapped env's multistep of the actions translated to its space."""
        return self.env.multistep([self.action(a) for a in actions], *args, **kwargs)

    def fork(self) -> Any:
        """The same wrapper over a fork of the wrapped env."""
        return ConstrainedCommandline(self.env.fork(), self._flags, self._name)


class ForkOnStep(EnvWrapper):
    """Forks the env before every step and keeps the forks on `stack`, so that
    undo() goes back one step (as many times as there were steps)."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.stack: List[Any] = []

    def _drop_stack(self) -> None:
        stack, self.stack = self.stack, []
        for env in stack:
            env.close()

    def undo(self) -> Any:
        """Back to the state before the last step; returns the env now wrapped
        (the current one when there is nothing to undo)."""
        if not self.stack:
            return self.env
        self.env.close()
        object.__setattr__(self, "env", self.stack.pop())
        return self.env

    def reset(self, *args: Any, **kwargs: Any) -> Any:
        """Drops the forks kept for undo() and starts an episode."""
        self._drop_stack()
        return self.env.reset(*args, **kwargs)

    def multistep(self, actions: Any, *args: Any, **kwargs: Any) -> Any:
        """Keeps a fork of the env as it is, then steps it."""
        self.stack.append(self.env.fork())
        return self.env.multistep(actions, *args, **kwargs)

    def fork(self) -> Any:
        """Refused: fork the wrapped env instead."""
        raise NotImplementedError(
            "ForkOnStep cannot be forked: fork the env it wraps (env.env.fork()) instead"
        )

    def close(self) -> None:
        """Closes the forks kept for undo() and the wrapped env."""
        self._drop_stack()
        self.env.close()


class Counter(EnvWrapper):
    """Counts the calls to close, fork, reset and step (a multistep is one
    step call) in `counters`; reset() does not clear them."""

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        self.counters = {"close": 0, "fork": 0, "reset": 0, "step": 0}

    def close(self) -> None:
        """Counts the call, then closes the wrapped env."""
        self.counters["close"] += 1
        self.env.close()

    def reset(self, *args: Any, **kwargs: Any) -> Any:
        """Counts the call, then resets the wrapped env."""
        self.counters["reset"] += 1
        return self.env.reset(*args, **kwargs)

    def step(self, action: Any, *args: Any, **kwargs: Any) -> Any:
        """Counts the call, then steps the wrapped env."""
        self.counters["step"] += 1
        return self.env.multistep([action], *args, **kwargs)

    def multistep(self, actions: Any, *args: Any, **kwargs: Any) -> Any:
        """Counts the call (one for all its actions), then steps the wrapped env."""
        self.counters["step"] += 1
        return self.env.multistep(actions, *args, **kwargs)

    def fork(self) -> Any:
        """Counts the call; the fork counts its own calls from zero."""
        self.counters["fork"] += 1
        return Counter(self.env.fork())



class _Unsupported(EnvWrapper):
    """A wrapper CompilerGym had and kiln cannot give: importing it works (a
    script's imports run), making one raises NotImplementedError saying why."""

    WHY = ""

    def __init__(self, env: Any, *args: Any, **kwargs: Any) -> None:  # noqa: ARG002
        raise NotImplementedError(f"compiler_gym.wrappers.{type(self).__name__} is not "
                                  f"available on kiln: {self.WHY}")


class RuntimePointEstimateReward(_Unsupported):
    """CompilerGym's reward of a point estimate of the Runtime observation."""

    WHY = ("it sets the Runtime observation's warm-up and run counts "
           "(env.runtime_observation_count), and kiln runs the program as many times as the "
           "benchmark's run spec says")


class SynchronousSqliteLogger(_Unsupported):
    """CompilerGym's sqlite log of every step."""

    WHY = ("not carried over from CompilerGym: record episodes with "
           "CompilerEnvStateWriter (CompilerGym's states CSV) or kiln eval")


__all__ = [
    "EnvWrapper",
    "CompilerEnvWrapper",
    "ActionWrapper",
    "ObservationWrapper",
    "RewardWrapper",
    "ValidateBenchmarkAfterEveryStep",
    "TimeLimit",
    "IterateOverBenchmarks",
    "CycleOverBenchmarks",
    "CycleOverBenchmarksIterator",
    "RandomOrderBenchmarks",
    "CommandlineSpace",
    "CommandlineWithTerminalAction",
    "ConstrainedCommandline",
    "ForkOnStep",
    "Counter",
    "RuntimePointEstimateReward",
    "SynchronousSqliteLogger",
]
