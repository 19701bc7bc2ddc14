"""Smoke run of `kiln bench cluster --quick` (seconds): 4 namespace hosts on
emulated links, one of them cut off for 4 s; its JSON has the rows and fields
README.md documents, and the added delay shows in the round trips. Skipped
where the machine cannot make the bed (not root, no TAP devices, no
namespaces)."""

import json
import os
import pathlib
import subprocess

import pytest

from bench_json import KILN

NETBED = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "netbed"


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/dev/net/tun"),
                    reason="network namespaces need root, emulated links TAP devices")
def test_cluster_rows_per_delay_against_the_tcp_echo():
    done = subprocess.run(
        [KILN, "bench", "cluster", "--quick", "--netbed", str(NETBED), "--json"],
        capture_output=True, text=True, timeout=240, check=False,
    )
    if done.returncode != 0 and "cannot make the namespace bed" in done.stderr:
        pytest.skip(done.stderr.strip()[-300:])
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["title"].startswith("kiln bench cluster")
    rows = [row for row in report["rows"] if "added_one_way_delay_us" in row]
    cuts = [row for row in report["rows"] if "cut_seconds" in row]
    assert [row["added_one_way_delay_us"] for row in rows] == [0, 2000]
    for row in rows:
        for field in ("step_p50_us", "step_p99_us", "tcp_echo_p50_us", "tcp_echo_p99_us",
                      "x_floor_p50", "step_zeromq_p50_us", "zmq_echo_p50_us", "x_zmq_floor_p50", "placement_p50_us", "placement_p99_us", "x_zmq_floor_placement_p50",
                      "steps_per_s_1_in_flight", "steps_per_s_pipelined", "pipelining_gain",
                      "judged_against"):
            assert field in row, (field, row)
        assert row["step_p50_us"] > 0 and row["tcp_echo_p50_us"] > 0, row
        assert row["step_zeromq_p50_us"] > 0, row
    # A round trip crosses the 2 ms link twice, the echo's as well as a step's.
    slow = rows[1]
    assert slow["tcp_echo_p50_us"] >= 4000 and slow["step_p50_us"] >= 4000, slow
    assert slow["step_zeromq_p50_us"] >= 4000, slow
    # A worker host's cable pulled for 4 s (longer than the clients' 3 s
    # ZMTP timeout): its sessions move, none of their steps is lost, and the
    # old copies refuse late steps.
    (cut,) = cuts
    assert cut["cut_seconds"] == 4, cut
    assert cut["steps_lost"] == 0 and cut["steps_answered"] == cut["steps_attempted"], (cut, report["notes"])
    assert cut["sessions_restored"] >= 1, cut
    assert cut["late_steps"] == cut["late_steps_refused"] >= 1, cut
    assert cut["back_on_coordinator_s"] >= 0, cut
