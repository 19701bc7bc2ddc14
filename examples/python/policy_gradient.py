#!/usr/bin/env python3
"""A small policy-gradient (REINFORCE) agent for LLVM pass ordering.

The policy is tabular: for each position in the pass sequence it keeps a
softmax over a handful of candidate passes, and it is trained on the
llvm-ic-v0 reward (instruction count reduction relative to -Oz) of one
benchmark. Each episode forks the untouched module instead of re-parsing
it. Run from the repository root after scripts/setup:

    PYTHONPATH=build/python /usr/bin/python3 examples/python/policy_gradient.py
"""

import argparse
import math
import random

import kiln

CANDIDATES = [
    "instcombine",
    "simplifycfg",
    "sroa",
    "gvn",
    "early-cse",
    "globaldce",
    "dce",
    "reassociate",
]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="benchmark://kiln-bench-v0/crc32")
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--length", type=int, default=6, help="passes per episode")
    parser.add_argument("--learning-rate", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cluster", default=None, help="coordinator (default: embedded)")
    args = parser.parse_args()
    if args.episodes < 1 or args.length < 1:
        parser.error("--episodes and --length must be at least 1")
    return args


def softmax(logits):
    top = max(logits)
    exps = [math.exp(x - top) for x in logits]
    total = sum(exps)
    return [e / total for e in exps]


def main():
    args = parse_args()
    rng = random.Random(args.seed)
    with kiln.make("llvm-ic-v0", cluster=args.cluster, benchmark=args.benchmark) as env:
        env.reset()
        names = env.action_space.names
        # Only candidates this LLVM build offers (pass names differ between versions).
        actions = [names.index(c) for c in CANDIDATES if c in names]
        if not actions:
            actions = list(range(min(8, env.action_space.n)))
        logits = [[0.0] * len(actions) for _ in range(args.length)]
        baseline, best = 0.0, (-math.inf, [])
        for episode in range(args.episodes):
            with env.fork() as trial:
                chosen, ret = [], 0.0
                for position in range(args.length):
                    probabilities = softmax(logits[position])
                    k = rng.choices(range(len(actions)), probabilities)[0]
                    _, reward, terminated, _, _ = trial.step(actions[k])
                    chosen.append(k)
                    ret += reward
                    if terminated:
                        break
            # REINFORCE with a running-mean baseline: raise the log-probability
            # of the choices in proportion to how much better the return was.
            advantage = ret - baseline
            baseline = 0.9 * baseline + 0.1 * ret
            for position, k in enumerate(chosen):
                probabilities = softmax(logits[position])
                for j in range(len(actions)):
                    gradient = (1.0 if j == k else 0.0) - probabilities[j]
                    logits[position][j] += args.learning_rate * advantage * gradient
            if ret > best[0]:
                best = (ret, [names[actions[k]] for k in chosen])
            if episode % 10 == 0 or episode == args.episodes - 1:
                print(f"episode {episode:3d}: return {ret:+.3f} (baseline {baseline:+.3f})")
        greedy = [names[actions[max(range(len(actions)), key=lambda j: row[j])]] for row in logits]
        print(f"best return {best[0]:+.3f} with: {' '.join(best[1])}")
        print(f"policy's greedy sequence: {' '.join(greedy)}")


if __name__ == "__main__":
    main()
