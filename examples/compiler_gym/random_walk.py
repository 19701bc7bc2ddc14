"""A random walk of the action space: CompilerGym v0.2.5's
examples/random_walk.py, ported to kiln. What changed: the imports
(kiln.compiler_gym for compiler_gym), argparse for absl's flags (kiln does
not depend on absl), plain numbers for the humanize package, and the
benchmark name (kiln-bench-v0 for cBench).

    /usr/bin/python3 examples/compiler_gym/random_walk.py --env=llvm-v0 \\
        --step_min=100 --step_max=100 --benchmark=kiln-bench-v0/dijkstra \\
        --reward=IrInstructionCount
"""

import argparse
import random

import kiln.compiler_gym as compiler_gym
from kiln.compiler_gym.envs import CompilerEnv
from kiln.compiler_gym.util.shell_format import emph
from kiln.compiler_gym.util.timer import Timer


def run_random_walk(env: CompilerEnv, step_count: int) -> None:
    """Takes up to step_count random actions, printing each, then a summary."""
    rewards = []
    step_num = 0
    with Timer() as episode_time:
        env.reset()
        for step_num in range(1, step_count + 1):
            action_index = env.action_space.sample()
            with Timer() as step_time:
                observation, reward, done, info = env.step(action_index)
            print(
                f"\n=== Step {step_num:,} ===\n"
                f"Action:       {env.action_space.names[action_index]} "
                f"(changed={not info.get('action_had_no_effect')})\n"
                f"Reward:       {reward}"
            )
            rewards.append(reward)
            if env.observation_space:
                print(f"Observation:\n{observation}")
            print(f"Step time:    {step_time}")
            if done:
                print("Episode ended by environment")
                break

    def reward_percentage(reward, rewards):
        if sum(rewards) == 0:
            return 0
        percentage = reward / sum(rewards)
        return emph(f"{'+' if percentage >= 0 else ''}{percentage:.2%}")

    print(
        f"\nCompleted {emph(f'{step_num:,}')} steps in {episode_time} "
        f"({step_num / episode_time.time:.1f} steps / sec).\n"
        f"Total reward: {sum(rewards)}\n"
        f"Max reward:   {max(rewards)} ({reward_percentage(max(rewards), rewards)} "
        f"at step {rewards.index(max(rewards)) + 1:,})"
    )


def main() -> None:
    """Main entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="llvm-v0")
    parser.add_argument("--benchmark", default="kiln-bench-v0/crc32")
    parser.add_argument("--reward", default="IrInstructionCount")
    parser.add_argument("--observation", default=None)
    parser.add_argument("--step_min", type=int, default=12)
    parser.add_argument("--step_max", type=int, default=256)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    random.seed(args.seed)
    with compiler_gym.make(args.env, benchmark=args.benchmark, reward_space=args.reward,
                           observation_space=args.observation) as env:
        env.action_space.seed(args.seed)
        step_min = min(args.step_min, args.step_max)
        step_max = max(args.step_min, args.step_max)
        run_random_walk(env=env, step_count=random.randint(step_min, step_max))


if __name__ == "__main__":
    main()
