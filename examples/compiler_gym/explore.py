"""An exhaustive (or beam) search of an action space: CompilerGym v0.2.5's
examples/explore.py, ported to kiln. Every sequence of actions up to
--episode_length is tried, depth by depth, on --nproc threads each with its
own env, but sequences that reach the same IR are explored once (a state
graph keyed by a hash of the IR); --topn keeps only the best states of each
depth (a beam search). Prints, per depth, how many edges were new, pointed
back to the same state, across to a state already found, or back to an
earlier depth, and the best sequences. What changed: the imports, argparse
for absl's flags, plain numbers for humanize, and the benchmark name.

    /usr/bin/python3 examples/compiler_gym/explore.py --env=llvm-ic-v0 \\
        --benchmark=kiln-bench-v0/dijkstra --episode_length=3 \\
        --explore_actions=-simplifycfg,-instcombine,-mem2reg,-gvn
"""

import argparse
import hashlib
import math
from heapq import nlargest
from multiprocessing.pool import ThreadPool
from queue import Queue
from threading import Lock
from time import time
from typing import Dict, List, Optional, Set, Tuple

import kiln.compiler_gym as compiler_gym
from kiln.compiler_gym.wrappers import ConstrainedCommandline

EDGE_TYPES = ("unpruned", "self_pruned", "cross_pruned", "back_pruned", "dropped")
NO_EDGE = -1


def rewards_close(a: float, b: float) -> bool:
    """Whether two reward sums are the same (CompilerGym's tolerance)."""
    return math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-10)


class StateGraph:
    """States (by IR fingerprint) with the reward sum that reaches them, an
    edge per action, and the first edge into each (its path from the start)."""

    def __init__(self, edges_per_node: int) -> None:
        self.edges_per_node = edges_per_node
        self.reward_sums: List[float] = []
        self.edges: List[List[int]] = []
        self.back_edges: List[Optional[Tuple[int, int]]] = []
        self.index: Dict[bytes, int] = {}

    def add_or_find_node(self, fingerprint: bytes, reward_sum: float) -> Tuple[int, bool]:
        """The node of a state, and whether it is new."""
        if fingerprint in self.index:
            node = self.index[fingerprint]
            assert rewards_close(self.reward_sums[node], reward_sum), (
                f"{self.reward_sums[node]} != {reward_sum}")
            return node, False
        self.index[fingerprint] = len(self.reward_sums)
        self.reward_sums.append(reward_sum)
        self.edges.append([NO_EDGE] * self.edges_per_node)
        self.back_edges.append(None)
        return len(self.reward_sums) - 1, True

    def add_edge(self, source: int, action: int, target: int) -> None:
        """Action `action` from `source` reaches `target`."""
        assert self.edges[source][action] == NO_EDGE
        self.edges[source][action] = target
        if self.back_edges[target] is None:
            self.back_edges[target] = (source, action)

    def node_path(self, node: int) -> List[int]:
        """The actions that first reached `node` from the start."""
        path = []
        while node != 0:
            back = self.back_edges[node]
            assert back is not None
            node, action = back
            path.append(action)
        return path[::-1]

    def node_count(self) -> int:
        """How many states."""
        return len(self.reward_sums)


def env_to_fingerprint(env) -> bytes:
    """The state's identity: a hash of its IR text."""
    return hashlib.sha256(env.observation["Ir"].encode()).digest()


def compute_edges(env, sequence: List[int]) -> List[Tuple[bytes, float]]:
    """(fingerprint, reward sum) after `sequence` and then each action."""
    edges = []
    for action in range(env.action_space.n):
        env.reset()
        reward_sum = 0.0
        for step in sequence + [action]:
            _, reward, _, _ = env.step(step)
            reward_sum += reward
        edges.append((env_to_fingerprint(env), reward_sum))
    return edges


