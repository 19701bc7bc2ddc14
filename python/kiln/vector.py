"""Many environments from one learner: kiln.VectorEnv (kiln.make_vec).

    envs = kiln.make_vec("llvm-autophase-ic-v0", num_envs=32,
                         benchmarks="benchmark://kiln-bench-v0", max_episode_steps=45)
    observations, infos = envs.reset(seed=1)
    observations, rewards, terminations, truncations, infos = envs.step(envs.action_space.sample())

Semantics are gymnasium's vector API (1.x): batched numpy observations,
rewards, terminations and truncations; infos as a dict of arrays, each key
with a boolean "_key" mask of the envs that have it; autoreset on the next
step (the step after an episode ended resets that env, ignores its action and
returns the new episode's first observation with reward 0). gymnasium itself
is not a Debian 12 package, so kiln follows its API without depending on it.

The EnvPool-style pair runs envs without waiting for the slowest:
`send(actions, env_ids)` sends steps, `recv()` returns the first `batch_size`
envs that answered, with their ids in infos["env_id"]. Every step of every
env is in flight at once across the cluster from this one thread: the C++
client multiplexes them (no thread or process per env) and waits without the
GIL. Resets do not wait either: an env whose episode ended is placed on a
worker, its start compiles there while the learner goes on, and recv()
returns it when it is ready (send() to an env still starting is an error).

Each result's infos["worker_us"] is the worker's time on it: a step's
actions and observations, or a reset's start (benchmark, module, first
observations); not transport or queueing.

Faults never break the training loop: a compile error, a session lost beyond
restore (its worker gone and none to replay it on), a timeout or an
overloaded worker ends that env's episode as truncated, with the reason in
infos["fault"]; the env resets on its next step (the coordinator places the
new episode on a worker that is up). `fault_counts` counts each reason. A
worker killed mid-episode is no fault at all: its sessions are restored by
replay on another worker and step on.

With gymnasium importable, a VectorEnv is a gymnasium.vector.VectorEnv:
its spaces are gymnasium's batched spaces (batch_space of the single
spaces), its observations batched as gymnasium batches them, and
metadata["autoreset_mode"] says which autoreset it does: next-step (the
default, gymnasium 1.0's) or same-step (autoreset_mode="same_step": the
step that ends an episode already returns the next one's first
observation, the last one in infos["final_obs"] and its info in
infos["final_info"], what Stable-Baselines3's VecEnv wants; see kiln.sb3).
"""

from __future__ import annotations

import collections
import time
from typing import Any, Optional, Sequence, Union

import numpy as np

from ._closing import Closing
from . import _gymnasium
from ._gymnasium import NEXT_STEP, SAME_STEP, VectorEnvBase
from . import _kiln, registry
from . import cluster as cluster_module
from .benchmarks import Benchmark
from .datasets import Datasets
from .env import (
    _DEFAULT,
    _benchmark_uri_and_program,
    _check_benchmark,
    action_value,
    check_observation_name,
    resolve_reward_space,
)
from .errors import (
    BY_NAME,
    FAULT_REASONS,
    CompileError,
    InternalError,
    InvalidArgument,
    KilnError,
    NotFound,
    Overloaded,
    SessionLost,
    Timeout,
    Unimplemented,
)
from .spaces import Space, from_raw, no_observation

# Errors that end one env's episode (truncated, reason in infos["fault"]);
# any other error is the caller's bug and raises.
FAULTS = FAULT_REASONS


def make_vec(env_id: Union[str, registry.EnvSpec], num_envs: int, **kwargs: Any) -> VectorEnv:
    """A kiln.VectorEnv of `num_envs` envs of `env_id` (see VectorEnv)."""
    return VectorEnv(env_id, num_envs, **kwargs)


