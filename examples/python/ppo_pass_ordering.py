#!/usr/bin/env python3
"""PPO learns LLVM pass ordering through a kiln vector env, and is judged on
programs it never saw against random search at the same step budget.

Training: --envs envs of llvm-autophase-ic-v0 (observation: Autophase, or
with --observation programl the program graph; reward: the IR instruction
count drop, as a fraction of what -Oz achieves)
step together through kiln.make_vec over the training programs
(kiln-bench-v0 but the held-out ones, and csmith programs), episodes of
--horizon passes. The policy also sees how far into the episode it is (the
step over the horizon): the same program wants other passes early and late.
A small actor-critic (PyTorch only) is updated with PPO's clipped objective
after every rollout of --rollout steps per env. An episode cut at the
horizon is a truncation, not an end of the program's story: its last value
is bootstrapped from the state it reached; only a terminated episode stops
the bootstrap. The program graph's vocabulary (node texts: opcodes and
types) is learned on the training programs and frozen before evaluation;
a text it never saw there shares one unknown row.

Held-out evaluation: with kiln.evaluate (the evaluation harness), on held-out
kiln-bench-v0 and csmith programs (and the modules of every corpus given with
--held-out-dataset NAME=DIR, e.g. an installed debian-mini), each agent gets --budget steps per
program: random search runs random episodes of --horizon passes and keeps
the best; PPO runs its greedy episode, then sampled episodes, and keeps the
best. Reported as the harness reports: the geomean over programs of -Oz's
instruction count over the agent's (1.0 matches -Oz, higher is better).

Every iteration writes OUT/checkpoint.pt (policy, optimizer, random
generators, the vector env's benchmark position, the curve) and
OUT/learning_curve.png; --resume continues a stopped run from its
checkpoint, so a preempted job loses one iteration at most. Run from the
repository root after scripts/setup:

    PYTHONPATH=build/python /usr/bin/python3 examples/python/ppo_pass_ordering.py
"""

import argparse
import json
import os
import random
import sys
import time

import numpy as np

import kiln

try:
    import torch
    from torch import nn
except ImportError:
    sys.exit("ppo_pass_ordering.py needs PyTorch: apt-get install python3-torch")

ENV_ID = "llvm-autophase-ic-v0"
SPACES = {"autophase": "Autophase", "programl": "Programl"}
FLOWS = ("control", "data", "call")
VOCABULARY_LIMIT = 1024  # node texts the embedding learns; the rest share one row


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--horizon", type=int, default=30, help="passes per episode")
    parser.add_argument("--rollout", type=int, default=30, help="steps per env per iteration")
    parser.add_argument("--iterations", type=int, default=120)
    parser.add_argument("--csmith", type=int, default=30, help="csmith training programs")
    parser.add_argument("--held-out-csmith", type=int, default=8)
    parser.add_argument("--budget", type=int, default=300, help="held-out steps per program")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="ppo-out", help="checkpoint and plot directory")
    parser.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.pt")
    parser.add_argument("--stop-after", type=int, default=None,
                        help="stop after this many iterations of this run (a preemption)")
    parser.add_argument("--cluster", default=None, help="coordinator tcp://host:port")
    parser.add_argument("--held-out-dataset", action="append", default=[], metavar="NAME=DIR",
                        help="also judge on every module of this corpus (served by the "
                             "embedded cluster as benchmark://NAME); repeatable")
    parser.add_argument("--report-json", default=None,
                        help="write both agents' held-out reports here (scripts/leaderboard)")
    parser.add_argument("--observation", choices=sorted(SPACES), default="autophase",
                        help="what the policy sees: the Autophase counts (an MLP) or the "
                             "program graph (a graph network)")
    args = parser.parse_args(argv)
    if min(args.envs, args.horizon, args.rollout, args.iterations, args.budget) < 1:
        parser.error("--envs, --horizon, --rollout, --iterations and --budget must be >= 1")
    corpora = {}
    for item in args.held_out_dataset:
        name, _, directory = item.partition("=")
        if not name or not directory:
            parser.error(f"--held-out-dataset wants NAME=DIR, got {item!r}")
        corpora[name] = directory
    if corpora and args.cluster:
        parser.error("--held-out-dataset serves its corpus on the embedded cluster: "
                     "with --cluster, the cluster's workers serve it (kiln worker --dataset)")
    args.held_out_dataset = corpora
    return args


