#!/usr/bin/env python3
"""An MLGO inlining policy learned with evolution strategies through kiln's
mlgo-inline sessions, judged by the .text size it saves against LLVM's
default inlining heuristic on modules it never saw.

Each inlining decision of opt-19's ML inliner is a step of an mlgo-inline
session (observation: the call site's features, and the default
heuristic's advice for it; reward: bytes of .text saved against the default
heuristic's build). The policy is a linear score of the advice and the
log-scaled features (inline when it is positive), started at the default
heuristic's own advice. Each iteration tries --population perturbed
policies (antithetic pairs) on --batch training modules, in parallel
sessions (--parallel), and moves along the perturbations weighted by the
bytes they saved, as ml-compiler-opt's ES trainer does, keeping the step
only where it does not lose on the batch what the current policy saves. Training modules:
kiln-bench-v0 but every fourth, and --csmith csmith programs (dozens of
call sites each); held out: every fourth kiln-bench-v0 module and
--held-out-csmith csmith programs after the training ones. Every
--held-out-every iterations the policy is also measured on the held-out
modules, so the curve shows what it generalizes, not only what it fits.
Writes OUT/curve.png, OUT/policy.npz and, every iteration,
OUT/checkpoint.json (weights, random generator, curve): --resume continues
a stopped or preempted run from it. Run from the repository root after
scripts/setup:

    PYTHONPATH=build/python /usr/bin/python3 examples/python/mlgo_inline_es.py
"""

import argparse
import concurrent.futures
import json
import os
import sys
import time

import numpy as np

import kiln


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=8)
    parser.add_argument("--population", type=int, default=6, help="perturbed policies (even)")
    parser.add_argument("--batch", type=int, default=6, help="training modules per iteration")
    parser.add_argument("--csmith", type=int, default=0, help="csmith training programs")
    parser.add_argument("--held-out-csmith", type=int, default=0)
    parser.add_argument("--sigma", type=float, default=0.05)
    parser.add_argument("--step-size", type=float, default=0.05)
    parser.add_argument("--parallel", type=int, default=2, help="sessions at once")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="mlgo-es-out")
    parser.add_argument("--held-out-every", type=int, default=2,
                        help="measure the held-out modules every N iterations (0: at the end only)")
    parser.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.json")
    parser.add_argument("--stop-after", type=int, default=None,
                        help="stop after this many iterations of this run (a preemption)")
    parser.add_argument("--cluster", default=None, help="coordinator tcp://host:port")
    args = parser.parse_args(argv)
    if args.population < 2 or args.population % 2 or min(args.iterations, args.batch,
                                                          args.parallel) < 1:
        parser.error("--population must be even and >= 2; --iterations, --batch, --parallel >= 1")
    return args


class LinearPolicy:
    """Inline when w . [advice, sign(f) log1p(|f|) for each feature f] + b > 0."""

    def __init__(self, names):
        self.names = names

    def initial(self):
        # The default heuristic's own advice: +1 on it, a bias of -0.5.
        weights = np.zeros(len(self.names) + 2)
        weights[0] = 1.0
        weights[-1] = -0.5
        return weights

    def decide(self, weights, observation, advice):
        values = np.array([float(np.asarray(observation[n]).ravel()[0]) for n in self.names])
        x = np.concatenate([[float(advice)], np.sign(values) * np.log1p(np.abs(values))])
        return int(x @ weights[:-1] + weights[-1] > 0)


def episode(args, policy, weights, benchmark):
    """Bytes of .text saved against the default heuristic, and its size."""
    with kiln.make("mlgo-inline-v0", cluster=args.cluster, benchmark=benchmark) as env:
        observation, _ = env.reset()
        terminated = False
        while not terminated:
            advice = env.observation["DefaultAdvice"]
            action = policy.decide(weights, observation, advice)
            observation, _, terminated, _, _ = env.step(action)
        default = env.observation["DefaultNativeSize"]
        return default - env.observation["NativeSize"], default


