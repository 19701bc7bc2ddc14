"""Smoke run of `kiln bench mlgo` (seconds): its JSON has the rows and fields
that README.md's Benchmarks section documents, so that the bench cannot rot
unnoticed. The figures themselves are not judged (a shared machine is too
noisy for that): only that they are there and sane."""

import os

import pytest

from bench_json import run_bench

PROGRAM = "benchmark://kiln-bench-v0/huffman"
DECISION_FIELDS = ("decisions", "direct_us_med", "kiln_us_med", "kiln_dec_per_s",
                   "added_us_paired", "compiler_us_paired", "relay_us_mean", "relay_us_p50",
                   "relay_us_p90", "relay_cold_us_p50", "floor_us_p50", "x_floor_p50",
                   "hop_floor_us", "direct_end_us_med", "kiln_end_us_med")
AS_IS_FLOORS = {"raw unix stream, client blocks, echo polls", "raw unix stream, blocking",
                "raw unix stream, polling", "raw zeromq ipc"}
PINNED_FLOORS = {"raw unix stream, blocking", "raw zeromq ipc"}
# The floor each kiln path is judged against, by mode.
JUDGED = {
    "as-is": {"direct channel": "raw unix stream, client blocks, echo polls",
              "zeromq ipc": "raw zeromq ipc"},
    "pinned-cpu0": {"direct channel": "raw unix stream, blocking",
                    "zeromq ipc": "raw zeromq ipc"},
}


def rows_of(report, mode, key):
    return [row for row in report["rows"] if row["mode"] == mode and key in row]


def check_mode(report, mode, floor_paths):
    processes = {row["process"]: row for row in rows_of(report, mode, "process")}
    assert set(processes) == {"client", "coordinator", "worker"}, processes
    assert "this bench process" in processes["client"]["runs_as"]
    for child in ("coordinator", "worker"):
        assert "child process" in processes[child]["runs_as"], processes[child]
    for row in processes.values():
        assert row["cpus"], row
        if mode == "pinned-cpu0":
            assert row["cpus"] == "0", row  # the children are pinned too

    floors = {row["path"]: row for row in rows_of(report, mode, "path")}
    assert set(floors) == floor_paths, floors
    for row in floors.values():
        assert row["payload"].endswith(" B"), row
        assert 0 < row["p50_us"] <= row["p90_us"] <= row["p99_us"], row
        assert row["per_second"] > 0, row

    decisions = rows_of(report, mode, "kiln_path")
    assert {(row["program"], row["kiln_path"]) for row in decisions} == {
        (PROGRAM, path) for path in JUDGED[mode]}
    for row in decisions:
        for field in DECISION_FIELDS:
            assert field in row, (field, row)
        assert row["decisions"] >= 2, row
        assert row["direct_us_med"] > 0 and row["kiln_us_med"] > 0, row
        assert row["direct_end_us_med"] > 0 and row["kiln_end_us_med"] > 0, row
        assert 0 < row["relay_us_p50"] <= row["relay_us_p90"], row
        assert row["judged_against"] == JUDGED[mode][row["kiln_path"]], row
        assert row["floor_us_p50"] == floors[row["judged_against"]]["p50_us"], row
        assert row["x_floor_p50"] == pytest.approx(
            row["relay_us_p50"] / row["floor_us_p50"], rel=0.01, abs=0.002), row


def test_mlgo_judges_every_decision_row_against_a_floor_between_processes():
    report = run_bench("mlgo", "--repetitions", "2", "--jobs", "4", "--program", PROGRAM,
                       "--no-pinned")
    assert "real coordinator and worker processes" in report["title"], report["title"]
    assert any(note.startswith("processes:") for note in report["notes"])
    assert {row["mode"] for row in report["rows"]} == {"as-is"}
    check_mode(report, "as-is", AS_IS_FLOORS)
    batch = rows_of(report, "as-is", "modules_per_s")
    assert len(batch) == 1 and batch[0]["modules_per_s"] > 0, batch
    assert batch[0]["slots_in_flight"] >= 1, batch


@pytest.mark.skipif(0 not in os.sched_getaffinity(0), reason="CPU 0 is not ours to pin to")
def test_mlgo_pinned_mode_pins_the_child_processes_too():
    report = run_bench("mlgo", "--repetitions", "1", "--jobs", "1", "--program", PROGRAM)
    check_mode(report, "pinned-cpu0", PINNED_FLOORS)
    # The batch runs as is only.
    assert not rows_of(report, "pinned-cpu0", "modules_per_s")
