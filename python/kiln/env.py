"""Gym-style environments over kiln sessions.

An Env owns one session at a time on its cluster: reset() starts one on a
benchmark, step()/multistep() apply actions in one round trip each and bring
back the observation and the reward, fork() copies the session on its worker.
An Env is used from one thread at a time (as a gym env); separate envs may run
in separate threads, and their blocking calls do not hold the GIL. A fork
shares its parent's client, which serves one call at a time: forks may be
used from separate threads, but their requests take turns (an env made with
kiln.make in each thread steps in parallel).
"""

import atexit
import os
import shlex
import time
import weakref

from ._closing import Closing
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
from .spaces import Space
from .state import CompilerEnvState, parse_commandline
from .validation import ValidationError, ValidationResult

_DEFAULT = object()
_REWARD_PREFIX = "Reward:"
# Observation kinds whose change between steps can serve as a reward.
_NUMERIC_SCALARS = ("int64", "double")

# Envs still open at exit end their sessions before the embedded cluster stops
# (atexit runs this before cluster.py's handler, registered earlier).
_LIVE_ENVS = weakref.WeakSet()


@atexit.register
def _close_live_envs():
    for env in list(_LIVE_ENVS):
        env.close()


def make(
    env_id,
    cluster=None,
    benchmark=None,
    observation_space=_DEFAULT,
    reward_space=_DEFAULT,
    action_space=None,
    timeout=60.0,
    experiment=None,
    key_file=None,
    experiment_key=None,
    faults_as_truncation=False,
):
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


def session_types(cluster=None, timeout=60.0, key_file=None):
    """The session types the cluster's workers host (e.g. ['llvm', 'noop'])."""
    lease = cluster_module.lease(cluster)
    try:
        client = _kiln.Client(lease.endpoint, timeout, "", key_file or "")
        return sorted({t for w in client.list_cluster() for t in w["session_types"]})
    finally:
        lease.release()


def datasets(cluster=None, session_type="llvm", timeout=60.0, key_file=None):
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


def reward_space_names(observation_spaces):
    """Names usable as a reward space: worker reward spaces, then numeric scalars."""
    names = list(observation_spaces)
    served = [n.removeprefix(_REWARD_PREFIX) for n in names if n.startswith(_REWARD_PREFIX)]
    numeric = [
        n
        for n in names
        if not n.startswith(_REWARD_PREFIX) and _is_numeric_scalar(observation_spaces, n)
    ]
    return served + numeric


def resolve_reward_space(session_type, observation_spaces, name):
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


def check_observation_name(session_type, observation_spaces, name):
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