def split_programs(args):
    """Training and held-out programs: every fourth kiln-bench-v0 program,
    csmith seeds after the training ones and every module of the
    --held-out-dataset corpora are held out."""
    listing = kiln.datasets(args.cluster)
    bench = listing.benchmarks("benchmark://kiln-bench-v0")
    held = bench[::4] + [f"generator://csmith-v0/{1000 + s}" for s in range(args.held_out_csmith)]
    for name in getattr(args, "held_out_dataset", {}):
        held += listing.benchmarks(f"benchmark://{name}")
    train = [b for i, b in enumerate(bench) if i % 4] + [
        f"generator://csmith-v0/{s}" for s in range(1, args.csmith + 1)]
    return train, held


def features(observations, progress):
    """Autophase counts, log-scaled, and each env's progress through its
    episode (steps taken / horizon): a float32 batch."""
    counts = np.log1p(np.asarray(observations, dtype=np.float64))
    return torch.from_numpy(np.column_stack([counts, progress]).astype(np.float32))


class GraphInputs:
    """Program graphs as a graph network reads them: each node's kind and
    text id (the texts of nodes, numbered as first seen in training, up to
    VOCABULARY_LIMIT; any other text, and every text once frozen for
    evaluation, the unknown row VOCABULARY_LIMIT), each flow's edges, and
    the episode's progress. The vocabulary is part of the checkpoint."""

    def __init__(self, vocabulary=None, frozen=False):
        self.vocabulary = dict(vocabulary or {})
        self.frozen = frozen

    def prepare(self, data, progress):
        graph = kiln.ProgramGraph.from_bytes(data)
        # Node texts only: the graph's text table also names its functions,
        # which say nothing about the code and differ from program to program.
        node_texts = [graph.texts[i] for i in np.unique(graph.node_text)]
        for text in node_texts if not self.frozen else ():
            if text not in self.vocabulary and len(self.vocabulary) < VOCABULARY_LIMIT:
                self.vocabulary[text] = len(self.vocabulary)
        nodes = torch.from_numpy(graph.node_features(self.vocabulary))
        # node_features gives a missing text len(vocabulary): the next id the
        # vocabulary would hand out, not the unknown row.
        unknown = nodes[:, 1] >= len(self.vocabulary)
        nodes[unknown, 1] = VOCABULARY_LIMIT
        edges = [torch.from_numpy(graph.edge_index(flow)) for flow in FLOWS]
        return nodes, edges, float(progress)

    def __call__(self, observations, progress):
        return [self.prepare(bytes(o), p) for o, p in zip(observations, progress)]


def take(x, indices):
    """Rows `indices` of a batch: a tensor, or a list of prepared graphs."""
    return x[indices] if torch.is_tensor(x) else [x[int(i)] for i in indices]


def concatenate(batches):
    return torch.cat(batches) if torch.is_tensor(batches[0]) else [g for b in batches for g in b]


class GraphEncoder(nn.Module):
    """Node kind and text embeddings, `rounds` rounds of messages along each
    flow (a node's state beside the mean of its incoming neighbours' along
    each flow, mixed by one linear map), then the mean over each graph's
    nodes."""

    def __init__(self, hidden=16, rounds=2):
        super().__init__()
        self.hidden, self.rounds = hidden, rounds
        self.text = nn.Embedding(VOCABULARY_LIMIT + 1, hidden)
        self.kind = nn.Embedding(3, hidden)
        # One map over [own, control, data, call] rather than a map per flow
        # summed: the same function, one matrix product instead of four
        # (a 64-graph minibatch, ~250k nodes, trained 1.6x faster).
        self.mix = nn.Linear(hidden * (1 + len(FLOWS)), hidden)

    def forward(self, graphs):
        offsets, owner, nodes, edges = 0, [], [], [[] for _ in FLOWS]
        for g, (kinds_and_texts, flow_edges, _) in enumerate(graphs):
            count = kinds_and_texts.shape[0]
            nodes.append(kinds_and_texts)
            owner.append(torch.full((count,), g, dtype=torch.int64))
            for f, e in enumerate(flow_edges):
                edges[f].append(e + offsets)
            offsets += count
        nodes, owner = torch.cat(nodes), torch.cat(owner)
        # One sparse matrix per flow, each row averaging a node's incoming
        # messages: a sparse product is several times faster than gathering
        # and scattering the edges on this PyTorch.
        adjacency = []
        for flow_edges in edges:
            e = torch.cat(flow_edges, dim=1)
            in_degree = torch.bincount(e[1], minlength=offsets).clamp_(min=1).float()
            adjacency.append(torch.sparse_coo_tensor(
                torch.stack([e[1], e[0]]), 1.0 / in_degree[e[1]], (offsets, offsets)).coalesce())
        h = torch.tanh(self.text(nodes[:, 1]) + self.kind(nodes[:, 0]))
        for _ in range(self.rounds):
            h = torch.tanh(self.mix(torch.cat([h] + [torch.sparse.mm(a, h) for a in adjacency],
                                              dim=1)))
        sizes = torch.bincount(owner, minlength=len(graphs)).clamp_(min=1).unsqueeze(1)
        pooled = torch.zeros(len(graphs), self.hidden).index_add_(0, owner, h) / sizes
        progress = torch.tensor([[p] for _, _, p in graphs], dtype=torch.float32)
        return torch.cat([pooled, progress], dim=1)


