"""Runs `kiln bench NAME ... --json` for the smoke tests beside this file and
returns the parsed report; a failing bench fails the test with its stderr."""

import json
import os
import subprocess

KILN = os.environ["KILN_BINARY"]


def run_bench(*args, timeout=240):
    done = subprocess.run(
        [KILN, "bench", *args, "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)
