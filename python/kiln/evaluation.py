"""kiln.evaluate(): a user's Python policy on a dataset, the way `kiln eval`
runs its built-in agents: one episode per benchmark with a step budget,
benchmarks in parallel threads (each with its own env), every final state
validated (run against -O0 on each input of the benchmark; the verifier only
where it cannot run), and a report of the final states against -Oz, per
benchmark and as geomeans, like CompilerGym's llvm-ic-v0 leaderboard. A
benchmark whose episode failed or whose state is invalid counts at -O0's
size, so two policies are always compared on the same programs. The report
is a plain dict with the keys of `kiln eval --json`.
"""

import concurrent.futures
import hashlib
import inspect
import json
import math
import sys
import threading
import time

from .env import make
from .env import datasets as list_datasets
from .errors import InvalidArgument, KilnError
from .state import CompilerEnvState, write_csv

_DEFAULT = object()
# Figures measured on the final state of each episode.
_BASELINES = {
    "ir_instruction_count_o0": "IrInstructionCountO0",
    "ir_instruction_count_oz": "IrInstructionCountOz",
    "ir_instruction_count_o3": "IrInstructionCountO3",
    "text_size_o0": "ObjectTextSizeO0",
    "text_size_oz": "ObjectTextSizeOz",
}


def _baselines(env):
    """The benchmark's -O0, -Oz and -O3 figures, under the report's keys."""
    return {key: env.observation[space] for key, space in _BASELINES.items()}


def _reached_reward(row):
    """llvm-ic-v0's episode reward of the state a row reached, valid or not:
    (initial - final) / max(O0 - Oz, 1)."""
    return (row["ir_instruction_count_initial"] - row["ir_instruction_count"]) / max(
        row["ir_instruction_count_o0"] - row["ir_instruction_count_oz"], 1)


def _verdict(env):
    """(validity, inputs compared, detail) of the env's state, by the rules
    of `kiln eval` (tools/eval/validation_verdict.h): the verifier ran on
    every state the session reached; the Validation observation runs the
    program against -O0. A module that cannot run as it came is
    "verified-only"; any other error is raised (the benchmark then fails)."""
    try:
        report = json.loads(env.observation["Validation"])
    except InvalidArgument as error:
        return "verified-only", 0, str(error)
    errors = report["errors"]
    if not errors:
        return "valid", report["inputs"], ""
    differences = [e for e in errors if e["kind"] != "reference-failed"]
    first = differences[0] if differences else errors[0]
    detail = f"{first['kind']}: {first['message']}"
    if first.get("input"):
        detail += f" (input {first['input']})"
    return ("invalid" if differences else "verified-only"), report["inputs"], detail


def _scored_unoptimized(result):
    return result.get("error") is not None or result["validity"] == "invalid"


def _ratio(reference, size):
    if size <= 0:
        return 1.0 if reference <= 0 else float(reference)
    return max(reference, 0) / size


def geomean(values):
    """The geometric mean of positive values (1.0 for none)."""
    values = list(values)
    if not values:
        return 1.0
    return math.exp(sum(math.log(max(v, 1e-12)) for v in values) / len(values))


