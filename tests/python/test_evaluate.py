"""kiln.evaluate(): a Python policy over benchmarks in parallel, the report
against -Oz, every final state validated, seeded repeatability, and failed
episodes scored at -O0 rather than dropped."""

import pytest

import kiln
from conftest import require_type

BENCHMARKS = ["benchmark://kiln-bench-v0/crc32", "benchmark://kiln-bench-v0/quicksort"]


def test_a_random_policy_is_reported_per_benchmark_and_as_geomeans(cluster):
    require_type(cluster, "llvm")

    def random_policy(observation, env):
        return env.action_space.sample()

    report = kiln.evaluate(random_policy, benchmarks=BENCHMARKS, step_budget=6, parallel=2,
                           seed=3, cluster=cluster)
    assert report["agent"] == "random_policy" and report["failures"] == []
    assert [r["benchmark"] for r in report["benchmarks"]] == BENCHMARKS
    for row in report["benchmarks"]:
        assert row["steps"] == 6 and len(row["passes"]) == 6
        assert all(isinstance(p, str) for p in row["passes"])
        assert row["ir_instruction_count_vs_oz"] == pytest.approx(
            row["ir_instruction_count_oz"] / row["ir_instruction_count"])
        assert len(row["ir_sha1"]) == 40 and row["text_size_bytes"] > 0
        # kiln-bench programs run: each state was run against -O0.
        assert row["validity"] == "valid" and row["validation_inputs"] > 0, row
    assert report["validated"] and report["counts"]["valid"] == 2
    ratios = [r["ir_instruction_count_vs_oz"] for r in report["benchmarks"]]
    assert report["geomean_ir_instruction_count_vs_oz"] == pytest.approx(
        (ratios[0] * ratios[1]) ** 0.5)
    again = kiln.evaluate(random_policy, benchmarks=BENCHMARKS, step_budget=6, parallel=1,
                          seed=3, cluster=cluster)
    assert [r["passes"] for r in again["benchmarks"]] == [r["passes"] for r in report["benchmarks"]]


def test_states_out_reads_back_as_states(cluster, tmp_path):
    require_type(cluster, "llvm")
    path = tmp_path / "states.csv"
    report = kiln.evaluate(lambda o, env: env.action_space.sample(), benchmarks=BENCHMARKS,
                           step_budget=3, cluster=cluster, states_out=str(path))
    states = kiln.states.read_csv(str(path))
    assert [s.benchmark for s in states] == BENCHMARKS
    for state, row in zip(states, report["benchmarks"]):
        assert state.commandline == " ".join(row["passes"])
        assert state.reward == pytest.approx(row["reward"])
        assert state.validity == "valid"
    assert path.read_text().startswith("benchmark,reward,walltime,commandline,validity\n")
    assert kiln.best_states(report) == states


def test_an_observation_policy_that_stops_early_and_a_dataset(cluster):
    require_type(cluster, "llvm")
    seen = []

    def stop_after_two(observation):
        seen.append(observation)
        return None if len(seen) % 3 == 0 else 0

    report = kiln.evaluate(stop_after_two, dataset="benchmark://kiln-bench-v0", limit=1,
                           step_budget=10, parallel=1, cluster=cluster, name="two")
    assert report["agent"] == "two"
    (row,) = report["benchmarks"]
    assert row["steps"] == 2 and isinstance(seen[0], int)


def test_failures_are_reported_and_bad_arguments_refused(cluster):
    require_type(cluster, "llvm")
    report = kiln.evaluate(lambda o: 0, benchmarks=BENCHMARKS[:1] + [
        "benchmark://kiln-bench-v0/no-such-program"], step_budget=1, cluster=cluster)
    assert len(report["benchmarks"]) == 1
    assert report["failures"][0]["benchmark"].endswith("no-such-program")
    assert "LEFT OUT of the geomean" in report["scoring"]
    assert report["counts"]["not_measured"] == 1
    with pytest.raises(kiln.InvalidArgument, match="step_budget"):
        kiln.evaluate(lambda o: 0, benchmarks=BENCHMARKS, step_budget=0, cluster=cluster)
    with pytest.raises(kiln.InvalidArgument, match="nothing to evaluate"):
        kiln.evaluate(lambda o: 0, cluster=cluster)
    with pytest.raises(kiln.InvalidArgument, match="callable"):
        kiln.evaluate("greedy", benchmarks=BENCHMARKS, cluster=cluster)
    with pytest.raises(kiln.InvalidArgument, match="list of URIs"):
        kiln.evaluate(lambda o: 0, benchmarks=BENCHMARKS[0], cluster=cluster)


def test_a_failed_episode_counts_at_o0_and_unvalidated_runs_say_so(cluster):
    require_type(cluster, "llvm")

    def out_of_range(observation, env):
        return 10**6  # no such action: kiln refuses the step

    report = kiln.evaluate(out_of_range, benchmarks=BENCHMARKS, step_budget=2, cluster=cluster)
    assert report["failures"] == []
    for row in report["benchmarks"]:
        assert row["error"] and row["scored_unoptimized"], row
        assert row["ir_instruction_count_vs_oz"] == pytest.approx(
            row["ir_instruction_count_oz"] / row["ir_instruction_count_o0"])
    assert report["counts"]["failed"] == 2
    assert "count at -O0's size" in report["scoring"]
    assert kiln.best_states(report) == []

    quick = kiln.evaluate(lambda o: 0, benchmarks=BENCHMARKS, step_budget=1, cluster=cluster,
                          validate=False)
    assert not quick["validated"]
    assert [r["validity"] for r in quick["benchmarks"]] == ["unvalidated", "unvalidated"]
    assert "UNVALIDATED" in quick["scoring"]


def test_kiln_eval_states_replay_to_the_reported_ir(cluster, tmp_path):
    """`kiln eval --states-out` writes states that kiln.compiler_gym's
    env.apply replays to the IR (SHA-1) and reward kiln eval reported."""
    require_type(cluster, "llvm")
    import json
    import pathlib
    import subprocess

    import kiln.compiler_gym as compiler_gym

    binary = pathlib.Path(kiln.__file__).resolve().parents[2] / "bin" / "kiln"
    if not binary.exists():
        pytest.skip(f"no kiln binary beside this package ({binary})")
    states_csv = tmp_path / "states.csv"
    done = subprocess.run(
        [str(binary), "eval", "--agent", "greedy", "--steps", "150", "--slots", "2", "--json",
         "--states-out", str(states_csv)] + [arg for b in BENCHMARKS for arg in ("--benchmark", b)],
        capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stderr
    reported = {r["benchmark"]: r for r in json.loads(done.stdout)["benchmarks"]}
    states = kiln.states.read_csv(str(states_csv))
    assert sorted(s.benchmark for s in states) == sorted(BENCHMARKS)
    with compiler_gym.make("llvm-ic-v0", cluster=cluster) as env:
        for state in states:
            env.apply(state)
            assert env.observation["IrSha1"] == reported[state.benchmark]["ir_sha1"]
            assert env.episode_reward == pytest.approx(state.reward)
