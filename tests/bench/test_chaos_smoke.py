"""Smoke run of `kiln bench chaos` (seconds): its JSON has the rows and fields
that README.md's Benchmarks section documents, so that the bench cannot rot
unnoticed. The figures themselves are not judged (a shared machine is too
noisy for that): only that they are there and sane."""

from bench_json import run_bench


def test_chaos_counts_every_step_and_every_death():
    report = run_bench(
        "chaos", "--seconds", "3", "--min-kill-seconds", "0.5", "--max-kill-seconds", "1"
    )
    assert report["title"].startswith("kiln bench chaos")
    (row,) = report["rows"]
    for field in ("sessions", "workers", "seconds", "workers_killed",
                  "workers_died_on_their_own", "restarts_after_caught_crash",
                  "steps_attempted", "steps_completed", "sessions_restored", "steps_lost",
                  "state_mismatches", "reward_mismatches", "steps_per_s"):
        assert field in row, (field, row)
    assert row["workers_killed"] >= 1, row
    assert row["steps_completed"] == row["steps_attempted"] > 0, row
    assert row["steps_lost"] == 0 and row["state_mismatches"] == 0, row
    assert row["reward_mismatches"] == 0, row
    assert row["workers_died_on_their_own"] == 0, row


def test_chaos_as_a_user_runs_it_loses_no_llvm_step():
    # Default heartbeats and workers started again on their own ports: a
    # restore may meet a dead worker the coordinator still lists, or the
    # replacement at its endpoint, and must go on until it finds a live one.
    report = run_bench(
        "chaos", "--session-type", "llvm", "--heartbeat-seconds", "1", "--same-endpoints",
        "--sessions", "6", "--seconds", "6", "--min-kill-seconds", "1.5",
        "--max-kill-seconds", "3", timeout=300,
    )
    (row,) = report["rows"]
    assert row["workers_killed"] >= 1, row
    assert row["steps_lost"] == 0, (row, report["notes"])
    assert row["steps_completed"] + row["compile_errors"] == row["steps_attempted"], row
    assert row["reward_mismatches"] == 0, (row, report["notes"])


def test_the_differential_harness_prints_its_mismatches_and_its_faults():
    report = run_bench(
        "chaos", "--episodes", "60", "--episode-length", "4", "--fault", "kill",
        "--busy-us", "20000", "--min-kill-seconds", "0.3", "--max-kill-seconds", "0.6",
        timeout=300,
    )
    assert report["title"].startswith("kiln bench chaos: 60 episodes of noop")
    (row,) = report["rows"]
    assert row["fault"] == "kill" and row["episodes"] == 60, row
    for field in ("steps_compared", "values_compared", "faults_injected", "sessions_restored",
                  "steps_after_a_restore", "quiet_seconds", "faulted_seconds"):
        assert field in row, (field, row)
    assert row["faults_injected"] >= 1, (row, report["notes"])
    assert row["reward_mismatches"] == row["observation_mismatches"] == 0, (row, report["notes"])
    assert row["outcome_mismatches"] == 0, (row, report["notes"])
