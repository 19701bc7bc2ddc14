"""What an optimized program does: validation, Runtime, Buildtime,
IsBuildable, IsRunnable and the runtime reward, from Python, with hostile
programs planted (they fail within their limits; the worker serves on)."""

import json
import os

import numpy as np
import pytest

import kiln

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH_V0 = os.path.join(HERE, "..", "..", "programs", "bundled", "kiln-bench-v0")


def _program(tmp_path, name, source):
    path = tmp_path / f"{name}.c"
    path.write_text(source)
    return kiln.make_benchmark(path, copts=["-O0", "-Xclang", "-disable-O0-optnone"])


def test_a_benchmark_builds_runs_and_is_timed(cluster):
    with kiln.make("llvm-v0", cluster=cluster) as env:
        env.reset(benchmark="benchmark://kiln-bench-v0/sieve")
        assert env.observation["IsBuildable"] == 1
        assert env.observation["IsRunnable"] == 1
        assert 0 < env.observation["Buildtime"] < 60
        env.set_parameter("llvm.runtime_runs", 3)
        runtime = env.observation["Runtime"]
        assert runtime.shape == (3,) and (runtime > 0).all()
        o3 = env.observation["RuntimeO3"]
        assert o3.shape == (3,)
        env.step(env.action_space.names.index("mem2reg"))
        assert isinstance(env.observation["Reward:RuntimeO3"], float)


def test_runtime_stats_gives_the_samples_with_their_median_and_spread(cluster):
    with kiln.make("llvm-v0", cluster=cluster) as env:
        env.reset(benchmark="benchmark://kiln-bench-v0/sieve")
        space = env.observation_spaces["RuntimeStats"]
        assert space.kind == "dict"
        # Appended: the spaces clients knew keep their places.
        names = list(env.observation_spaces)
        assert names.index("RuntimeStats") > names.index("Programl")
        env.set_parameter("llvm.runtime_runs", 5)
        stats = env.observation["RuntimeStats"]
        samples = stats["samples"]
        assert samples.shape == (5,) and (samples > 0).all()
        assert stats["count"] == 5
        assert stats["median"] == pytest.approx(float(np.median(samples)))
        assert stats["mean"] == pytest.approx(float(np.mean(samples)))
        assert stats["stdev"] == pytest.approx(float(np.std(samples, ddof=1)))
        q1, q3 = np.percentile(samples, [25, 75])
        assert stats["iqr"] == pytest.approx(q3 - q1)
        assert stats["ci_low"] == samples.min() and stats["ci_high"] == samples.max()
        assert stats["stable"] == 0 and stats["target"] == 0
        # Repeat until the median is known within 50%, batches of 5 up to 15.
        env.set_parameter("llvm.runtime_max_runs", 15)
        env.set_parameter("llvm.runtime_target", 0.5)
        stats = env.observation["RuntimeStats"]
        assert stats["count"] in (10, 15)
        assert (stats["stable"] == 1) == (stats["relative_ci"] <= 0.5)


def test_states_from_random_passes_validate(cluster):
    rng = np.random.default_rng(5)
    with kiln.make("llvm-v0", cluster=cluster) as env:
        env.reset(benchmark="benchmark://kiln-bench-v0/crc32")
        for _ in range(15):
            env.step(int(rng.integers(env.action_space.n)))
        result = env.validate()
        assert result.okay, str(result)
        assert result.inputs == 4  # kiln-bench-v0's four inputs
        with_asan = env.validate(asan=True)
        assert with_asan.okay and with_asan.asan, str(with_asan)


def test_an_optimization_that_changes_behaviour_is_caught(cluster, tmp_path):
    # Signed overflow is undefined: at -O0 the wrapped sum is tested, the
    # optimizer folds the test to false. The program behaves differently.
    bench = _program(tmp_path, "overflow", r"""
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) int wraps(int x) { return x + 1 < x; }
int main(int argc, char** argv) {
  int x = argc > 1 ? atoi(argv[1]) : INT_MAX;
  printf("wraps %d\n", wraps(x));
  return 0;
}
""")
    with kiln.make("llvm-v0", cluster=cluster) as env:
        env.reset(benchmark=bench)
        assert env.validate().okay
        env.step(env.action_space.names.index("instcombine"))
        result = env.validate()
        assert not result.okay
        assert result.errors[0].kind == "output"
        assert 'expected "wraps 1", got "wraps 0"' in result.errors[0].evidence


