#!/usr/bin/env python3
"""Random search over LLVM pass orderings on llvm-ic-v0.

Plays a few episodes of random passes on one benchmark and keeps the pass
sequence with the best return (the IR instruction count reduction, relative
to what -Oz achieves: a return of 1.0 matches -Oz). Run from the repository
root after scripts/setup:

    PYTHONPATH=build/python /usr/bin/python3 examples/python/random_search.py

If the cluster's workers do not offer the llvm session type, it says so and
runs the same search on noop-v0 (reward: the growth of the "Sum" counter).
"""

import argparse
import sys
import time

import kiln


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="benchmark://kiln-bench-v0/crc32")
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--steps", type=int, default=20, help="passes per episode")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--cluster", default=None, help="coordinator tcp://host:port (default: embedded)"
    )
    args = parser.parse_args()
    if args.episodes < 1 or args.steps < 1:
        parser.error("--episodes and --steps must be at least 1")
    return args


def open_env(args):
    try:
        env = kiln.make("llvm-ic-v0", cluster=args.cluster, benchmark=args.benchmark)
        return env, args.benchmark
    except kiln.NotFound as error:
        print(f"llvm-ic-v0 is not available ({error});\n"
              "running the same random search on noop-v0 instead.")
        env = kiln.make("noop-v0", cluster=args.cluster, reward_space="Sum")
        return env, "benchmark://noop-v0/0"


def main():
    args = parse_args()
    env, benchmark = open_env(args)
    best_return, best_actions = float("-inf"), []
    started = time.monotonic()
    with env:
        env.reset(benchmark=benchmark, seed=args.seed)
        for episode in range(args.episodes):
            if episode:
                env.reset()
            for _ in range(args.steps):
                _, _, terminated, _, _ = env.step(env.action_space.sample())
                if terminated:
                    break
            names = [env.action_space.names[a] for a in env.actions]
            print(f"episode {episode + 1}/{args.episodes}: return {env.episode_reward:+.4f}")
            if env.episode_reward > best_return:
                best_return, best_actions = env.episode_reward, names
    elapsed = time.monotonic() - started
    print(f"best return {best_return:+.4f} on {benchmark} ({env.spec.id}, {elapsed:.1f} s)")
    print("best sequence: " + (" ".join(best_actions) or "(empty)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
