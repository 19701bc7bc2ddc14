"""Smoke run of `kiln bench tools --quick` (about half a minute): the agent
tools' apply_passes against a fresh opt-19 subprocess per call, side by side,
on the embedded cluster and on local clusters of 1 and 2 workers. Checks the
JSON's shape and that every row names its baseline; not the timings."""

from bench_json import run_bench

NUMBERS = ("calls", "calls_per_s", "p50_us", "p99_us", "opt_calls_per_s", "opt_p50_us",
           "opt_p99_us", "x_p50", "x_calls_per_s", "passes_reused_share", "counts_agree", "errors")


def test_tools_bench_rows_compare_every_call_with_an_opt_subprocess():
    report = run_bench("tools", "--quick", timeout=400)
    assert report["title"].startswith("kiln bench tools")
    rows = report["rows"]
    embedded = [r for r in rows if r["cluster"] == "embedded"]
    clusters = [r for r in rows if r["cluster"].startswith("--cluster")]
    assert [(r["callers"], r["prefixes"]) for r in embedded] == [
        ("1", "cold"), ("1", "shared"), ("2", "cold"), ("2", "shared")]
    assert [r["cluster"] for r in clusters] == ["--cluster, 1 worker", "--cluster, 2 workers"]
    for row in rows:
        assert row["judged_against"].startswith("opt-19 -passes=")
        for name in NUMBERS:
            assert row[name] >= 0, name
        assert row["calls"] >= 1
        assert 0 < row["p50_us"] <= row["p99_us"]
        assert 0 < row["opt_p50_us"] <= row["opt_p99_us"]
        assert 0 <= row["counts_agree"] <= 1
    assert "x_vs_first_cluster" in clusters[1]
    # Rollouts that share prefixes reuse them; cold calls have none to reuse.
    assert all(r["passes_reused_share"] > 0 for r in embedded if r["prefixes"] == "shared")
    assert any("20" in note for note in report["notes"])  # the target it is judged by