def print_depth(env, graph: StateGraph, counts: Dict[str, int], started: float,
                show_topn: int) -> None:
    """One depth's edge counts and the best sequences so far."""
    print("  ".join(f"{name}={counts[name]:,}" for name in EDGE_TYPES),
          f"sum={sum(counts.values()):,}")
    print(f"Time taken for depth: {time() - started:0.2f} s")
    if show_topn >= 1:
        print(f"Top {show_topn} sequence(s):")
        for node in nlargest(show_topn, range(graph.node_count()),
                             key=lambda n: graph.reward_sums[n]):
            print(f"  {graph.reward_sums[node]:0.4f} ",
                  ", ".join(env.action_space.flags[a] for a in graph.node_path(node)))
    print()


def compute_action_graph(pool, envs, episode_length: int, topn: int, show_topn: int) -> None:
    """Explores depth by depth, each state once, on the pool's threads."""
    env_queue: Queue = Queue()
    for env in envs:
        env_queue.put(env)
    graph = StateGraph(edges_per_node=envs[0].action_space.n)
    envs[0].reset()
    best_node, _ = graph.add_or_find_node(env_to_fingerprint(envs[0]), 0.0)
    dropped: Set[int] = set()
    lock = Lock()
    next_depth_start = 0
    for depth in range(episode_length):
        depth_start, next_depth_start = next_depth_start, graph.node_count()
        print(f"*** Processing depth {depth + 1} of {episode_length} with "
              f"{next_depth_start - depth_start} states and {graph.edges_per_node} actions.")
        if depth_start == next_depth_start:
            print("There are no more states to process, stopping early.")
            break
        started = time()
        counts = dict.fromkeys(EDGE_TYPES, 0)

        def expand_node(node: int):
            with lock:
                path = graph.node_path(node)
            local_env = env_queue.get()
            try:
                return node, compute_edges(local_env, path)
            finally:
                env_queue.put(local_env)

        undropped = [n for n in range(depth_start, next_depth_start) if n not in dropped]
        for node, edges in pool.map(expand_node, undropped):
            for action, (fingerprint, reward_sum) in enumerate(edges):
                target, inserted = graph.add_or_find_node(fingerprint, reward_sum)
                if target == node:
                    counts["self_pruned"] += 1
                    continue
                if target < next_depth_start:
                    counts["back_pruned"] += 1
                    continue
                counts["unpruned" if inserted else "cross_pruned"] += 1
                graph.add_edge(node, action, target)
                best = graph.reward_sums[best_node]
                if reward_sum > best and not rewards_close(best, reward_sum):
                    best_node = target
        if topn > 0:
            ranked = sorted(range(next_depth_start, graph.node_count()),
                            key=lambda n: graph.reward_sums[n], reverse=True)
            for node in ranked[topn:]:
                dropped.add(node)
                counts["unpruned"] -= 1
                counts["dropped"] += 1
        print_depth(envs[0], graph, counts, started, show_topn)


def main() -> None:
    """Main entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="llvm-ic-v0")
    parser.add_argument("--benchmark", default="kiln-bench-v0/crc32")
    parser.add_argument("--episode_length", type=int, default=3)
    parser.add_argument("--explore_actions", default="",
                        help="comma-separated flags to explore (default: every action)")
    parser.add_argument("--topn", type=int, default=0,
                        help="if positive, explore only the best n states of each depth")
    parser.add_argument("--show_topn", type=int, default=3)
    parser.add_argument("--nproc", type=int, default=2)
    args = parser.parse_args()

    def make_env():
        env = compiler_gym.make(args.env, benchmark=args.benchmark)
        if args.explore_actions:
            env = ConstrainedCommandline(env, flags=args.explore_actions.split(","))
        return env

    print(f"Running with {args.nproc} threads.")
    envs = []
    try:
        for _ in range(args.nproc):
            envs.append(make_env())
        with ThreadPool(len(envs)) as pool:
            compute_action_graph(pool, envs, args.episode_length, args.topn, args.show_topn)
    finally:
        for env in envs:
            env.close()


if __name__ == "__main__":
    main()
