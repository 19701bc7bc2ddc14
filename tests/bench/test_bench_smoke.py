"""Smoke runs of `kiln bench`: each bench, run for seconds, prints the rows
and fields that README.md's Benchmarks section documents, as JSON, so that a
bench cannot rot unnoticed. The figures themselves are not judged here (a
shared machine is too noisy for that): only that they are there and sane."""

import json
import os
import subprocess

KILN = os.environ["KILN_BINARY"]


def run_bench(*args, timeout=240):
    done = subprocess.run(
        [KILN, "bench", *args, "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_rtt_judges_every_kiln_row_against_a_floor_of_the_same_run():
    report = run_bench("rtt", "--iterations", "300", "--idle-sessions", "20", "--no-pinned")
    assert report["title"].startswith("kiln bench rtt")
    latency = [row for row in report["rows"] if "path" in row]
    for row in latency:
        for field in ("mode", "path", "payload", "judged_against", "sessions", "p50_us",
                      "p90_us", "p99_us", "per_second"):
            assert field in row, (field, row)
        assert 0 < row["p50_us"] <= row["p99_us"], row
    floors = {(row["payload"], row["path"]) for row in latency if row["path"] != "kiln step"}
    for payload in ("16 B", "4096 B"):
        for path in ("raw zeromq", "raw zeromq ipc", "raw unix stream, blocking",
                     "raw unix stream, polling", "raw tcp loopback, blocking",
                     "raw tcp loopback, polling"):
            assert (payload, path) in floors, (payload, path)
    steps = [row for row in latency if row["path"] == "kiln step"]
    assert {row["sessions"] for row in steps} == {1.0, 64.0}
    for row in steps:
        if row["sessions"] == 1.0:
            assert (row["payload"], row["judged_against"]) in floors, row
            assert row["x_floor_p50"] > 0, row
        else:
            assert row["judged_against"] == "steps/s target", row
    memory = [row for row in report["rows"] if "process" in row]
    assert {row["process"] for row in memory} == {"coordinator", "worker"}
    assert all(row["idle_mib"] > 0 for row in memory)


def test_chaos_counts_every_step_and_every_death():
    report = run_bench(
        "chaos", "--seconds", "3", "--min-kill-seconds", "0.5", "--max-kill-seconds", "1"
    )
    assert report["title"].startswith("kiln bench chaos")
    (row,) = report["rows"]
    for field in ("sessions", "workers", "seconds", "workers_killed",
                  "workers_died_on_their_own", "restarts_after_caught_crash",
                  "steps_attempted", "steps_completed", "sessions_restored", "steps_lost",
                  "state_mismatches", "steps_per_s"):
        assert field in row, (field, row)
    assert row["workers_killed"] >= 1, row
    assert row["steps_completed"] == row["steps_attempted"] > 0, row
    assert row["steps_lost"] == 0 and row["state_mismatches"] == 0, row
    assert row["workers_died_on_their_own"] == 0, row
