"""Readable actions and replayable states on real llvm sessions: names,
CompilerGym flags and pipelines; steps by index, name or flag; unknown names
named with their near names; env.state / env.apply; env.commandline() run by
opt-19 reproduces the env's IR exactly on every kiln-bench-v0 program."""

import hashlib
import os
import random
import shutil
import subprocess

import pytest

import kiln
from conftest import require_type
from kiln import states

BENCHMARK = "benchmark://kiln-bench-v0/quicksort"
OPT = shutil.which("opt-19") or "/usr/lib/llvm-19/bin/opt"


@pytest.fixture(scope="module")
def env(cluster):
    require_type(cluster, "llvm")
    with kiln.make("llvm-ic-v0", cluster=cluster, benchmark=BENCHMARK, timeout=120) as env:
        yield env


def test_names_flags_and_pipelines(env):
    space = env.action_space
    assert len(space.names) == len(space.flags) == len(space.pipelines) == space.n > 100
    for name in ("gvn", "instcombine", "inline", "loop-unroll", "mem2reg", "sroa"):
        assert name in space.names
    flag = dict(zip(space.names, space.flags))
    assert flag["gvn"] == "-gvn" and flag["mem2reg"] == "-mem2reg"
    assert flag["instcombine"] == "-instcombine"
    assert flag["function-attrs"] == "-functionattrs"  # CompilerGym's legacy spelling
    # What runs is the -passes= text opt-19 gets: the name itself, but for
    # the few docs/actions.md explains.
    pipeline = dict(zip(space.names, space.pipelines))
    assert pipeline["licm"] == "licm" and pipeline["inline"] == "inline"
    assert pipeline["instcombine"] == "instcombine<no-verify-fixpoint>"
    assert pipeline["early-cse-memssa"] == "early-cse<memssa>"
    assert space.metadata["pipelines"] == space.pipelines


def test_the_default_space_holds_single_passes_and_the_second_adds_pipelines(cluster):
    require_type(cluster, "llvm")
    with kiln.make("llvm-ic-v0", cluster=cluster, benchmark=BENCHMARK, timeout=120) as env:
        assert [s.name for s in env.action_spaces] == ["PassesAll", "PassesAndPipelines"]
        single, both = env.action_spaces
        assert env.action_space.name == "PassesAll"
        assert "scc-oz-module-inliner" not in single.names
        assert "lower-switch-then-unify-loop-exits" not in single.names
        assert "unify-loop-exits" not in both.names  # two passes: another name
        # The same index means the same action in both spaces.
        assert both.names[: single.n] == single.names
        assert both.pipelines[: single.n] == single.pipelines
        assert both.names[single.n:] == ["lower-switch-then-unify-loop-exits",
                                         "scc-oz-module-inliner"]
        env.reset()
        with pytest.raises(kiln.InvalidArgument):
            env.step(both.index("scc-oz-module-inliner"))  # not in PassesAll
        env.reset(action_space="PassesAndPipelines")
        assert env.action_space.name == "PassesAndPipelines" and env.action_space.n == both.n
        env.step("scc-oz-module-inliner")
        assert env.actions == [both.index("scc-oz-module-inliner")]
        with pytest.raises(kiln.NotFound, match="PassesAndPipelines"):
            env.reset(action_space="NoSuchSpace")
        assert env.action_space.name == "PassesAndPipelines"
    with kiln.make("llvm-ic-v0", cluster=cluster, benchmark=BENCHMARK, timeout=120,
                   action_space="PassesAndPipelines") as env:
        env.reset()
        env.step("gvn")
        assert env.actions == [single.index("gvn")]


def test_the_compiler_version_is_the_workers(env):
    env.reset()
    version = env.compiler_version
    llvm = subprocess.run([OPT, "--version"], capture_output=True, text=True).stdout
    # The worker links the same LLVM 19 as opt-19 from Debian's llvm-19.
    assert version.startswith("LLVM 19.") and version.split()[1] in llvm
    assert "pass table" in version


def test_steps_by_index_name_and_flag_are_the_same_action(env):
    space = env.action_space
    env.reset()
    env.step(space.index("mem2reg"))
    by_index = env.observation["IrSha1"]
    env.reset()
    env.step("mem2reg")
    assert env.observation["IrSha1"] == by_index
    env.reset()
    env.step("-mem2reg")
    assert env.observation["IrSha1"] == by_index
    env.reset()
    env.multistep(["-mem2reg", "gvn", space.index("simplifycfg")])
    assert env.actions == [space.index(n) for n in ("mem2reg", "gvn", "simplifycfg")]


def test_unknown_names_are_named_with_near_names(env):
    env.reset()
    with pytest.raises(kiln.NotFound) as error:
        env.step("instcombin")
    message = str(error.value)
    assert "'instcombin'" in message and "did you mean 'instcombine'" in message
    with pytest.raises(kiln.NotFound, match="-loop-unrol"):
        env.multistep(["gvn", "-loop-unrol"])
    assert env.actions == []  # nothing ran: names resolve before the step is sent


