"""Smoke run of `kiln bench llvm` (seconds): its JSON has the rows and fields
that README.md's Benchmarks section documents, so that the bench cannot rot
unnoticed. The figures themselves are not judged (a shared machine is too
noisy for that): only that they are there and sane, and that only a pass's
first application to a module it changes is compared with opt-19."""

from bench_json import run_bench


def test_llvm_compares_only_first_applications_that_change_the_module_with_opt():
    report = run_bench(
        "llvm", "--iterations", "20", "--start-iterations", "5", "--opt-runs", "3",
        "--live-sessions", "5", "--no-pinned", "--pass", "mem2reg", "--pass", "globaldce",
        timeout=400,
    )
    assert report["title"].startswith("kiln bench llvm")
    latency = [row for row in report["rows"] if "operation" in row]
    for row in latency:
        for field in ("mode", "benchmark", "operation", "judged_against", "p50_us", "p99_us",
                      "samples"):
            assert field in row, (field, row)
        assert 0 < row["p50_us"] <= row["p99_us"], row
    floors = {row["operation"] for row in latency if row["benchmark"].startswith("raw")}
    assert {"raw unix stream, blocking", "raw unix stream, polling",
            "raw zeromq ipc"} <= floors, floors
    (noop,) = [row for row in latency if row["benchmark"] == "noop"]
    assert noop["judged_against"] in floors and noop["x_floor_p50"] > 0, noop
    for benchmark in ("small", "large"):
        operations = {row["operation"]: row for row in latency if row["benchmark"] == benchmark}
        for operation in ("start uncached", "start cached", "fork"):
            assert operation in operations, (benchmark, operation)
        # mem2reg changes both programs: its first applications are the
        # headline, judged against opt-19 on the same input.
        for operation in ("first mem2reg", "first mem2reg, cache off"):
            row = operations[operation]
            assert row["judged_against"].startswith("opt-19"), row
            assert row["x_cheaper"] > 0 and row["opt19_p50_us"] > 0, row
        # Cache hits and repeats are rows of their own, never compared.
        for operation in ("first mem2reg, transition-cache hit",
                          "repeat mem2reg, unchanged module",
                          "repeat mem2reg, transition-cache hit"):
            row = operations[operation]
            assert "x_cheaper" not in row and row["judged_against"].startswith("-"), row
    # globaldce leaves crc32 as it is: named so, and not compared.
    small = {row["operation"]: row for row in latency if row["benchmark"] == "small"}
    row = small["first globaldce (no change)"]
    assert "x_cheaper" not in row, row
    memory = [row for row in report["rows"] if "process" in row]
    assert memory and all(row["with_mib"] > 0 for row in memory), memory