class GraphActorCritic(nn.Module):
    """The actor-critic over program graphs: one encoder (its pooled nodes
    and the episode's progress), two small heads."""

    # 16 wide, not the MLP's 64: graphs of ten thousand nodes make the
    # encoder's width the cost of training (a minibatch took 5x longer at 32
    # on one thread, 60 s an iteration).
    def __init__(self, actions, hidden=16):
        super().__init__()
        self.encoder = GraphEncoder(hidden)
        self.actor = nn.Sequential(nn.Linear(hidden + 1, hidden), nn.Tanh(),
                                   nn.Linear(hidden, actions))
        self.critic = nn.Sequential(nn.Linear(hidden + 1, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def heads(self, graphs):
        """The action distribution and the value, the graphs encoded once."""
        encoded = self.encoder(graphs)
        dist = torch.distributions.Categorical(logits=self.actor(encoded))
        return dist, self.critic(encoded).squeeze(-1)


class ActorCritic(nn.Module):
    def __init__(self, inputs, actions, hidden=64):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(inputs, hidden), nn.Tanh(),
                                   nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, actions))
        self.critic = nn.Sequential(nn.Linear(inputs, hidden), nn.Tanh(),
                                    nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def heads(self, x):
        return torch.distributions.Categorical(logits=self.actor(x)), self.critic(x).squeeze(-1)


def ppo_update(model, optimizer, batch, epochs=4, minibatch=64, clip=0.2):
    x, actions, old_logp, advantages, returns = batch
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    for _ in range(epochs):
        order = torch.randperm(len(x))
        for start in range(0, len(x), minibatch):
            i = order[start:start + minibatch]
            dist, value = model.heads(take(x, i))
            ratio = torch.exp(dist.log_prob(actions[i]) - old_logp[i])
            policy_loss = -torch.min(ratio * advantages[i],
                                     ratio.clamp(1 - clip, 1 + clip) * advantages[i]).mean()
            value_loss = (value - returns[i]).pow(2).mean()
            loss = policy_loss + 0.5 * value_loss - 0.01 * dist.entropy().mean()
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()


def collect(vec, model, encode, observations, rollout, pending_reset, episode_returns, running,
            elapsed, horizon):
    """One rollout through the vector env. An env whose episode ended resets
    on its next step (its action ignored): that step is left out of training.
    `elapsed` counts each env's steps into its episode (the progress input)."""
    xs, acts, logps, rewards, terminals, dones, values, masks = [], [], [], [], [], [], [], []
    for _ in range(rollout):
        x = encode(observations, [e / horizon for e in elapsed])
        with torch.no_grad():
            dist, value = model.heads(x)
            action = dist.sample()
        observations, reward, terminated, truncated, _ = vec.step(action.tolist())
        done = np.logical_or(terminated, truncated)
        mask = ~np.asarray(pending_reset)
        for i in range(vec.num_envs):
            if mask[i]:
                running[i] += float(reward[i])
                elapsed[i] += 1
            else:
                elapsed[i] = 0  # this step reset it: its observation starts an episode
            if mask[i] and done[i]:
                episode_returns.append(running[i])
                running[i] = 0.0
        xs.append(x); acts.append(action); logps.append(dist.log_prob(action)); values.append(value)
        rewards.append(torch.tensor(reward, dtype=torch.float32))
        terminals.append(torch.tensor(terminated, dtype=torch.float32))
        dones.append(torch.tensor(done, dtype=torch.float32))
        masks.append(torch.tensor(mask, dtype=torch.bool))
        pending_reset[:] = done
    with torch.no_grad():
        _, last_value = model.heads(encode(observations, [e / horizon for e in elapsed]))
    # Generalized advantage estimation. The env resets on the step after an
    # episode's end, so the observation after a done step is the state the
    # episode reached: a truncation bootstraps from its value, a termination
    # does not; either way the advantage does not carry into the next episode.
    advantages = torch.zeros(rollout, vec.num_envs)
    gae = torch.zeros(vec.num_envs)
    for t in reversed(range(rollout)):
        next_value = last_value if t == rollout - 1 else values[t + 1]
        delta = rewards[t] + 0.99 * next_value * (1 - terminals[t]) - values[t]
        gae = delta + 0.99 * 0.95 * (1 - dones[t]) * gae
        advantages[t] = gae
    returns = advantages + torch.stack(values)
    keep = torch.stack(masks).flatten()
    batch = (take(concatenate(xs), keep.nonzero().flatten()), torch.cat(acts)[keep],
             torch.cat(logps)[keep],
             advantages.flatten()[keep], returns.flatten()[keep])
    return batch, observations


def save_plot(path, curve):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(6, 3.5))
    steps = [point["env_steps"] for point in curve]
    axes.plot(steps, [point["mean_return"] for point in curve], label="PPO (training episodes)")
    axes.set_xlabel("environment steps")
    axes.set_ylabel("episode return (fraction of -Oz)")
    axes.set_title(f"PPO pass ordering on kiln ({ENV_ID})")
    axes.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    pyplot.close(figure)


