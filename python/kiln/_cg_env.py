"""The compatibility env: a kiln.Env with CompilerGym v0.2.5's LlvmEnv API
(kiln.compiler_gym.make makes one). Rewards are computed here from the
costs kiln's worker reports, with CompilerGym's scaling; everything else
is kiln's session."""

import math
import time
import warnings
from collections.abc import Iterable as _Iterable
from typing import Any, Dict, Iterable, List, Optional, Tuple

import numpy as np

from . import _cg_commandline
from ._cg_errors import ServiceIsClosed, SessionNotFound, ValidationError
from ._cg_space import Commandline
from ._cg_extras import Extras
from ._cg_validation import ValidationResult, check_semantics, replayed
from ._cg_views import CompilerEnv, _Views
from ._compiler_gym_names import (
    _BASELINE_PREFIX,
    _check_observation,
    _check_reward,
    _DERIVED_OBSERVATIONS,
    _ENV_IDS,
    _REWARDS,
    _SAME_OBSERVATIONS,
    _translate,
    _unsupported,
    Benchmark,
    COMPILER_GYM_ENVS,
    Datasets,
    ObservationSpaceSpec,
    Reward,
)
from .benchmarks import Benchmark as KilnBenchmark
from .env import make as _make_kiln_env
from .errors import CompileError, SessionLost
from .state import CompilerGymEnvState

_UNCHANGED = object()  # reset()'s default for the spaces: keep the current one
VERSION = "0.2.5+kiln"


class EnvSpec:
    """env.spec as gym's: the env id and the arguments make() had
    (`_kwargs`, which a script may change), and make() for another such env."""

    def __init__(self, env_id: str, kwargs: Dict[str, Any]) -> None:
        self.id = env_id
        self._kwargs = dict(kwargs)

    def make(self, **overrides: Any) -> "CompilerGymEnv":
        """A new env of this id with these arguments (and `overrides`)."""
        return make_env(self.id, **{**self._kwargs, **overrides})

    def __repr__(self) -> str:
        return f"EnvSpec({self.id})"


def _uri(benchmark: Any) -> Optional[str]:
    """The URI of a benchmark given as a URI, a Benchmark or kiln's own."""
    return None if benchmark is None else str(getattr(benchmark, "uri", benchmark))


