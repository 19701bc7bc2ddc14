"""Smoke run of `kiln bench datasets` (seconds): a small corpus, but every row
and field that README.md's Benchmarks section documents, each saying what it
is judged against. The figures themselves are not judged (a shared machine is
too noisy for that): only that they are there and consistent."""

from bench_json import run_bench

MODULES = 300
TOUCHED = 60


def rows_where(report, **fields):
    return [row for row in report["rows"]
            if all(row.get(key) == value for key, value in fields.items())]


def test_datasets_bench_reports_every_scale_row():
    report = run_bench("datasets", "--modules", str(MODULES), "--touched", str(TOUCHED),
                       "--csmith-seeds", "1", "--repetitions", "2", "--cached-starts", "10")
    assert f"{MODULES} modules" in report["title"], report["title"]
    for row in report["rows"]:
        assert row["judged_against"], row

    for layout in ("plain", "mlgo"):
        index = rows_where(report, layout=layout, operation="index the corpus (scan, in process)")
        assert len(index) == 1, report["rows"]
        assert index[0]["modules"] == MODULES and index[0]["bytes"] > 0, index
        assert 0 < index[0]["min_ms"] <= index[0]["p50_ms"], index
        assert index[0]["target_ms"] == 1000
        listings = [row for row in rows_where(report, layout=layout)
                    if row["operation"].startswith("list every URI")]
        assert len(listings) == 2, listings
        for row in listings:
            assert row["modules"] == MODULES and row["target_ms"] == 100, row
            assert 0 < row["min_ms"] <= row["p50_ms"], row

    start_up = rows_where(report, layout="both")
    assert len(start_up) == 1, report["rows"]
    row = start_up[0]
    assert row["modules"] == 2 * MODULES
    assert row["p50_ms"] > 0 and row["no_corpus_p50_ms"] > 0 and row["rss_mib"] > 0, row
    assert abs(row["added_p50_ms"] - (row["p50_ms"] - row["no_corpus_p50_ms"])) < 0.01, row

    rss = [row for row in report["rows"] if row["operation"].startswith("worker RSS after")]
    assert [row["modules_touched"] for row in rss] == [15, 30, 45, 60], rss
    for row in rss:
        assert row["rss_mib"] > 0 and row["caches_bound_mib"] > 0, row
        assert row["within_bound"] in (0, 1), row
        assert row["judged_against"] == "RSS before + the caches' byte bounds"

    cold = rows_where(report, operation="start an llvm session on a module never read (cold)")
    cached = rows_where(report, operation="start an llvm session on a cached module")
    assert len(cold) == 1 and len(cached) == 1, report["rows"]
    assert cold[0]["samples"] == TOUCHED and cached[0]["samples"] == 10
    assert cold[0]["p50_us"] > 0 and cached[0]["p50_us"] > 0
    assert cold[0]["x_cached_p50"] > 0
    assert any(note.startswith("cache bounds of the worker") for note in report["notes"])
