"""The parts of examples/python/ppo_pass_ordering.py a reviewer checks, without
a cluster: the evaluation agent ends on the best state it saw (never worse
than the program as it came), and the graph vocabulary is frozen for
evaluation, with one unknown row for every text it did not learn."""

import importlib.util
import os
import pathlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")


def load_example():
    source = pathlib.Path(os.environ.get("KILN_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
    spec = importlib.util.spec_from_file_location(
        "ppo_pass_ordering", source / "examples" / "python" / "ppo_pass_ordering.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ScriptedEnv:
    """An env whose action a gives reward rewards[a] at every step."""

    class State:
        benchmark = "benchmark://x/y"

    def __init__(self, rewards):
        self.rewards = rewards
        self.state = self.State()
        self.observation = {"Autophase": [0]}

    def reset(self, benchmark=None):
        return [0], {}

    def step(self, action):
        return [0], self.rewards[action], False, False, {}


def test_the_best_state_is_a_prefix_and_never_worse_than_the_start():
    example = load_example()
    env = ScriptedEnv({0: 1.0, 1: -3.0, 2: 0.5})
    # An episode 0, 1, 2 sums to -1.5 at its end, but reached +1.0 after its
    # first pass: that prefix is the state the agent ends on.
    plan = iter([0, 1, 2])
    agent = example.best_of_budget(lambda o, e, episode, step: next(plan), 3, 3, "Autophase")
    assert agent(None, env) == [0]
    # Every prefix loses: the agent keeps the program as it came.
    losing = example.best_of_budget(lambda o, e, episode, step: 1, 6, 3, "Autophase")
    assert losing(None, env) == []


def test_a_frozen_vocabulary_maps_unseen_texts_to_the_unknown_row():
    example = load_example()

    class Graph:
        texts = ["add", "i32", "main", "mul"]  # "main" names a function, no node's text
        node_text = np.array([0, 1, 0])
        node_kind = np.array([0, 1, 0])

        def node_features(self, vocabulary):
            lookup = np.array([vocabulary.get(t, len(vocabulary)) for t in self.texts])
            return np.stack([self.node_kind, lookup[self.node_text]], axis=1)

        def edge_index(self, flow):
            return np.zeros((2, 0), dtype=np.int64)

    inputs = example.GraphInputs()
    original = example.kiln.ProgramGraph.from_bytes
    try:
        example.kiln.ProgramGraph.from_bytes = staticmethod(lambda data: Graph())
        nodes, _, progress = inputs.prepare(b"", 0.5)
        assert inputs.vocabulary == {"add": 0, "i32": 1}  # node texts only
        assert progress == 0.5 and nodes[:, 1].tolist() == [0, 1, 0]
        inputs.frozen = True
        Graph.node_text = np.array([3, 1])  # "mul": never seen in training
        Graph.node_kind = np.array([0, 1])
        nodes, _, _ = inputs.prepare(b"", 0.0)
        assert inputs.vocabulary == {"add": 0, "i32": 1}
        assert nodes[:, 1].tolist() == [example.VOCABULARY_LIMIT, 1]
    finally:
        example.kiln.ProgramGraph.from_bytes = original
