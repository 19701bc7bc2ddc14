#!/usr/bin/env python3
"""Stable-Baselines3's PPO learns LLVM pass orderings on kiln, with no glue.

Trains PPO ("MlpPolicy" over the Autophase features) on
llvm-autophase-ic-v0 over kiln-bench-v0, with --envs envs stepped together
by kiln's vector env (kiln.sb3.make_vec_env: every env's step in flight at
once from this one process), episodes of --episode-steps passes; then plays
the learnt policy greedily on each benchmark and prints its reward against
random passes. The reward is the IR instruction count reduction relative to
-Oz (an episode's return of 1.0 matches -Oz). Run from the repository root
after scripts/setup:

    PYTHONPATH=build/python /usr/bin/python3 examples/python/sb3_ppo.py

--single trains on one kiln.make() env instead (SB3 wraps it in its own
DummyVecEnv: kiln's Env is a gymnasium.Env). stable_baselines3 2.4.1 and
gymnasium 1.0 come from pip, or from ../shared/third_party/python beside the
repository when they are not installed.
"""

import argparse
import pathlib
import sys
import time

try:
    import stable_baselines3  # noqa: F401
except ImportError:  # the copy beside the repository (see the module doc)
    sys.path.append(str(pathlib.Path(__file__).resolve().parents[3] / "shared" / "third_party" / "python"))

import numpy as np
import stable_baselines3 as sb3
import torch
from stable_baselines3.common.vec_env import VecMonitor

import kiln
from kiln.sb3 import make_vec_env

ENV_ID = "llvm-autophase-ic-v0"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=8, help="envs stepped together")
    parser.add_argument("--timesteps", type=int, default=8192, help="steps to train for")
    parser.add_argument("--episode-steps", type=int, default=16, help="passes per episode")
    parser.add_argument("--n-steps", type=int, default=64, help="PPO rollout steps per env")
    parser.add_argument("--benchmarks", default="benchmark://kiln-bench-v0",
                        help="dataset (or one benchmark URI) to train and play on")
    parser.add_argument("--single", action="store_true", help="one kiln.make() env, no vector env")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cluster", default=None,
                        help="coordinator tcp://host:port (default: embedded)")
    return parser.parse_args()


def make_envs(args):
    if args.single:
        # SB3 takes kiln's env as it is; TimeLimit gives its episodes an end.
        from gymnasium.wrappers import TimeLimit

        env = kiln.make(ENV_ID, cluster=args.cluster, faults_as_truncation=True)
        return TimeLimit(env, max_episode_steps=args.episode_steps)
    return VecMonitor(make_vec_env(ENV_ID, args.envs, cluster=args.cluster,
                                   benchmarks=args.benchmarks, benchmark_order="random",
                                   max_episode_steps=args.episode_steps, seed=args.seed))


def play(model, env, benchmark, steps, rng=None):
    """The return of one episode on `benchmark`: the policy's greedy passes,
    or random ones with `rng`."""
    observation, _ = env.reset(benchmark=benchmark)
    total = 0.0
    for _ in range(steps):
        if rng is None:
            action = int(model.predict(observation, deterministic=True)[0])
        else:
            action = int(rng.integers(env.action_space.n))
        observation, reward, terminated, truncated, _ = env.step(action)
        total += reward
        if terminated or truncated:
            break
    return total


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    envs = make_envs(args)
    model = sb3.PPO("MlpPolicy", envs, n_steps=args.n_steps, batch_size=64, seed=args.seed,
                    device="cpu", verbose=0)
    start = time.perf_counter()
    model.learn(args.timesteps)
    took = time.perf_counter() - start
    episodes = [e["r"] for e in model.ep_info_buffer]
    print(f"trained PPO for {args.timesteps} steps in {took:.1f} s "
          f"({args.timesteps / took:.0f} steps/s, {1 if args.single else args.envs} envs)")
    if episodes:
        print(f"mean return of the last {len(episodes)} training episodes: {np.mean(episodes):.3f}")
    envs.close()
    rng = np.random.default_rng(args.seed)
    with kiln.make(ENV_ID, cluster=args.cluster) as env:
        if args.benchmarks.count("/") > 2:
            benchmarks = [args.benchmarks]
        else:
            with kiln.datasets(args.cluster) as datasets:
                benchmarks = datasets.benchmarks(args.benchmarks)
        learnt, random = [], []
        for benchmark in benchmarks:
            learnt.append(play(model, env, benchmark, args.episode_steps))
            random.append(play(model, env, benchmark, args.episode_steps, rng))
            print(f"  {benchmark}: policy {learnt[-1]:.3f}, random passes {random[-1]:.3f}")
    print(f"mean return over {len(benchmarks)} benchmarks: policy {np.mean(learnt):.3f}, "
          f"random passes {np.mean(random):.3f}")


if __name__ == "__main__":
    main()
