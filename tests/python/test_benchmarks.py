"""Users' own programs as benchmarks: kiln.make_benchmark and
kiln.benchmark_from_clang_invocation compile here with clang-19 and send the
bitcode inline, to the llvm and mlgo session types alike."""

import os

import pytest

import kiln
from conftest import require_type

SOURCE_DIR = os.environ.get(
    "KILN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")
)
BENCH_V0 = os.path.join(SOURCE_DIR, "programs", "bundled", "kiln-bench-v0")

# Passes that change crc32 at kiln-bench-v0's -O2 front end.
PASSES = ["sroa", "instcombine", "simplifycfg", "gvn", "adce", "dce"]


def _trajectory(env, benchmark):
    """IrInstructionCount and Autophase after reset and after each of PASSES."""
    env.reset(benchmark=benchmark)
    seen = [(env.observation["IrInstructionCount"], list(env.observation["Autophase"]))]
    for name in PASSES:
        env.step(name)
        seen.append((env.observation["IrInstructionCount"], list(env.observation["Autophase"])))
    return seen


def test_a_source_made_here_steps_like_the_same_program_built_in(cluster):
    require_type(cluster, "llvm")
    # kiln-bench-v0 is built with -O2 and the front end only, as make_benchmark does.
    bench = kiln.make_benchmark(os.path.join(BENCH_V0, "crc32.c"), copts=["-O2"])
    assert bench.uri.startswith("benchmark://user-v0/crc32-")
    assert bench.program[:4] == b"BC\xc0\xde"
    with kiln.make("llvm-v0", cluster=cluster, timeout=120) as env:
        ours = _trajectory(env, bench)
        builtin = _trajectory(env, "benchmark://kiln-bench-v0/crc32")
        assert len(ours) == len(PASSES) + 1
        assert ours == builtin
        assert ours[0][0] != ours[-1][0]  # the passes did something

        # Another benchmark of the user's, then back: each reset takes its own bytes.
        other = kiln.make_benchmark(os.path.join(BENCH_V0, "sieve.c"), copts=["-O2"])
        _, info = env.reset(benchmark=other)
        assert info["benchmark"] == other.uri
        assert env.observation["IrInstructionCount"] != ours[0][0]
        env.reset(benchmark=bench)
        assert env.observation["IrInstructionCount"] == ours[0][0]


def test_make_with_a_benchmark_and_a_clang_invocation(cluster, tmp_path):
    require_type(cluster, "llvm")
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "n.h").write_text("#define N 100\n")
    (tmp_path / "prog.c").write_text(
        '#include "n.h"\nint f(int* a) { int s = 0; for (int i = 0; i < N; ++i) s += a[i];'
        " return s; }\n"
    )
    bench = kiln.benchmark_from_clang_invocation(
        ["gcc", "-O1", "-Iinc", "-MD", "-c", "prog.c", "-o", "prog.o"], cwd=tmp_path
    )
    assert not (tmp_path / "prog.o").exists() and not (tmp_path / "prog.d").exists()
    with kiln.make("llvm-ic-v0", cluster=cluster, benchmark=bench, timeout=120) as env:
        start, info = env.reset()
        assert info["benchmark"] == bench.uri and start > 0
        env.step(env.action_space.sample())
        # The module as written and loaded back is the same benchmark.
        path = tmp_path / "prog.bc"
        bench.write(path)
        again = kiln.Benchmark.load(path)
        assert again == bench
        first, _ = env.reset(benchmark=again)
        assert first == start


@pytest.mark.parametrize("session_type", ["mlgo-inline", "mlgo-regalloc", "mlgo-compile"])
def test_mlgo_session_types_take_a_users_benchmark(cluster, session_type, tmp_path):
    require_type(cluster, session_type)
    (tmp_path / "a.c").write_text(
        "static int sq(int x) { return x * x; }\n"
        "int main(void) { int t = 0; for (int i = 0; i < 9; ++i) t += sq(i); return t; }\n"
    )
    bench = kiln.make_benchmark([tmp_path / "a.c"], copts=["-O2"])
    spec = kiln.EnvSpec(f"user-{session_type}", session_type, bench.uri)
    with kiln.make(spec, cluster=cluster, benchmark=bench, timeout=120) as env:
        _, info = env.reset()
        assert info["benchmark"] == bench.uri
    if session_type == "mlgo-inline":
        with kiln.make("mlgo-inline-v0", cluster=cluster, benchmark=bench, timeout=120) as env:
            observation, _ = env.reset()
            assert observation is not None
            env.step(env.action_space.sample())


def test_errors_name_what_was_wrong(tmp_path):
    (tmp_path / "bad.c").write_text("int f(void) { return missing_name; }\n")
    with pytest.raises(kiln.CompileError, match="missing_name"):
        kiln.make_benchmark(tmp_path / "bad.c")
    (tmp_path / "ok.c").write_text("int f(void) { return 1; }\n")
    with pytest.raises(kiln.InvalidArgument, match="over the limit"):
        kiln.make_benchmark(tmp_path / "ok.c", max_bytes=64)
    (tmp_path / "corrupt.bc").write_bytes(b"BC\xc0\xde" + b"\x55" * 40)
    with pytest.raises(kiln.InvalidArgument, match="corrupt.bc"):
        kiln.make_benchmark(tmp_path / "corrupt.bc")
    with pytest.raises(kiln.NotFound):
        kiln.make_benchmark(tmp_path / "missing.c")
    with pytest.raises(kiln.InvalidArgument, match="links"):
        kiln.benchmark_from_clang_invocation(["clang", "ok.c", "-o", "ok"], cwd=tmp_path)
    with pytest.raises(kiln.InvalidArgument, match="plugin"):
        kiln.benchmark_from_clang_invocation(["clang", "-c", "ok.c", "-fplugin=x.so"], cwd=tmp_path)
    with pytest.raises(TypeError):
        kiln.benchmark_from_clang_invocation("clang -c ok.c")
    with pytest.raises(kiln.InvalidArgument, match="kiln.Benchmark"):
        kiln.make("llvm-v0", benchmark=b"BC\xc0\xde")