class CompilerGymEnv(CompilerEnv, Extras):
    """A kiln.Env with CompilerGym's LlvmEnv API. Made by make()."""

    metadata = {"render.modes": ["human", "ansi"]}

    def __init__(self, kiln_env: Any, env_id: str, observation_space: Any,
                 reward_space: Any, make_kwargs: Optional[Dict[str, Any]] = None) -> None:
        self._env = kiln_env
        self._closed = False
        self._observation: Optional[str] = None
        self._reward: Optional[Reward] = None
        self._costs: Dict[str, int] = {}  # reward name -> its cost when it was last computed
        self._baselines: Dict[str, Dict[str, int]] = {}  # benchmark -> {observation: value}
        self._last_step_cost: Optional[int] = None  # the active reward's cost now
        self._initial_ir: Optional[int] = None
        self._episode_start: Optional[float] = None
        self._datasets: Optional[Datasets] = None
        # The benchmark of the next reset(): a URI, or kiln's own Benchmark
        # (a program of the user's, its bitcode with it).
        self._next_benchmark: Any = None
        self._in_use: Any = None  # the benchmark env.benchmark names
        self._next_action_space: Optional[str] = None
        self.episode_reward: Optional[float] = None
        self.spec = EnvSpec(env_id, make_kwargs or {})
        self.reward_range: Tuple[float, float] = (-np.inf, np.inf)
        kiln_spaces = kiln_env.observation_spaces
        self._derived: Dict[str, Tuple[str, Any]] = {}  # id -> (base id, translate)
        self.observation = _Views(self._observe, {
            n: ObservationSpaceSpec(n, kiln_spaces[_DERIVED_OBSERVATIONS.get(n, n)])
            for n in (*_SAME_OBSERVATIONS, *_DERIVED_OBSERVATIONS)
            if _DERIVED_OBSERVATIONS.get(n, n) in kiln_spaces},
            check=_check_observation, derive=self._add_derived)
        self.reward = _Views(self._reward_now, {n: Reward(n) for n in _REWARDS},
                             check=_check_reward)
        self.observation_space = observation_space
        self.reward_space = reward_space

    # --- spaces -----------------------------------------------------------------------
    @property
    def action_space(self) -> Commandline:
        """The action space: flags as names, to_string(), sample() ..."""
        return Commandline(self._env.action_space)

    @action_space.setter
    def action_space(self, name: Any) -> None:
        # kiln picks an action space when a session starts: the next reset().
        self._next_action_space = getattr(name, "name", name)

    @property
    def action_spaces(self) -> List[Commandline]:
        """Every action space ("PassesAll", "PassesAndPipelines")."""
        return [Commandline(space) for space in self._env.action_spaces]

    @property
    def observation_space_spec(self) -> Optional[ObservationSpaceSpec]:
        """The spec of the observation reset() and step() return, or None."""
        if self._observation is None:
            return None
        return self.observation.spaces[self._observation]

    @observation_space_spec.setter
    def observation_space_spec(self, spec: Any) -> None:
        self.observation_space = spec

    @property
    def observation_space(self) -> Any:
        """The space of the observation reset() and step() return, or None."""
        spec = self.observation_space_spec
        return spec.space if spec is not None else None

    @observation_space.setter
    def observation_space(self, name: Any) -> None:
        name = getattr(name, "id", name)
        if name:
            if name not in self._derived:
                _check_observation(name)
            if name not in self.observation.spaces:
                raise LookupError(f"Observation space not found: {name}")
        self._observation = name or None
        self._env.observation_space = self._kiln_name(name) if name else None

    def _add_derived(self, name: str, base: str, space: Any, translate: Any) -> None:
        if base not in self.observation.spaces:
            raise LookupError(f"Observation space not found: {base}")
        self._derived[name] = (base, translate)
        self.observation.spaces[name] = ObservationSpaceSpec(name, space)

    def _kiln_name(self, name: str) -> str:
        """The kiln observation that observation `name` is computed from."""
        while name in self._derived:
            name = self._derived[name][0]
        return _DERIVED_OBSERVATIONS.get(name, name)

    def _value(self, name: str, raw: Any) -> Any:
        """Observation `name` from the raw value of its kiln observation."""
        if name in self._derived:
            base, translate = self._derived[name]
            return translate(self._value(base, raw))
        return _translate(name, raw)

    @property
    def reward_space_spec(self) -> Optional[Reward]:
        """The reward step() returns, or None."""
        return self._reward

    @reward_space_spec.setter
    def reward_space_spec(self, reward: Any) -> None:
        self.reward_space = reward

    @property
    def reward_space(self) -> Optional[Reward]:
        """The reward step() returns, or None."""
        return self._reward

    @reward_space.setter
    def reward_space(self, name: Any) -> None:
        name = getattr(name, "name", name)
        if not name:
            self._reward, self.reward_range = None, (-np.inf, np.inf)
            self._env.reward_space = None
            return
        _check_reward(name)
        if self._reward is not None and self._reward.name == name:
            return  # unchanged: the episode's reward goes on
        self._reward = Reward(name)
        self.reward_range = self._reward.reward_range
        # kiln reports the cost's drop with each step; the reward is made here.
        self._env.reward_space = self._reward.cost_observation
        if self.in_episode:
            # A new reward counts from now, and the episode's reward restarts.
            cost = self._env.observation[self._reward.cost_observation]
            self._last_step_cost = cost
            self._costs[name] = cost
            self.episode_reward = 0.0

    # --- episode ---------------------------------------------------------------------------
    @property
    def benchmark(self) -> Optional[Benchmark]:
        """The benchmark of the episode (the next one's before the first
        reset()); a new one set here takes effect at the next reset()."""
        uri = _uri(self._in_use or self._env.benchmark)
        return Benchmark(uri) if uri else None

    @benchmark.setter
    def benchmark(self, benchmark: Any) -> None:
        if self.in_episode:
            warnings.warn("Changing the benchmark has no effect until reset() is called")
        self._next_benchmark = self._checked(benchmark)

    def _checked(self, benchmark: Any) -> Any:
        """A URI checked against kiln's datasets, or kiln's own Benchmark."""
        if isinstance(benchmark, KilnBenchmark):
            return benchmark
        if not isinstance(benchmark, (str, Benchmark)):
            raise TypeError(f"Expected a Benchmark or str, received: '{type(benchmark).__name__}'")
        return self.datasets.benchmark(benchmark).uri

    @property
    def datasets(self) -> Datasets:
        """kiln's datasets with CompilerGym's accessors."""
        if self._datasets is None:
            self._check_open()
            self._datasets = Datasets(self._env.datasets, self.spec._kwargs.get("cluster"))
        return self._datasets

    @property
    def in_episode(self) -> bool:
        """Whether reset() started an episode that is still going."""
        return bool(self._env.in_episode)

    @property
    def actions(self) -> List[int]:
        """The actions of the episode so far (kept after close())."""
        return list(getattr(self._env, "actions", None) or [])

    @property
    def episode_walltime(self) -> float:
        """Seconds since reset()."""
        return 0.0 if self._episode_start is None else time.monotonic() - self._episode_start

    @property
    def version(self) -> str:
        """kiln.compiler_gym's version: CompilerGym's it follows, +kiln."""
        return VERSION

    @property
    def compiler_version(self) -> str:
        """The worker's compiler, e.g. "LLVM 19.1.7 (pass table 3f2a...)"."""
        if not self.in_episode:
            self.reset()
        return str(self._env.compiler_version)

    @property
    def service(self) -> Any:
        """What CompilerGym called the service connection: kiln's env while
        this env is open, None once it is closed."""
        return None if self._closed else self._env

    @property
    def unwrapped(self) -> "CompilerGymEnv":
        """This env (wrappers answer their innermost env)."""
        return self

    def reset(self, benchmark: Any = None, action_space: Any = None,
              reward_space: Any = _UNCHANGED, observation_space: Any = _UNCHANGED,
              timeout: float = 300, **kwargs: Any) -> Any:
        """Starts an episode; returns the observation (None without an
        observation space). A benchmark given here is used by every later
        reset() too; reward_space / observation_space None unset them."""
        del timeout  # kiln's timeout is the env's (make(timeout=...))
        if kwargs:
            _unsupported(f"reset({', '.join(kwargs)}=...)", "kiln's reset takes none of these")
        self._check_open()
        if observation_space is not _UNCHANGED:
            self.observation_space = observation_space
        if reward_space is not _UNCHANGED:
            self.reward_space = reward_space
        if benchmark is not None:
            self._next_benchmark = self._checked(benchmark)
        action_space = getattr(action_space, "name", action_space) or self._next_action_space
        observation, _ = self._env.reset(benchmark=self._next_benchmark,
                                         action_space=action_space)
        self._next_action_space = None
        self._in_use = self._env.benchmark
        self._episode_start = time.monotonic()
        self._initial_ir = self._env.observation["IrInstructionCount"]
        self._costs = {}
        self.episode_reward = 0.0 if self._reward else None
        if self._reward:
            self._last_step_cost = self._start_cost(self._reward)
            self._costs[self._reward.name] = self._last_step_cost
        return self._value(self._observation, observation) if self._observation else None

    def _baseline(self, name: str) -> int:
        values = self._baselines.setdefault(self._env.benchmark, {})
        if name not in values:
            values[name] = self._env.observation[name]
        return values[name]

    def _start_cost(self, reward: Reward) -> int:
        """The cost at the start of the episode, as kiln's worker counts it."""
        if reward.cost_observation == "IrInstructionCount":
            return int(self._initial_ir or 0)
        return self._baseline("ObjectTextSizeO0")

    def _scale(self, reward: Reward) -> float:
        prefix = _BASELINE_PREFIX[reward.cost_observation]
        if reward.baseline == "":
            return 1.0
        o0 = self._baseline(f"{prefix}O0")
        if reward.baseline == "Norm":
            return float(max(o0, 1))
        return float(max(o0 - self._baseline(f"{prefix}{reward.baseline}"), 1))

    def _reward_from(self, reward: Reward, cost: int) -> float:
        previous = self._costs.get(reward.name)
        if previous is None:
            previous = self._start_cost(reward)
        self._costs[reward.name] = cost
        return (previous - cost) / self._scale(reward)

    def _reward_now(self, name: str) -> float:
        self._check_episode()
        reward = Reward(_check_reward(name))
        return self._reward_from(reward, self._env.observation[reward.cost_observation])

    def _observe(self, name: str) -> Any:
        self._check_episode()
        if name not in self._derived:
            _check_observation(name)
        return self._value(name, self._env.observation[self._kiln_name(name)])

    def _check_open(self) -> None:
        if self._closed:
            raise ServiceIsClosed("this env was closed (env.close()): make a new one")

    def _check_episode(self) -> None:
        self._check_open()
        if not self.in_episode:
            raise SessionNotFound("Must call reset() before step()")

    def _check_record(self) -> None:
        """The episode's record (benchmark, actions, reward) is kept here, so
        it stays readable after close(), as CompilerGym's state was (its
        random_search returns the closed env of the best actions)."""
        if not (self._closed and self._episode_start is not None):
            self._check_episode()

    def step(self, action: Any, observation_spaces: Any = None, reward_spaces: Any = None,
             observations: Any = None, rewards: Any = None, timeout: float = 300,
             **kwargs: Any) -> Tuple[Any, Any, bool, Dict[str, Any]]:
        """(observation, reward, done, info) after one action."""
        if isinstance(action, _Iterable) and not isinstance(action, str):
            warnings.warn("Argument `action` of CompilerEnv.step no longer accepts a list of "
                          "actions. Please use CompilerEnv.multistep instead",
                          category=DeprecationWarning)
            return self.multistep(action, observation_spaces, reward_spaces, observations,
                                  rewards, timeout, **kwargs)
        return self.multistep([action], observation_spaces, reward_spaces, observations,
                              rewards, timeout, **kwargs)

    def multistep(self, actions: Iterable[Any], observation_spaces: Any = None,
                  reward_spaces: Any = None, observations: Any = None, rewards: Any = None,
                  timeout: float = 300, **kwargs: Any) -> Tuple[Any, Any, bool, Dict[str, Any]]:
        """(observation, reward, done, info) after applying `actions` in one
        round trip; with observation_spaces / reward_spaces, lists of those."""
        del timeout
        if kwargs:
            _unsupported(f"step({', '.join(kwargs)}=...)", "kiln's step takes none of these")
        if observations is not None:
            warnings.warn("Argument `observations` of CompilerEnv.multistep has been renamed "
                          "`observation_spaces`. Please update your code",
                          category=DeprecationWarning)
            observation_spaces = observations
        if rewards is not None:
            warnings.warn("Argument `rewards` of CompilerEnv.multistep has been renamed "
                          "`reward_spaces`. Please update your code", category=DeprecationWarning)
            reward_spaces = rewards
        self._check_open()
        if getattr(self._env, "_closed", False):  # its service closed under it
            return self._ended_by(ServiceIsClosed("the session's env (env.service) was closed"))
        self._check_episode()
        actions = [self.action_space.index(a) if isinstance(a, str) else a for a in actions]
        try:
            observation, drop, done, _, kiln_info = self._env.multistep(actions)
        except (CompileError, SessionLost) as error:
            return self._ended_by(error)
        reward = None
        if self._reward is not None:
            # kiln's worker reward space of the cost (Reward:IrInstructionCount,
            # Reward:ObjectTextSizeBytes) is its drop since the previous step.
            cost = int(self._last_step_cost or 0) - int(round(drop))
            self._last_step_cost = cost
            if reward_spaces is None:
                # With reward_spaces, as CompilerGym, the env's own reward is
                # not taken: its next one covers this step too.
                reward = self._reward_from(self._reward, cost)
                self.episode_reward = (self.episode_reward or 0.0) + reward
        info = {
            "action_had_no_effect": kiln_info["action_had_no_effect"],
            "new_action_space": kiln_info["new_action_space"] is not None,
            "restored": kiln_info.get("restored", False),
        }
        if observation_spaces is not None or reward_spaces is not None:
            observed = [self.observation[n] for n in observation_spaces or []]
            rewarded = [self.reward[getattr(n, "name", n)] for n in reward_spaces or []]
            return observed, rewarded, done, info
        observation = self._value(self._observation, observation) if self._observation else None
        return observation, reward, done, info

    def _ended_by(self, error: BaseException) -> Tuple[Any, Any, bool, Dict[str, Any]]:
        """The step result when the session failed: done, the reward space's
        reward on error (CompilerGym's: its default value, less the
        episode's reward when it negates returns)."""
        info: Dict[str, Any] = {"error_type": type(error).__name__, "error_details": str(error)}
        reward = None
        if self._reward is not None:
            reward = self._reward.default_value
            if self._reward.default_negates_returns:
                reward -= self.episode_reward or 0.0
        return None, reward, True, info

    # --- states -----------------------------------------------------------------------------
    def commandline(self, textformat: bool = False) -> str:
        """An opt-19 command line that makes the current IR from the
        benchmark's: one `opt-19 -passes=<action's pipeline>` per action,
        chained through pipes (see docs/evaluation.md for why)."""
        self._check_record()
        pipelines = self.action_space.pipelines
        return _cg_commandline.format_commandline(
            [pipelines[a] for a in self._env.actions], textformat)

    def commandline_to_actions(self, commandline: str) -> List[int]:
        """The actions of a command line that commandline() printed (or
        CompilerGym's "opt -flag ... input.bc -o output.bc")."""
        return _cg_commandline.parse_commandline(commandline, self.action_space)

    @property
    def state(self) -> CompilerGymEnvState:
        """The episode: benchmark, commandline() of its actions, walltime, reward
        (also after close())."""
        self._check_record()
        return CompilerGymEnvState(
            benchmark=str(self._env.benchmark),
            commandline=self.commandline(),
            walltime=self.episode_walltime,
            reward=self.episode_reward,
        )

    def apply(self, state: Any) -> None:
        """Applies the actions of `state` to the episode, as CompilerGym;
        a new episode on the state's benchmark if none is going, or (with
        CompilerGym's warning) if the episode is on another benchmark, where
        CompilerGym applied the actions to the wrong program. ValueError if
        the actions end the episode."""
        self._check_open()
        if self.in_episode and self.benchmark != state.benchmark:
            warnings.warn(f"Applying state from environment for benchmark '{state.benchmark}' "
                          f"to environment for benchmark '{self.benchmark}'")
        if not self.in_episode or self.benchmark != state.benchmark:
            self.reset(benchmark=state.benchmark)
        actions = self.commandline_to_actions(state.commandline)
        if not actions:
            return
        _, _, done, info = self.multistep(actions)
        if done:
            raise ValueError(f"Environment terminated with error: `{info.get('error_details')}`")

    def validate(self, state: Any = None) -> ValidationResult:
        """Replays `state` (default: the current one) in a fresh episode of a
        fork and checks it: the replay, the reward it claims (when this env
        has a reward space) and the program's behaviour on the benchmark's
        inputs against the unoptimized program's (kiln's env.validate())."""
        if state is not None:
            self.reset(benchmark=state.benchmark)
        else:
            state = self.state
        start = time.time()
        found: Dict[str, Any] = {"errors": []}
        replay = self.fork()
        try:
            replay.reset(benchmark=state.benchmark)
            if replayed(replay, state, found):
                self._check_reward(replay, state, found)
                check_semantics(replay, found)
        finally:
            replay.close()
        return ValidationResult(state=state, walltime=time.time() - start, **found)

    def _check_reward(self, replay: "CompilerGymEnv", state: Any, found: Dict[str, Any]) -> None:
        if state.reward is None:
            return
        if self.reward_space is None:
            warnings.warn("Validating state with reward, but environment has no reward space set")
            return
        if not self.reward_space.deterministic:
            return
        found["reward_validated"] = True
        actual = replay.episode_reward
        if actual is None or not math.isclose(state.reward, actual, rel_tol=1e-5,
                                              abs_tol=1e-10):
            found["reward_validation_failed"] = True
            found["errors"].append(ValidationError(
                type=f"Expected reward {state.reward} but received reward {actual}",
                data={"expected_reward": state.reward, "actual_reward": actual}))

    @property
    def ir(self) -> str:
        """The module's IR text (env.observation["Ir"])."""
        return str(self.observation["Ir"])

    @property
    def ir_sha1(self) -> str:
        """The SHA-1 of the module's IR text (env.observation["IrSha1"])."""
        return str(self.observation["IrSha1"])

    def write_ir(self, path: Any) -> Any:
        """Writes the IR text to `path`; returns the path."""
        with open(path, "w", encoding="utf-8") as out:
            out.write(self.observation["Ir"])
        return path

    def write_bitcode(self, path: Any) -> Any:
        """Writes the bitcode to `path`; returns the path."""
        self._check_episode()
        with open(path, "wb") as out:
            out.write(self._env.observation["Bitcode"])
        return path

    def render(self, mode: str = "human") -> Optional[str]:
        """Prints the observation ("human") or returns it as text ("ansi")."""
        if self._observation is None:
            raise ValueError("Cannot call render() when no observation space is used")
        value = self.observation[self._observation]
        if mode == "ansi":
            return str(value)
        if mode != "human":
            raise ValueError(f"Invalid mode: {mode}")
        print(value)
        return None

    # --- lifecycle -------------------------------------------------------------------------------
    def fork(self) -> "CompilerGymEnv":
        """A new env in this one's state (kiln forks the session on its worker)."""
        if self._closed:
            return self._fork_closed()
        if not self.in_episode:
            self.reset()
        child = CompilerGymEnv.__new__(CompilerGymEnv)
        child.__dict__.update(self.__dict__)
        child._env = self._env.fork()
        child._costs = dict(self._costs)
        child._datasets = None
        child.spec = EnvSpec(self.spec.id, self.spec._kwargs)
        child._derived = dict(self._derived)
        child.observation = _Views(child._observe, dict(self.observation.spaces),
                                   check=_check_observation, derive=child._add_derived)
        child.reward = _Views(child._reward_now, dict(self.reward.spaces), check=_check_reward)
        return child

    def __copy__(self) -> "CompilerGymEnv":
        """TypeError, as CompilerGym's (in its words): a shallow copy would
        share one session between two envs."""
        raise TypeError("ClientServiceCompilerEnv instances do not support shallow copies. "
                        "Use deepcopy()")

    def __deepcopy__(self, memo: Dict[int, Any]) -> "CompilerGymEnv":
        """fork(), as CompilerGym's: an independent env in this one's state."""
        del memo
        return self.fork()

    def _fork_closed(self) -> "CompilerGymEnv":
        """A closed env's fork, as CompilerGym's: a new env (a new session)
        on the benchmark, its actions replayed."""
        child = self.spec.make(benchmark=None, observation_space=self._observation,
                               reward_space=self._reward.name if self._reward else None)
        try:
            child.reset(benchmark=self._in_use or self._next_benchmark)
            actions = list(self._env.actions)
            if actions:
                child.multistep(actions)
            child.episode_reward = self.episode_reward
            return child
        except BaseException:
            child.close()
            raise

    def close(self) -> None:
        """Ends the session; later calls raise ServiceIsClosed."""
        if not self._closed:
            self._closed = True
            self._env.close()

    def __enter__(self) -> "CompilerGymEnv":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<kiln.compiler_gym env {self.spec.id} on {self.benchmark}>"


