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
sessions (--parallel), and moves along the perturbations weighted by their
fitness, as ml-compiler-opt's ES trainer does. A policy's fitness on a batch
is the mean over its modules of the share of each module's default .text it
saves, so that one large module does not outweigh the rest (absolute bytes
would). The step is kept only where it does not lose, on a fresh batch of
training modules it was not fitted on, what the current policy saves there:
a few perturbations are a noisy gradient, and judging the step on the batch
that made it would favour it.
Modules: --dataset (default kiln-bench-v0; a corpus the cluster serves,
e.g. debian-v0 from `kiln datasets install`, at most --max-modules of it,
the same sample for every seed), every fourth held out, and --csmith /
--held-out-csmith csmith programs (dozens of call sites each) added to
training / held out. With --validation N, N training modules are set apart:
the policy is measured on them every --held-out-every iterations and the run
ends with the policy that saved most there (the start, the default
heuristic, included), so a step that only fits the training batches is not
kept. Every --held-out-every iterations the policy is also measured on the
held-out modules, so the curve shows what it generalizes, not only what it
fits.
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
    parser.add_argument("--dataset", default="benchmark://kiln-bench-v0",
                        help="the cluster's dataset to train on and hold out from")
    parser.add_argument("--max-modules", type=int, default=0,
                        help="at most this many of the dataset's modules (a fixed sample; 0: all)")
    parser.add_argument("--validation", type=int, default=0,
                        help="training modules set apart to choose the final policy (0: the last)")
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
    if min(args.max_modules, args.validation, args.csmith, args.held_out_csmith) < 0:
        parser.error("--max-modules, --validation, --csmith and --held-out-csmith must be >= 0")
    return args


class LinearPolicy:
    """Inline when w . [advice, z(f) for each feature f] + b > 0, where z is a
    feature's log-scaled value, sign(f) log1p(|f|), standardized by the
    mean and spread seen at the training modules' call sites. Standardized,
    one perturbation size moves every feature's weight alike: raw features
    span from 0/1 flags to costs in the thousands."""

    def __init__(self, names, mean=None, spread=None):
        self.names = names
        self.mean = np.zeros(len(names)) if mean is None else np.asarray(mean, dtype=np.float64)
        self.spread = np.ones(len(names)) if spread is None else np.asarray(spread,
                                                                            dtype=np.float64)

    def initial(self):
        # The default heuristic's own advice: +1 on it, a bias of -0.5.
        weights = np.zeros(len(self.names) + 2)
        weights[0] = 1.0
        weights[-1] = -0.5
        return weights

    def features(self, observation):
        values = np.array([float(np.asarray(observation[n]).ravel()[0]) for n in self.names])
        return np.sign(values) * np.log1p(np.abs(values))

    def fit_scale(self, rows):
        """Standardize by the call sites `rows` (log-scaled feature vectors)."""
        if rows:
            rows = np.array(rows)
            self.mean = rows.mean(axis=0)
            self.spread = np.where(rows.std(axis=0) > 1e-6, rows.std(axis=0), 1.0)

    def decide(self, weights, observation, advice):
        z = (self.features(observation) - self.mean) / self.spread
        return int(float(advice) * weights[0] + z @ weights[1:-1] + weights[-1] > 0)


def episode(args, policy, weights, benchmark, rows=None):
    """Bytes of .text saved against the default heuristic, and its size;
    each call site's log-scaled features are appended to `rows` if given."""
    with kiln.make("mlgo-inline-v0", cluster=args.cluster, benchmark=benchmark) as env:
        observation, _ = env.reset()
        terminated = False
        while not terminated:
            advice = env.observation["DefaultAdvice"]
            if rows is not None:
                rows.append(policy.features(observation))
            action = policy.decide(weights, observation, advice)
            observation, _, terminated, _, _ = env.step(action)
        # LLVM's own default build, which the advice through the ML advisor
        # does not always reproduce (DefaultNativeSize is that reference).
        default = env.observation["LlvmDefaultNativeSize"]
        return default - env.observation["NativeSize"], default


