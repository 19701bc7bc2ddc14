"""Gym-style environments over kiln sessions.

An Env owns one session at a time on its cluster: reset() starts one on a
benchmark, step()/multistep() apply actions in one round trip each and bring
back the observation and the reward, fork() copies the session on its worker.
An Env is used from one thread at a time (as a gym env); separate envs may run
in separate threads, and their blocking calls do not hold the GIL. A fork
shares its parent's client, which serves one call at a time: forks may be
used from separate threads, but their requests take turns (an env made with
kiln.make in each thread steps in parallel).

With gymnasium importable, an Env is a gymnasium.Env (its spaces gymnasium's,
see kiln.spaces): gymnasium's checker, its wrappers and the libraries that
take a gymnasium env (Stable-Baselines3, ...) take a kiln env as it is.
"""

from __future__ import annotations

import atexit
import copy
import os
import shlex
import time
import weakref
from typing import Any, Optional, Union

import numpy as np

from ._closing import Closing
from ._gymnasium import EnvBase
from . import _kiln, registry
from . import cluster as cluster_module
from .benchmarks import Benchmark
from .datasets import Datasets
from .errors import (
    FAULT_REASONS,
    CompileError,
    InvalidArgument,
    KilnError,
    NotFound,
    SessionLost,
    Timeout,
    Unimplemented,
)
from .spaces import Space, carry_rng, from_raw, no_observation
from .state import CompilerEnvState, find_action, parse_commandline
from .validation import ValidationError, ValidationResult

_DEFAULT = object()
_REWARD_PREFIX = "Reward:"
# Observation kinds whose change between steps can serve as a reward.
_NUMERIC_SCALARS = ("int64", "double")

# Envs still open at exit end their sessions before the embedded cluster stops
# (atexit runs this before cluster.py's handler, registered earlier).
_LIVE_ENVS: "weakref.WeakSet[Env]" = weakref.WeakSet()


@atexit.register
def _close_live_envs():
    for env in list(_LIVE_ENVS):
        env.close()


def make(
    env_id: Union[str, registry.EnvSpec],
    cluster: Any = None,
    benchmark: Union[str, Benchmark, None] = None,
    observation_space: Any = _DEFAULT,
    reward_space: Any = _DEFAULT,
    action_space: Optional[str] = None,
    timeout: float = 60.0,
    experiment: Optional[str] = None,
    key_file: Optional[str] = None,
    experiment_key: Optional[str] = None,
    faults_as_truncation: bool = False,
) -> Env:
    """A new env of type `env_id` (see kiln.env_ids()), or of a kiln.EnvSpec
    for a session type of your own.

    cluster: None (the embedded single-node cluster, started on demand and
      stopped with the last env), "tcp://host:port" of a coordinator, or a
      kiln.LocalCluster.
    benchmark: URI used by reset() (default: the env id's own), or a
      kiln.Benchmark of your own program (kiln.make_benchmark), sent inline.
    observation_space / reward_space: a name, or None for none; default: the
      env id's. A reward space is either a worker reward space ("Reward:<name>",
      given with or without the prefix) or a numeric scalar observation space,
      whose change since the previous step is the reward.
    action_space: the name of one of the type's action spaces (env.action_spaces);
      default: the env id's, else the type's first. The llvm type has
      "PassesAll" (single passes, as CompilerGym's) and "PassesAndPipelines"
      (the same actions at the same indices, then whole pipelines).
    timeout: seconds any request may take before kiln.Timeout.
    experiment: run the env's sessions on this experiment's workers (see
      kiln.Experiment, which passes it for you).
    experiment_key: that experiment's key (32 hex digits, Experiment.key):
      the coordinator and nesting hosts act for an experiment only on it.
    key_file: the cluster key file (`kiln keygen`) of a cluster run with
      --key-file; without it such a cluster refuses with kiln.PermissionDenied.
    faults_as_truncation: a compile error, a session lost beyond restore or a
      timeout ends the episode as truncated (the last observation, reward 0,
      the reason in info["fault"]) instead of raising; reset() starts the next.
    """
    spec = registry.spec(env_id)
    if benchmark is not None:
        _check_benchmark(benchmark)
    lease = cluster_module.lease(cluster)
    try:
        client = _kiln.Client(
            lease.endpoint, timeout, experiment or "", key_file or "", experiment_key or ""
        )
        actions, observations = client.get_spaces(spec.session_type)
        return Env(
            spec=spec,
            lease=lease,
            client=client,
            raw_action_spaces=actions,
            raw_observation_spaces=observations,
            benchmark=benchmark or spec.benchmark,
            observation_space=spec.observation_space
            if observation_space is _DEFAULT
            else observation_space,
            reward_space=spec.reward_space if reward_space is _DEFAULT else reward_space,
            action_space=action_space if action_space is not None else spec.action_space,
            faults_as_truncation=bool(faults_as_truncation),
        )
    except BaseException:
        lease.release()
        raise


