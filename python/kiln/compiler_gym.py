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
from .errors import CompileError, InvalidArgument, KilnError, NotFound, SessionLost
from .state import CompilerEnvState, parse_commandline

__version__ = "0.2.5+kiln"

# env id -> (observation space, reward space), as CompilerGym registers them.
_ENV_IDS = {
    "llvm-v0": (None, None),
    "llvm-ic-v0": (None, "IrInstructionCountOz"),
    "llvm-codesize-v0": (None, "ObjectTextSizeOz"),
    "llvm-autophase-ic-v0": ("Autophase", "IrInstructionCountOz"),
    "llvm-autophase-codesize-v0": ("Autophase", "ObjectTextSizeOz"),
    "llvm-ir-ic-v0": ("Ir", "IrInstructionCountOz"),
    "llvm-ir-codesize-v0": ("Ir", "ObjectTextSizeOz"),
}
COMPILER_GYM_ENVS = sorted(_ENV_IDS)

# CompilerGym observation spaces that kiln serves under the same name.
_SAME_OBSERVATIONS = (
    "Ir", "IrSha1", "Bitcode", "InstCount", "InstCountDict", "Autophase", "AutophaseDict",
    "IrInstructionCount", "IrInstructionCountO0", "IrInstructionCountO3", "IrInstructionCountOz",
    "ObjectTextSizeBytes", "ObjectTextSizeO0", "ObjectTextSizeO3", "ObjectTextSizeOz",
)
# Computed here from one kiln observation: name -> kiln space it comes from.
_DERIVED_OBSERVATIONS = {"InstCountNorm": "InstCount", "InstCountNormDict": "InstCountDict"}
_UNSUPPORTED_OBSERVATIONS = {
    "BitcodeFile": "kiln never names a host path to a client; use env.write_bitcode(path)",
    "Buildtime": "kiln does not build or run benchmarks",
    "Runtime": "kiln does not build or run benchmarks",
    "IsBuildable": "kiln does not build or run benchmarks",
    "IsRunnable": "kiln does not build or run benchmarks",
    "CpuInfo": "kiln has no CpuInfo observation",
    "Inst2vec": "kiln has no inst2vec embeddings",
    "Inst2vecEmbeddingIndices": "kiln has no inst2vec embeddings",
    "Inst2vecPreprocessedText": "kiln has no inst2vec embeddings",
    "LexedIr": "kiln has no IR lexer observation",
    "LexedIrTuple": "kiln has no IR lexer observation",
    "Programl": "kiln has no ProGraML graphs",
    "ProgramlJson": "kiln has no ProGraML graphs",
    "TextSizeBytes": "kiln measures object files (ObjectTextSize*), not linked binaries",
    "TextSizeO0": "kiln measures object files (ObjectTextSize*), not linked binaries",
    "TextSizeO3": "kiln measures object files (ObjectTextSize*), not linked binaries",
    "TextSizeOz": "kiln measures object files (ObjectTextSize*), not linked binaries",
}
# Reward name -> (cost observation, what the drop is divided by: "" nothing,
# "Norm" the unoptimized cost, "O3"/"Oz" the improvement that level makes).
_REWARDS = {
    "IrInstructionCount": ("IrInstructionCount", ""),
    "IrInstructionCountNorm": ("IrInstructionCount", "Norm"),
    "IrInstructionCountO3": ("IrInstructionCount", "O3"),
    "IrInstructionCountOz": ("IrInstructionCount", "Oz"),
    "ObjectTextSizeBytes": ("ObjectTextSizeBytes", ""),
    "ObjectTextSizeNorm": ("ObjectTextSizeBytes", "Norm"),
    "ObjectTextSizeO3": ("ObjectTextSizeBytes", "O3"),
    "ObjectTextSizeOz": ("ObjectTextSizeBytes", "Oz"),
}
# The prefix of a cost's baseline observations (IrInstructionCountO0, ...).
_BASELINE_PREFIX = {
    "IrInstructionCount": "IrInstructionCount",
    "ObjectTextSizeBytes": "ObjectTextSize",
}
# CompilerGym's LLVM datasets, for the error that says what kiln has instead.
_COMPILER_GYM_DATASETS = (
    "anghabench-v1", "blas-v0", "cbench-v1", "chstone-v0", "clgen-v0", "github-v0",
    "jotaibench-v0", "linux-v0", "mibench-v1", "npb-v0", "opencv-v0", "poj104-v1",
    "tensorflow-v0",
)


def _unsupported(what, why):
    raise NotImplementedError(f"kiln.compiler_gym: {what} is not available on kiln: {why}")


def _check_observation(name):
    if name in _SAME_OBSERVATIONS or name in _DERIVED_OBSERVATIONS:
        return name
    if name in _UNSUPPORTED_OBSERVATIONS:
        _unsupported(f"observation space {name!r}", _UNSUPPORTED_OBSERVATIONS[name])
    raise LookupError(f"Observation space not found: {name}")


def _check_reward(name):
    if name not in _REWARDS:
        raise LookupError(f"Reward space not found: {name}")
    return name


def _translate(name, value):
    """kiln's value of observation `name` as CompilerGym types it."""
    if name == "Bitcode":
        return np.frombuffer(value, dtype=np.int8).copy()
    if name == "InstCountNorm":
        total = max(int(value[0]), 1)
        return (np.asarray(value[1:], dtype=np.float64) / total).astype(np.float32)
    if name == "InstCountNormDict":
        total = max(int(value.get("TotalInstsCount", 0)), 1)
        return {k: v / total for k, v in value.items() if k != "TotalInstsCount"}
    return value


