"""Tabular Q-learning: CompilerGym v0.2.5's examples/tabular_q.py, ported to
kiln. Using three Autophase features and the step as the state, it learns
online which of a few passes to run on one program, then rolls the greedy
policy out. What changed: the imports, argparse for absl's flags, the
benchmark name, and two passes of the action list: -gvn-hoist and -newgvn
are left out of kiln's action space (not deterministic in LLVM 19; ask
env.action_space.flags.index("-newgvn") for the reason).

    /usr/bin/python3 examples/compiler_gym/tabular_q.py \\
        --benchmark=kiln-bench-v0/dijkstra --episodes=100
"""

import argparse
import random
from typing import Dict, NamedTuple

import kiln.compiler_gym as compiler_gym
from kiln.compiler_gym.util.timer import Timer

ACTIONS = [
    "-break-crit-edges", "-early-cse-memssa", "-gvn", "-instcombine", "-instsimplify",
    "-jump-threading", "-loop-reduce", "-loop-rotate", "-loop-versioning", "-mem2reg",
    "-reg2mem", "-simplifycfg", "-sroa",
]
FLAGS = argparse.Namespace()


class StateActionTuple(NamedTuple):
    """A state-action pair, the Q-table's key."""

    autophase0: int
    autophase1: int
    autophase2: int
    cur_step: int
    action_index: int


def make_q_table_key(autophase_feature, action, step):
    """The Q-table key of (observation, action, step)."""
    return StateActionTuple(*autophase_feature[FLAGS.features_indices], step,
                            FLAGS.tabular_q_actions.index(action))


def select_action(q_table, ob, step, epsilon=0.0):
    """The greedy action (ties broken at random), or a random one with p=epsilon."""
    qs = [q_table.get(make_q_table_key(ob, act, step), -1) for act in FLAGS.tabular_q_actions]
    if random.random() < epsilon:
        return random.choice(FLAGS.tabular_q_actions)
    max_indices = [i for i, x in enumerate(qs) if x == max(qs)]
    return FLAGS.tabular_q_actions[random.choice(max_indices)]


def get_max_q_value(q_table, ob, step):
    """The highest Q value of any action from (ob, step)."""
    max_q = 0
    for act in FLAGS.tabular_q_actions:
        max_q = max(q_table.get(make_q_table_key(ob, act, step), 0), max_q)
    return max_q


def rollout(qtable, env, printout=False):
    """The greedy policy's episode; returns its total reward."""
    observation = env.reset()
    action_seq, rewards = [], []
    for i in range(FLAGS.episode_length):
        a = select_action(qtable, observation, i)
        action_seq.append(a)
        observation, reward, done, info = env.step(env.action_space.flags.index(a))
        rewards.append(reward)
        if done:
            break
    if printout:
        print("Resulting sequence: ", ",".join(action_seq), f"total reward {sum(rewards)}")
    return sum(rewards)


def train(q_table, env):
    """Online Q-learning with an epsilon-greedy policy."""
    prev_q = {}
    for i in range(1, FLAGS.episodes + 1):
        current_length = 0
        observation = env.reset()
        while current_length < FLAGS.episode_length:
            a = select_action(q_table, observation, current_length, FLAGS.epsilon)
            hashed = make_q_table_key(observation, a, current_length)
            if hashed not in q_table:
                q_table[hashed] = 0
            observation, reward, done, info = env.step(env.action_space.flags.index(a))
            if done:
                break
            current_length += 1
            target = reward + FLAGS.discount * get_max_q_value(q_table, observation,
                                                               current_length)
            q_table[hashed] = (FLAGS.learning_rate * target
                               + (1 - FLAGS.learning_rate) * q_table[hashed])
        if FLAGS.log_every and i % FLAGS.log_every == 0:
            def compare_qs(q_old, q_new):
                diff = [q_new[k] - v for k, v in q_old.items()]
                return sum(diff) / len(diff) if diff else 0.0

            difference = compare_qs(prev_q, q_table)
            cur_rewards = rollout(q_table, env)
            print(f"episode={i:4d}, cur_reward={cur_rewards:.5f}, "
                  f"Q-table_entries={len(q_table):5d}, Q-table_diff={difference:.7f}")
            prev_q = q_table.copy()


def main() -> None:
    """Main entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="kiln-bench-v0/crc32")
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--episode_length", type=int, default=5)
    parser.add_argument("--learning_rate", type=float, default=0.1)
    parser.add_argument("--tabular_q_actions", type=lambda t: t.split(","), default=ACTIONS)
    parser.add_argument("--discount", type=float, default=1.0)
    parser.add_argument("--features_indices", type=lambda t: [int(x) for x in t.split(",")],
                        default=[19, 22, 51])
    parser.add_argument("--log_every", type=int, default=50)
    parser.add_argument("--epsilon", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=None)
    parser.parse_args(namespace=FLAGS)
    random.seed(FLAGS.seed)
    q_table: Dict[StateActionTuple, float] = {}
    with compiler_gym.make("llvm-ic-v0", benchmark=FLAGS.benchmark) as env:
        env.observation_space = "Autophase"
        with Timer("Constructing Q-table"):
            train(q_table, env)
        rollout(q_table, env, printout=True)


if __name__ == "__main__":
    main()