def test_state_round_trips_through_csv_and_apply_reproduces_it(env, tmp_path):
    env.reset()
    env.multistep(["mem2reg", "-gvn", "simplifycfg", "instcombine"])
    state = env.state
    assert state.benchmark == BENCHMARK
    assert state.commandline == "mem2reg gvn simplifycfg instcombine"
    assert state.reward == pytest.approx(env.episode_reward) and state.walltime > 0
    path = tmp_path / "states.csv"
    states.write_csv(path, [state])
    (read,) = states.read_csv(path, env.action_space)
    assert read == state
    sha = env.observation["IrSha1"]
    replayed = env.apply(read)
    assert replayed == state and env.observation["IrSha1"] == sha
    # CompilerGym's commandline form replays the same.
    gym_form = kiln.CompilerEnvState(
        BENCHMARK,
        "opt -mem2reg -gvn -simplifycfg -instcombine input.bc -o output.bc",
        0,
        state.reward,
    )
    env.apply(gym_form)
    assert env.observation["IrSha1"] == sha


def test_apply_refuses_bad_states_clearly(env):
    env.reset()
    env.step("gvn")
    other = kiln.CompilerEnvState("benchmark://kiln-bench-v0/crc32", "gvn", 0, None)
    with pytest.raises(kiln.InvalidArgument, match="for benchmark://kiln-bench-v0/crc32, this env"):
        env.apply(other)
    assert env.actions == [env.action_space.index("gvn")]  # untouched
    unknown = kiln.CompilerEnvState(BENCHMARK, "gvn no-such-pass", 0, None)
    with pytest.raises(kiln.InvalidArgument, match="no-such-pass"):
        env.apply(unknown)
    wrong = kiln.CompilerEnvState(BENCHMARK, "mem2reg", 0, 123.0)
    with pytest.raises(kiln.InvalidArgument, match="does not reproduce"):
        env.apply(wrong)


def canonical_sha1(ll_text):
    lines = [
        line
        for line in ll_text.splitlines(keepends=True)
        if not line.startswith(("; ModuleID = ", "source_filename = "))
    ]
    return hashlib.sha1("".join(lines).encode()).hexdigest()


def test_commandline_reproduces_the_ir_on_every_kiln_bench_program(env, tmp_path):
    programs = env.datasets.benchmarks("kiln-bench-v0")
    assert len(programs) >= 20
    rng = random.Random(22)
    names = env.action_space.names
    for uri in programs:
        env.reset(benchmark=uri)
        source = tmp_path / "input.bc"
        env.write_bitcode(source)
        actions = [rng.randrange(len(names)) for _ in range(rng.randrange(5, 16))]
        env.multistep(actions)
        output = tmp_path / "output.bc"
        commandline = env.commandline(input=str(source), output=str(output), opt=OPT)
        run = subprocess.run(["bash", "-o", "pipefail", "-c", commandline], capture_output=True,
                             timeout=300)
        assert run.returncode == 0, (uri, commandline, run.stderr[-2000:])
        text = subprocess.run([OPT, "-S", str(output), "-o", "-"], capture_output=True,
                              check=True, timeout=120).stdout.decode()
        assert canonical_sha1(text) == env.observation["IrSha1"], (uri, env.state.commandline)
    env.reset(benchmark=BENCHMARK)


def test_write_ir_and_bitcode(env, tmp_path):
    env.reset()
    env.step("mem2reg")
    ir_path = env.write_ir(tmp_path / "m.ll")
    bc_path = env.write_bitcode(tmp_path / "m.bc")
    assert open(ir_path).read() == env.observation["Ir"]
    assert open(bc_path, "rb").read()[:2] == b"BC"
    assert os.path.getsize(bc_path) == len(env.observation["Bitcode"])


# A loop exited through an invoke (shared with the C++ action tests).
INVOKE_IR = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "llvm_engine", "data", "loop_exit_through_invoke.ll"
)


def test_an_action_refused_mid_step_keeps_the_actions_before_it(cluster):
    # lower-switch-then-unify-loop-exits refuses a loop exited through an
    # invoke; the action before it ran and stays applied: the episode's record
    # must hold it, or its state would replay to another module.
    require_type(cluster, "llvm")
    bench = kiln.make_benchmark(INVOKE_IR)
    with kiln.make("llvm-ic-v0", cluster=cluster, benchmark=bench, timeout=120,
                   action_space="PassesAndPipelines") as env:
        env.reset()
        with pytest.raises(kiln.InvalidArgument, match="invoke") as error:
            env.multistep(["loop-rotate", "lower-switch-then-unify-loop-exits", "gvn"])
        assert error.value.actions_applied == 1
        assert env.actions == [env.action_space.index("loop-rotate")]
        after = env.observation["IrSha1"]
        state = env.state
        env.reset()
        env.apply(state)
        assert env.observation["IrSha1"] == after
        env.step("simplifycfg")  # the session goes on
