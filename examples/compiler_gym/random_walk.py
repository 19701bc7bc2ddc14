"""A random walk through the LLVM optimization space, written as for
CompilerGym: only the import differs (`import compiler_gym`).

    /usr/bin/python3 examples/compiler_gym/random_walk.py --steps 20
"""

import argparse

import kiln.compiler_gym as compiler_gym


def run_random_walk(env, step_count):
    rewards = []
    env.reset()
    for step in range(1, step_count + 1):
        action = env.action_space.sample()
        observation, reward, done, info = env.step(action)
        rewards.append(reward)
        print(f"step {step}: {env.action_space.names[action]} reward {reward:.4f} "
              f"(no effect: {info['action_had_no_effect']})")
        if done:
            break
    print(f"completed {len(rewards)} steps; cumulative reward {sum(rewards):.4f}, "
          f"episode reward {env.episode_reward:.4f}")
    print(f"state: {env.state}")
    print(f"commandline: {env.commandline()}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--env", default="llvm-autophase-ic-v0")
    parser.add_argument("--benchmark", default="benchmark://kiln-bench-v0/crc32")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with compiler_gym.make(args.env, benchmark=args.benchmark) as env:
        env.action_space.seed(args.seed)
        run_random_walk(env, args.steps)


if __name__ == "__main__":
    main()
