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


def run_example(name, *args):
    source = pathlib.Path(os.environ.get("KILN_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
    script = source / "examples" / "python" / name
    return subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True, text=True, timeout=240, check=False,
    )


def test_policy_gradient_agent_runs():
    done = run_example("policy_gradient.py", "--episodes", "4", "--length", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "best return" in done.stdout and "greedy sequence" in done.stdout


def test_mlgo_inlining_episode_reproduces_the_default_size():
    done = run_example("mlgo_inline_episode.py", "--benchmark", "benchmark://kiln-bench-v0/crc32")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "saved 0 bytes" in done.stdout, done.stdout


def test_graph_regression_trains_and_reports_held_out_error():
    done = run_example("graph_regression.py", "--csmith", "3", "--epochs", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "held-out MAE" in done.stdout and "predicting the training mean" in done.stdout