def call_site_scale(args, pool, policy, train):
    """The mean and spread of the features at up to 8 training modules' call
    sites, under the default heuristic."""
    rows = []
    sample = train[::max(1, len(train) // 8)][:8]
    list(pool.map(lambda m: episode(args, policy, policy.initial(), m, rows), sample))
    policy.fit_scale(rows)
    return len(rows)


def evaluate(args, pool, policy, weights, modules):
    return evaluate_many(args, pool, policy, [(weights, modules)])[0]


def relative_saving(results):
    """The mean over modules of the share of each one's default .text saved."""
    return float(np.mean([s / max(d, 1) for s, d in results])) if results else 0.0


def evaluate_many(args, pool, policy, trials):
    """(bytes saved, default .text bytes, mean relative saving) of each
    (weights, modules) trial, every episode of them in flight on the pool
    together."""
    jobs = [[pool.submit(episode, args, policy, w, m) for m in modules] for w, modules in trials]
    results = [[job.result() for job in trial] for trial in jobs]
    return [(sum(s for s, _ in r), sum(d for _, d in r), relative_saving(r)) for r in results]


def split_modules(args):
    """(held out, validation, training) module URIs: the same for every seed."""
    with kiln.datasets(args.cluster, session_type="mlgo-inline") as datasets:
        modules = sorted(datasets.benchmarks(args.dataset))
    if args.max_modules and len(modules) > args.max_modules:
        pick = np.random.default_rng(0).choice(len(modules), args.max_modules, replace=False)
        modules = [modules[i] for i in sorted(pick)]
    held = modules[::4] + [f"generator://csmith-v0/{1000 + s}" for s in range(args.held_out_csmith)]
    rest = [m for i, m in enumerate(modules) if i % 4]
    validation = rest[::max(1, len(rest) // args.validation)][:args.validation] if (
        args.validation) else []
    train = [m for m in rest if m not in validation] + [
        f"generator://csmith-v0/{s}" for s in range(1, args.csmith + 1)]
    if not train:
        sys.exit(f"{args.dataset}: {len(modules)} modules leave none to train on "
                 f"(--max-modules, --validation)")
    return held, validation, train


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    held, validation, train = split_modules(args)
    with kiln.make("mlgo-inline-v0", cluster=args.cluster, benchmark=train[0]) as env:
        first, _ = env.reset()
        # inlining_default is not filled in by LLVM's interactive mode; the
        # advice comes from the DefaultAdvice observation instead.
        names = sorted(n for n in first if n != "inlining_default")
    policy = LinearPolicy(names)
    weights = policy.initial()
    best = None  # the policy the run ends with: the best on the validation modules
    curve, done = [], 0
    checkpoint_path = os.path.join(args.out, "checkpoint.json")
    if args.resume and os.path.exists(checkpoint_path):
        with open(checkpoint_path) as f:
            saved = json.load(f)
        if saved["features"] != names:
            sys.exit(f"{checkpoint_path} was trained on other features: {saved['features']}")
        weights = np.array(saved["weights"], dtype=np.float64)
        policy = LinearPolicy(names, saved["mean"], saved["spread"])
        rng.bit_generator.state = saved["rng"]
        curve, done, best = saved["curve"], saved["iteration"], saved.get("best")
        print(f"resumed from {checkpoint_path} at iteration {done}")
    start, ran = time.time(), 0
    with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
        if not done:
            sites = call_site_scale(args, pool, policy, train)
            print(f"features standardized over {sites} call sites of the training modules")
        (base_saved, base_default, _), (_, _, base_validation) = evaluate_many(
            args, pool, policy, [(policy.initial(), held), (policy.initial(), validation)])
        if best is None:
            best = {"weights": policy.initial().tolist(), "iteration": 0,
                    "validation_share": base_validation}
        print(f"{len(train)} training modules, {len(validation)} for validation, {len(held)} "
              f"held out; {len(names)} features; the default heuristic's advice as a start "
              f"saves {base_saved} bytes on the held-out modules ({base_default} bytes of .text)")
        for iteration in range(done + 1, args.iterations + 1):
            if args.stop_after is not None and ran >= args.stop_after:
                break
            order = rng.permutation(len(train))
            size = min(args.batch, len(train))
            batch = [train[i] for i in order[:size]]
            # The step is judged on other training modules than it was fitted
            # on (the same ones only when there are too few to split).
            fresh = [train[i] for i in order[size:2 * size]] or batch
            noise = rng.standard_normal((args.population // 2, weights.size))
            candidates = [weights + args.sigma * e for e in noise] + [
                weights - args.sigma * e for e in noise]
            scores = evaluate_many(args, pool, policy, [(w, batch) for w in candidates])
            fitness = np.array([relative for _, _, relative in scores], dtype=np.float64)
            half = args.population // 2
            spread = fitness.std() or 1.0
            gradient = ((fitness[:half] - fitness[half:]) / spread) @ noise / half
            stepped = weights + args.step_size * gradient
            (_, _, current), (_, _, after) = evaluate_many(
                args, pool, policy, [(weights, fresh), (stepped, fresh)])
            if after >= current:
                weights = stepped
            point = {"iteration": iteration, "fresh_saved_share": max(after, current),
                     "step_kept": bool(after >= current),
                     "best_candidate_share": float(fitness.max())}
            notes = ""
            if (args.held_out_every and iteration % args.held_out_every == 0) or (
                    validation and iteration == args.iterations):
                measured = evaluate_many(args, pool, policy,
                                         [(weights, held), (weights, validation)])
                point["held_out_share"] = measured[0][2]
                notes = f", held out {100 * point['held_out_share']:+.3f}%"
                if validation:
                    point["validation_share"] = measured[1][2]
                    notes += f", validation {100 * point['validation_share']:+.3f}%"
                    if point["validation_share"] > best["validation_share"]:
                        best = {"weights": weights.tolist(), "iteration": iteration,
                                "validation_share": point["validation_share"]}
            curve.append(point)
            ran += 1
            print(f"iteration {iteration:2d}: candidates saved {100 * fitness.min():+.3f}..."
                  f"{100 * fitness.max():+.3f}% of .text per module on {len(batch)} modules; "
                  f"the step {'kept' if point['step_kept'] else 'refused'} on {len(fresh)} fresh "
                  f"ones ({100 * point['fresh_saved_share']:+.3f}%){notes} "
                  f"({time.time() - start:.0f} s)")
            with open(checkpoint_path + ".tmp", "w") as f:
                json.dump({"iteration": iteration, "weights": weights.tolist(), "features": names,
                           "rng": rng.bit_generator.state, "curve": curve, "best": best,
                           "mean": policy.mean.tolist(), "spread": policy.spread.tolist()}, f)
            os.replace(checkpoint_path + ".tmp", checkpoint_path)
            save_plot(os.path.join(args.out, "curve.png"), curve)
        if curve and curve[-1]["iteration"] < args.iterations:
            print(f"stopped at iteration {curve[-1]['iteration']} of {args.iterations}: "
                  f"--resume continues")
            return
        if validation:
            weights = np.array(best["weights"], dtype=np.float64)
            print(f"the policy of iteration {best['iteration']} saved most on the validation "
                  f"modules ({100 * best['validation_share']:+.3f}% of .text per module): it is "
                  f"the one kept")
        saved, default, share = evaluate(args, pool, policy, weights, held)
    np.savez(os.path.join(args.out, "policy.npz"), weights=weights, features=np.array(names),
             mean=policy.mean, spread=policy.spread)
    save_plot(os.path.join(args.out, "curve.png"), curve)
    # The start already differs from the default build: LLVM's ML advisor
    # walks the call sites with its own limits. Both comparisons are shown.
    print(f"held-out ({len(held)} modules): the learned policy saves {saved} bytes of .text "
          f"against LLVM's own default build ({100.0 * saved / max(default, 1):+.2f}% of "
          f"{default} bytes; {100.0 * share:+.3f}% per module on average), "
          f"{saved - base_saved:+d} bytes against the default heuristic's "
          f"advice through the ML advisor (the start, which saves {base_saved}); curve and "
          f"policy in {args.out}/ ({time.time() - start:.0f} s)")


def save_plot(path, curve):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(6, 3.5))
    axes.plot([c["iteration"] for c in curve], [100 * c["fresh_saved_share"] for c in curve],
              label="policy, on a fresh batch")
    axes.plot([c["iteration"] for c in curve], [100 * c["best_candidate_share"] for c in curve],
              linestyle="--", label="best perturbation")
    held = [c for c in curve if "held_out_share" in c]
    if held:
        axes.plot([c["iteration"] for c in held], [100 * c["held_out_share"] for c in held],
                  marker="o", label="held-out modules")
    validation = [c for c in curve if "validation_share" in c]
    if validation:
        axes.plot([c["iteration"] for c in validation],
                  [100 * c["validation_share"] for c in validation], marker="s",
                  label="validation modules")
    axes.axhline(0, color="gray", linewidth=0.8)
    axes.set_xlabel("ES iteration")
    axes.set_ylabel("% of .text saved per module")
    axes.set_title("MLGO inlining with ES on kiln (mlgo-inline)")
    axes.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    pyplot.close(figure)


if __name__ == "__main__":
    main()