def best_of_budget(choose, budget, horizon, space):
    """An agent for kiln.evaluate that runs episodes of `horizon` passes until
    `budget` steps are spent and ends on the best state it saw: the best
    prefix of any episode by its summed reward, the empty one (the program
    as it came) included, so it never ends worse than it started. The
    choice is `choose(observation, env, episode, step)`."""
    def agent(observation, env):
        state = env.state  # the env's record; replaying the best sequence ends the episode
        best, best_actions, spent, episode = 0.0, [], 0, 0
        while spent + horizon <= budget:
            env.reset(benchmark=state.benchmark)
            taken, total, obs = [], 0.0, env.observation[space]
            for step in range(horizon):
                action = choose(obs, env, episode, step)
                obs, reward, done, _, _ = env.step(action)
                taken.append(action)
                total += reward
                if total > best:
                    best, best_actions = total, list(taken)
                if done:
                    break
            spent += len(taken)
            episode += 1
        env.reset(benchmark=state.benchmark)
        return best_actions
    return agent


def evaluate(args, model, encode, held):
    """Both agents on the held-out programs at --budget steps each, through
    the evaluation harness (one policy call per step: the agent replays its
    best sequence, found within the same budget)."""
    rng = np.random.default_rng(args.seed)

    def ppo_choice(observation, env, episode, step):
        with torch.no_grad():
            dist, _ = model.heads(encode([observation], [step / args.horizon]))
        return int(dist.probs.argmax() if episode == 0 else dist.sample())

    def random_choice(observation, env, episode, step):
        return int(rng.integers(env.action_space.n))

    results = {}
    for name, choose in (("ppo", ppo_choice), ("random_search", random_choice)):
        plans = {}
        search = best_of_budget(choose, args.budget, args.horizon, SPACES[args.observation])

        def policy(observation, env, search=search, plans=plans):
            key = env.benchmark
            if key not in plans:
                plans[key] = list(search(observation, env))
            return plans[key].pop(0) if plans[key] else None

        report = kiln.evaluate(policy, benchmarks=held, step_budget=args.budget, parallel=1,
                               env_id=ENV_ID, cluster=args.cluster, name=name,
                               observation_space=SPACES[args.observation])
        results[name] = report
    return results