def _benchmark_uri(benchmark):
    uri = str(benchmark.uri if isinstance(benchmark, Benchmark) else benchmark)
    if "://" not in uri:
        uri = "benchmark://" + uri  # CompilerGym's short form, "cbench-v1/crc32"
    return uri


def _dataset_of(uri):
    """"benchmark://kiln-bench-v0" for benchmark://kiln-bench-v0/crc32; None for file:// URIs."""
    scheme, _, rest = uri.partition("://")
    if scheme not in ("benchmark", "generator"):
        return None
    return f"{scheme}://{rest.split('/')[0]}"


class Benchmark:
    """A benchmark as CompilerGym names one: `uri`; equal to its URI string."""

    def __init__(self, uri):
        self.uri = _benchmark_uri(uri)

    def __eq__(self, other):
        if isinstance(other, (Benchmark, str)):
            return self.uri == _benchmark_uri(other)
        return NotImplemented

    def __hash__(self):
        return hash(self.uri)

    def __str__(self):
        return self.uri

    def __repr__(self):
        return f"Benchmark({self.uri})"


class Dataset:
    """One of kiln's datasets with CompilerGym's accessors."""

    def __init__(self, listing, datasets):
        self.name, self.size, self.description = listing.name, listing.size, listing.description
        self._datasets = datasets

    def benchmark_uris(self, limit=None):
        if self.size is None and limit is None:
            limit = 1000  # a generator: its first seeds
        yield from self._datasets.benchmarks(self.name, limit)

    def benchmarks(self, limit=None):
        return (Benchmark(uri) for uri in self.benchmark_uris(limit))

    def benchmark(self, uri=None):
        return Benchmark(uri) if uri is not None else next(self.benchmarks())

    def random_benchmark(self, random_state=None):
        rng = random_state if isinstance(random_state, np.random.Generator) else (
            np.random.default_rng(random_state))
        uris = list(self.benchmark_uris())
        return Benchmark(uris[int(rng.integers(len(uris)))])

    def __len__(self):
        if self.size is None:
            raise TypeError(f"{self.name} is an unbounded generator")
        return self.size

    def __repr__(self):
        return f"Dataset({self.name})"


class Datasets:
    """env.datasets: iterate, look up by name, benchmark(uri)."""

    def __init__(self, kiln_datasets):
        self._raw = kiln_datasets
        self._listed = [Dataset(d, kiln_datasets) for d in kiln_datasets]

    def __iter__(self):
        return iter(self._listed)

    def __len__(self):
        return len(self._listed)

    def __getitem__(self, name):
        for dataset in self._listed:
            if name in (dataset.name, dataset.name.partition("://")[2]):
                return dataset
        raise _missing_dataset(name, self._listed)

    def __contains__(self, name):
        return any(name in (d.name, d.name.partition("://")[2]) for d in self._listed)

    def benchmark(self, uri):
        uri = _benchmark_uri(uri)
        dataset = _dataset_of(uri)
        if dataset is not None:
            self[dataset]  # kiln.NotFound naming kiln's datasets if it has none such
        return Benchmark(uri)

    def benchmark_uris(self):
        for dataset in self._listed:
            if dataset.size is not None:
                yield from dataset.benchmark_uris()


def _missing_dataset(name, listed):
    have = ", ".join(f"{d.name} ({'unbounded' if d.size is None else d.size})" for d in listed)
    short = name.partition("://")[2] or name
    why = (" (CompilerGym's dataset needs CompilerGym's LLVM 10 downloads)"
           if short.split("/")[0] in _COMPILER_GYM_DATASETS else "")
    return NotFound(f"kiln has no dataset {short.split('/')[0]!r}{why}; kiln has: {have}")


class Reward:
    """A reward space as CompilerGym describes one."""

    def __init__(self, name):
        self.name = self.id = name
        cost, baseline = _REWARDS[name]
        self.cost_observation = cost
        self.baseline = baseline
        self.deterministic = True
        self.platform_dependent = cost == "ObjectTextSizeBytes"
        self.reward_range = (-np.inf, np.inf)

    def __repr__(self):
        return self.name


class ObservationSpaceSpec:
    def __init__(self, name, space):
        self.id = self.name = name
        self.space = space

    def __repr__(self):
        return f"ObservationSpaceSpec({self.id})"


class _Views:
    def __init__(self, lookup, names):
        self._lookup, self.spaces = lookup, names

    def __getitem__(self, name):
        return self._lookup(name)


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
        return "LLVM 19 (kiln)"

    def reset(self, benchmark=None, action_space=None, observation_space=None,
              reward_space=None, **kwargs):
        """Starts an episode; returns the observation (None without an observation space)."""
        if kwargs:
            _unsupported(f"reset({', '.join(kwargs)}=...)", "kiln's reset takes none of these")
        if action_space is not None and action_space != self._env.action_space.name:
            _unsupported(f"action space {action_space!r}", "kiln's llvm type has one action space")
        if observation_space is not None:
            self.observation_space = observation_space
        if reward_space is not None:
            self.reward_space = reward_space
        uri = self._checked_uri(benchmark) if benchmark is not None else None
        observation, _ = self._env.reset(benchmark=uri)
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
        _unsupported("env.validate()", "kiln does not build or run benchmarks to check them")

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
         timeout=120.0, **kwargs):
    """compiler_gym.make(): one of COMPILER_GYM_ENVS on kiln (cluster: see kiln.make)."""
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
                              observation_space=None, reward_space=None)
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
