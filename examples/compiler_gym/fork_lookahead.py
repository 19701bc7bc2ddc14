"""One-step lookahead with env.fork(), as in CompilerGym's examples (only
the import differs): at each step, try a few candidate passes on forks,
keep the one with the best reward, stop when none helps.

    /usr/bin/python3 examples/compiler_gym/fork_lookahead.py --steps 5
"""

import argparse

import kiln.compiler_gym as compiler_gym


def lookahead(env, candidates, steps):
    env.reset()
    for step in range(steps):
        best_reward, best_action = 0.0, None
        for action in candidates:
            fork = env.fork()
            try:
                _, reward, done, info = fork.step(action)
                if "error_type" not in info and reward > best_reward:
                    best_reward, best_action = reward, action
            finally:
                fork.close()
        if best_action is None:
            print(f"step {step}: no candidate helps; stopping")
            break
        env.step(best_action)
        print(f"step {step}: {env.action_space.flags[best_action]} reward {best_reward:.4f}")
    print(f"episode reward {env.episode_reward:.4f}; "
          f"IR instructions {env.observation['IrInstructionCount']} "
          f"(-Oz: {env.observation['IrInstructionCountOz']})")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--benchmark", default="benchmark://kiln-bench-v0/crc32")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--candidates", type=int, default=12)
    args = parser.parse_args()
    with compiler_gym.make("llvm-ic-v0", benchmark=args.benchmark) as env:
        env.reset()
        candidates = list(range(min(args.candidates, env.action_space.n)))
        lookahead(env, candidates, args.steps)


if __name__ == "__main__":
    main()
