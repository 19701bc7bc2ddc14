"""Tabular Q-learning over a handful of passes, the CompilerGym way (only the
import differs): the state is a few Autophase features, the actions a
ConstrainedCommandline subset, episodes a TimeLimit. Trains, then prints the
greedy policy's episode reward.

    /usr/bin/python3 examples/compiler_gym/q_learning.py --episodes 10
"""

import argparse
import random

import kiln.compiler_gym as compiler_gym
from kiln.compiler_gym.wrappers import ConstrainedCommandline, TimeLimit

FLAGS = ["-mem2reg", "-instcombine", "-simplifycfg", "-gvn", "-loop-rotate"]
# Autophase features that passes above change: BB count, branches, instructions, ...
FEATURES = (17, 23, 24, 51)


def state_key(observation, step):
    return tuple(int(observation[i]) for i in FEATURES) + (step,)


def run_episode(env, q, epsilon, alpha, gamma, length, rng, learn=True):
    observation = env.reset()
    total = 0.0
    for step in range(length):
        key = state_key(observation, step)
        values = q.setdefault(key, [0.0] * env.action_space.n)
        if rng.random() < epsilon:
            action = rng.randrange(env.action_space.n)
        else:
            action = max(range(env.action_space.n), key=lambda a: values[a])
        observation, reward, done, _ = env.step(action)
        total += reward
        if learn:
            following = q.setdefault(state_key(observation, step + 1), [0.0] * env.action_space.n)
            target = reward + (0.0 if done else gamma * max(following))
            values[action] += alpha * (target - values[action])
        if done:
            break
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--benchmark", default="benchmark://kiln-bench-v0/crc32")
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--length", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    env = compiler_gym.make("llvm-autophase-ic-v0", benchmark=args.benchmark)
    env = TimeLimit(ConstrainedCommandline(env, flags=FLAGS), max_episode_steps=args.length)
    with env:
        q = {}
        for episode in range(args.episodes):
            total = run_episode(env, q, 0.3, 0.5, 0.9, args.length, rng)
            print(f"episode {episode}: reward {total:.4f}")
        greedy = run_episode(env, q, 0.0, 0.0, 0.0, args.length, rng, learn=False)
        print(f"learned {len(q)} states; greedy policy's episode reward {greedy:.4f}: "
              f"{env.commandline()}")


if __name__ == "__main__":
    main()
