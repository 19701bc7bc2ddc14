"""Smoke run of `kiln bench runtime` (seconds): its JSON has a floor row (alone)
and a row per concurrent level for each program, with the fields docs/runtime.md
describes. The ratios are not judged here (a shared machine is too noisy);
what is: every sample came back, each row is judged, and the floor's ratio
is 1."""

from bench_json import run_bench


def test_runtime_rows_for_alone_and_two_at_once():
    report = run_bench(
        "runtime", "--program", "sieve", "--sessions", "2", "--runs", "3", "--rounds", "1",
        timeout=400,
    )
    assert report["title"].startswith("kiln bench runtime")
    rows = report["rows"]
    assert [row["sessions"] for row in rows] == ["1 (alone)", "2"], rows
    for row in rows:
        for field in ("program", "cpus", "judge", "samples", "median_ms", "iqr_pct", "ci_pct",
                      "ratio_pct", "bound_pct", "worst_session_pct", "queued_ms", "round_s"):
            assert field in row, (field, row)
        assert row["median_ms"] > 0, row
    alone, two = rows
    assert alone["samples"] == 3 and alone["judge"] == "the floor" and alone["ratio_pct"] == 100
    assert two["samples"] == 6 and two["judge"] in ("within noise", "OUTSIDE noise"), two
    assert any(note.startswith("ratio_pct:") for note in report["notes"])