def _benchmark_seed(seed, benchmark):
    digest = hashlib.sha256(f"{seed}:{benchmark}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def _caller(policy):
    """policy(observation) or policy(observation, env), by its signature."""
    if not callable(policy):
        raise InvalidArgument(f"policy must be callable, got {type(policy).__name__}")
    try:
        parameters = inspect.signature(policy).parameters.values()
    except (TypeError, ValueError):
        return lambda observation, env: policy(observation)
    positional = [
        p
        for p in parameters
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    variadic = any(p.kind == p.VAR_POSITIONAL for p in parameters)
    if len(positional) >= 2 or (variadic and len(positional) < 2):
        return lambda observation, env: policy(observation, env)
    if len(positional) == 1:
        return lambda observation, env: policy(observation)
    raise InvalidArgument(
        "policy must take the observation, or the observation and the env, and return an action"
    )


def _resolve(dataset, benchmarks, limit, cluster, timeout):
    uris = []
    if dataset is not None:
        for name in [dataset] if isinstance(dataset, str) else list(dataset):
            with list_datasets(cluster, timeout=timeout) as found:
                uris.extend(found.benchmarks(name, limit))
    if benchmarks is not None:
        if isinstance(benchmarks, str):
            raise InvalidArgument("benchmarks must be a list of URIs, not one string")
        uris.extend(benchmarks)
    unique = list(dict.fromkeys(uris))
    if not unique:
        raise InvalidArgument("nothing to evaluate: give a dataset or benchmarks")
    return unique


def _episode(
    call, benchmark, env_id, cluster, step_budget, seed, timeout, observation_space, validate
):
    started = time.monotonic()
    kwargs = {} if observation_space is _DEFAULT else {"observation_space": observation_space}
    with make(env_id, cluster=cluster, benchmark=benchmark, timeout=timeout, **kwargs) as env:
        observation, _ = env.reset(seed=_benchmark_seed(seed, benchmark))
        initial = env.observation["IrInstructionCount"]
        steps = 0
        while steps < step_budget:
            action = call(observation, env)
            if action is None:
                break
            observation, _, terminated, truncated, _ = env.step(action)
            steps += 1
            if terminated or truncated:
                break
        seconds = time.monotonic() - started
        row = _baselines(env)
        count = env.observation["IrInstructionCount"]
        text = env.observation["ObjectTextSizeBytes"]
        names = env.action_space.names
        passes = [names[a] if isinstance(a, int) else str(a) for a in env.actions]
        validity, inputs, detail = _verdict(env) if validate else ("unvalidated", 0, "")
        invalid = validity == "invalid"
        row.update({
            "benchmark": benchmark,
            "passes": passes,
            "ir_instruction_count": count,
            "ir_instruction_count_initial": initial,
            "text_size_bytes": text,
        })
        # An invalid state counts as the program as it came (-O0).
        scored_count = row["ir_instruction_count_o0"] if invalid else count
        scored_text = row["text_size_o0"] if invalid else text
        return {
            **row,
            "ir_instruction_count_vs_oz": _ratio(row["ir_instruction_count_oz"], scored_count),
            "text_size_vs_oz": _ratio(row["text_size_oz"], scored_text),
            "reward": 0.0 if invalid else _reached_reward(row),
            "ir_sha1": env.observation["IrSha1"],
            "seconds": seconds,
            "steps": steps,
            "validity": validity,
            "validation_inputs": inputs,
            "validation_detail": detail,
            "scored_unoptimized": invalid,
            "error": None,
        }


def _scored_at_o0(benchmark, env_id, cluster, timeout, error):
    """A benchmark whose episode failed, scored at -O0 from a fresh env's
    baselines (raises when even those cannot be had)."""
    with make(env_id, cluster=cluster, benchmark=benchmark, timeout=timeout) as env:
        env.reset()
        row = _baselines(env)
    return {
        **row,
        "benchmark": benchmark,
        "passes": [],
        "ir_instruction_count_vs_oz": _ratio(row["ir_instruction_count_oz"],
                                             row["ir_instruction_count_o0"]),
        "text_size_vs_oz": _ratio(row["text_size_oz"], row["text_size_o0"]),
        "reward": 0.0,
        "validity": "unvalidated",
        "scored_unoptimized": True,
        "error": f"{type(error).__name__}: {error}",
    }


def _scoring(results, failures, validated):
    """The summary's counts and the sentence that says how they were scored."""
    ok = [r for r in results if r["error"] is None]
    counts = {
        word.replace("-", "_"): sum(1 for r in ok if r["validity"] == word)
        for word in ("valid", "verified-only", "invalid", "unvalidated")
    }
    counts["failed"] = len(results) - len(ok)
    counts["not_measured"] = len(failures)
    if validated:
        parts = [f"{counts['valid']} valid"]
        if counts["verified_only"]:
            parts.append(f"{counts['verified_only']} verified only (not runnable against -O0)")
        parts.append(f"{counts['invalid']} invalid")
    else:
        parts = [f"{counts['unvalidated']} UNVALIDATED (validate=False)"]
    parts.append(f"{counts['failed']} failed")
    text = ", ".join(parts)
    if counts["invalid"] + counts["failed"]:
        text += "; invalid and failed benchmarks count at -O0's size"
    if failures:
        text += f"; {len(failures)} not measurable at all, LEFT OUT of the geomean"
    return counts, text


class _Progress:
    def __init__(self, total, stream):
        self._total, self._stream, self._done = total, stream, 0
        self._lock = threading.Lock()

    def tick(self, benchmark):
        if self._stream is None:
            return
        with self._lock:
            self._done += 1
            width = 30
            filled = self._done * width // self._total
            end = "\n" if self._done == self._total else ""
            self._stream.write(
                f"\r  [{'#' * filled}{'-' * (width - filled)}] {self._done}/{self._total} "
                f"benchmarks (last: {benchmark}){end}"
            )
            self._stream.flush()


def evaluate(
    policy,
    dataset=None,
    benchmarks=None,
    step_budget=100,
    parallel=2,
    limit=None,
    seed=0,
    env_id="llvm-ic-v0",
    observation_space=_DEFAULT,
    cluster=None,
    timeout=120.0,
    name=None,
    progress=False,
    states_out=None,
    validate=True,
):
    """Runs `policy` for one episode of at most `step_budget` steps on each
    benchmark and reports the final states against -Oz.

    policy: policy(observation) -> action, or policy(observation, env) ->
      action (an index or a pass name); None ends the episode early. It is
      called from `parallel` threads at once, one env each. Each episode's
      env is reset with a seed drawn from `seed` and the benchmark's URI, so
      env.action_space.sample() repeats from run to run.
    dataset: a dataset name or a list of them (e.g. "benchmark://kiln-bench-v0";
      an unbounded generator such as "generator://csmith-v0" takes its
      first `limit` seeds); benchmarks: a list of URIs. Both may be given.
    progress: True draws a progress bar on stderr.
    states_out: a path (or open text file) to write each benchmark's final
      state to as CSV (kiln.CompilerEnvState with its validity; `kiln
      replay` checks it).
    validate: run each final state against -O0 (the default); False skips
      it and every entry says "unvalidated".

    Returns {"agent", "step_budget", "parallel", "validated", "seconds",
    "geomean_ir_instruction_count_vs_oz", "geomean_text_size_vs_oz",
    "counts", "scoring", "benchmarks": [one dict per benchmark],
    "failures": [{"benchmark", "error"}]}. A benchmark whose episode failed
    (a lost worker, a policy error from kiln) is an entry with its "error",
    scored at -O0; "failures" lists only those whose baselines could not be
    measured either (they are left out of the geomeans, and "scoring" says
    so). Exceptions of kiln surface as entries, never as raised errors.
    """
    call = _caller(policy)
    if not isinstance(step_budget, int) or isinstance(step_budget, bool) or step_budget < 1:
        raise InvalidArgument(f"step_budget must be a positive int, got {step_budget!r}")
    if not isinstance(parallel, int) or isinstance(parallel, bool) or parallel < 1:
        raise InvalidArgument(f"parallel must be a positive int, got {parallel!r}")
    uris = _resolve(dataset, benchmarks, limit, cluster, timeout)
    bar = _Progress(len(uris), sys.stderr if progress else None)
    started = time.monotonic()

    def run(benchmark):
        try:
            try:
                return _episode(
                    call,
                    benchmark,
                    env_id,
                    cluster,
                    step_budget,
                    seed,
                    timeout,
                    observation_space,
                    validate,
                )
            except KilnError as error:
                return _scored_at_o0(benchmark, env_id, cluster, timeout, error)
        finally:
            bar.tick(benchmark)

    results, failures = [], []
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(parallel, len(uris))) as pool:
        futures = [pool.submit(run, uri) for uri in uris]
        for uri, future in zip(uris, futures):
            try:
                results.append(future.result())
            except KilnError as error:
                failures.append({"benchmark": uri, "error": f"{type(error).__name__}: {error}"})
    counts, scoring = _scoring(results, failures, validate)
    report = {
        "agent": name or getattr(policy, "__name__", type(policy).__name__),
        "seed": seed,
        "step_budget": step_budget,
        "parallel": parallel,
        "validated": validate,
        "seconds": time.monotonic() - started,
        "geomean_ir_instruction_count_vs_oz": geomean(
            r["ir_instruction_count_vs_oz"] for r in results
        ),
        "geomean_text_size_vs_oz": geomean(r["text_size_vs_oz"] for r in results),
        "counts": counts,
        "scoring": scoring,
        "benchmarks": results,
        "failures": failures,
    }
    if states_out is not None:
        write_csv(states_out, best_states(report))
    return report


def best_states(report):
    """The state of each benchmark of a report (kiln.evaluate's or the parsed
    JSON of `kiln eval --json`) whose episode ran, as kiln.CompilerEnvState
    with its validity; an invalid state keeps the reward it reached."""
    states = []
    for r in report["benchmarks"]:
        if r.get("error"):
            continue
        states.append(CompilerEnvState(r["benchmark"], r["passes"], r["seconds"],
                                       _reached_reward(r), r.get("validity")))
    return states
