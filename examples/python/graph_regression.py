#!/usr/bin/env python3
"""A graph network that reads programs: predicts how much -Oz shrinks a
program (its IR instruction count reduction, a fraction) from the program
graph of the unoptimized module, the Programl observation.

Programs: kiln-bench-v0 and --csmith csmith programs (those of at most
--max-nodes nodes: a 2-core machine trains on them in seconds), split into
training and held-out sets. The model (PyTorch, nothing else) embeds each
node's kind and text, passes messages along control, data and call edges (a
weight per flow, then a layer that mixes each node's state with what it
received) for --rounds rounds, averages the nodes and regresses the
reduction. It prints the held-out mean absolute error against the
baseline that predicts the training mean. Run from the repository root
after scripts/setup:

    PYTHONPATH=build/python /usr/bin/python3 examples/python/graph_regression.py
"""

import argparse
import random
import sys
import time

import kiln
from kiln.program_graph import EDGE_FLOWS

try:
    import torch
    from torch import nn
except ImportError:
    sys.exit("graph_regression.py needs PyTorch: apt-get install python3-torch")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csmith", type=int, default=60, help="csmith programs (seeds 1..N)")
    parser.add_argument("--max-nodes", type=int, default=4000, help="larger graphs are left out")
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2, help="message-passing rounds")
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--held-out", type=float, default=0.25, help="fraction held out")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cluster", default=None, help="coordinator tcp://host:port")
    args = parser.parse_args()
    if args.csmith < 0 or args.epochs < 1 or args.rounds < 1 or not 0 < args.held_out < 1:
        parser.error("--csmith >= 0, --epochs >= 1, --rounds >= 1, 0 < --held-out < 1")
    return args


def collect(args):
    """(uri, graph, -Oz reduction) per program, from one env."""
    uris = kiln.datasets(args.cluster).benchmarks("benchmark://kiln-bench-v0")
    uris += [f"generator://csmith-v0/{seed}" for seed in range(1, args.csmith + 1)]
    samples = []
    with kiln.make("llvm-v0", cluster=args.cluster) as env:
        for uri in uris:
            env.reset(benchmark=uri)
            count = env.observation["IrInstructionCount"]
            oz = env.observation["IrInstructionCountOz"]
            graph = kiln.ProgramGraph.from_bytes(env.observation["Programl"])
            if graph.num_nodes <= args.max_nodes:
                samples.append((uri, graph, (count - oz) / max(count, 1)))
    return samples, len(uris)


class GraphNet(nn.Module):
    def __init__(self, vocabulary_size, hidden, rounds):
        super().__init__()
        self.kind = nn.Embedding(3, hidden)
        self.text = nn.Embedding(vocabulary_size + 1, hidden)  # +1: texts never seen
        self.messages = nn.ModuleList(nn.Linear(hidden, hidden) for _ in EDGE_FLOWS)
        self.update = nn.Linear(2 * hidden, hidden)
        self.readout = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.rounds = rounds

    def forward(self, batch):
        features, edges, degree, owner, graphs = batch
        h = self.kind(features[:, 0]) + self.text(features[:, 1])
        for _ in range(self.rounds):
            incoming = torch.zeros_like(h)
            for flow, (source, target) in enumerate(edges):
                incoming.index_add_(0, target, self.messages[flow](h)[source])
            h = torch.relu(self.update(torch.cat([h, incoming / degree], dim=1)))
        pooled = torch.zeros(graphs, h.shape[1]).index_add_(0, owner, h)
        sizes = torch.zeros(graphs).index_add_(0, owner, torch.ones(owner.shape[0]))
        return self.readout(pooled / sizes.unsqueeze(1)).squeeze(1)


def make_batch(graphs, vocabulary):
    """The graphs as one disjoint graph: features, edges per flow, in-degree,
    which graph each node belongs to."""
    features, owner = [], []
    edges = [[] for _ in EDGE_FLOWS]
    offset = 0
    for i, graph in enumerate(graphs):
        features.append(torch.from_numpy(graph.node_features(vocabulary)))
        owner.append(torch.full((graph.num_nodes,), i, dtype=torch.long))
        for flow, name in enumerate(EDGE_FLOWS):
            edges[flow].append(torch.from_numpy(graph.edge_index(name)) + offset)
        offset += graph.num_nodes
    edges = [torch.cat(e, dim=1) for e in edges]
    degree = torch.ones(offset)
    for _, target in edges:
        degree.index_add_(0, target, torch.ones(target.shape[0]))
    return (torch.cat(features), edges, degree.unsqueeze(1), torch.cat(owner), len(graphs))


def main():
    args = parse_args()
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    start = time.time()
    samples, asked = collect(args)
    random.shuffle(samples)
    held = max(1, int(len(samples) * args.held_out))
    test, train = samples[:held], samples[held:]
    vocabulary = {}
    for _, graph, _ in train:
        for text in graph.texts:
            vocabulary.setdefault(text, len(vocabulary))
    print(f"{len(samples)} of {asked} programs within {args.max_nodes} nodes "
          f"({len(train)} to train, {len(test)} held out), "
          f"{sum(g.num_nodes for _, g, _ in samples)} nodes, vocabulary {len(vocabulary)}, "
          f"graphs in {time.time() - start:.1f} s")

    train_batch = make_batch([g for _, g, _ in train], vocabulary)
    test_batch = make_batch([g for _, g, _ in test], vocabulary)
    train_y = torch.tensor([y for _, _, y in train], dtype=torch.float32)
    test_y = torch.tensor([y for _, _, y in test], dtype=torch.float32)
    model = GraphNet(len(vocabulary), args.hidden, args.rounds)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(1, args.epochs + 1):
        model.train()
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(train_batch), train_y)
        loss.backward()
        optimizer.step()
        if epoch % max(1, args.epochs // 5) == 0 or epoch == args.epochs:
            print(f"epoch {epoch:4d}: training MSE {loss.item():.5f}")

    model.eval()
    with torch.no_grad():
        predicted = model(test_batch)
    mae = (predicted - test_y).abs().mean().item()
    baseline = (train_y.mean() - test_y).abs().mean().item()
    print(f"held-out MAE {mae:.4f} (predicting the training mean: {baseline:.4f}) "
          f"on {len(test)} programs; -Oz removes {test_y.mean().item():.1%} of the IR on average")
    for (uri, _, actual), guess in list(zip(test, predicted.tolist()))[:5]:
        print(f"  {uri}: -Oz removes {actual:.1%}, predicted {guess:.1%}")
    print(f"done in {time.time() - start:.1f} s")


if __name__ == "__main__":
    main()
