"""Brute force over a few passes: every sequence of up to --length of them,
each tried on a fork of the freshly reset env, as a CompilerGym user writes
it (only the import differs). Prints the best sequence and its reward.

    /usr/bin/python3 examples/compiler_gym/brute_force.py --length 2
"""

import argparse
import itertools

import kiln.compiler_gym as compiler_gym

PASSES = ["-mem2reg", "-instcombine", "-simplifycfg", "-gvn", "-sroa"]


def brute_force(env, flags, length):
    env.reset()
    indices = [env.action_space.flags.index(flag) for flag in flags]
    best = (float("-inf"), ())
    tried = 0
    for size in range(1, length + 1):
        for sequence in itertools.product(indices, repeat=size):
            fork = env.fork()
            try:
                _, reward, done, info = fork.multistep(list(sequence))
                tried += 1
                if "error_type" not in info and reward > best[0]:
                    best = (reward, sequence)
            finally:
                fork.close()
    return best, tried


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--benchmark", default="benchmark://kiln-bench-v0/crc32")
    parser.add_argument("--length", type=int, default=2)
    args = parser.parse_args()
    with compiler_gym.make("llvm-ic-v0", benchmark=args.benchmark) as env:
        (reward, sequence), tried = brute_force(env, PASSES, args.length)
        names = " ".join(env.action_space.flags[a] for a in sequence)
        print(f"tried {tried} sequences; best reward {reward:.4f}: {names}")


if __name__ == "__main__":
    main()
