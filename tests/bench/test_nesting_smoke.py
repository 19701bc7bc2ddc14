"""Smoke run of `kiln bench nesting` (seconds): both kinds of work, every
layout, and the rows and fields that README.md's Benchmarks section
documents, so that the bench cannot rot unnoticed. The figures themselves
are not judged (a shared machine is too noisy for that): only that they are
there, positive, and within their ranges."""

import subprocess

from bench_json import KILN, run_bench

LAYOUT_FIELDS = ("slots", "lull_target_pct", "lull_pct", "aggregate_collect_steps_s",
                 "x_aggregate", "ideal_x", "wall_steps_s", "x_wall", "ideal_x_wall",
                 "fairness_jain_pct",
                 "collect_max_over_min", "slot_busy_pct", "server_cpu_pct", "client_cpu_pct")
EXPERIMENT_FIELDS = ("collect_ms_median", "collect_ms_min", "update_ms_mean", "collect_steps_s",
                     "x_collect")
JUDGED_AGAINST = {"dedicated": "calibration", "shared": "dedicated", "nested": "dedicated"}


def test_nesting_compares_three_layouts_on_busy_and_llvm_work():
    report = run_bench("nesting", "--experiments", "2", "--work", "both", "--steps", "30",
                       "--llvm-steps", "16", "--episode-steps", "4", "--phases", "2",
                       "--lulls", "0.5")
    assert report["title"].startswith("kiln bench nesting")
    rows = report["rows"]
    layouts = [row for row in rows if "experiment" not in row]
    experiments = [row for row in rows if "experiment" in row]
    assert {(row["work"], row["layout"]) for row in layouts} == {
        (work, layout) for work in ("busy", "llvm") for layout in JUDGED_AGAINST}
    assert len(layouts) == 6
    for row in layouts:
        assert row["experiments"] == "2", row
        assert row["judged_against"] == JUDGED_AGAINST[row["layout"]], row
        for field in LAYOUT_FIELDS:
            assert field in row, (field, row)
        for field in ("lull_pct", "aggregate_collect_steps_s", "x_aggregate", "wall_steps_s",
                      "x_wall", "slot_busy_pct", "server_cpu_pct"):
            assert row[field] > 0, (field, row)
        assert row["lull_target_pct"] == 50, row
        # The ideals lie between 1 and K = 2, the wall one below the other.
        assert 1 <= row["ideal_x_wall"] <= row["ideal_x"] <= 2, row
        # Each host is a machine with its budget, or the note says none.
        assert row["host_budget"], row
        assert row["slots"] >= 2, row
        # Jain's index over K experiments lies in [100/K, 100] percent.
        assert 50 - 0.01 <= row["fairness_jain_pct"] <= 100 + 0.01, row
        assert row["collect_max_over_min"] >= 1, row
        assert row["client_cpu_pct"] >= 0, row
        # Busy or not, no slot can be in use for more than all of the time.
        assert row["slot_busy_pct"] <= 100 + 1, row
    assert len(experiments) == 12
    for row in experiments:
        assert row["experiment"] in ("exp-0", "exp-1"), row
        assert row["judged_against"] == JUDGED_AGAINST[row["layout"]], row
        for field in EXPERIMENT_FIELDS:
            assert field in row, (field, row)
            assert row[field] > 0, (field, row)
        assert row["collect_ms_min"] <= row["collect_ms_median"], row
    assert any("K=2 L=0.50" in note for note in report["notes"])
    assert any(note.startswith("machines:") for note in report["notes"])


def test_a_lull_outside_its_range_is_refused():
    done = subprocess.run([KILN, "bench", "nesting", "--lulls", "1.5"], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode != 0
    assert "--lulls" in done.stderr, done.stderr
