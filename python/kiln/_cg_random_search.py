"""kiln.compiler_gym.random_search: CompilerGym's random_search() and
replay_actions_from_logs(), on kiln, writing the same files in `outdir`:
random_search.json, random_search_progress.csv,
random_search_best_actions.txt, random_search_best_actions_commandline.txt,
then (the best actions replayed) random_search_best_actions_progress.csv,
unoptimized.bc and optimized.bc. Workers are threads, each with its own
env from make_env(); the search ends after total_runtime seconds (and at
least one episode per worker)."""

import json
import threading
import time
from pathlib import Path
from typing import Any, Callable, List, NamedTuple, Optional, Union

from ._cg_env import CompilerEnv, CompilerGymEnv

_COLUMNS = "runtime_seconds,total_episode_count,total_step_count,num_passes,reward"


class RandomSearchProgressLogEntry(NamedTuple):
    """One row of random_search_progress.csv."""

    runtime_seconds: float
    total_episode_count: int
    total_step_count: int
    num_passes: int
    reward: float

    def to_csv(self) -> str:
        """The row as CSV text."""
        return (f"{self.runtime_seconds:.3f},{self.total_episode_count},"
                f"{self.total_step_count},{self.num_passes},{self.reward}")

    @classmethod
    def from_csv(cls, line: str) -> "RandomSearchProgressLogEntry":
        """A row read back."""
        runtime, episodes, steps, passes, reward = line.split(",")[:5]
        return cls(float(runtime), int(episodes), int(steps), int(passes), float(reward))


class RandomAgentWorker(threading.Thread):
    """Runs random episodes until `alive` is False (and one at least): an
    episode ends after `patience` steps without a new best return."""

    def __init__(self, make_env: Callable[[], Any], patience: int) -> None:
        super().__init__(daemon=True)
        self._make_env = make_env
        self._patience = patience
        self.total_environment_count = 0
        self.total_episode_count = 0
        self.total_step_count = 0
        self.best_returns = -float("inf")
        self.best_actions: List[int] = []
        self.best_commandline = ""
        self.best_found_at_time = time.time()
        self.alive = True
        self.error: Optional[BaseException] = None

    @property
    def should_run_one_episode(self) -> bool:
        """Whether to start another episode."""
        return self.alive or not self.total_episode_count

    def run(self) -> None:
        """Runs episodes in envs of make_env() until told to stop; keeps an error for
        random_search()."""
        try:
            while self.should_run_one_episode:
                self.total_environment_count += 1
                with self._make_env() as env:
                    self._patience = self._patience or env.action_space.n
                    while self.should_run_one_episode:
                        self.total_episode_count += 1
                        if not self.run_one_episode(env):
                            break
        except BaseException as error:  # reported by random_search()
            self.error = error

    def run_one_episode(self, env: Any) -> bool:
        """One random episode; False if the env ended it (an error)."""
        env.reset()
        actions: List[int] = []
        patience, total = self._patience, 0.0
        while patience >= 0:
            patience -= 1
            self.total_step_count += 1
            action = env.action_space.sample()
            actions.append(action)
            _, reward, done, _ = env.step(action)
            if done:
                return False
            total += reward
            if total > self.best_returns:
                patience = self._patience
                self.best_returns, self.best_actions = total, list(actions)
                self.best_commandline = env.commandline()
                self.best_found_at_time = time.time()
        return True