# The values of autoreset_mode and what metadata["autoreset_mode"] says.
_AUTORESET_MODES = {"next_step": NEXT_STEP, "same_step": SAME_STEP}
# Attributes call()/get_attr() give per env (the rest are the vector env's own).
_PER_ENV = {
    "benchmark": "_episode_benchmark",
    "episode_steps": "_episode_steps",
    "needs_reset": "_needs_reset",
}


class BatchSpace:
    """The batched form of one env's space: `num_envs` members at once.
    sample() gives a numpy array (a list for spaces without a dtype). What a
    VectorEnv's action_space and observation_space are without gymnasium
    (with it: gymnasium's batch_space of the single spaces)."""

    def __init__(self, single: Space, num_envs: int):
        self.single = single
        self.num_envs = num_envs

    @property
    def shape(self) -> tuple:
        """(num_envs,) + the single space's shape."""
        return (self.num_envs,) + tuple(self.single.shape)

    @property
    def dtype(self) -> Any:
        """The single space's dtype (None for spaces without one)."""
        return self.single.dtype

    @property
    def n(self) -> int:
        """The single discrete space's number of choices."""
        return self.single.n

    def seed(self, seed: Optional[int] = None) -> Optional[int]:
        """Reseeds sample() (through the single space)."""
        self.single.seed(seed)
        return seed

    def sample(self) -> Any:
        """One member of the single space per env."""
        if self.single.kind in ("discrete", "named_discrete") and self.single.n > 0:
            # One draw for the batch: a learner samples every step.
            return self.single._rng.integers(self.single.n, size=self.num_envs)
        members = [self.single.sample() for _ in range(self.num_envs)]
        if self.single.dtype is None:
            return members
        return np.asarray(members, dtype=self.single.dtype)

    def contains(self, batch: Any) -> bool:
        """True if `batch` holds one member of the single space per env."""
        return len(batch) == self.num_envs and all(self.single.contains(m) for m in batch)

    def __contains__(self, batch: Any) -> bool:
        return self.contains(batch)

    def __repr__(self) -> str:
        return f"BatchSpace({self.single!r}, {self.num_envs})"


class _Result:
    """One env's step (or reset) outcome, before batching."""

    __slots__ = ("env", "observation", "reward", "terminated", "truncated", "info")

    def __init__(self, env, observation, reward, terminated, truncated, info):
        self.env = env
        self.observation = observation
        self.reward = reward
        self.terminated = terminated
        self.truncated = truncated
        self.info = info


