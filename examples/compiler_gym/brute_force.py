"""A parallel brute force of an action space: CompilerGym v0.2.5's
examples/brute_force.py, ported to kiln. Every sequence of
--episode_length actions from --brute_force_action_list is run by worker
threads, each with its own env, and the rewards of each are written to
<output_dir>/results.csv (meta.json beside it). What changed: the imports,
argparse for absl's flags, plain numbers for humanize, a required
--output_dir (kiln keeps no logs directory of its own) and the benchmark
name.

    /usr/bin/python3 examples/compiler_gym/brute_force.py --env=llvm-ic-v0 \\
        --benchmark=kiln-bench-v0/dijkstra --episode_length=3 \\
        --brute_force_action_list=-sroa,-mem2reg,-gvn --output_dir=/tmp/bf
"""

import argparse
import itertools
import json
import math
import sys
from pathlib import Path
from queue import Queue
from threading import Thread
from time import time
from typing import Any, Callable, List

import kiln.compiler_gym as compiler_gym
from kiln.compiler_gym.envs import CompilerEnv


def grouper(iterable, n):
    """Split an iterable into chunks of length `n`, padded with None."""
    args = [iter(iterable)] * n
    return itertools.zip_longest(*args, fillvalue=None)


class BruteForceProducer(Thread):
    """Enumerates every sequence of episode_length actions, in chunks, into in_q."""

    def __init__(self, in_q: Queue, actions: List[int], episode_length: int, nproc: int,
                 chunksize: int = 128):
        super().__init__()
        self.in_q, self.actions = in_q, actions
        self.episode_length, self.nproc, self.chunksize = episode_length, nproc, chunksize
        self.alive = True

    def run(self):
        for chunk in grouper(itertools.product(*[self.actions] * self.episode_length),
                             self.chunksize):
            if not self.alive:
                break
            self.in_q.put(chunk)
        for _ in range(self.nproc):  # one end signal per worker
            self.in_q.put(None)


class BruteForceWorker(Thread):
    """Runs the sequences of each chunk from in_q; puts (actions, rewards) on out_q."""

    def __init__(self, worker_id: int, in_q: Queue, out_q: Queue, env: CompilerEnv):
        super().__init__()
        self.id, self.in_q, self.out_q, self.env = worker_id, in_q, out_q, env
        self.num_trials = 0
        self.alive = True

    def run(self) -> None:
        chunk = self.in_q.get()
        while chunk and self.alive:
            results = []
            for actions in chunk:
                if not actions:  # the padding of the last chunk
                    break
                self.num_trials += 1
                results.append((actions, self.run_one_episode(actions)))
            self.out_q.put(results)
            chunk = self.in_q.get()
        self.out_q.put(None)
        self.env.close()

    def run_one_episode(self, actions: List[int]) -> List[float]:
        """The reward of every action of one sequence."""
        self.env.reset()
        rewards = []
        for action in actions:
            _, reward, done, _ = self.env.step(action)
            rewards.append(reward)
            if done:
                break
        return rewards


def run_brute_force(make_env: Callable[[], Any], action_names: List[str], episode_length: int,
                    outdir: Path, nproc: int, chunksize: int = 128) -> None:
    """Run a brute force job."""
    outdir.mkdir(parents=True, exist_ok=True)
    meta_path, results_path = outdir / "meta.json", outdir / "results.csv"
    with make_env() as env:
        env.reset()
        action_names = action_names or env.action_space.names
        if not env.reward_space:
            raise ValueError("A reward space must be specified for brute force search")
        reward_space_name = env.reward_space.name
        actions = [env.action_space.names.index(a) for a in action_names]
        benchmark_uri = str(env.benchmark)
        meta = {
            "env": env.spec.id, "action_names": list(action_names), "benchmark": benchmark_uri,
            "reward": reward_space_name, "init_reward": env.reward[reward_space_name],
            "episode_length": episode_length, "nproc": nproc, "chunksize": chunksize,
        }
        meta_path.write_text(json.dumps(meta))
        print(f"Wrote {meta_path}")
        print(f"Writing results to {results_path}")

    in_q, out_q = Queue(maxsize=32), Queue(maxsize=128)
    producer = BruteForceProducer(in_q=in_q, nproc=nproc, actions=actions,
                                  episode_length=episode_length, chunksize=chunksize)
    producer.start()
    workers = [BruteForceWorker(worker_id=i, env=make_env(), in_q=in_q, out_q=out_q)
               for i in range(1, nproc + 1)]
    for worker in workers:
        worker.start()

    started = time()
    expected_trial_count = len(actions) ** episode_length
    expected_chunk_count = math.ceil(expected_trial_count / chunksize)
    chunk_count, best_reward, best_action_sequence = 0, -float("inf"), []
    print(f"Enumerating all episodes of {len(actions)} actions x {episode_length} steps")
    print(f"Started {len(workers)} brute force workers for benchmark {benchmark_uri} "
          f"using reward {reward_space_name}.")
    print(f"=== Running {expected_trial_count:,} trials ===")
    with open(results_path, "w", encoding="utf-8") as f:
        print(*[f"action_{i}" for i in range(1, episode_length + 1)],
              *[f"reward_{i}" for i in range(1, episode_length + 1)], sep=",", file=f)
        nproc_completed = 0
        while nproc_completed < nproc:
            chunk = out_q.get()
            if not chunk:
                nproc_completed += 1
                continue
            chunk_count += 1
            print(f"\r\033[KRuntime: {time() - started:.1f} seconds. "
                  f"Progress: {chunk_count / expected_chunk_count:.2%}. "
                  f"Best reward found: {best_reward}.", file=sys.stderr, flush=True, end="")
            for actions_run, rewards in chunk:
                print(*actions_run, *rewards, sep=",", file=f, flush=True)
                if rewards and rewards[-1] is not None and sum(rewards) > best_reward:
                    best_reward, best_action_sequence = sum(rewards), actions_run
    print(file=sys.stderr, flush=True)
    print("Ending jobs ... ", end="", flush=True)
    producer.alive = False
    for worker in workers:
        worker.alive = False
    producer.join()
    for worker in workers:
        worker.join()
    num_trials = sum(worker.num_trials for worker in workers)
    with make_env() as env:
        print(f"completed {num_trials:,} of {expected_trial_count:,} trials "
              f"({num_trials / expected_trial_count:.3%}), best sequence",
              " ".join([env.action_space.flags[i] for i in best_action_sequence]))


def main() -> None:
    """Main entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="llvm-ic-v0")
    parser.add_argument("--benchmark", default="kiln-bench-v0/crc32")
    parser.add_argument("--episode_length", type=int, default=2)
    parser.add_argument("--brute_force_action_list", default="",
                        help="comma-separated flags (default: every action, which takes long)")
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--output_dir", type=Path, required=True)
    args = parser.parse_args()
    run_brute_force(
        make_env=lambda: compiler_gym.make(args.env, benchmark=args.benchmark),
        action_names=[a for a in args.brute_force_action_list.split(",") if a],
        episode_length=args.episode_length,
        outdir=args.output_dir,
        nproc=args.nproc,
    )


if __name__ == "__main__":
    main()