def evaluate(args, pool, policy, weights, modules):
    results = list(pool.map(lambda m: episode(args, policy, weights, m), modules))
    saved = sum(s for s, _ in results)
    return saved, sum(d for _, d in results)


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    modules = kiln.datasets(args.cluster).benchmarks("benchmark://kiln-bench-v0")
    held = modules[::4] + [f"generator://csmith-v0/{1000 + s}" for s in range(args.held_out_csmith)]
    train = [m for i, m in enumerate(modules) if i % 4] + [
        f"generator://csmith-v0/{s}" for s in range(1, args.csmith + 1)]
    with kiln.make("mlgo-inline-v0", cluster=args.cluster, benchmark=train[0]) as env:
        first, _ = env.reset()
        # inlining_default is not filled in by LLVM's interactive mode; the
        # advice comes from the DefaultAdvice observation instead.
        names = sorted(n for n in first if n != "inlining_default")
    policy = LinearPolicy(names)
    weights = policy.initial()
    curve, done = [], 0
    checkpoint_path = os.path.join(args.out, "checkpoint.json")
    if args.resume and os.path.exists(checkpoint_path):
        with open(checkpoint_path) as f:
            saved = json.load(f)
        if saved["features"] != names:
            sys.exit(f"{checkpoint_path} was trained on other features: {saved['features']}")
        weights = np.array(saved["weights"], dtype=np.float64)
        rng.bit_generator.state = saved["rng"]
        curve, done = saved["curve"], saved["iteration"]
        print(f"resumed from {checkpoint_path} at iteration {done}")
    start, ran = time.time(), 0
    with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
        base_saved, base_default = evaluate(args, pool, policy, policy.initial(), held)
        print(f"{len(train)} training modules, {len(held)} held out; {len(names)} features; "
              f"the default heuristic's advice as a start saves {base_saved} bytes on the "
              f"held-out modules ({base_default} bytes of .text)")
        for iteration in range(done + 1, args.iterations + 1):
            if args.stop_after is not None and ran >= args.stop_after:
                break
            batch = list(rng.choice(train, size=min(args.batch, len(train)), replace=False))
            noise = rng.standard_normal((args.population // 2, weights.size))
            candidates = [weights + args.sigma * e for e in noise] + [
                weights - args.sigma * e for e in noise]
            fitness = np.array([evaluate(args, pool, policy, c, batch)[0] for c in candidates],
                               dtype=np.float64)
            half = args.population // 2
            spread = fitness.std() or 1.0
            gradient = ((fitness[:half] - fitness[half:]) / spread) @ noise / half
            # The step is kept only where it does not lose on this batch what
            # the current policy saves: a few perturbations are a noisy gradient.
            current, _ = evaluate(args, pool, policy, weights, batch)
            stepped = weights + args.step_size * gradient
            train_saved, _ = evaluate(args, pool, policy, stepped, batch)
            if train_saved >= current:
                weights = stepped
            else:
                train_saved = current
            point = {"iteration": iteration, "batch_saved": int(train_saved),
                     "best_candidate": int(fitness.max())}
            held_note = ""
            if args.held_out_every and iteration % args.held_out_every == 0:
                point["held_out_saved"] = int(evaluate(args, pool, policy, weights, held)[0])
                held_note = f", held out {point['held_out_saved']}"
            curve.append(point)
            ran += 1
            print(f"iteration {iteration:2d}: candidates saved {int(fitness.min())}..."
                  f"{int(fitness.max())} bytes on {len(batch)} modules; the new policy "
                  f"{int(train_saved)}{held_note} ({time.time() - start:.0f} s)")
            with open(checkpoint_path + ".tmp", "w") as f:
                json.dump({"iteration": iteration, "weights": weights.tolist(), "features": names,
                           "rng": rng.bit_generator.state, "curve": curve}, f)
            os.replace(checkpoint_path + ".tmp", checkpoint_path)
            save_plot(os.path.join(args.out, "curve.png"), curve)
        if curve and curve[-1]["iteration"] < args.iterations:
            print(f"stopped at iteration {curve[-1]['iteration']} of {args.iterations}: "
                  f"--resume continues")
            return
        saved, default = evaluate(args, pool, policy, weights, held)
    np.savez(os.path.join(args.out, "policy.npz"), weights=weights, features=np.array(names))
    save_plot(os.path.join(args.out, "curve.png"), curve)
    print(f"held-out ({len(held)} modules): the learned policy saves {saved} bytes of .text "
          f"against LLVM's default heuristic ({100.0 * saved / max(default, 1):+.2f}% of "
          f"{default} bytes); curve and policy in {args.out}/ ({time.time() - start:.0f} s)")


def save_plot(path, curve):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(6, 3.5))
    axes.plot([c["iteration"] for c in curve], [c["batch_saved"] for c in curve],
              label="policy after the update")
    axes.plot([c["iteration"] for c in curve], [c["best_candidate"] for c in curve],
              linestyle="--", label="best perturbation")
    held = [c for c in curve if "held_out_saved" in c]
    if held:
        axes.plot([c["iteration"] for c in held], [c["held_out_saved"] for c in held],
                  marker="o", label="held-out modules")
    axes.axhline(0, color="gray", linewidth=0.8)
    axes.set_xlabel("ES iteration")
    axes.set_ylabel(".text bytes saved vs default")
    axes.set_title("MLGO inlining with ES on kiln (mlgo-inline)")
    axes.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    pyplot.close(figure)


if __name__ == "__main__":
    main()