def session_types(cluster: Any = None, timeout: float = 60.0,
                  key_file: Optional[str] = None) -> list[str]:
    """The session types the cluster's workers host (e.g. ['llvm', 'noop'])."""
    lease = cluster_module.lease(cluster)
    try:
        client = _kiln.Client(lease.endpoint, timeout, "", key_file or "")
        return sorted({t for w in client.list_cluster() for t in w["session_types"]})
    finally:
        lease.release()


def datasets(cluster: Any = None, session_type: str = "llvm", timeout: float = 60.0,
             key_file: Optional[str] = None) -> Datasets:
    """The datasets of `session_type` on the cluster (close it, or use `with`)."""
    lease = cluster_module.lease(cluster)
    try:
        client = _kiln.Client(lease.endpoint, timeout, "", key_file or "")
        return Datasets(client, session_type, on_close=lease.release)
    except BaseException:
        lease.release()
        raise


def _is_numeric_scalar(observation_spaces, name):
    space = observation_spaces.get(name)
    return space is not None and space.kind in _NUMERIC_SCALARS


def reward_space_names(observation_spaces: dict) -> list[str]:
    """Names usable as a reward space: worker reward spaces, then numeric scalars."""
    names = list(observation_spaces)
    served = [n.removeprefix(_REWARD_PREFIX) for n in names if n.startswith(_REWARD_PREFIX)]
    numeric = [
        n
        for n in names
        if not n.startswith(_REWARD_PREFIX) and _is_numeric_scalar(observation_spaces, n)
    ]
    return served + numeric


def resolve_reward_space(session_type: str, observation_spaces: dict,
                         name: Optional[str]) -> Optional[tuple[str, bool]]:
    """(observation space to fetch, is_delta) for reward space `name`, or None
    for None: a worker reward space ("Reward:<name>") is the reward itself, a
    numeric scalar observation's change since the last step is the reward."""
    if name is None:
        return None
    if not isinstance(name, str):
        raise InvalidArgument(
            f"reward space must be a name (str) or None, got {type(name).__name__}"
        )
    full = name if name.startswith(_REWARD_PREFIX) else _REWARD_PREFIX + name
    if full in observation_spaces:
        return (full, False)
    if _is_numeric_scalar(observation_spaces, name):
        return (name, True)
    raise NotFound(
        f"{session_type} has no reward space {name!r}; it has "
        f"{', '.join(reward_space_names(observation_spaces)) or 'none'}"
    )


def check_observation_name(session_type: str, observation_spaces: dict, name: Any) -> None:
    """kiln.InvalidArgument unless `name` is a str, kiln.NotFound listing
    the session type's observation spaces unless it is one of them."""
    if not isinstance(name, str):
        raise InvalidArgument(
            f"observation space must be a name (str) or None, got {type(name).__name__}"
        )
    if name not in observation_spaces:
        raise NotFound(
            f"{session_type} has no observation space {name!r}; it has "
            f"{', '.join(observation_spaces)}"
        )


def _check_benchmark(benchmark):
    if isinstance(benchmark, Benchmark):
        return
    if not isinstance(benchmark, str) or not benchmark:
        raise InvalidArgument(
            f"benchmark must be a non-empty URI string or a kiln.Benchmark, got {benchmark!r}"
        )


_RESET_OPTIONS = ("benchmark", "action_space")


def _reset_options(options, benchmark, action_space):
    """(benchmark, action_space) after gymnasium's reset options: the same
    things by name; kiln.InvalidArgument naming the ones kiln knows else."""
    if options is None:
        return benchmark, action_space
    if not isinstance(options, dict):
        raise InvalidArgument(f"reset options must be a dict, got {type(options).__name__}")
    unknown = sorted(set(options) - set(_RESET_OPTIONS))
    if unknown:
        raise InvalidArgument(
            f"unknown reset option(s) {', '.join(map(repr, unknown))}; kiln's envs take "
            f"{', '.join(_RESET_OPTIONS)}"
        )
    if benchmark is None:
        benchmark = options.get("benchmark")
    if action_space is None:
        action_space = options.get("action_space")
    return benchmark, action_space