def main(argv=None):
    args = parse_args(argv)
    if args.held_out_dataset:
        # The caller's corpora need a cluster that serves them: this one.
        corpus_cluster = kiln.LocalCluster(datasets=args.held_out_dataset)
        args.cluster = corpus_cluster
    os.makedirs(args.out, exist_ok=True)
    checkpoint_path = os.path.join(args.out, "checkpoint.pt")
    train, held = split_programs(args)
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    # One thread and deterministic kernels: a seed gives the same run twice.
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    vec = kiln.make_vec(ENV_ID, args.envs, benchmarks=train, benchmark_order="random",
                        seed=args.seed, max_episode_steps=args.horizon, cluster=args.cluster,
                        observation_space=SPACES[args.observation])
    if args.observation == "programl":
        encode = GraphInputs()
        model = GraphActorCritic(vec.single_action_space.n)
    else:
        encode = features
        model = ActorCritic(vec.single_observation_space.shape[0] + 1, vec.single_action_space.n)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    curve, iteration, env_steps = [], 0, 0
    if args.resume and os.path.exists(checkpoint_path):
        saved = torch.load(checkpoint_path)
        if saved.get("observation", "autophase") != args.observation:
            sys.exit(f"{checkpoint_path} was trained on --observation "
                     f"{saved.get('observation', 'autophase')}, not {args.observation}")
        if args.observation == "programl":
            encode = GraphInputs(saved["vocabulary"])
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        torch.set_rng_state(saved["torch_rng"])
        vec.action_space.seed(args.seed + saved["iteration"])
        curve, iteration, env_steps = saved["curve"], saved["iteration"], saved["env_steps"]
        vec.set_benchmark_state(saved["benchmarks"])
        observations, _ = vec.reset()
        print(f"resumed from {checkpoint_path} at iteration {iteration}")
    else:
        observations, _ = vec.reset(seed=args.seed)
    pending_reset = [False] * args.envs
    running = [0.0] * args.envs
    elapsed = [0] * args.envs
    print(f"{len(train)} training programs, {len(held)} held out; {args.envs} envs, "
          f"{vec.single_action_space.n} passes")
    start, ran = time.time(), 0
    while iteration < args.iterations and (args.stop_after is None or ran < args.stop_after):
        returns = []
        batch, observations = collect(vec, model, encode, observations, args.rollout,
                                      pending_reset, returns, running, elapsed, args.horizon)
        update_start = time.time()
        ppo_update(model, optimizer, batch)
        iteration += 1
        ran += 1
        env_steps += args.rollout * args.envs
        curve.append({"iteration": iteration, "env_steps": env_steps,
                      "mean_return": float(np.mean(returns)) if returns else
                      (curve[-1]["mean_return"] if curve else 0.0),
                      "episodes": len(returns), "update_s": time.time() - update_start})
        # An episode cut by the rollout's end restarts after a resume: its
        # partial return is not counted.
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "torch_rng": torch.get_rng_state(), "iteration": iteration,
                    "env_steps": env_steps, "curve": curve,
                    "benchmarks": vec.benchmark_state(), "observation": args.observation,
                    "vocabulary": getattr(encode, "vocabulary", None)}, checkpoint_path)
        save_plot(os.path.join(args.out, "learning_curve.png"), curve)
        print(f"iteration {iteration:3d}: {env_steps:6d} steps, mean episode return "
              f"{curve[-1]['mean_return']:+.3f} over {len(returns)} episodes, "
              f"{env_steps / max(time.time() - start, 1e-9):.0f} steps/s")
    vec.close()
    if iteration < args.iterations:
        print(f"stopped at iteration {iteration} of {args.iterations}: --resume continues")
        return
    if isinstance(encode, GraphInputs):
        encode.frozen = True  # texts first seen in evaluation share the unknown row
    results = evaluate(args, model, encode, held)
    ppo = results["ppo"]["geomean_ir_instruction_count_vs_oz"]
    rnd = results["random_search"]["geomean_ir_instruction_count_vs_oz"]
    print(f"held-out ({len(held)} programs, {args.budget} steps each): geomean -Oz/final "
          f"instruction count: PPO {ppo:.3f}, random search {rnd:.3f} "
          f"({'PPO ahead' if ppo > rnd else 'random search ahead'})")
    for name, report in results.items():
        print(f"  {name}: {report['scoring']}")
    if args.report_json:
        # What was trained, beside what it scored: rows of different
        # training budgets must say so.
        results["ppo"]["training"] = {"observation": args.observation, "iterations": iteration,
                                      "env_steps": env_steps, "horizon": args.horizon}
        with open(args.report_json, "w") as out:
            json.dump(results, out, indent=1)
    print(f"curve and checkpoint in {args.out}/ ({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