class VectorEnv(Closing, registry.SpecOwner, VectorEnvBase):
    """`num_envs` envs of one env id, stepped together (see the module doc).

    benchmarks: what each episode runs: a dataset URI
      ("benchmark://kiln-bench-v0"; a generator such as
      "generator://csmith-v0" takes its first `generator_count` seeds), a list
      of URIs and kiln.Benchmark programs, or None for the env id's own.
    benchmark_order: "cycle" (each new episode takes the next benchmark) or
      "random" (drawn with `seed`).
    batch_size: how many envs recv() returns (default: all).
    max_episode_steps: episodes longer than this end truncated (None: never).
    autoreset_mode: "next_step" (gymnasium's default: the step after an
      episode ended resets that env) or "same_step" (the ending step resets
      it; infos["final_obs"] and infos["final_info"] keep the ended episode's
      last observation and info). send()/recv() always reset on the next send.
    Other arguments as kiln.make().
    """

    render_mode: Optional[str] = None

    def __init__(
        self,
        env_id: Union[str, registry.EnvSpec],
        num_envs: int,
        *,
        benchmarks: Any = None,
        benchmark_order: str = "cycle",
        generator_count: int = 100,
        seed: Optional[int] = None,
        batch_size: Optional[int] = None,
        max_episode_steps: Optional[int] = None,
        cluster: Any = None,
        observation_space: Any = _DEFAULT,
        reward_space: Any = _DEFAULT,
        action_space: Optional[str] = None,
        timeout: float = 60.0,
        experiment: Optional[str] = None,
        key_file: Optional[str] = None,
        experiment_key: Optional[str] = None,
        autoreset_mode: str = "next_step",
    ):
        if autoreset_mode not in _AUTORESET_MODES:
            raise InvalidArgument(
                f"autoreset_mode must be 'next_step' or 'same_step', got {autoreset_mode!r}"
            )
        self.metadata = {"autoreset_mode": _AUTORESET_MODES[autoreset_mode], "render_modes": []}
        self._same_step = autoreset_mode == "same_step"
        if not isinstance(num_envs, int) or isinstance(num_envs, bool) or num_envs < 1:
            raise InvalidArgument(f"num_envs must be a positive int, got {num_envs!r}")
        batch_size = num_envs if batch_size is None else batch_size
        if not isinstance(batch_size, int) or not 1 <= batch_size <= num_envs:
            raise InvalidArgument(f"batch_size must be an int in [1, {num_envs}], got {batch_size!r}")
        if max_episode_steps is not None and (
            not isinstance(max_episode_steps, int) or max_episode_steps < 1
        ):
            raise InvalidArgument(
                f"max_episode_steps must be a positive int or None, got {max_episode_steps!r}"
            )
        if benchmark_order not in ("cycle", "random"):
            raise InvalidArgument(
                f"benchmark_order must be 'cycle' or 'random', got {benchmark_order!r}"
            )
        self.spec = registry.spec(env_id)
        self.num_envs = num_envs
        self.batch_size = batch_size
        self.max_episode_steps = max_episode_steps
        self._timeout = float(timeout)
        self._closed = self.closed = True
        self._lease = cluster_module.lease(cluster)
        try:
            self._client: Any = _kiln.Client(
                self._lease.endpoint, timeout, experiment or "", key_file or "",
                experiment_key or "",
            )
            raw_actions, raw_observations = self._client.get_spaces(self.spec.session_type)
            self._core: Any = _kiln.VectorCore(self._client, num_envs)
            self._closed = self.closed = False
            self._set_spaces(raw_actions, raw_observations, observation_space, reward_space,
                             action_space, seed)
            self._benchmarks = self._resolve_benchmarks(benchmarks, generator_count)
        except BaseException:
            self._lease.release()
            self._closed = self.closed = True
            raise
        self._order = benchmark_order
        self._rng = np.random.default_rng(seed)
        # Per-env generators of the random order after reset(seed=[...]).
        self._env_rngs: Optional[list] = None
        self._next_benchmark = 0
        self._needs_reset = [True] * num_envs
        self._episode_steps = [0] * num_envs
        self._metric = [None] * num_envs
        self._last_observation = [None] * num_envs
        self._episode_benchmark = [None] * num_envs
        self._starting_uri = [None] * num_envs  # the benchmark of each start in flight
        # How many episodes each fault reason ended (and starts it cost).
        self.fault_counts: collections.Counter = collections.Counter()

    # --- spaces -----------------------------------------------------------
    def _set_spaces(self, raw_actions, raw_observations, observation_space, reward_space,
                    action_space, seed):
        observation_spaces = {s.name: from_raw(s) for s in raw_observations}
        self._observation_names = list(observation_spaces)
        session_type = self.spec.session_type
        self._observation = (
            self.spec.observation_space if observation_space is _DEFAULT else observation_space
        )
        if self._observation is not None:
            check_observation_name(session_type, observation_spaces, self._observation)
        self._reward = resolve_reward_space(
            session_type,
            observation_spaces,
            self.spec.reward_space if reward_space is _DEFAULT else reward_space,
        )
        self._action_space_name = action_space if action_space is not None else self.spec.action_space
        raw_action = raw_actions[0]
        if self._action_space_name:
            named = [s for s in raw_actions if s.name == self._action_space_name]
            if not named:
                raise NotFound(
                    f"{session_type} has no action space {self._action_space_name!r}; it has "
                    f"{', '.join(s.name for s in raw_actions)}"
                )
            raw_action = named[0]
        self.single_action_space = from_raw(raw_action, seed)
        self.action_space = _batched(self.single_action_space, self.num_envs)
        self.single_observation_space = (
            observation_spaces[self._observation] if self._observation else no_observation()
        )
        self.observation_space = (
            _batched(self.single_observation_space, self.num_envs)
            if self.single_observation_space is not None
            else None
        )
        self._wanted = ([self._observation] if self._observation else []) + (
            [self._reward[0]] if self._reward else []
        )
        self._wanted_indices = [self._observation_names.index(n) for n in self._wanted]

    @property
    def reward_space(self) -> Optional[str]:
        """The reward space's name, or None (rewards are then 0.0)."""
        return self._reward[0].removeprefix("Reward:") if self._reward else None

    # --- benchmarks -------------------------------------------------------
    def _resolve_benchmarks(self, benchmarks, generator_count):
        if benchmarks is None:
            return [self.spec.benchmark]
        if isinstance(benchmarks, (str, Benchmark)):
            if isinstance(benchmarks, str) and _is_dataset_uri(benchmarks):
                with Datasets(self._client, self.spec.session_type) as datasets:
                    found = datasets[benchmarks]
                    limit = generator_count if found.size is None else None
                    uris = datasets.benchmarks(benchmarks, limit)
                if not uris:
                    raise NotFound(f"dataset {benchmarks!r} has no benchmarks")
                return uris
            benchmarks = [benchmarks]
        benchmarks = list(benchmarks)
        if not benchmarks:
            raise InvalidArgument("benchmarks is empty: give at least one")
        for benchmark in benchmarks:
            _check_benchmark(benchmark)
        return benchmarks

    def _draw_benchmark(self, env=None):
        if self._order == "random":
            rng = self._rng if self._env_rngs is None or env is None else self._env_rngs[env]
            return self._benchmarks[int(rng.integers(len(self._benchmarks)))]
        benchmark = self._benchmarks[self._next_benchmark % len(self._benchmarks)]
        self._next_benchmark += 1
        return benchmark

    def benchmark_state(self) -> dict:
        """Where the choice of benchmarks stands (the cycle's position and
        the random order's generators): what a checkpoint saves so that a
        resumed run goes on with the benchmarks it had not reached."""
        state = {"next_benchmark": self._next_benchmark, "rng": self._rng.bit_generator.state}
        if self._env_rngs is not None:
            state["env_rngs"] = [rng.bit_generator.state for rng in self._env_rngs]
        return state

    def set_benchmark_state(self, state: dict) -> None:
        """Restores a benchmark_state(); the next episodes started (reset()
        without a seed, or an autoreset) continue from it."""
        try:
            next_benchmark = int(state["next_benchmark"])
            self._rng.bit_generator.state = state["rng"]
            env_rngs = None
            if state.get("env_rngs") is not None:
                env_rngs = [np.random.default_rng() for _ in range(self.num_envs)]
                if len(state["env_rngs"]) != self.num_envs:
                    raise ValueError(f"{len(state['env_rngs'])} env generators, not {self.num_envs}")
                for rng, saved in zip(env_rngs, state["env_rngs"]):
                    rng.bit_generator.state = saved
        except (KeyError, TypeError, ValueError) as error:
            raise InvalidArgument(f"not a VectorEnv benchmark state: {error!r}") from None
        self._next_benchmark = next_benchmark
        self._env_rngs = env_rngs

    # --- episodes ---------------------------------------------------------
    def _start(self, env):
        """Starts env's next episode; its reset result. A benchmark that
        cannot start (not found, a compile error) is passed over for the
        next; a worker that is gone, busy or slow is waited out, within the
        env's timeout, while the cluster replaces it."""
        deadline = time.monotonic() + self._timeout
        benchmark = self._draw_benchmark(env)
        skipped = 0
        while True:
            uri, program = _benchmark_uri_and_program(benchmark)
            try:
                values = self._core.start(
                    env, self.spec.session_type, uri, self._action_space_name, self._wanted,
                    program,
                )
                break
            except (NotFound, CompileError) as error:
                self.fault_counts["start_" + FAULTS.get(type(error).__name__, "not_found")] += 1
                skipped += 1
                if skipped >= min(len(self._benchmarks), 8):
                    raise
                benchmark = self._draw_benchmark(env)
            except (SessionLost, Timeout, Overloaded) as error:
                self.fault_counts["start_" + FAULTS[type(error).__name__]] += 1
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.1)
        return self._started(env, uri, values)

    def _begin_starts(self, envs, benchmarks=None):
        """Starts the next episode of each of `envs` without waiting: the
        starts are placed, then compile on the workers (in parallel) while
        the learner goes on; recv() answers each (_answer). benchmarks: one
        per env instead of the next drawn (reset(options={"benchmark": ...}))."""
        if not envs:
            return
        if benchmarks is None:
            benchmarks = [self._draw_benchmark(env) for env in envs]
        pairs = [_benchmark_uri_and_program(b) for b in benchmarks]
        for env, (uri, _) in zip(envs, pairs):
            self._starting_uri[env] = uri
        self._core.begin_starts(
            envs, self.spec.session_type, pairs, self._action_space_name, self._wanted
        )

    def _start_answer(self, answer):
        """One env's start answer from the core, as its reset result. An env
        whose start failed (its benchmark, its worker) starts again, as
        _start() does."""
        env, values, *_, error_class, message, worker_us, _start = answer
        if error_class is None:
            return self._started(env, self._starting_uri[env], values, worker_us)
        if error_class in FAULTS or error_class == "NotFound":
            self.fault_counts["start_" + FAULTS.get(error_class, "not_found")] += 1
            return self._start(env)
        raise BY_NAME.get(error_class, InternalError)(message)

    def _started(self, env, uri, values, worker_us=None):
        observed = dict(zip(self._wanted, values))
        self._needs_reset[env] = False
        self._episode_steps[env] = 0
        self._episode_benchmark[env] = uri
        if self._reward and self._reward[1]:
            self._metric[env] = observed[self._reward[0]]
        observation = observed.get(self._observation)
        self._last_observation[env] = observation
        info = {"benchmark": uri}
        if worker_us is not None:
            info["worker_us"] = worker_us
        return _Result(env, observation, 0.0, False, False, info)

    def _answer(self, answer):
        """One env's step (or start) answer from the core, as a result."""
        if answer[-1]:  # a start's answer
            return self._start_answer(answer)
        (env, observations, ended, no_effect, applied, _new_space, restored, error_class, message,
         worker_us, _) = answer
        if error_class is not None:
            reason = FAULTS.get(error_class)
            if reason is None:
                raise BY_NAME.get(error_class, InternalError)(message)
            self.fault_counts[reason] += 1
            self._needs_reset[env] = True
            return _Result(
                env,
                self._last_observation[env],
                0.0,
                False,
                True,
                {
                    "fault": f"{reason}: {message}",
                    "benchmark": self._episode_benchmark[env],
                    "actions_applied": applied,
                },
            )
        observed = dict(zip(self._wanted, observations))
        reward = 0.0
        if self._reward:
            name, is_delta = self._reward
            value = observed[name]
            if is_delta:
                reward, self._metric[env] = float(value - self._metric[env]), value
            else:
                reward = float(value)
        self._episode_steps[env] += 1
        truncated = (
            not ended
            and self.max_episode_steps is not None
            and self._episode_steps[env] >= self.max_episode_steps
        )
        if ended or truncated:
            self._needs_reset[env] = True
        observation = observed.get(self._observation)
        self._last_observation[env] = observation
        info = {
            "action_had_no_effect": no_effect,
            "actions_applied": applied,
            "worker_us": worker_us,
            "restored": restored,
        }
        return _Result(env, observation, reward, bool(ended), truncated, info)

    # --- gymnasium's synchronous API --------------------------------------
    def reset(
        self,
        seed: Union[int, Sequence[Optional[int]], None] = None,
        options: Optional[dict] = None,
    ) -> tuple[Any, dict]:
        """Starts a new episode in every env: (observations, infos).

        seed: an int seeds the benchmark order, the action space and
          np_random, and restarts the cycle; a list (one seed or None per
          env) gives each env its own generator of the random order.
        options: {"benchmark": a URI or kiln.Benchmark for every env, or a
          list of one per env} for these episodes (later ones go back to
          `benchmarks`).
        """
        self._check_open()
        if self._core.in_flight_count:
            raise InvalidArgument("steps are in flight: recv() them before reset()")
        benchmarks = self._reset_benchmarks(_vector_reset_options(options))
        self._seed(seed)
        self._begin_starts(list(range(self.num_envs)), benchmarks)
        results = self._collect(self.num_envs)
        results.sort(key=lambda r: r.env)
        batch = self._batch(results)
        return batch[0], batch[4]

    def _seed(self, seed):
        if seed is None:
            return
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            VectorEnvBase.reset(self, seed=int(seed))
            self._rng = np.random.default_rng(seed)
            self._env_rngs = None
            self.action_space.seed(int(seed))
            self.single_action_space.seed(int(seed))
            self._next_benchmark = 0
            return
        seeds = list(seed) if isinstance(seed, (list, tuple, np.ndarray)) else None
        if seeds is None or len(seeds) != self.num_envs:
            raise InvalidArgument(
                f"seed must be an int, None or a list of {self.num_envs} (one per env), got {seed!r}"
            )
        self._env_rngs = [np.random.default_rng(s) for s in seeds]
        self._next_benchmark = 0

    def _reset_benchmarks(self, benchmark):
        if benchmark is None:
            return None
        if isinstance(benchmark, (list, tuple)):
            if len(benchmark) != self.num_envs:
                raise InvalidArgument(
                    f"reset option 'benchmark' has {len(benchmark)} benchmarks for "
                    f"{self.num_envs} envs: give one, or one per env"
                )
            benchmarks = list(benchmark)
        else:
            benchmarks = [benchmark] * self.num_envs
        for each in benchmarks:
            _check_benchmark(each)
        return benchmarks

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """One step of every env: (observations, rewards, terminations,
        truncations, infos), in env order. An env whose episode ended on its
        last step resets instead (autoreset), ignoring its action; in the
        same-step mode, the step that ends an episode resets it."""
        self._check_open()
        if self._core.in_flight_count:
            raise InvalidArgument("the async API is in use: recv() what is in flight first")
        self.send(actions)
        results = self._collect_same_step() if self._same_step else self._collect(self.num_envs)
        results.sort(key=lambda r: r.env)
        return self._batch(results)

    def _collect_same_step(self):
        """Every answer of the step, with same-step autoreset: an env whose
        episode ends starts its next one as soon as its step answers (the
        start compiles while the other envs' steps run) and returns that
        episode's first observation, the last one and its info going to
        info["final_obs"] / info["final_info"]."""
        results, ended = [], {}
        deadline = time.monotonic() + self._timeout + 30.0
        while self._core.in_flight_count:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout(f"{self._core.in_flight_count} steps or starts had no answer "
                              f"within {self._timeout} s")
            for answer in self._core.recv(1, left):  # one at a time: the first ready
                result = self._answer(answer)
                if result.env in ended:  # the next episode's start
                    _start_next(ended.pop(result.env), result)
                    continue
                results.append(result)
                if result.terminated or result.truncated:
                    ended[result.env] = result
                    self._begin_starts([result.env])
        return results

    # --- EnvPool's asynchronous API ---------------------------------------
    def async_reset(self) -> None:
        """Resets every env; recv() returns their first observations."""
        self._check_open()
        if self._core.in_flight_count:
            raise InvalidArgument("steps are in flight: recv() them before async_reset()")
        self._begin_starts(list(range(self.num_envs)))

    def send(self, actions: Any, env_ids: Optional[Sequence[int]] = None) -> None:
        """Sends a step to each of `env_ids` (default: every env), actions[i]
        to env_ids[i]; an env whose episode ended resets instead."""
        self._check_open()
        ids = list(range(self.num_envs)) if env_ids is None else [int(i) for i in env_ids]
        actions = actions.tolist() if isinstance(actions, np.ndarray) else list(actions)
        if len(actions) != len(ids):
            raise InvalidArgument(
                f"send got {len(actions)} actions for {len(ids)} envs: one action per env"
            )
        step_ids, step_actions = [], []
        resets = []
        for env, action in zip(ids, actions):
            if not 0 <= env < self.num_envs:
                raise InvalidArgument(f"env id {env} is out of range [0, {self.num_envs})")
            if self._needs_reset[env]:
                if self._core.in_flight(env):
                    raise InvalidArgument(
                        f"env {env} is still starting: recv() its first observation before "
                        "sending it a step"
                    )
                resets.append(env)
            else:
                step_ids.append(env)
                step_actions.append(self._action_value(action))
        # Steps leave first: the resets' placements overlap their compiles.
        if step_ids:
            self._core.send(step_ids, step_actions, self._wanted_indices,
                            self.single_action_space.raw)
        self._begin_starts(resets)

    def recv(self) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """The first `batch_size` envs that answered: (observations,
        rewards, terminations, truncations, infos), infos["env_id"] their ids."""
        self._check_open()
        results = self._collect(self.batch_size)
        if not results:
            raise InvalidArgument("recv() with nothing sent: send() or async_reset() first")
        batch = self._batch(results)
        batch[4]["env_id"] = np.fromiter((r.env for r in results), dtype=np.int64,
                                         count=len(results))
        return batch

    def _collect(self, count):
        results = []
        deadline = time.monotonic() + self._timeout + 30.0
        while len(results) < count and self._core.in_flight_count:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout(
                    f"{count - len(results)} steps had no answer within {self._timeout} s"
                )
            for answer in self._core.recv(count - len(results), left):
                results.append(self._answer(answer))
        return results

    def _action_value(self, action):
        return action_value(self.single_action_space, action)

    def _batch(self, results):
        observations = None
        if self.single_observation_space is not None:
            observations = _batch_observations(
                self.single_observation_space, [r.observation for r in results]
            )
        rewards = np.fromiter((r.reward for r in results), dtype=np.float64, count=len(results))
        terminations = np.fromiter((r.terminated for r in results), dtype=bool, count=len(results))
        truncations = np.fromiter((r.truncated for r in results), dtype=bool, count=len(results))
        return observations, rewards, terminations, truncations, _batch_infos(results)

    # --- gymnasium's attribute access ---------------------------------------
    def get_attr(self, name: str) -> tuple:
        """The attribute `name` of each env, as gymnasium's vector envs give it:
        "benchmark" (its episode's), "episode_steps" and "needs_reset" per
        env; any other attribute of the vector env (spec, reward_space, ...),
        the single-env space for "observation_space" / "action_space", the
        same for every env."""
        return self.call(name)

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple:
        """get_attr(name), each called with the arguments if callable."""
        if name in _PER_ENV:
            values = list(getattr(self, _PER_ENV[name]))
        elif name in ("observation_space", "action_space"):
            values = [getattr(self, "single_" + name)] * self.num_envs
        elif not name.startswith("_") and hasattr(self, name):
            values = [getattr(self, name)] * self.num_envs
        else:
            raise AttributeError(
                f"kiln's VectorEnv envs have no attribute {name!r} (per env: "
                f"{', '.join(_PER_ENV)}; or an attribute of the VectorEnv)"
            )
        return tuple(v(*args, **kwargs) if callable(v) else v for v in values)

    def set_attr(self, name: str, values: Any) -> None:
        """Not supported: kiln's envs are one VectorEnv, with nothing to set
        per env (make another VectorEnv with other arguments)."""
        raise Unimplemented(
            f"set_attr({name!r}): kiln's vector env has no per-env attributes to set; "
            "make a VectorEnv with the arguments you want"
        )

    # --- the rest ---------------------------------------------------------
    def close(self, **kwargs: Any) -> None:
        """Ends every session and lets go of the cluster; safe to call twice."""
        if self._closed:
            return
        self._closed = self.closed = True
        try:
            for env in range(self.num_envs):
                try:
                    self._core.end(env)
                except KilnError:
                    pass
        finally:
            self._core = None
            self._client = None
            self._lease.release()

    def _check_open(self):
        if self._closed:
            raise InvalidArgument("this vector env is closed")

    def __repr__(self) -> str:
        return f"<kiln.VectorEnv {self.spec.id} x{self.num_envs}>"


