"""Smoke test of examples/python/random_search.py: it runs to the end on this
build (on llvm-ic-v0, or on noop-v0 with a message when llvm is absent)."""

import os
import pathlib
import subprocess
import sys


def test_random_search_runs():
    source = pathlib.Path(os.environ.get("KILN_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
    script = source / "examples" / "python" / "random_search.py"
    done = subprocess.run(
        [sys.executable, str(script), "--episodes", "2", "--steps", "5", "--seed", "1"],
        capture_output=True, text=True, timeout=240, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "best" in done.stdout