def action_value(space: Any, action: Any) -> Any:
    """What is sent for `action` in `space`: a choice's index for its name,
    a Python int for a numpy integer or 0-d array (what learners pass)."""
    kind = space.kind
    if kind in ("discrete", "named_discrete"):
        if isinstance(action, str) and kind == "named_discrete":
            return space.index(action)
        if isinstance(action, np.ndarray) and action.ndim == 0:
            action = action.item()
        if isinstance(action, np.integer):
            return int(action)
    return action


def _benchmark_uri_and_program(benchmark):
    """(uri, inline bitcode or None): a kiln.Benchmark's bytes travel with the start."""
    if isinstance(benchmark, Benchmark):
        return benchmark.uri, benchmark.program
    return benchmark, None


class _Observations:
    """env.observation["Name"]: computes that observation now (one round trip)."""

    def __init__(self, env):
        self._env = env

    def __getitem__(self, name):
        return self._env._observe(name)


class Env(Closing, registry.SpecOwner, EnvBase):
    """One kiln session at a time, driven gym-style. Made by kiln.make().

    A gymnasium.Env when gymnasium can be imported: reset(seed=, options=)
    seeds np_random and the action space; step() returns gymnasium's five
    values (the reward 0.0 when the env has no reward space)."""

    metadata: dict[str, Any] = {"render_modes": []}
    render_mode: Optional[str] = None

    def __init__(
        self,
        *,
        spec: registry.EnvSpec,
        lease: Any,
        client: Any,
        raw_action_spaces: list,
        raw_observation_spaces: list,
        benchmark: Union[str, Benchmark],
        observation_space: Optional[str],
        reward_space: Optional[str],
        action_space: str,
        faults_as_truncation: bool = False,
    ):
        self.spec = spec
        self._faults_as_truncation = faults_as_truncation
        self._last_observation = None
        self._lease = lease
        self._client = client
        self._session: Any = None
        self._closed = False
        self._benchmark = benchmark
        self._raw_action_spaces = list(raw_action_spaces)
        self.observation_spaces = {s.name: from_raw(s) for s in raw_observation_spaces}
        self._observation_names = [s.name for s in raw_observation_spaces]
        self._no_observation = no_observation()
        self._action_space_name = action_space
        self.action_spaces = [from_raw(s) for s in self._raw_action_spaces]
        self.action_space: Any = self._initial_action_space()
        self._observation: Optional[str] = None  # name of the observation space
        # (name of the observation space, is_delta), or None
        self._reward: Optional[tuple[str, bool]] = None
        self.observation_space = observation_space
        self.reward_space = reward_space
        self._metric: Any = None  # last value of a delta reward's observation
        # The sum of the episode's rewards (None without a reward space).
        self.episode_reward: Optional[float] = None
        self.actions: list = []  # the episode's actions (indices), in order
        self._episode_start: Any = None  # time.monotonic() at reset()
        self.observation = _Observations(self)
        _LIVE_ENVS.add(self)

    # --- spaces -----------------------------------------------------------
    def _initial_action_space(self) -> Any:
        return from_raw(self._initial_raw_action_space())

    def _initial_raw_action_space(self) -> Any:
        if not self._action_space_name:
            return self._raw_action_spaces[0]
        for raw in self._raw_action_spaces:
            if raw.name == self._action_space_name:
                return raw
        names = ", ".join(s.name for s in self._raw_action_spaces)
        raise NotFound(
            f"{self.spec.session_type} has no action space {self._action_space_name!r}; "
            f"it has {names}"
        )

    def _select_action_space(self, name):
        previous = self._action_space_name
        self._action_space_name = name
        try:
            self._initial_raw_action_space()  # raises NotFound naming the spaces there are
        except NotFound:
            self._action_space_name = previous
            raise

    @property
    def observation_space(self) -> Any:
        """The space of the observation step() returns. An env that observes
        nothing (observation_space=None) has gymnasium's contract to keep:
        its space is kiln.spaces.NoObservation, whose only member is None
        (None itself without gymnasium)."""
        if self._observation:
            return self.observation_spaces[self._observation]
        return self._no_observation

    @observation_space.setter
    def observation_space(self, name: Any) -> None:
        """Selects the observation by name (or one of observation_spaces'
        spaces, or None for none)."""
        if name is not None and not isinstance(name, str):
            name = getattr(name, "name", name)  # one of this env's own spaces
        if name is not None:
            self._check_observation_name(name)
        self._observation = name

    @property
    def reward_space(self) -> Optional[str]:
        """The reward space's name, or None (step() then returns reward None)."""
        return self._reward[0].removeprefix(_REWARD_PREFIX) if self._reward else None

    @reward_space.setter
    def reward_space(self, name: Optional[str]) -> None:
        self._reward = resolve_reward_space(self.spec.session_type, self.observation_spaces, name)
        if self._reward is not None and self._session is not None:
            self._start_reward()

    @property
    def reward_spaces(self) -> list[str]:
        """Names usable as reward_space: worker reward spaces, then numeric scalars."""
        return reward_space_names(self.observation_spaces)

    def _check_observation_name(self, name):
        check_observation_name(self.spec.session_type, self.observation_spaces, name)

    def _wanted(self):
        """Observation names to fetch with each step: [observation][, reward]."""
        wanted = [self._observation] if self._observation else []
        if self._reward:
            wanted.append(self._reward[0])
        return wanted

    def _indices(self, names):
        return [self._observation_names.index(n) for n in names]

    # --- episode ----------------------------------------------------------
    @property
    def benchmark(self) -> Union[str, Benchmark]:
        """The benchmark reset() starts (the current episode's once started)."""
        return self._benchmark

    @property
    def in_episode(self) -> bool:
        """True between reset() and the episode's end (or close())."""
        return self._session is not None

    @property
    def datasets(self) -> Datasets:
        """The datasets of this env's session type (empty if it has none)."""
        self._check_open()
        return Datasets(self._client, self.spec.session_type)

    def reset(
        self,
        benchmark: Any = None,
        seed: Optional[int] = None,
        action_space: Optional[str] = None,
        options: Optional[dict] = None,
    ) -> tuple[Any, dict]:
        """Starts a new episode; returns (observation, info).

        benchmark: a URI or kiln.Benchmark for this episode and the next
          (default: the env's).
        seed: seeds np_random and the action space's sample() (gymnasium's
          reset(seed=)); episodes themselves are deterministic.
        action_space: the name of the action space to use from now on (see
          env.action_spaces; the llvm type's are "PassesAll", its default, and
          "PassesAndPipelines").
        options: gymnasium's reset(options=): {"benchmark": ..., "action_space":
          ...}, the same as the arguments of those names.
        """
        self._check_open()
        benchmark, action_space = _reset_options(options, benchmark, action_space)
        EnvBase.reset(self, seed=seed)
        if benchmark is not None:
            _check_benchmark(benchmark)
        else:
            benchmark = self._benchmark
        if action_space is not None:
            self._select_action_space(action_space)
        if seed is not None:
            self.action_space.seed(seed)
        self._end_session()
        wanted = self._wanted()
        uri, program = _benchmark_uri_and_program(benchmark)
        session = self._client.start_session(
            self.spec.session_type, uri, self._action_space_name, wanted, program
        )
        # Kept only once it started: a bad benchmark leaves the env's own in place.
        self._session, self._benchmark = session, benchmark
        raw = self._initial_raw_action_space()
        if raw != self.action_space.raw:  # a step had changed it
            self.action_space = carry_rng(self.action_space, from_raw(raw))
        values = dict(zip(wanted, session.initial_observations))
        if self._reward and self._reward[1]:
            self._metric = values[self._reward[0]]
        self.episode_reward = 0.0 if self._reward else None
        self.actions = []
        self._episode_start = time.monotonic()
        self._last_observation = values.get(self._observation)
        return self._last_observation, {"benchmark": uri}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """Applies one action: (observation, reward, terminated, truncated, info)."""
        return self.multistep([action])

    def multistep(self, actions: Any) -> tuple[Any, float, bool, bool, dict]:
        """Applies `actions` in order in one round trip; the reward covers them all."""
        self._check_session()
        if isinstance(actions, (str, bytes)) or not hasattr(actions, "__iter__"):
            raise InvalidArgument(
                f"multistep wants a list of actions, got {type(actions).__name__}"
            )
        values = [self._action_value(a) for a in actions]
        wanted = self._wanted()
        try:
            observed, ended, no_effect, new_space, applied, restored = self._session.step(
                values, self._indices(wanted), self.action_space.raw
            )
        except (SessionLost, CompileError, Timeout) as error:
            if isinstance(error, Timeout):
                self._end_session_quietly()
            self._session = None  # the worker has retired it or is gone: reset()
            if not self._faults_as_truncation:
                raise
            reward = 0.0
            reason = FAULT_REASONS[type(error).__name__]
            info = {"fault": f"{reason}: {error}", "actions_applied": 0}
            return self._last_observation, reward, False, True, info
        except Exception as error:
            # An action refused after others of this step ran: those stay
            # applied, so the episode's record (env.state, env.actions) keeps them.
            self.actions.extend(values[: getattr(error, "actions_applied", 0)])
            raise
        self.actions.extend(values[:applied])
        results = dict(zip(wanted, observed))
        reward = self._take_reward(results)
        info = {
            "action_had_no_effect": no_effect,
            "new_action_space": None,
            "actions_applied": applied,
            # The session was rebuilt on another worker before this step;
            # its values are those it would have given without the restore.
            "restored": restored,
        }
        if new_space is not None:
            self.action_space = carry_rng(self.action_space, from_raw(new_space))
            info["new_action_space"] = self.action_space
        self._last_observation = results.get(self._observation)
        return self._last_observation, reward, ended, False, info

    def _end_session_quietly(self):
        try:
            self._end_session()
        except KilnError:
            pass

    def _action_value(self, action: Any) -> Any:
        return action_value(self.action_space, action)

    def _take_reward(self, results):
        if not self._reward:
            return 0.0  # gymnasium's contract: a number
        name, is_delta = self._reward
        value = results[name]
        if is_delta:
            reward, self._metric = float(value - self._metric), value
        else:
            reward = float(value)
        self.episode_reward += reward
        return reward

    def _start_reward(self):
        """Takes the reward's starting point now (a new reward space mid-episode)."""
        name, is_delta = self._reward
        observed = self._session.step([], self._indices([name]))[0]
        if is_delta:
            self._metric = observed[0]
        self.episode_reward = 0.0

    def _observe(self, name):
        self._check_session()
        self._check_observation_name(name)
        return self._session.step([], self._indices([name]))[0][0]

    @property
    def compiler_version(self) -> str:
        """The compiler the episode's worker runs, as it says it: "LLVM
        19.1.7 (pass table 3f2a...)". A state replays to the same module only
        on the same compiler: keep this with the states you publish."""
        self._check_session()
        return self._session.compiler_version()

    # --- states ---------------------------------------------------------
    @property
    def state(self) -> CompilerEnvState:
        """The episode as a kiln.CompilerEnvState: benchmark, the actions taken
        as a commandline of names, seconds since reset(), the episode reward."""
        self._check_session()
        return CompilerEnvState(
            _benchmark_uri_and_program(self._benchmark)[0],
            " ".join(self._action_name(a) for a in self.actions),
            walltime=time.monotonic() - self._episode_start,
            reward=self.episode_reward,
        )

    def _action_name(self, action):
        if self.action_space.kind == "named_discrete":
            return self.action_space.names[action]
        return str(action)

    def commandline(self, input: str = "input.bc", output: str = "output.bc",
                    opt: str = "opt-19") -> str:
        """An opt command line that turns the benchmark's bitcode `input` into
        exactly the current IR: one opt per action, chained through a pipe,
        each with the action's explicit pipeline (see docs/actions.md)."""
        self._check_session()
        pipelines = self.action_space.pipelines
        if not pipelines:
            raise Unimplemented(
                f"{self.spec.session_type} sessions do not give their actions' pipelines"
            )
        if not self.actions:
            return f"{opt} {shlex.quote(input)} -o {shlex.quote(output)}"
        stages = []
        for i, action in enumerate(self.actions):
            source = shlex.quote(input) if i == 0 else "-"
            sink = shlex.quote(output) if i + 1 == len(self.actions) else "-"
            stages.append(
                f"{opt} -passes={shlex.quote(pipelines[action])} {source} -o {sink}"
            )
        return " | ".join(stages)

    def apply(self, state: CompilerEnvState) -> CompilerEnvState:
        """Replays `state` (a kiln.CompilerEnvState) from a new episode on its
        benchmark and checks that it reproduces: the same reward within 1e-5
        when both the state and the env have one. Returns the env's state.
        kiln.InvalidArgument, before anything changes, for a state of another
        benchmark than the current episode's or with unknown actions; after
        the replay, for one that does not reproduce."""
        self._check_open()
        if not isinstance(state, CompilerEnvState):
            raise InvalidArgument(
                f"apply wants a kiln.CompilerEnvState, got {type(state).__name__}"
            )
        current = _benchmark_uri_and_program(self._benchmark)[0]
        if self._session is not None and state.benchmark != current:
            raise InvalidArgument(
                f"the state is for {state.benchmark}, this env is on {current}: "
                f"reset(benchmark={state.benchmark!r}) first"
            )
        try:
            actions = [
                find_action(self.action_space, name) if self.action_space.kind == "named_discrete"
                else int(name)
                for name in parse_commandline(state.commandline)
            ]
        except (NotFound, ValueError) as error:
            raise InvalidArgument(
                f"the state for {state.benchmark} cannot be replayed: {error}"
            ) from None
        # A benchmark of the user's own keeps its bytes: its URI alone names
        # nothing a worker can resolve.
        self.reset(benchmark=self._benchmark if state.benchmark == current else state.benchmark)
        if actions:
            info = self.multistep(actions)[4]
            if info["actions_applied"] != len(actions):
                raise InvalidArgument(
                    f"the state for {state.benchmark} ended after {info['actions_applied']} "
                    f"of its {len(actions)} actions"
                )
        replayed = self.state
        if state.reward is not None and replayed.reward is not None:
            if abs(replayed.reward - state.reward) >= 1e-5:
                raise InvalidArgument(
                    f"the state for {state.benchmark} does not reproduce: reward "
                    f"{replayed.reward!r} replayed, {state.reward!r} recorded (another LLVM, "
                    "another reward space, or a nondeterministic pass)"
                )
        return replayed

    def write_bitcode(self, path: Union[str, os.PathLike]) -> str:
        """Writes the current module's bitcode to `path` (on this machine)."""
        self._write(path, self._observe("Bitcode"), "wb")
        return os.fspath(path)

    def write_ir(self, path: Union[str, os.PathLike]) -> str:
        """Writes the current module's IR text to `path` (on this machine)."""
        self._write(path, self._observe("Ir"), "w")
        return os.fspath(path)

    @staticmethod
    def _write(path, data, mode):
        with open(path, mode) as out:
            out.write(data)

    def fork(self) -> Env:
        """A new env whose session is a copy of this one's (same worker, same state).
        It shares this env's client: its calls and this env's take turns, from
        whatever threads they come."""
        self._check_session()
        child_session = self._session.fork()
        child = Env.__new__(Env)
        child.__dict__.update(self.__dict__)
        child._lease = self._lease.share()
        child._session = child_session
        child._np_random = copy.deepcopy(self._np_random)
        child.action_space = carry_rng(self.action_space, from_raw(self.action_space.raw))
        child.actions = list(self.actions)
        child._episode_start = self._episode_start
        child.observation = _Observations(child)
        _LIVE_ENVS.add(child)
        return child

    def validate(self, asan: bool = False) -> ValidationResult:
        """Whether the current program still behaves like the benchmark as it
        came: a kiln.ValidationResult listing every difference (wrong output
        or exit status, crash, timeout, an ASan report with `asan=True`). The
        benchmark's inputs are its dataset's (kiln-bench-v0 has four), or
        what `set_parameter("llvm.run_spec", json)` gave. Programs run in the
        worker's sandbox."""
        self._check_session()
        if "Validation" not in self.observation_spaces:
            raise InvalidArgument(f"{self.spec.id} has no validation (no Validation observation)")
        self._session.set_parameter("llvm.validate_asan", "1" if asan else "0")
        text = self._observe("Validation")
        return ValidationResult.from_json(_benchmark_uri_and_program(self._benchmark)[0], text)

    def set_parameter(self, key: str, value: Any) -> str:
        """A session parameter (e.g. 'noop.busy_us'); returns the worker's answer."""
        self._check_session()
        return self._session.set_parameter(str(key), str(value))

    def close(self) -> None:
        """Ends the session and lets go of the cluster; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        _LIVE_ENVS.discard(self)
        try:
            self._end_session()
        except KilnError:
            pass  # the session is over either way; its lease ends it on the worker
        finally:
            self._client = None
            self._lease.release()

    def _end_session(self):
        session, self._session = self._session, None
        if session is None:
            return
        try:
            session.end()
        except SessionLost:
            pass  # the worker is gone and the session with it

    def _check_open(self):
        if self._closed:
            raise InvalidArgument("this env is closed")

    def _check_session(self):
        self._check_open()
        if self._session is None:
            raise InvalidArgument("no episode in progress: call env.reset() first")

    def __repr__(self) -> str:
        state = "closed" if self._closed else (self._benchmark if self._session else "not reset")
        return f"<kiln.Env {self.spec.id} {state}>"
