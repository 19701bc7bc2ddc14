"""Smoke run of `kiln bench rtt` (seconds): its JSON has the rows and fields
that README.md's Benchmarks section documents, so that the bench cannot rot
unnoticed. The figures themselves are not judged (a shared machine is too
noisy for that): only that they are there and sane."""

from bench_json import run_bench


def test_rtt_judges_every_kiln_row_against_a_floor_of_the_same_run():
    report = run_bench("rtt", "--iterations", "300", "--idle-sessions", "20", "--no-pinned")
    assert report["title"].startswith("kiln bench rtt")
    # The identity rows (issue 48): the step path with the client known by
    # its secret and by a pass, judged against each other; and a nesting
    # host's check of an experiment's key and of its pass for that host,
    # with the client's stamp of each.
    identity = [row for row in report["rows"] if "check_ns_other_client" in row]
    by_client = [row for row in identity if row["path"].startswith("raw step, client by")]
    experiment = [row for row in identity if row["path"].startswith("experiment request, by")]
    assert len(by_client) == 2 and len(experiment) == 2, identity
    assert len(identity) == 4, identity
    for row in by_client:
        for field in ("mode", "path", "judged_against", "runs", "p50_us_min", "p50_us_median"):
            assert field in row, (field, row)
        assert 0 < row["p50_us_min"] <= row["p50_us_median"], row
    for row in experiment:
        for field in ("mode", "path", "judged_against", "runs", "client_stamp_ns"):
            assert field in row, (field, row)
        assert row["check_ns_other_client"] > 0 and row["client_stamp_ns"] > 0, row
    assert experiment[1]["judged_against"] == "experiment request, by key", experiment
    assert experiment[1]["x_judged_check"] > 0, experiment
    latency = [row for row in report["rows"] if "path" in row and row not in identity]
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
