"""kiln.compiler_gym without a cluster: CompilerGym v0.2.5's state class,
CSV writer and reader, validation result, errors, util helpers, the
modules scripts import, the command line form and the reasons for the
passes left out, each restated from what CompilerGym's own tests expect."""

import http.server
import io
import os
import pathlib
import re
import subprocess
import sys
import threading
from types import SimpleNamespace

import pytest

import kiln
import kiln.compiler_gym as compiler_gym
from kiln import _cg_commandline, _left_out_actions
from kiln._cg_space import Commandline, UnknownAction

SOURCE = pathlib.Path(os.environ.get("KILN_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
State = compiler_gym.CompilerEnvState
ROW = "benchmark://cbench-v0/foo,2.0,5.0,-a -b -c\n"
HEADER = "benchmark,reward,walltime,commandline\n"


def state(**changes):
    fields = dict(benchmark="benchmark://cbench-v0/foo", walltime=5, commandline="-a -b -c",
                  reward=2)
    fields.update(changes)
    return State(**fields)


# --- CompilerEnvState ----------------------------------------------------------------------
def test_state_needs_a_benchmark_and_a_walltime_not_negative():
    with pytest.raises(ValueError):
        State(**{})
    with pytest.raises(ValueError, match="Walltime cannot be negative"):
        state(walltime=-1)


def test_state_json_round_trip_is_a_string():
    original = state(walltime=100, reward=1.5)
    text = original.json()
    assert isinstance(text, str)
    import json

    again = State(**json.loads(text))
    assert (again.benchmark, again.walltime, again.reward, again.commandline) == (
        "benchmark://cbench-v0/foo", 100, 1.5, "-a -b -c")
    assert State(**json.loads(state(reward=None).json())).reward is None


def test_state_equality_as_compiler_gym_defines_it():
    assert not state() == 5 and state() != 5
    assert state(walltime=10) == state(walltime=5)  # walltime is not compared
    assert state(reward=2) == state(reward=None) and state(reward=None) == state(reward=2)
    assert state(reward=2) != state(reward=3)
    assert state(reward=2) == state(reward=2 + 1e-7)
    assert state(commandline="-a") != state(commandline="-b")
    # kiln's own state keeps its rule: a reward on one side only differs.
    kiln_state = kiln.CompilerEnvState("benchmark://x/y", "a", 0.0, 1.0)
    assert kiln_state != kiln_state._replace(reward=None)


# --- writer and reader -----------------------------------------------------------------------
def test_writer_writes_the_header_once_then_rows():
    buffer = io.StringIO()
    writer = compiler_gym.CompilerEnvStateWriter(buffer)
    writer.write_state(state(), flush=True)
    writer.write_state(state(reward=None), flush=True)
    assert buffer.getvalue() == HEADER + ROW + "benchmark://cbench-v0/foo,,5.0,-a -b -c\n"
    buffer = io.StringIO()
    compiler_gym.CompilerEnvStateWriter(buffer, header=False).write_state(state())
    assert buffer.getvalue() == ROW


def test_writer_quotes_a_commandline_with_commas_and_the_with_statement_closes(tmp_path):
    path = tmp_path / "results.csv"
    handle = open(path, "w", encoding="utf-8")
    with compiler_gym.CompilerEnvStateWriter(handle) as writer:
        writer.write_state(state(commandline="opt-19 -passes=a,b x -o y"))
    assert handle.closed
    text = path.read_text()
    assert text == HEADER + 'benchmark://cbench-v0/foo,2.0,5.0,"opt-19 -passes=a,b x -o y"\n'
    assert list(compiler_gym.CompilerEnvStateReader(io.StringIO(text)))[0].commandline == (
        "opt-19 -passes=a,b x -o y")


@pytest.mark.parametrize("text", [
    HEADER + ROW,
    ROW,
    "commandline,reward,benchmark,walltime\n-a -b -c,2.0,benchmark://cbench-v0/foo,5.0\n",
    "BENCHMARK,Reward,walltime,commandline\n" + ROW,
])
def test_reader_with_or_without_a_header_in_any_order(text):
    assert list(compiler_gym.CompilerEnvStateReader(io.StringIO(text))) == [state()]


def test_reader_empty_header_only_and_bad_first_row():
    assert list(compiler_gym.CompilerEnvStateReader(io.StringIO(""))) == []
    assert list(compiler_gym.CompilerEnvStateReader(io.StringIO(HEADER))) == []
    reader = compiler_gym.CompilerEnvStateReader(io.StringIO("abcdef\n"))
    with pytest.raises(ValueError, match=re.escape(
            "Expected 4 columns in the first row of CSV: ['abcdef']")):
        next(iter(reader))


def test_writer_and_reader_round_trip_keeps_everything():
    for original in (state(walltime=100, reward=1.5), state(walltime=100, reward=None)):
        buffer = io.StringIO()
        compiler_gym.CompilerEnvStateWriter(buffer).write_state(original)
        buffer.seek(0)
        again = next(iter(compiler_gym.CompilerEnvStateReader(buffer)))
        assert (again.benchmark, again.walltime, again.reward, again.commandline) == (
            original.benchmark, original.walltime, original.reward, original.commandline)


def test_read_paths_stdin_files_urls_and_missing(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "stdin", io.StringIO(HEADER + ROW))
    assert list(compiler_gym.CompilerEnvStateReader.read_paths(["-"])) == [state()]
    path = tmp_path / "test.csv"
    path.write_text(HEADER + ROW)
    assert list(compiler_gym.CompilerEnvStateReader.read_paths([str(path)])) == [state()]

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            body = (HEADER + ROW).encode()
            self.send_response(200 if self.path == "/states.csv" else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/states.csv"
        assert list(compiler_gym.CompilerEnvStateReader.read_paths([url])) == [state()]
    finally:
        server.shutdown()
        thread.join(timeout=10)
    for bad in ("/fake/directory/file.csv", "fake/directory/file.csv",
                "htts://www.compilergym.ai/benchmark.csv"):
        with pytest.raises(FileNotFoundError):
            list(compiler_gym.CompilerEnvStateReader.read_paths([bad]))


# --- validation result --------------------------------------------------------------------------
def test_validation_result_strings_and_okay():
    from kiln.compiler_gym.errors import ValidationError

    crc = State(benchmark="benchmark://cbench-v1/crc32", walltime=1, commandline="")
    result = compiler_gym.ValidationResult(state=crc, walltime=0.5)
    assert result.okay() and str(result) == "✅  cbench-v1/crc32"
    rewarded = compiler_gym.ValidationResult(state=crc._replace(reward=0), walltime=0.5,
                                             reward_validated=True)
    assert str(rewarded) == "✅  cbench-v1/crc32  0.0000"
    failed = compiler_gym.ValidationResult(
        state=crc, walltime=0.5, reward_validated=True, reward_validation_failed=True,
        errors=[ValidationError(type="Expected reward 1.0 but received reward 0.0")])
    assert not failed.okay()
    assert str(failed) == "❌  cbench-v1/crc32  Expected reward 1.0 but received reward 0.0"
    many = compiler_gym.ValidationResult(
        state=crc, walltime=1, benchmark_semantics_validation_failed=True,
        errors=[ValidationError(type="a"), ValidationError(type="b"), ValidationError(type="a")])
    assert many.error_details == "[1/2] 2× a, [2/2] b"
    joined = compiler_gym.ValidationResult.join([result, failed])
    assert not joined.okay() and joined.walltime == 1.0 and len(joined.errors) == 1
    assert result == compiler_gym.ValidationResult(state=crc, walltime=9)
    with pytest.raises(ValueError, match="No states to join"):
        compiler_gym.ValidationResult.join([])


# --- errors, util and the modules scripts import ---------------------------------------------------
def test_errors_have_compiler_gym_bases():
    errors = compiler_gym.errors
    assert issubclass(errors.SessionNotFound, errors.ServiceError)
    assert issubclass(errors.ServiceIsClosed, TypeError)
    assert issubclass(errors.ServiceTransportError, OSError)
    assert issubclass(errors.EnvironmentNotSupported, errors.ServiceInitError)
    assert issubclass(errors.BenchmarkInitError, OSError)
    assert issubclass(errors.TooManyRequests, errors.DownloadFailed)
    assert set(errors.__all__) >= {"ServiceError", "SessionNotFound", "ValidationError",
                                   "BenchmarkInitError", "DatasetInitError"}


def test_util_helpers_behave_as_compiler_gym_s():
    from kiln.compiler_gym.util.shell_format import emph, plural
    from kiln.compiler_gym.util.statistics import arithmetic_mean, geometric_mean, stdev
    from kiln.compiler_gym.util.timer import Timer, humanize_duration

    assert geometric_mean([1, 4]) == pytest.approx(2.0)
    assert geometric_mean([]) == 0 and geometric_mean([2, 0]) == 0 and geometric_mean([-1]) == 0
    assert arithmetic_mean([1, 2]) == 1.5 and arithmetic_mean([]) == 0 and stdev([]) == 0
    assert humanize_duration(0.0123) == "12.3ms" and humanize_duration(75) == "75.0s"
    printed = []
    with Timer("Did stuff", print_fn=printed.append) as timer:
        pass
    assert timer.time >= 0 and printed[0].startswith("Did stuff in ")
    assert plural(1, "step", "steps") == "step" and "x" in emph("x")


WITHOUT_ABSL = "import sys; sys.modules['absl'] = None; import kiln.compiler_gym as cg\n"


@pytest.mark.parametrize("statement", [
    "cg.util.flags", "import kiln.compiler_gym.util.flags.episode_length",
    "from compiler_gym.util.flags.env_from_flags import env_from_flags"])
def test_util_flags_without_absl_raise_not_implemented_naming_it(statement):
    done = subprocess.run([sys.executable, "-c", WITHOUT_ABSL + statement], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode != 0
    assert "NotImplementedError" in done.stderr and "python3-absl" in done.stderr, done.stderr


def test_util_flags_are_absl_flags_defined_once_under_both_names():
    pytest.importorskip("absl", reason="python3-absl (scripts/setup) gives compiler_gym.util.flags")
    script = (
        "import kiln.compiler_gym\n"
        "import compiler_gym.util.flags.seed as a\n"
        "import kiln.compiler_gym.util.flags.seed as b\n"
        "import compiler_gym.util.flags.episodes, compiler_gym.util.flags.nproc\n"
        "from compiler_gym.util.flags.benchmark_from_flags import benchmark_from_flags\n"
        "from compiler_gym.util.flags.env_from_flags import env_from_flags\n"
        "import compiler_gym.util.flags.output_dir, compiler_gym.util.flags.learning_rate\n"
        "import compiler_gym.util.flags.episode_length\n"
        "assert a is b and kiln.compiler_gym.util.flags.seed is a\n"
        "F = a.FLAGS\n"
        "F(['x', '--seed=3', '--benchmark=kiln-bench-v0/crc32', '--episodes=7'])\n"
        "assert (F.seed, F.episodes, F.episode_length, F.learning_rate) == (3, 7, 5, 0.008)\n"
        "assert benchmark_from_flags() == 'kiln-bench-v0/crc32' and F.output_dir is None\n"
        "F.unparse_flags(); F(['x', '--service=localhost:5000', '--env=llvm-v0'])\n"
        "try:\n"
        "    env_from_flags()\n"
        "except NotImplementedError as e:\n"
        "    print('service:', e)\n"
        "F.unparse_flags(); F(['x'])\n"
        "assert benchmark_from_flags() is None\n"
        "from absl import app\n"
        "try:\n"
        "    env_from_flags()\n"
        "except app.UsageError as e:\n"
        "    print('usage:', e)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "service: --service" in done.stdout and "kiln has none" in done.stdout
    assert "usage: --env must be set" in done.stdout


def test_util_tabulate_capture_output_and_temporary_working_directory(tmp_path):
    from compiler_gym.util.capture_output import capture_output
    from compiler_gym.util.temporary_working_directory import temporary_working_directory

    with capture_output() as out:
        print("to stdout")
        print("to stderr", file=sys.stderr)
    assert (out.stdout, out.stderr) == ("to stdout\n", "to stderr\n")
    start = os.getcwd()
    with temporary_working_directory(tmp_path) as where:
        assert os.getcwd() == str(tmp_path) == str(where)
    with temporary_working_directory() as made:
        assert os.getcwd() == str(made) != start
    assert os.getcwd() == start and not made.exists()
    pytest.importorskip("tabulate", reason="python3-tabulate (scripts/setup) prints the table")
    from compiler_gym.util.tabulate import tabulate

    table = tabulate([("a", 1)], headers=("name", "n"))
    assert table.startswith("+") and "| name" in table and "| a " in table


def test_names_llvm_autotuning_and_llvm_rl_import():
    from compiler_gym.datasets import BenchmarkUri
    from compiler_gym.wrappers import RuntimePointEstimateReward, SynchronousSqliteLogger

    assert BenchmarkUri.from_string("kiln-bench-v0/crc32") == "benchmark://kiln-bench-v0/crc32"
    assert BenchmarkUri.from_string("generator://csmith-v0/1").scheme == "generator"
    with pytest.raises(NotImplementedError, match="run spec"):
        RuntimePointEstimateReward(None, warmup_count=0, runtime_count=3)
    with pytest.raises(NotImplementedError, match="CompilerEnvStateWriter"):
        SynchronousSqliteLogger(None)
    reward = compiler_gym.Reward("IrInstructionCountOz")
    assert reward.reward_on_error(3.0) == -3.0
    reward.default_negates_returns = False
    assert reward.reward_on_error(3.0) == 0.0


def test_named_action_spaces_are_gymnasium_discrete_when_it_imports():
    gymnasium = pytest.importorskip("gymnasium")
    from kiln.wrappers import CommandlineSpace

    space = fake_space()
    assert isinstance(space, gymnasium.spaces.Discrete) and space.n == 3 and space.start == 0
    assert space.contains(2) and not space.contains(3)
    constrained = CommandlineSpace("c", ["a", "b"], ["-a", "-b"])
    assert isinstance(constrained, gymnasium.spaces.Discrete)
    assert gymnasium.spaces.flatdim(constrained) == 2


class _FakeEnv:
    """reset/multistep as a gymnasium-style env (no cluster)."""

    observation_space = "Autophase"
    episode_reward = 0.0

    def reset(self, *args, **kwargs):
        return 1, {}

    def multistep(self, actions, *args, **kwargs):
        return 2, 1.0, False, False, {}


def test_gym_style_wrappers_observation_reward_and_their_own_space():
    gymnasium = pytest.importorskip("gymnasium")
    from kiln.wrappers import ObservationWrapper, RewardWrapper

    class Doubled(ObservationWrapper):
        def __init__(self, env):
            super().__init__(env)
            self.observation_space = gymnasium.spaces.Box(0, 10, shape=())

        def observation(self, observation):  # gym's name for convert_observation
            return observation * 2

    class Halved(RewardWrapper):
        def reward(self, reward):  # gym's name for convert_reward
            return reward / 2

    inner = _FakeEnv()
    doubled = Doubled(inner)
    assert doubled.reset() == (2, {}) and doubled.step(0)[0] == 4
    # A space object stays the wrapper's; a space's name goes to the env.
    assert isinstance(doubled.observation_space, gymnasium.spaces.Box)
    assert inner.observation_space == "Autophase"
    assert Halved(inner).step(0)[1] == 0.5


def test_namespace_imports_and_the_compiler_gym_alias():
    import kiln.compiler_gym.envs
    from kiln.compiler_gym.envs import CompilerEnv, LlvmEnv
    from kiln.compiler_gym.random_search import random_search  # noqa: F401
    from kiln.compiler_gym.wrappers import (  # noqa: F401
        ActionWrapper, CompilerEnvWrapper, ObservationWrapper, RewardWrapper, TimeLimit)

    assert issubclass(LlvmEnv, CompilerEnv)
    assert kiln.compiler_gym.envs.llvm.LlvmEnv is LlvmEnv
    try:
        import compiler_gym as aliased
    except ImportError:
        pytest.fail("kiln.compiler_gym did not alias compiler_gym")
    if aliased is compiler_gym:  # no real CompilerGym here: the alias is ours
        from compiler_gym.util.statistics import geometric_mean  # noqa: F401
        from compiler_gym.wrappers import TimeLimit as Aliased

        assert Aliased is compiler_gym.wrappers.TimeLimit


# --- command lines and the passes left out --------------------------------------------------------
def fake_space():
    raw = SimpleNamespace(name="PassesAll", names=["mem2reg", "early-cse-memssa", "gvn"],
                          flags=["-mem2reg", "-early-cse-memssa", "-gvn"],
                          pipelines=["mem2reg", "early-cse<memssa>", "gvn"])
    return Commandline(raw)


def test_commandline_form_and_its_parse():
    space = fake_space()
    assert _cg_commandline.format_commandline([]) == "opt-19 input.bc -o output.bc"
    text = _cg_commandline.format_commandline(["mem2reg", "early-cse<memssa>"])
    assert text == ("opt-19 -passes=mem2reg input.bc -o - | "
                    "opt-19 -passes='early-cse<memssa>' - -o output.bc")
    assert _cg_commandline.parse_commandline(text, space) == [0, 1]
    assert _cg_commandline.format_commandline(["gvn"], textformat=True) == (
        "opt-19 -passes=gvn input.ll -S -o output.ll")
    # CompilerGym's own form, and its empty one with two spaces.
    assert _cg_commandline.parse_commandline(
        "opt -mem2reg -gvn input.bc -o output.bc", space) == [0, 2]
    assert _cg_commandline.parse_commandline("opt  input.bc -o output.bc", space) == []
    with pytest.raises(ValueError, match="Invalid commandline"):
        _cg_commandline.parse_commandline("opt -gvn foo.bc", space)
    with pytest.raises(ValueError, match="Invalid commandline"):
        _cg_commandline.parse_commandline("opt-19 -passes=gvn x | cat", space)


def test_a_pass_left_out_answers_with_the_reason_actions_md_gives():
    space = fake_space()
    with pytest.raises(UnknownAction, match="not deterministic in LLVM 19"):
        space.flags.index("-newgvn")
    with pytest.raises(ValueError, match="removed in LLVM 15"):
        space.names.index("-loop-unswitch")
    with pytest.raises(LookupError, match="not deterministic"):
        space.from_commandline("-gvn-hoist")
    with pytest.raises(LookupError, match="Unknown flag: `-no-such-pass`"):
        space.index("-no-such-pass")
    assert space.to_string([0, 2]) == "-mem2reg -gvn" and space.from_string("-gvn") == 2


def _doc_table(title):
    text = (SOURCE / "docs/actions.md").read_text()
    body = text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `([^`]+)` \| (.*) \|$", body, flags=re.M))


def test_left_out_reasons_are_those_of_docs_actions_md():
    assert _left_out_actions.FLAGS == _doc_table("CompilerGym flags that name no action")
    assert _left_out_actions.PASSES == _doc_table("Registry passes left out")


def test_truncate_and_json_forms():
    from kiln.compiler_gym.errors import ValidationError
    from kiln.compiler_gym.util.truncate import truncate, truncate_lines

    assert truncate("abcdefghijklmnop\n1234", max_line_len=10, max_lines=2) == "abcdefg...\n1234"
    assert truncate("abc\ndef\n123", max_line_len=5, max_lines=2) == "abc\nde..."
    assert truncate_lines(["a", "b", "c"], max_lines=2, tail=True) == "b\nc"
    with pytest.raises(ValueError):
        truncate("x", max_line_len=3)
    import json

    error = ValidationError(type="Syntax Error", data={"data": [1, 2, 3]})
    assert ValidationError(**json.loads(error.json())) == error
    result = compiler_gym.ValidationResult(state=state(), walltime=3, errors=[error])
    assert compiler_gym.ValidationResult(**json.loads(result.json())) == result


DOCUMENTED_MODULES = [
    "kiln.compiler_gym", "kiln._cg_env", "kiln._cg_space", "kiln._cg_errors", "kiln._cg_util",
    "kiln._cg_validation", "kiln._cg_random_search", "kiln._cg_commandline", "kiln._cg_views",
    "kiln._cg_extras", "kiln._cg_missing", "kiln.wrappers",
    "kiln.state", "kiln.validation", "kiln.program_graph", "kiln._compiler_gym_names",
]


def test_every_public_name_of_the_compatibility_modules_is_documented():
    import importlib
    import inspect

    missing = []
    for module_name in DOCUMENTED_MODULES:
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if name.startswith("_") or getattr(value, "__module__", None) != module_name:
                continue
            if not (inspect.isclass(value) or inspect.isfunction(value)):
                continue
            if not (value.__doc__ or "").strip():
                missing.append(f"{module_name}.{name}")
            for member, attribute in vars(value).items() if inspect.isclass(value) else ():
                function = attribute.fget if isinstance(attribute, property) else getattr(
                    attribute, "__func__", attribute)
                if not member.startswith("_") and inspect.isfunction(function) and not (
                        function.__doc__ or "").strip():
                    missing.append(f"{module_name}.{name}.{member}")
    assert not missing, "undocumented: " + ", ".join(missing)


@pytest.mark.parametrize("statement, reason", [
    ("import kiln.compiler_gym.util.download", "downloads nothing"),
    ("from kiln.compiler_gym.service.connection import CompilerGymServiceConnection",
     "gRPC compiler service"),
    ("import kiln.compiler_gym.envs.gcc", "LLVM sessions"),
    ("from kiln.compiler_gym.spaces import Box", "gymnasium's"),
    ("kiln.compiler_gym.site_data_path", "site data"),
    ("import kiln.compiler_gym.third_party.inst2vec", "LLVM 10"),
    # Names taken from a module kiln has (not through the import finder).
    ("from kiln.compiler_gym.envs.llvm import compute_observation", "sessions on its workers"),
    ("from kiln.compiler_gym.envs.llvm import ClangInvocation", "make_benchmark_from_command"),
    ("from kiln.compiler_gym.envs import GccEnv", "LLVM sessions"),
    ("import kiln.compiler_gym.envs.llvm.datasets", "cBench"),
    ("from kiln.compiler_gym.datasets import FilesDataset", "served by its workers"),
    ("import kiln.compiler_gym.datasets.files_dataset", "served by its workers"),
    ("from kiln.compiler_gym.views import RewardView", "views of their own"),
    ("from kiln.compiler_gym.util import debug_util", "not carried over"),
    ("from kiln.compiler_gym.util import runfiles_path", "site data"),
    ("kiln.compiler_gym.datasets.Dataset(name='benchmark://my-v0', description='')",
     "served by its workers"),
    ("from kiln.compiler_gym.spaces.scalar import Scalar", "gymnasium's"),
])
def test_what_kiln_lacks_raises_not_implemented_with_the_reason(statement, reason):
    with pytest.raises(NotImplementedError, match=reason):
        exec(statement, {"kiln": kiln})  # noqa: S102 (the statements are the test's own)
    # A name CompilerGym never had stays an ImportError.
    with pytest.raises(ImportError):
        exec("import kiln.compiler_gym.no_such_module", {})  # noqa: S102
    from kiln.compiler_gym.datasets.uri import BenchmarkUri

    assert BenchmarkUri("benchmark://kiln-bench-v0/crc32").dataset == "kiln-bench-v0"


def test_the_modules_compiler_gyms_classes_live_in_give_the_same_classes():
    # CompilerGym's scripts import its classes from where they are defined.
    from kiln.compiler_gym.datasets.benchmark import Benchmark
    from kiln.compiler_gym.datasets.dataset import Dataset
    from kiln.compiler_gym.datasets.datasets import Datasets
    from kiln.compiler_gym.envs.compiler_env import CompilerEnv
    from kiln.compiler_gym.envs.llvm.llvm_benchmark import make_benchmark
    from kiln.compiler_gym.envs.llvm.llvm_env import LlvmEnv
    from kiln.compiler_gym.envs.llvm.specs import observation_spaces, reward_spaces

    assert LlvmEnv is compiler_gym.LlvmEnv and CompilerEnv is compiler_gym.CompilerEnv
    assert (Benchmark, Dataset, Datasets) == (compiler_gym.datasets.Benchmark,
                                              compiler_gym.datasets.Dataset,
                                              compiler_gym.datasets.Datasets)
    assert make_benchmark is compiler_gym.envs.llvm.make_benchmark
    assert observation_spaces.Autophase.value == "Autophase"
    assert reward_spaces.IrInstructionCountOz.value == "IrInstructionCountOz"
    assert compiler_gym.envs.COMPILER_GYM_ENVS == compiler_gym.COMPILER_GYM_ENVS
    from kiln.compiler_gym.spaces.commandline import Commandline as CommandlineHere
    from kiln.compiler_gym.spaces.reward import Reward

    assert Reward is compiler_gym.spaces.Reward and CommandlineHere is Commandline


def test_a_reward_space_describes_itself_as_compiler_gyms():
    reward = compiler_gym.spaces.Reward("IrInstructionCountOz")
    assert reward.range == (float("-inf"), float("inf"))
    assert reward.observation_spaces == ["IrInstructionCount"]
    assert reward.success_threshold is None
    # A normalised reward is a share of the starting cost, so it is at most 1.
    assert compiler_gym.spaces.Reward("ObjectTextSizeNorm").range == (float("-inf"), 1.0)


@pytest.mark.parametrize("text, parts, canonical", [
    ("test-v0", ("benchmark", "test-v0", "", {}, ""), "benchmark://test-v0"),
    ("generator://csmith-v0/a path/in/it", ("generator", "csmith-v0", "/a path/in/it", {}, ""),
     "generator://csmith-v0/a path/in/it"),
    ("generator://csmith-v0?a=b&c=d#foo",
     ("generator", "csmith-v0", "", {"a": ["b"], "c": ["d"]}, "foo"),
     "generator://csmith-v0?a=b&c=d#foo"),
    ("", ("benchmark", "", "", {}, ""), "benchmark:"),
    ("generator:", ("generator", "", "", {}, ""), "generator:"),
])
def test_benchmark_uri_parts_as_compiler_gym_parses_them(text, parts, canonical):
    from kiln.compiler_gym.datasets import BenchmarkUri

    uri = BenchmarkUri.from_string(text)
    assert (uri.scheme, uri.dataset, uri.path, uri.params, uri.fragment) == parts
    assert str(uri) == canonical == BenchmarkUri.canonicalize(text)