LlvmEnv = CompilerGymEnv


def make_env(env_id: str, benchmark: Any = None, observation_space: Any = None,
             reward_space: Any = None, cluster: Optional[str] = None, timeout: float = 120.0,
             action_space: Any = None, **kwargs: Any) -> CompilerGymEnv:
    """kiln.compiler_gym.make's body."""
    if env_id not in _ENV_IDS:
        raise LookupError(
            f"kiln.compiler_gym has no environment {env_id!r}; "
            f"it has {', '.join(COMPILER_GYM_ENVS)}"
        )
    if kwargs:
        _unsupported(f"make({', '.join(kwargs)}=...)", "kiln's make takes none of these")
    default_observation, default_reward = _ENV_IDS[env_id]
    observation_space = observation_space or default_observation
    reward_space = reward_space or default_reward
    if observation_space is not None:
        _check_observation(getattr(observation_space, "id", observation_space))
    if reward_space is not None:
        _check_reward(getattr(reward_space, "name", reward_space))
    kiln_env = _make_kiln_env("llvm-v0", cluster=cluster, timeout=timeout,
                              observation_space=None, reward_space=None,
                              action_space=getattr(action_space, "name", action_space))
    make_kwargs = {"benchmark": benchmark, "observation_space": observation_space,
                   "reward_space": reward_space, "cluster": cluster, "timeout": timeout,
                   "action_space": action_space}
    try:
        env = CompilerGymEnv(kiln_env, env_id, observation_space, reward_space, make_kwargs)
        if benchmark is not None:
            env.benchmark = benchmark
            env._in_use = env._next_benchmark  # as CompilerGym: named before the first reset
        return env
    except BaseException:
        kiln_env.close()
        raise


__all__ = ["CompilerEnv", "CompilerGymEnv", "EnvSpec", "LlvmEnv", "make_env"]
