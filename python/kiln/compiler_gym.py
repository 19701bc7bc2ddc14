"""CompilerGym's LLVM surface on kiln: scripts written for CompilerGym run
with one import changed,

    import kiln.compiler_gym as compiler_gym
    env = compiler_gym.make("llvm-autophase-ic-v0", benchmark="benchmark://kiln-bench-v0/crc32")
    observation = env.reset()
    observation, reward, done, info = env.step(env.action_space.sample())

gym-0.21 tuples, CompilerGym's observation and reward space names, env.observation[...] /
env.reward[...] lookups, fork, state, commandline, datasets and the wrappers
(kiln.compiler_gym.wrappers). What kiln has no counterpart for raises
NotImplementedError saying so; CompilerGym's datasets that kiln does not
serve (cbench-v1, ...) raise kiln.NotFound naming the datasets it has.
"""

import sys
import time

import numpy as np

from . import wrappers
from .env import make as _make_kiln_env
from ._compiler_gym_names import (
    _BASELINE_PREFIX,
    _benchmark_uri,
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
from .errors import CompileError, SessionLost
from .state import CompilerEnvState, parse_commandline

__version__ = "0.2.5+kiln"


class _Views:
    def __init__(self, lookup, names):
        self._lookup, self.spaces = lookup, names

    def __getitem__(self, name):
        return self._lookup(name)


class ValidationResult:
    """CompilerGym's ValidationResult over kiln's verdict: okay() is a
    method, errors lists every difference, benchmark_semantics_* say whether
    the program's behaviour was checked and failed."""

    def __init__(self, state, result, walltime):
        self.state = state
        self.walltime = walltime
        self.errors = list(result.errors)
        self.reward_validated = False
        self.actions_replay_failed = False
        self.reward_validation_failed = False
        self.benchmark_semantics_validated = True
        self.benchmark_semantics_validation_failed = not result.okay
        self.result = result

    def okay(self):
        return self.result.okay

    @property
    def error_details(self):
        return self.result.error_details()

    def __str__(self):
        return str(self.result)


class CompilerGymEnv:
    """A kiln.Env with CompilerGym's LLVM API (LlvmEnv's). Made by make()."""

    def __init__(self, kiln_env, observation_space, reward_space):
        self._env = kiln_env
        self._observation = None
        self._reward = None
        self._costs = {}  # reward name -> its cost at its last computation
        self._baselines = {}  # benchmark -> {observation: value}
        self._last_step_cost = None  # the active reward's cost after the last step
        self._initial_ir = None  # the IR instruction count at reset
        self._episode_start = None
        self._datasets = None
        self.episode_reward = None
        self.observation = _Views(self._observe, {n: n for n in _SAME_OBSERVATIONS})
        self.reward = _Views(self._reward_now, {n: Reward(n) for n in _REWARDS})
        self.observation_space = observation_space
        self.reward_space = reward_space

    # --- spaces ------------------------------------------------------------
    @property
    def action_space(self):
        return self._env.action_space

    @property
    def action_spaces(self):
        return list(self._env.action_spaces)

    @property
    def observation_space_spec(self):
        if self._observation is None:
            return None
        kiln_name = _DERIVED_OBSERVATIONS.get(self._observation, self._observation)
        return ObservationSpaceSpec(self._observation, self._env.observation_spaces[kiln_name])

    @property
    def observation_space(self):
        spec = self.observation_space_spec
        return spec.space if spec is not None else None

    @observation_space.setter
    def observation_space(self, name):
        name = getattr(name, "id", name)
        if name is not None:
            _check_observation(name)
        self._observation = name
        self._env.observation_space = _DERIVED_OBSERVATIONS.get(name, name)

    @property
    def reward_space_spec(self):
        return self._reward

    @property
    def reward_space(self):
        return self._reward

    @reward_space.setter
    def reward_space(self, name):
        name = getattr(name, "name", name)
        self._reward = Reward(_check_reward(name)) if name is not None else None
        # kiln reports the cost's drop with each step; the reward is made here.
        self._env.reward_space = self._reward.cost_observation if self._reward else None
        if self._reward and self.in_episode:
            self._last_step_cost = self._env.observation[self._reward.cost_observation]
            self._costs.setdefault(self._reward.name, self._start_cost(self._reward))

    @property
    def reward_range(self):
        return self._reward.reward_range if self._reward else (-np.inf, np.inf)

    # --- episode -------------------------------------------------------------
    @property
    def benchmark(self):
        return Benchmark(self._env.benchmark)

    @benchmark.setter
    def benchmark(self, benchmark):
        self._env._benchmark = self._checked_uri(benchmark)

    @property
    def datasets(self):
        if self._datasets is None:
            self._datasets = Datasets(self._env.datasets)
        return self._datasets

    def _checked_uri(self, benchmark):
        return self.datasets.benchmark(benchmark).uri

    @property
    def in_episode(self):
        return self._env.in_episode

    @property
    def actions(self):
        return list(self._env.actions)

    @property
    def episode_walltime(self):
        return 0.0 if self._episode_start is None else time.monotonic() - self._episode_start

    @property
    def version(self):
        return __version__

    @property
    def compiler_version(self):
        """The worker's compiler, e.g. "LLVM 19.1.7 (pass table 3f2a...)"."""
        if self._env._session is None:
            self._env.reset()
        return self._env.compiler_version

    def reset(self, benchmark=None, action_space=None, observation_space=None,
              reward_space=None, **kwargs):
        """Starts an episode; returns the observation (None without an observation space)."""
        if kwargs:
            _unsupported(f"reset({', '.join(kwargs)}=...)", "kiln's reset takes none of these")
        # An action space by name ("PassesAll", the default, or
        # "PassesAndPipelines"), or a Space from env.action_spaces.
        action_space = getattr(action_space, "name", action_space)
        if observation_space is not None:
            self.observation_space = observation_space
        if reward_space is not None:
            self.reward_space = reward_space
        uri = self._checked_uri(benchmark) if benchmark is not None else None
        observation, _ = self._env.reset(benchmark=uri, action_space=action_space)
        self._episode_start = time.monotonic()
        self._initial_ir = self._env.observation["IrInstructionCount"]
        self._costs = {}
        self.episode_reward = 0.0 if self._reward else None
        if self._reward:
            self._last_step_cost = self._start_cost(self._reward)
            self._costs[self._reward.name] = self._last_step_cost
        return _translate(self._observation, observation) if self._observation else None

    def _baseline(self, name):
        values = self._baselines.setdefault(self._env.benchmark, {})
        if name not in values:
            values[name] = self._env.observation[name]
        return values[name]

    def _start_cost(self, reward):
        """The cost at the start of the episode, as kiln's worker counts it."""
        if reward.cost_observation == "IrInstructionCount":
            return self._initial_ir
        return self._baseline("ObjectTextSizeO0")

    def _scale(self, reward):
        prefix = _BASELINE_PREFIX[reward.cost_observation]
        if reward.baseline == "":
            return 1.0
        o0 = self._baseline(f"{prefix}O0")
        if reward.baseline == "Norm":
            return float(max(o0, 1))
        return float(max(o0 - self._baseline(f"{prefix}{reward.baseline}"), 1))

    def _reward_from(self, reward, cost):
        previous = self._costs.get(reward.name)
        if previous is None:
            previous = self._start_cost(reward)
        self._costs[reward.name] = cost
        return (previous - cost) / self._scale(reward)

    def _reward_now(self, name):
        reward = Reward(_check_reward(name))
        return self._reward_from(reward, self._env.observation[reward.cost_observation])

    def _observe(self, name):
        _check_observation(name)
        return _translate(name, self._env.observation[_DERIVED_OBSERVATIONS.get(name, name)])

    def step(self, action, observation_spaces=None, reward_spaces=None, **kwargs):
        return self.multistep([action], observation_spaces, reward_spaces, **kwargs)

    def multistep(self, actions, observation_spaces=None, reward_spaces=None, **kwargs):
        """(observation, reward, done, info) after applying `actions` in one
        round trip; with observation_spaces / reward_spaces, lists of those."""
        if kwargs:
            _unsupported(f"step({', '.join(kwargs)}=...)", "kiln's step takes none of these")
        actions = list(actions)
        try:
            observation, drop, done, _, kiln_info = self._env.multistep(actions)
        except (CompileError, SessionLost) as error:
            info = {"error_type": type(error).__name__, "error_details": str(error)}
            reward = -self.episode_reward if self.episode_reward is not None else None
            return None, reward, True, info
        reward = None
        if self._reward is not None:
            # kiln's worker reward space of the cost (Reward:IrInstructionCount,
            # Reward:ObjectTextSizeBytes) is its drop since the previous step.
            cost = self._last_step_cost - int(round(drop))
            self._last_step_cost = cost
            reward = self._reward_from(self._reward, cost)
            self.episode_reward += reward
        info = {
            "action_had_no_effect": kiln_info["action_had_no_effect"],
            "new_action_space": kiln_info["new_action_space"] is not None,
            "restored": kiln_info.get("restored", False),
        }
        if observation_spaces is not None or reward_spaces is not None:
            observations = [self.observation[getattr(n, "id", n)] for n in observation_spaces or []]
            rewards = [self.reward[getattr(n, "name", n)] for n in reward_spaces or []]
            return observations, rewards, done, info
        observation = _translate(self._observation, observation) if self._observation else None
        return observation, reward, done, info

    # --- states ------------------------------------------------------------------
    def commandline(self, textformat=False):
        """CompilerGym's form: "opt -flag ... input.bc -o output.bc"."""
        flags = self._env.action_space.flags or [f"-{n}" for n in self._env.action_space.names]
        names = self._env.action_space.names
        chosen = [flags[a] or f"-{names[a]}" for a in self._env.actions]
        return " ".join(["opt", *chosen, "input.bc", "-o", "output.bc"])

    @property
    def state(self):
        names = self._env.action_space.names
        return CompilerEnvState(
            benchmark=self._env.benchmark,
            commandline=[names[a] for a in self._env.actions],
            walltime=self.episode_walltime,
            reward=self.episode_reward,
        )

    def apply(self, state):
        """Replays `state` from a fresh episode on its benchmark."""
        fresh = self.in_episode and not self.actions
        if not fresh or self._env.benchmark != _benchmark_uri(state.benchmark):
            self.reset(benchmark=state.benchmark)
        actions = parse_commandline(state.commandline, self._env.action_space)
        if actions:
            _, _, done, info = self.multistep(actions)
            if done and "error_type" in info:
                raise ValueError(f"state {state} ended with an error: {info['error_details']}")

    def write_ir(self, path):
        with open(path, "w", encoding="utf-8") as out:
            out.write(self.observation["Ir"])
        return path

    def write_bitcode(self, path):
        with open(path, "wb") as out:
            out.write(self._env.observation["Bitcode"])
        return path

    def validate(self, state=None):
        """Whether the current program (or `state`, replayed in a fork) still
        behaves like its benchmark as it came: its run on every input of the
        benchmark compared with the unoptimized program's (kiln's
        env.validate(), in the worker's sandbox)."""
        start = time.time()
        if state is None:
            return ValidationResult(self.state, self._env.validate(), time.time() - start)
        if not self.in_episode:
            self.reset(benchmark=state.benchmark)  # a session to fork from
        other = self.fork()
        try:
            other.apply(state)
            return ValidationResult(state, other._env.validate(), time.time() - start)
        finally:
            other.close()

    def make_benchmark(self, *args, **kwargs):
        _unsupported("env.make_benchmark()",
                     "kiln's workers read benchmarks from datasets or file:// URIs only")

    def render(self, mode="human"):
        if self._observation is None:
            raise ValueError("Cannot call render() when no observation space is used")
        value = self.observation[self._observation]
        if mode == "ansi":
            return str(value)
        print(value)
        return None

    # --- lifecycle -----------------------------------------------------------------
    def fork(self):
        child = CompilerGymEnv.__new__(CompilerGymEnv)
        child.__dict__.update(self.__dict__)
        child._env = self._env.fork()
        child._costs = dict(self._costs)
        child._datasets = None
        child.observation = _Views(child._observe, self.observation.spaces)
        child.reward = _Views(child._reward_now, self.reward.spaces)
        return child

    def close(self):
        self._env.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<kiln.compiler_gym env {self._env.benchmark}>"


LlvmEnv = CompilerGymEnv


def make(env_id, benchmark=None, observation_space=None, reward_space=None, cluster=None,
         timeout=120.0, action_space=None, **kwargs):
    """compiler_gym.make(): one of COMPILER_GYM_ENVS on kiln (cluster: see kiln.make).
    action_space: "PassesAll" (the default: single passes, as CompilerGym's) or
    "PassesAndPipelines" (the same actions at the same indices, then whole
    pipelines such as scc-oz-module-inliner)."""
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
    try:
        env = CompilerGymEnv(kiln_env, observation_space, reward_space)
        if benchmark is not None:
            env.benchmark = benchmark
        return env
    except BaseException:
        kiln_env.close()
        raise


# `from kiln.compiler_gym.wrappers import TimeLimit` as from compiler_gym.wrappers.
sys.modules[__name__ + ".wrappers"] = wrappers

__all__ = ["make", "COMPILER_GYM_ENVS", "CompilerEnvState", "LlvmEnv", "Benchmark", "wrappers"]