def random_search(make_env: Callable[[], Any], outdir: Optional[Union[str, Path]] = None,
                  total_runtime: Optional[float] = 600, patience: int = 0, nproc: int = 1,
                  skip_done: bool = False) -> Any:
    """Random search for the action sequence of highest return; returns the
    env the best actions were replayed in (closed)."""
    with make_env() as env:
        env.reset()
        if not isinstance(env.unwrapped, CompilerEnv):
            raise TypeError(
                f"random_search() requires CompilerEnv. Called with: {type(env).__name__}")
        if not env.reward_space:
            raise ValueError("A reward space must be specified for random search")
        if outdir is None:
            raise NotImplementedError(
                "kiln.compiler_gym.random_search needs an outdir: kiln keeps no user logs "
                "directory of its own")
        outdir = Path(outdir)
        outdir.mkdir(parents=True, exist_ok=True)
        metadata_path = outdir / "random_search.json"
        if skip_done and metadata_path.is_file():
            return 0
        names = list(env.action_space.names)
        metadata = {"env": env.spec.id if getattr(env, "spec", None) else "",
                    "benchmark": str(env.benchmark), "reward": env.reward_space.name,
                    "patience": patience}
        metadata_path.write_text(json.dumps(metadata, sort_keys=True, indent=2))
    workers = [RandomAgentWorker(make_env, patience) for _ in range(max(nproc, 1))]
    best = _search(workers, outdir, total_runtime)
    best_names = [names[a] for a in best.best_actions]
    (outdir / "random_search_best_actions.txt").write_text("\n".join(best_names) + "\n")
    (outdir / "random_search_best_actions_commandline.txt").write_text(
        best.best_commandline + "\n")
    with make_env() as env:
        env.reset()
        replay_actions(env, best_names, outdir)
    return env


def _search(workers: List[RandomAgentWorker], outdir: Path,
            total_runtime: Optional[float]) -> RandomAgentWorker:
    started = time.time()
    end = started + total_runtime if total_runtime else None
    last_best = -float("inf")
    for worker in workers:
        worker.start()
    with open(outdir / "random_search_progress.csv", "w", encoding="utf-8") as progress:
        print(_COLUMNS, file=progress, flush=True)
        while any(w.is_alive() for w in workers):
            if end is not None and time.time() >= end:
                for worker in workers:
                    worker.alive = False
            for worker in workers:
                worker.join(timeout=0.5 / len(workers))
            best = max(workers, key=lambda w: w.best_returns)
            if best.best_returns > last_best:
                last_best = best.best_returns
                entry = RandomSearchProgressLogEntry(
                    time.time() - started, sum(w.total_episode_count for w in workers),
                    sum(w.total_step_count for w in workers), len(best.best_actions),
                    best.best_returns)
                print(entry.to_csv(), file=progress, flush=True)
    for worker in workers:
        if worker.error is not None and not worker.best_actions:
            raise worker.error
    return max(workers, key=lambda w: w.best_returns)


def replay_actions(env: Any, action_names: List[str], outdir: Path) -> None:
    """Applies the named actions one by one, logging each step's reward to
    random_search_best_actions_progress.csv; writes unoptimized.bc and
    optimized.bc."""
    outdir = Path(outdir)
    start = time.time()
    if isinstance(env.unwrapped, CompilerGymEnv):
        env.write_bitcode(outdir / "unoptimized.bc")
    with open(outdir / "random_search_best_actions_progress.csv", "w", encoding="utf-8") as log:
        episode_reward = 0.0
        for i, action in enumerate(action_names, start=1):
            _, reward, done, info = env.step(env.action_space.names.index(action))
            if done:
                raise ValueError(f"the replay of {action} ended the episode: {info}")
            episode_reward += reward
            print(f"Step [{i:03d} / {len(action_names):03d}]: reward={reward:.4f}   \t"
                  f"episode={episode_reward:.4f}   \taction={action}")
            entry = RandomSearchProgressLogEntry(time.time() - start, 1, i, i, reward)
            print(entry.to_csv(), action, file=log, sep=",")
    if isinstance(env.unwrapped, CompilerGymEnv):
        env.write_bitcode(outdir / "optimized.bc")


def replay_actions_from_logs(env: Any, logdir: Union[str, Path], benchmark: Any = None) -> None:
    """Replays the best actions a random_search() wrote to `logdir`."""
    logdir = Path(logdir)
    best_actions_path = logdir / "random_search_best_actions.txt"
    meta_path = logdir / "random_search.json"
    for path in (best_actions_path, meta_path):
        if not path.is_file():
            raise FileNotFoundError(f"File not found: {path}")
    meta = json.loads(meta_path.read_text())
    actions = [line.strip() for line in best_actions_path.read_text().splitlines()
               if line.strip()]
    env.reward_space = meta["reward"]
    env.reset(benchmark=benchmark or meta["benchmark"])
    replay_actions(env, actions, logdir)


__all__ = ["random_search", "replay_actions", "replay_actions_from_logs",
           "RandomAgentWorker", "RandomSearchProgressLogEntry"]
