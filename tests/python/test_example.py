"""Smoke test of examples/python/random_search.py: it runs to the end on this
build (on llvm-ic-v0, or on noop-v0 with a message when llvm is absent)."""

import json
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


PPO_TINY = ["--envs", "2", "--rollout", "6", "--horizon", "3", "--csmith", "2",
            "--held-out-csmith", "1", "--budget", "6"]


def test_ppo_trains_stops_resumes_and_compares_on_held_out_programs(tmp_path):
    out = str(tmp_path / "ppo")
    # A preempted run: it stops after 2 of 3 iterations, with its checkpoint.
    first = run_example("ppo_pass_ordering.py", *PPO_TINY, "--iterations", "3",
                        "--stop-after", "2", "--out", out)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "stopped at iteration 2 of 3" in first.stdout
    assert (tmp_path / "ppo" / "checkpoint.pt").exists()
    assert (tmp_path / "ppo" / "learning_curve.png").read_bytes().startswith(b"\x89PNG")
    # Resumed: one more iteration, then the held-out comparison.
    second = run_example("ppo_pass_ordering.py", *PPO_TINY, "--iterations", "3", "--resume",
                         "--out", out)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "resumed from" in second.stdout and "at iteration 2" in second.stdout
    assert "iteration   3:" in second.stdout and "iteration   1:" not in second.stdout
    assert "held-out" in second.stdout and "random search" in second.stdout
    # Every final state of both agents was validated against -O0.
    assert second.stdout.count("valid, 0 invalid") == 2, second.stdout


def test_ppo_gives_the_same_figures_for_the_same_seed(tmp_path):
    runs = [run_example("ppo_pass_ordering.py", *PPO_TINY, "--iterations", "2", "--seed", "5",
                        "--out", str(tmp_path / f"run{i}")) for i in range(2)]
    for done in runs:
        assert done.returncode == 0, done.stdout + done.stderr
    figures = [[line for line in done.stdout.splitlines()
                if line.startswith(("iteration", "held-out"))] for done in runs]
    # Wall times and steps/s aside, the lines are equal.
    strip = [[line.rsplit(", ", 1)[0] if line.startswith("iteration") else line for line in f]
             for f in figures]
    assert strip[0] == strip[1] and len(strip[0]) == 3, figures


def test_ppo_on_the_program_graph_trains_resumes_and_refuses_another_observation(tmp_path):
    out = str(tmp_path / "ppo-graph")
    first = run_example("ppo_pass_ordering.py", *PPO_TINY, "--observation", "programl",
                        "--iterations", "2", "--stop-after", "1", "--out", out)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "stopped at iteration 1 of 2" in first.stdout
    # The checkpoint carries the graph vocabulary: a resumed run goes on with it.
    second = run_example("ppo_pass_ordering.py", *PPO_TINY, "--observation", "programl",
                         "--iterations", "2", "--resume", "--out", out)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "at iteration 1" in second.stdout and "held-out" in second.stdout
    # A graph checkpoint is not an Autophase one.
    wrong = run_example("ppo_pass_ordering.py", *PPO_TINY, "--iterations", "3", "--resume",
                        "--out", out)
    assert wrong.returncode != 0
    assert "trained on --observation programl" in wrong.stdout + wrong.stderr


def test_mlgo_inlining_es_trains_stops_resumes_and_reports_held_out_size(tmp_path):
    es = ["--population", "2", "--batch", "2", "--held-out-every", "1", "--validation", "2",
          "--max-modules", "16", "--out", str(tmp_path / "es")]
    first = run_example("mlgo_inline_es.py", "--iterations", "2", "--stop-after", "1", *es)
    assert first.returncode == 0, first.stdout + first.stderr
    # Its starting point is the default heuristic itself: nothing saved, nothing lost.
    assert "as a start saves 0 bytes" in first.stdout
    assert "held out" in first.stdout and "stopped at iteration 1 of 2" in first.stdout
    assert "10 training modules, 2 for validation, 4 held out" in first.stdout
    assert (tmp_path / "es" / "checkpoint.json").exists()
    saved = json.loads((tmp_path / "es" / "checkpoint.json").read_text())
    assert len(saved["mean"]) == len(saved["features"]) and saved["best"]["iteration"] in (0, 1)
    # Fitness is the share of each module's .text saved (no module outweighs
    # the rest), and the step is judged on modules it was not fitted on.
    (point,) = saved["curve"]
    assert isinstance(point["step_kept"], bool) and -1 < point["fresh_saved_share"] < 1
    assert "on 2 fresh ones" in first.stdout
    second = run_example("mlgo_inline_es.py", "--iterations", "2", "--resume", *es)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "resumed from" in second.stdout and "iteration  1:" not in second.stdout
    assert "iteration  2:" in second.stdout
    assert "saved most on the validation modules" in second.stdout
    assert "held-out (4 modules): the learned policy saves" in second.stdout
    assert (tmp_path / "es" / "policy.npz").exists() and (tmp_path / "es" / "curve.png").exists()