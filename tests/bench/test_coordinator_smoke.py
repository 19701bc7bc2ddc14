"""Smoke run of `kiln bench coordinator --quick` (seconds): one real
coordinator and simulated hosts on real sockets. Its JSON has every figure at
every host count; what must hold on any machine is judged (all placed, none
answered twice, silent hosts declared lost, no session forgotten across the
restart), the timings only for sanity."""

from bench_json import run_bench


def test_coordinator_bench_places_notices_losses_and_survives_a_restart():
    report = run_bench("coordinator", "--quick")
    assert report["title"].startswith("kiln bench coordinator")
    rows = {row["figure"]: row for row in report["rows"]}
    counts = ("20 hosts", "60 hosts")
    for figure in ("sessions placed", "placement p50, us", "placement p99, us",
                   "floor: ZeroMQ echo p50, us", "placements/s offered", "placements/s, unpaced",
                   "coordinator CPU, heartbeats only, % of a core", "coordinator RSS, MiB",
                   "status (every host listed) p50, ms", "silent host declared lost, max s",
                   "restart: all hosts registered again, s", "restart: first placement, s",
                   "restart: sessions not counted", "requests answered twice",
                   "placement errors", "experiment placement p99, us"):
        assert figure in rows, figure
        assert "judged against" in rows[figure]
        for count in counts:
            assert count in rows[figure], (figure, count)
    assert rows["sessions placed"]["20 hosts"] == 400
    assert rows["sessions placed"]["60 hosts"] == 1200
    for count in counts:
        assert 0 < rows["placement p50, us"][count] <= rows["placement p99, us"][count]
        assert 0 < rows["floor: ZeroMQ echo p50, us"][count]
        assert rows["placements/s, unpaced"][count] > 0
        assert rows["placement errors"][count] == 0
        assert rows["requests answered twice"][count] == 0
        assert rows["restart: sessions not counted"][count] == 0
        # --quick: 0.2 s heartbeats, liveness 3: a silent host goes within 0.6 s, and the
        # listing is polled every 20 ms (5 s: generous on a loaded machine).
        assert 0 < rows["silent host declared lost, max s"][count] < 5.0
        assert rows["coordinator RSS, MiB"][count] > 0


def test_coordinator_bench_refuses_bad_settings():
    import os
    import subprocess

    kiln = os.environ["KILN_BINARY"]
    bad = subprocess.run([kiln, "bench", "coordinator", "--hosts", "1"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode != 0
    assert "--hosts" in bad.stderr + bad.stdout
