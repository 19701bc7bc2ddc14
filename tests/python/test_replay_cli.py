"""`kiln replay` on states written by the Python env: a random episode on
every kiln-bench-v0 program, each state replayed by the CLI on its own
embedded cluster, all reproduce; a tampered reward is named and fails the
run; a bad row is named by its line."""

import os
import random
import subprocess

import pytest

import kiln
from conftest import require_type
from kiln import states

KILN = os.environ.get("KILN_BINARY", "kiln")


def replay(path, *extra):
    return subprocess.run([KILN, "replay", str(path), *extra], capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def episode_states(cluster):
    require_type(cluster, "llvm")
    with kiln.make("llvm-ic-v0", cluster=cluster, timeout=120) as env:
        rng = random.Random(5)
        recorded = []
        for uri in env.datasets.benchmarks("kiln-bench-v0"):
            env.reset(benchmark=uri)
            env.multistep([rng.randrange(env.action_space.n) for _ in range(rng.randrange(3, 12))])
            recorded.append(env.state)
        return recorded


def test_every_kiln_bench_state_reproduces(episode_states, tmp_path):
    path = tmp_path / "states.csv"
    states.write_csv(path, episode_states)
    run = replay(path)
    assert run.returncode == 0, run.stdout + run.stderr
    count = len(episode_states)
    assert f"{count} of {count} states reproduce" in run.stdout, run.stdout
    assert run.stdout.count("reproduces") == count


def test_a_tampered_reward_is_named_and_fails(episode_states, tmp_path):
    tampered = [episode_states[0]._replace(reward=episode_states[0].reward + 0.5)]
    path = tmp_path / "tampered.csv"
    states.write_csv(path, tampered + episode_states[1:3])
    run = replay(path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "DIFFERS: reward" in run.stdout and "2 of 3 states reproduce" in run.stdout


def test_a_state_with_a_pipeline_replays_in_the_space_that_has_it(tmp_path):
    # scc-oz-module-inliner is in PassesAndPipelines only; mem2reg in both.
    path = tmp_path / "pipeline.csv"
    path.write_text("benchmark,reward,walltime,commandline\n"
                    "benchmark://kiln-bench-v0/crc32,,1.0,mem2reg scc-oz-module-inliner\n")
    run = replay(path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 of 1 states reproduce" in run.stdout, run.stdout


def test_unknown_actions_and_bad_rows(tmp_path):
    path = tmp_path / "unknown.csv"
    path.write_text("benchmark,reward,walltime,commandline\n"
                    "benchmark://kiln-bench-v0/crc32,,1.0,mem2reg gvnn\n")
    run = replay(path)
    assert run.returncode == 1 and "unknown action 'gvnn'" in run.stdout, run.stdout
    assert "did you mean 'gvn'" in run.stdout
    bad = tmp_path / "bad.csv"
    bad.write_text("benchmark,reward,walltime,commandline\nbenchmark://x/y,zz,1,gvn\n")
    run = replay(bad)
    assert run.returncode == 2 and "bad.csv: line 2: reward 'zz'" in run.stderr, run.stderr


def test_kiln_validate_runs_every_state_against_its_benchmark(episode_states, tmp_path, cluster):
    path = tmp_path / "states.csv"
    states.write_csv(path, episode_states[:4])
    run = subprocess.run([KILN, "validate", str(path)], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 of 4 states are valid" in run.stdout, run.stdout
    assert run.stdout.count(", valid") == 4


def test_states_from_kiln_eval_are_validated(tmp_path):
    out = tmp_path / "best.csv"
    evaluated = subprocess.run(
        [KILN, "eval", "--agent", "random", "--dataset", "benchmark://kiln-bench-v0", "--limit",
         "3", "--steps", "60", "--states-out", str(out)],
        capture_output=True, text=True, timeout=600)
    assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr
    run = subprocess.run([KILN, "validate", str(out)], capture_output=True, text=True,
                         timeout=600)
    verdicts = run.stdout.count(", valid") + run.stdout.count(", INVALID")
    assert verdicts == 3, run.stdout + run.stderr
    valid = run.stdout.count(", valid")
    assert f"{valid} of 3 states are valid" in run.stdout
    assert run.returncode == (0 if valid == 3 else 1)


def test_compiler_gym_states_round_trip_writer_reader_apply_and_replay(cluster, tmp_path):
    # kiln.compiler_gym writes its commandline as an opt-19 chain (pipelines
    # such as 'early-cse<memssa>' quoted): its reader, env.apply and kiln
    # replay all read it back to the same program.
    require_type(cluster, "llvm")
    import kiln.compiler_gym as compiler_gym

    path = tmp_path / "compiler_gym_states.csv"
    with compiler_gym.make("llvm-v0", benchmark="benchmark://kiln-bench-v0/crc32",
                           reward_space="IrInstructionCount", cluster=cluster) as env:
        env.reset()
        for flag in ("-mem2reg", "-early-cse-memssa", "-instcombine", "-gvn", "-simplifycfg"):
            env.step(env.action_space.flags.index(flag))
        count = env.observation["IrInstructionCount"]
        assert env.state.commandline.startswith("opt-19 -passes=mem2reg input.bc -o - | ")
        assert "'early-cse<memssa>'" in env.state.commandline
        with open(path, "w") as f:
            compiler_gym.CompilerEnvStateWriter(f).write_state(env.state, flush=True)
        with open(path) as f:
            (read,) = list(compiler_gym.CompilerEnvStateReader(f))
        assert read == env.state
        env.reset()
        env.apply(read)
        assert env.observation["IrInstructionCount"] == count
    # kiln's own env reads the chain too (its actions by their pipelines).
    with kiln.make("llvm-v0", cluster=cluster) as own:
        own.reset(benchmark=read.benchmark)
        own.apply(read._replace(reward=None))
        assert own.observation["IrInstructionCount"] == count
    run = replay(path, "--reward-space", "IrInstructionCount")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 of 1 states reproduce" in run.stdout, run.stdout
    (row,) = [line.split() for line in run.stdout.splitlines()
              if line.split()[:2] == ["1", "benchmark://kiln-bench-v0/crc32"]]
    assert row[2] == "5" and int(row[5]) == count, run.stdout  # ACTIONS, INSTS