def test_a_users_inputs_and_a_planted_out_of_bounds_write(cluster, tmp_path):
    bench = _program(tmp_path, "echo_sum", r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  int sum = 0, v;
  while (scanf("%d", &v) == 1) sum += v;
  int* cells = malloc(4 * sizeof(int));
  cells[argc + 3] = sum;  /* out of bounds when there is an argument */
  printf("%s %d\n", argc > 1 ? argv[1] : "-", sum);
  free(cells);
  return 0;
}
""")
    with kiln.make("llvm-v0", cluster=cluster) as env:
        env.reset(benchmark=bench)
        spec = {"inputs": [{"args": [], "stdin": "1 2 3"}, {"args": ["x"], "stdin": "4 5"}]}
        assert env.set_parameter("llvm.run_spec", json.dumps(spec)) == "2"
        plain = env.validate()
        assert plain.okay and plain.inputs == 2, str(plain)
        checked = env.validate(asan=True)
        assert not checked.okay
        assert checked.errors[0].kind == "sanitizer"
        assert "heap-buffer-overflow" in checked.errors[0].evidence
        with pytest.raises(kiln.InvalidArgument, match="not one a benchmark may link"):
            env.set_parameter("llvm.run_spec", '{"inputs": [{}], "libraries": ["-fplugin=x"]}')


@pytest.mark.parametrize(
    "name, body, cause",
    [
        ("hang", "for (;;) {}", "timed out"),
        ("fork_bomb", "for (;;) fork();", "timed out"),
        ("flood", 'for (;;) puts("flood flood flood flood");', "timed out"),
        ("socket", "return socket(AF_INET, SOCK_STREAM, 0) < 0;", "SIGSYS"),
        ("allocate", "for (;;) { char* volatile p = malloc(1 << 20); if (!p) return 12; memset(p, 1, 1 << 20); }",
         "exited with code 12"),
    ],
)
def test_hostile_programs_fail_within_their_limits(cluster, tmp_path, name, body, cause):
    bench = _program(tmp_path, name, f"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
int main(void) {{ {body} }}
""")
    with kiln.make("llvm-v0", cluster=cluster) as env, kiln.make("llvm-v0", cluster=cluster) as other:
        other.reset(benchmark="benchmark://kiln-bench-v0/crc32")
        env.reset(benchmark=bench)
        # A program that ends on its own gets time to spare on a loaded
        # machine (64 MiB of page faults): its memory limit must stop it,
        # not the clock. The others end by the clock, soon.
        env.set_parameter("sandbox.wall_ms", 5000 if cause.startswith("exited") else 500)
        env.set_parameter("sandbox.memory_mb", 64)
        assert env.observation["IsBuildable"] == 1
        assert env.observation["IsRunnable"] == (1 if cause.startswith("exited") else 0)
        with pytest.raises(kiln.InvalidArgument, match=cause):
            env.observation["Runtime"]
        # The other session is untouched.
        other.step(0)
        assert other.observation["IrInstructionCount"] > 0


def test_a_client_may_only_lower_the_sandbox_limits(cluster):
    with kiln.make("llvm-v0", cluster=cluster) as env:
        env.reset(benchmark="benchmark://kiln-bench-v0/sieve")
        assert "250 ms" in env.set_parameter("sandbox.wall_ms", 250)
        with pytest.raises(kiln.PermissionDenied, match="--sandbox-wall-ms"):
            env.set_parameter("sandbox.wall_ms", 10_000_000)
        with pytest.raises(kiln.PermissionDenied, match="--runtime-max-runs"):
            env.set_parameter("llvm.runtime_runs", 100_000)
        with pytest.raises(kiln.InvalidArgument, match="the session is unchanged"):
            env.set_parameter("sandbox.network", 1)


def test_the_runtime_bench_prints_every_row_it_documents(capsys):
    from kiln import bench_runtime

    bench_runtime.main(["--quick", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert len(report["programs"]) == 2
    for row in report["programs"]:
        assert row["runtime_observation_s"]["median"] > 0
        assert row["runtime_built_state_s"]["median"] > 0
        assert row["program_o0_s"] > 0 and row["noise_o0"] >= 0
        assert row["judged_against"]
    assert report["random_search"]["episodes"] == 2
    bench_runtime.main(["--quick"])
    assert "random search:" in capsys.readouterr().out


def test_csmith_programs_validate_by_their_checksum(cluster):
    with kiln.make("llvm-v0", cluster=cluster) as env:
        for seed in (1, 3):
            env.reset(benchmark=f"generator://csmith-v0/{seed}")
            env.multistep(["mem2reg", "instcombine", "gvn"])
            result = env.validate()
            assert result.okay and result.inputs == 1, str(result)
