"""What running programs costs, and how noisy it is:
`python3 -m kiln.bench_runtime [--json] [--quick]`.

On an embedded cluster (one worker), for each kiln-bench-v0 program:
- the cost of a Buildtime, a Runtime (llvm.runtime_runs = --runs) and a
  validate() observation of a new state (the worker's executable cache
  off, so each builds the program), each the client's wall time for it,
  min / median of --repeats; and of a Runtime observation of a state built
  before (the cache on: the runs alone); judged against the program's own
  run time (what a Runtime sample measures);
- the runtime noise on the unoptimized (-O0) and -O3 builds: the spread
  (max - min) / median of their --runs samples, the noise a runtime reward
  has to rise above on this machine;
- what validation finds on states from random search: --episodes episodes
  of --steps random passes, each final state validated, errors by kind.
"""

import json
import statistics

import numpy as np

import kiln

from . import _bench
from ._bench import summary, timed




def _spread(samples):
    median = statistics.median(samples)
    return (max(samples) - min(samples)) / median if median > 0 else 0.0


def _program_cache(client, workers, entries):
    for worker in workers:
        client.worker_parameter(worker, "service.program_cache.set_max_size", str(entries))


def measure(env, benchmark, runs, repeats, cache):
    """One program's row: costs, noise. `cache(n)` bounds the worker's
    executable cache to n entries."""
    env.reset(benchmark=benchmark)
    env.set_parameter("llvm.runtime_runs", runs)
    build, runtime, validate, cached = [], [], [], []
    o0, o3 = None, None
    cache(0)
    for _ in range(repeats):
        build.append(timed(lambda: env.observation["Buildtime"])[0])
        took, o0 = timed(lambda: env.observation["Runtime"])
        runtime.append(took)
        validate.append(timed(env.validate)[0])
    cache(16)
    env.observation["IsBuildable"]
    for _ in range(repeats):
        cached.append(timed(lambda: env.observation["Runtime"])[0])
    o3 = env.observation["RuntimeO3"]
    return {
        "benchmark": benchmark,
        "buildtime_observation_s": summary(build),
        "runtime_observation_s": summary(runtime),
        "runtime_built_state_s": summary(cached),
        "validate_s": summary(validate),
        "program_o0_s": statistics.median(o0.tolist()),
        "program_o3_s": statistics.median(o3.tolist()),
        "noise_o0": _spread(o0.tolist()),
        "noise_o3": _spread(o3.tolist()),
        "judged_against": "the program's own run time (program_o0_s, program_o3_s); noise is "
                          "(max - min) / median of the runs",
    }


def random_search(env, benchmarks, episodes, steps, seed):
    """Validates the final state of random episodes; errors by kind."""
    rng = np.random.default_rng(seed)
    found, validated, invalid = {}, 0, []
    for episode in range(episodes):
        benchmark = benchmarks[episode % len(benchmarks)]
        env.reset(benchmark=benchmark)
        try:
            env.multistep([int(a) for a in rng.integers(env.action_space.n, size=steps)])
        except kiln.CompileError:
            continue  # a pass that broke the module ends the episode: nothing to run
        result = env.validate()
        validated += 1
        for error in result.errors:
            found[error.kind] = found.get(error.kind, 0) + 1
        if not result.okay:
            invalid.append({"state": str(env.state.commandline), "benchmark": benchmark,
                            "errors": [str(e) for e in result.errors]})
    return {"episodes": episodes, "validated": validated, "errors_by_kind": found,
            "invalid_states": invalid[:10],
            "judged_against": "the benchmark as it came, on every input (0 errors expected)"}


def run(benchmarks=None, runs=5, repeats=3, episodes=50, steps=20, seed=0):
    with kiln.LocalCluster(workers=1, slots=2, client_tuning=True) as local:
        if benchmarks is None:
            benchmarks = kiln.datasets(local.endpoint).benchmarks("benchmark://kiln-bench-v0")
        client = kiln._kiln.Client(local.endpoint, 60.0, "", "", "")
        cache = lambda entries: _program_cache(client, local.worker_endpoints, entries)
        with kiln.make("llvm-v0", cluster=local.endpoint) as env:
            rows = [measure(env, b, runs, repeats, cache) for b in benchmarks]
            search = random_search(env, benchmarks, episodes, steps, seed)
    return {"programs": rows, "random_search": search}


def _table(report):
    lines = ["kiln bench runtime (python3 -m kiln.bench_runtime): seconds, min / median",
             f"  {'benchmark':<44} {'Buildtime':>13} {'Runtime':>13} {'built':>13}"
             f" {'validate':>13}"
             f" {'-O0 run':>8} {'-O3 run':>8} {'noise O0':>8} {'noise O3':>8}"]
    for row in report["programs"]:
        def cell(key):
            return f"{row[key]['min']:.3f}/{row[key]['median']:.3f}"
        lines.append(
            f"  {row['benchmark']:<44} {cell('buildtime_observation_s'):>13}"
            f" {cell('runtime_observation_s'):>13} {cell('runtime_built_state_s'):>13}"
            f" {cell('validate_s'):>13}"
            f" {row['program_o0_s']:>8.4f} {row['program_o3_s']:>8.4f}"
            f" {row['noise_o0']:>8.1%} {row['noise_o3']:>8.1%}")
    lines.append("    Buildtime, Runtime, validate: a new state (it is built); built: Runtime of a"
                 " state built before")
    lines.append(f"    judged against: {report['programs'][0]['judged_against']}"
                 if report["programs"] else "")
    search = report["random_search"]
    lines.append(f"  random search: {search['validated']} of {search['episodes']} final states "
                 f"validated; errors by kind: {search['errors_by_kind'] or 'none'}")
    for state in search["invalid_states"]:
        lines.append(f"    {state['benchmark']} [{state['state']}]: {state['errors'][0]}")
    lines.append(f"    judged against: {search['judged_against']}")
    return "\n".join(lines)


def main(argv=None):
    parser = _bench.parser("bench_runtime", __doc__)
    parser.add_argument("--runs", type=int, default=5, help="runs per Runtime observation")
    parser.add_argument("--repeats", type=int, default=3, help="repeats of each cost (min/median)")
    parser.add_argument("--episodes", type=int, default=50, help="random-search episodes")
    parser.add_argument("--steps", type=int, default=20, help="passes per random episode")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: two programs, 2 runs, 1 repeat, 2 episodes")
    args = parser.parse_args(argv)
    if args.quick:
        report = run(benchmarks=["benchmark://kiln-bench-v0/sieve",
                                 "benchmark://kiln-bench-v0/crc32"],
                     runs=2, repeats=1, episodes=2, steps=5)
    else:
        report = run(runs=args.runs, repeats=args.repeats, episodes=args.episodes,
                     steps=args.steps)
    print(json.dumps(report, indent=1) if args.json else _table(report))


if __name__ == "__main__":
    main()
