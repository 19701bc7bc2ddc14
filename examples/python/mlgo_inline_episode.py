#!/usr/bin/env python3
"""One MLGO inlining episode through kiln: every inlining decision of LLVM's
ML inliner (opt-19, interactive mode) is a step of an mlgo-inline session.

By default it answers each decision with the compiler's own default advice,
which reproduces the reference build (DefaultNativeSize) exactly: reward 0;
--never answers "do not inline" everywhere and reports the size saved (or
lost) against it. LLVM's own default build, which the ML inliner does not
always reproduce, is LlvmDefaultNativeSize (docs/mlgo.md). Run from the repository root after scripts/setup:

    PYTHONPATH=build/python /usr/bin/python3 examples/python/mlgo_inline_episode.py
"""

import argparse

import kiln


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="benchmark://kiln-bench-v0/huffman")
    parser.add_argument("--never", action="store_true", help="never inline")
    parser.add_argument("--cluster", default=None, help="coordinator (default: embedded)")
    parser.add_argument("--max-decisions", type=int, default=100000)
    return parser.parse_args()


def main():
    args = parse_args()
    with kiln.make("mlgo-inline-v0", cluster=args.cluster, benchmark=args.benchmark,
                   observation_space="DefaultAdvice") as env:
        advice, _ = env.reset()
        decisions, total = 0, 0.0
        terminated = False
        while not terminated and decisions < args.max_decisions:
            action = 0 if args.never else int(advice)
            advice, reward, terminated, _, _ = env.step(action)
            total += reward or 0.0
            decisions += 1
        size = env.observation["NativeSize"]
        default = env.observation["DefaultNativeSize"]
        print(f"{decisions} decisions on {args.benchmark}")
        print(f"native size {size} bytes; default policy {default} bytes; "
              f"saved {default - size} bytes (return {total:+.0f})")


if __name__ == "__main__":
    main()