class Env(Closing):
    """One kiln session at a time, driven gym-style. Made by kiln.make()."""

    def __init__(
        self,
        *,
        spec,
        lease,
        client,
        raw_action_spaces,
        raw_observation_spaces,
        benchmark,
        observation_space,
        reward_space,
        action_space,
        faults_as_truncation=False,
    ):
        self.spec = spec
        self._faults_as_truncation = faults_as_truncation
        self._last_observation = None
        self._lease = lease
        self._client = client
        self._session = None
        self._closed = False
        self._benchmark = benchmark
        self._raw_action_spaces = list(raw_action_spaces)
        self.observation_spaces = {s.name: Space(s) for s in raw_observation_spaces}
        self._observation_names = [s.name for s in raw_observation_spaces]
        self._action_space_name = action_space
        self.action_spaces = [Space(s) for s in self._raw_action_spaces]
        self.action_space = self._initial_action_space()
        self._observation = None  # name of the observation space, or None
        self._reward = None  # (name of the observation space, is_delta), or None
        self.observation_space = observation_space
        self.reward_space = reward_space
        self._metric = None  # last value of a delta reward's observation
        self.episode_reward = None
        self.actions = []
        self._episode_start = None  # time.monotonic() at reset()
        self.observation = _Observations(self)
        _LIVE_ENVS.add(self)

    # --- spaces -----------------------------------------------------------
    def _initial_action_space(self):
        if not self._action_space_name:
            return Space(self._raw_action_spaces[0])
        for raw in self._raw_action_spaces:
            if raw.name == self._action_space_name:
                return Space(raw)
        names = ", ".join(s.name for s in self._raw_action_spaces)
        raise NotFound(
            f"{self.spec.session_type} has no action space {self._action_space_name!r}; "
            f"it has {names}"
        )

    def _select_action_space(self, name):
        previous = self._action_space_name
        self._action_space_name = name
        try:
            self._initial_action_space()  # raises NotFound naming the spaces there are
        except NotFound:
            self._action_space_name = previous
            raise

    @property
    def observation_space(self):
        """The Space of the observation step() returns, or None."""
        return self.observation_spaces[self._observation] if self._observation else None

    @observation_space.setter
    def observation_space(self, name):
        if name is not None:
            self._check_observation_name(name)
        self._observation = name

    @property
    def reward_space(self):
        """The reward space's name, or None (step() then returns reward None)."""
        return self._reward[0].removeprefix(_REWARD_PREFIX) if self._reward else None

    @reward_space.setter
    def reward_space(self, name):
        self._reward = resolve_reward_space(self.spec.session_type, self.observation_spaces, name)
        if self._reward is not None and self._session is not None:
            self._start_reward()

    @property
    def reward_spaces(self):
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
    def benchmark(self):
        return self._benchmark

    @property
    def in_episode(self):
        return self._session is not None

    @property
    def datasets(self):
        """The datasets of this env's session type (empty if it has none)."""
        self._check_open()
        return Datasets(self._client, self.spec.session_type)

    def reset(self, benchmark=None, seed=None, action_space=None):
        """Starts a new episode; returns (observation, info). action_space: the
        name of the action space to use from now on (see env.action_spaces;
        the llvm type's are "PassesAll", its default, and "PassesAndPipelines")."""
        self._check_open()
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
        seed_rng = self.action_space._rng
        self.action_space = self._initial_action_space()
        self.action_space._rng = seed_rng
        values = dict(zip(wanted, session.initial_observations))
        if self._reward and self._reward[1]:
            self._metric = values[self._reward[0]]
        self.episode_reward = 0.0 if self._reward else None
        self.actions = []
        self._episode_start = time.monotonic()
        self._last_observation = values.get(self._observation)
        return self._last_observation, {"benchmark": uri}

    def step(self, action):
        """Applies one action: (observation, reward, terminated, truncated, info)."""
        return self.multistep([action])

    def multistep(self, actions):
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
            reward = 0.0 if self._reward else None
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
            rng = self.action_space._rng
            self.action_space = Space(new_space)
            self.action_space._rng = rng
            info["new_action_space"] = self.action_space
        self._last_observation = results.get(self._observation)
        return self._last_observation, reward, ended, False, info

    def _end_session_quietly(self):
        try:
            self._end_session()
        except KilnError:
            pass

    def _action_value(self, action):
        if isinstance(action, str) and self.action_space.kind == "named_discrete":
            return self.action_space.index(action)
        return action

    def _take_reward(self, results):
        if not self._reward:
            return None
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
    def compiler_version(self):
        """The compiler the episode's worker runs, as it says it: "LLVM
        19.1.7 (pass table 3f2a...)". A state replays to the same module only
        on the same compiler: keep this with the states you publish."""
        self._check_session()
        return self._session.compiler_version()

    # --- states ---------------------------------------------------------
    @property
    def state(self):
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

    def commandline(self, input="input.bc", output="output.bc", opt="opt-19"):
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

    def apply(self, state):
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
                self.action_space.index(name) if self.action_space.kind == "named_discrete"
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

    def write_bitcode(self, path):
        """Writes the current module's bitcode to `path` (on this machine)."""
        self._write(path, self._observe("Bitcode"), "wb")
        return os.fspath(path)

    def write_ir(self, path):
        """Writes the current module's IR text to `path` (on this machine)."""
        self._write(path, self._observe("Ir"), "w")
        return os.fspath(path)

    @staticmethod
    def _write(path, data, mode):
        with open(path, mode) as out:
            out.write(data)

    def fork(self):
        """A new env whose session is a copy of this one's (same worker, same state).
        It shares this env's client: its calls and this env's take turns, from
        whatever threads they come."""
        self._check_session()
        child_session = self._session.fork()
        child = Env.__new__(Env)
        child.__dict__.update(self.__dict__)
        child._lease = self._lease.share()
        child._session = child_session
        child.action_space = Space(self.action_space.raw)
        child.actions = list(self.actions)
        child._episode_start = self._episode_start
        child.observation = _Observations(child)
        _LIVE_ENVS.add(child)
        return child

    def validate(self, asan=False):
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

    def set_parameter(self, key, value):
        """A session parameter (e.g. 'noop.busy_us'); returns the worker's answer."""
        self._check_session()
        return self._session.set_parameter(str(key), str(value))

    def close(self):
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

    def __repr__(self):
        state = "closed" if self._closed else (self._benchmark if self._session else "not reset")
        return f"<kiln.Env {self.spec.id} {state}>"
