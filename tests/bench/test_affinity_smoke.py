"""Smoke run of `kiln bench affinity` (seconds): real coordinator and llvm
workers, the same draw of starts placed by load alone and with cache
affinity. With sessions ended at once and one-slot workers, the warm worker
is always within the slack, so affinity must find the benchmark warm at
least as often as placing by load alone does."""

from bench_json import run_bench


def test_affinity_bench_finds_benchmarks_warm_more_often_than_load_alone():
    report = run_bench("affinity", "--workers", "2", "--benchmarks", "4", "--starts", "16",
                       "--prefix", "generator://llvm-stress-v0/")
    assert report["title"].startswith("kiln bench affinity")
    by_load, near = report["rows"]
    assert by_load["mode"].startswith("by load alone")
    assert near["mode"].startswith("cache affinity") and near["judged against"] == "by load alone"
    for row in (by_load, near):
        assert row["starts"] == 16
        assert 0 <= row["hit_rate"] <= 1
        assert 0 < row["start_p50_ms"] <= row["start_p99_ms"]
    # 4 benchmarks: at most 4 misses with affinity (each benchmark cold once,
    # unless the load pushes it to the other worker), up to 8 by load alone.
    assert near["hit_rate"] >= by_load["hit_rate"]
    assert near["hit_rate"] >= 0.5