def _start_next(result, start):
    """`result` (an episode's last step) given the next episode's first
    observation from `start`, its own kept in info["final_obs"] / ["final_info"]."""
    final_info = dict(result.info)
    result.info = dict(start.info)
    result.info["final_obs"] = result.observation
    result.info["final_info"] = final_info
    result.observation = start.observation


def _vector_reset_options(options):
    """The benchmark option of reset(options=) (None if not given);
    kiln.InvalidArgument naming the option kiln knows for any other."""
    if options is None:
        return None
    if not isinstance(options, dict):
        raise InvalidArgument(f"reset options must be a dict, got {type(options).__name__}")
    unknown = sorted(set(options) - {"benchmark"})
    if unknown:
        raise InvalidArgument(
            f"unknown reset option(s) {', '.join(map(repr, unknown))}; kiln's vector env "
            "takes 'benchmark' (one for every env, or a list of one per env)"
        )
    return options.get("benchmark")


def _batched(single, num_envs):
    """The batched space of `single`: gymnasium's batch_space, else BatchSpace."""
    if _gymnasium.AVAILABLE:
        return _gymnasium.batch_space(single, num_envs)
    return BatchSpace(single, num_envs)


def _batch_observations(single, values):
    """`values` (one observation per env) batched: as gymnasium batches them
    for its spaces (an array for a Box, a dict of arrays for a Dict, a tuple
    for the rest), else a numpy array of the single space's dtype."""
    if _gymnasium.AVAILABLE:
        try:
            out = _gymnasium.create_empty_array(single, len(values))
            return _gymnasium.concatenate(single, values, out)
        except (TypeError, ValueError, AssertionError, KeyError):
            pass  # a faulted env without observation: the generic form below
    dtype = getattr(single, "dtype", None)
    try:
        return np.asarray(values, dtype=dtype if dtype is not None else object)
    except (TypeError, ValueError):
        observations = np.empty(len(values), dtype=object)
        observations[:] = values
        return observations


def _is_dataset_uri(uri):
    scheme, sep, rest = uri.partition("://")
    return bool(sep) and scheme in ("benchmark", "generator") and "/" not in rest.strip("/")


def _batch_infos(results):
    """gymnasium's vector infos: each key an array over the batch, with a
    boolean "_key" array saying which envs have it."""
    count = len(results)
    infos = {}
    for position, result in enumerate(results):
        for key, value in result.info.items():
            if key not in infos:
                infos[key] = [None] * count
            infos[key][position] = value
    batched = {}
    for key, values in infos.items():
        mask = np.fromiter((v is not None for v in values), dtype=bool, count=count)
        present = [v for v in values if v is not None]
        if present and all(isinstance(v, (bool, np.bool_)) for v in present):
            array = np.array([bool(v) if v is not None else False for v in values])
        elif present and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                             for v in present):
            array = np.array([v if v is not None else 0 for v in values], dtype=np.int64)
        else:
            array = np.empty(count, dtype=object)
            array[:] = values
        batched[key] = array
        batched["_" + key] = mask
    return batched
