"""kiln.compiler_gym's env against CompilerGym v0.2.5's behaviour, restated
from its tests (tests/compiler_env_test.py, tests/llvm/*, tests/wrappers/*,
tests/random_search_test.py): the benchmark setter, reward and observation
space switching, the command line and its parse, state replay, validate()
checking the claimed reward, the base wrappers, benchmark_from_seed, the
attribute aliases and the error types. Benchmarks are kiln-bench-v0's."""

import subprocess
import warnings

import numpy as np
import pytest

import kiln.compiler_gym as compiler_gym
from conftest import require_type
from kiln.compiler_gym.errors import ServiceIsClosed, SessionNotFound
from kiln.compiler_gym.wrappers import (
    ActionWrapper,
    CompilerEnvWrapper,
    ObservationWrapper,
    RewardWrapper,
)

CRC32 = "benchmark://kiln-bench-v0/crc32"
QSORT = "benchmark://kiln-bench-v0/quicksort"


@pytest.fixture
def env(cluster):
    require_type(cluster, "llvm")
    with compiler_gym.make("llvm-v0", benchmark=CRC32, cluster=cluster) as made:
        made.reset()
        yield made


def test_benchmark_setter_takes_effect_at_reset(env, cluster):
    with compiler_gym.make("llvm-v0", benchmark=QSORT, cluster=cluster) as fresh:
        assert fresh.benchmark == QSORT  # the constructor's, before any reset
    with pytest.warns(UserWarning, match=r"no effect until reset\(\) is called"):
        env.benchmark = QSORT
    assert env.benchmark == CRC32
    env.reset()
    assert env.benchmark == QSORT
    env.reset(benchmark=CRC32)
    for _ in range(2):  # a benchmark given to reset() stays for the next ones
        env.reset()
        assert env.benchmark == CRC32
    with pytest.raises(TypeError, match="Expected a Benchmark or str, received: 'int'"):
        env.benchmark = 10
    with pytest.raises(LookupError):
        env.reset(benchmark="benchmark://kiln-bench-v0/crc3")


@pytest.mark.parametrize("name", ["IrInstructionCount", "ObjectTextSizeBytes"])
def test_spaces_set_by_setter_or_reset_stay(env, name):
    env.reward_space = name
    assert env.reward_space == name
    env.reset()
    assert env.reward_space == name
    env.reset(observation_space=name)
    assert env.observation_space_spec == name
    env.reset()
    assert env.observation_space_spec == name
    env.reset(reward_space=None, observation_space=None)
    assert env.reward_space is None and env.observation_space is None


def test_switching_reward_space_restarts_the_episode_reward(env):
    env.reset(reward_space=None)
    env.step(0)
    assert env.episode_reward is None
    env.reward_space = "IrInstructionCount"
    assert env.episode_reward == 0
    env.step(env.action_space.flags.index("-mem2reg"))
    assert env.episode_reward > 0
    env.episode_reward = 10
    env.reward_space = "IrInstructionCount"  # the same: nothing restarts
    assert env.episode_reward == 10
    env.reward_space = "IrInstructionCountOz"
    assert env.episode_reward == 0
    # Spaces given as their specs, from the views.
    env.observation_space = env.observation.spaces["Autophase"]
    assert env.observation_space_spec.id == "Autophase"
    env.reward_space = env.reward.spaces["IrInstructionCount"]
    assert env.reward_space.name == "IrInstructionCount"


def test_same_reward_after_reset(env):
    env.reward_space = "IrInstructionCount"
    action = env.action_space.flags.index("-mem2reg")
    first = env.step(action)[1]
    env.reset()
    assert first and env.step(action)[1] == first


def test_commandline_runs_in_opt_19_and_parses_back(env, tmp_path):
    assert env.commandline() == "opt-19 input.bc -o output.bc"
    assert env.commandline_to_actions(env.commandline()) == []
    env.write_bitcode(tmp_path / "input.bc")
    flags = ["-mem2reg", "-early-cse-memssa", "-instcombine", "-licm", "-simplifycfg",
             "-canonicalize-aliases", "-gvn"]
    actions = [env.action_space.flags.index(f) for f in flags]
    env.multistep(actions)
    assert env.actions == actions
    command = env.commandline(textformat=True)
    assert command.startswith("opt-19 -passes=mem2reg input.ll -o - | ")
    assert env.commandline_to_actions(env.commandline()) == actions
    assert env.state.commandline == env.commandline()
    # The printed command, run by opt-19, gives the env's IR exactly.
    done = subprocess.run(command.replace("input.ll", "input.bc"), shell=True, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr

    def body(text):
        return [line for line in text.splitlines()
                if not line.startswith(("; ModuleID", "source_filename"))]

    assert body((tmp_path / "output.ll").read_text()) == body(env.ir)
    # CompilerGym's own command lines are read too.
    assert env.commandline_to_actions("opt -mem2reg -gvn input.bc -o output.bc") == [
        actions[0], actions[-1]]
    with pytest.raises(ValueError, match="Invalid commandline"):
        env.commandline_to_actions("clang -O2 x.c")


def test_left_out_flags_say_why(env):
    with pytest.raises(ValueError, match="newgvn.*not deterministic"):
        env.action_space.flags.index("-newgvn")
    with pytest.raises(LookupError, match="removed in LLVM 13"):
        env.commandline_to_actions("opt -die input.bc -o output.bc")


def test_state_apply_and_equality(env, cluster):
    env.reward_space = "IrInstructionCount"
    env.multistep([env.action_space.flags.index("-mem2reg"), 3])
    state = env.state
    assert state.reward == env.episode_reward and state.benchmark == CRC32
    with compiler_gym.make("llvm-v0", reward_space="IrInstructionCount",
                           cluster=cluster) as other:
        other.apply(state)
        assert other.state == state
        assert other.ir_sha1 == env.ir_sha1
        with pytest.warns(UserWarning, match="Applying state from environment for benchmark"):
            other.reset(benchmark=QSORT)
            other.apply(state)
        # Unlike CompilerGym, which applied them to QSORT, the state's own benchmark.
        assert other.state == state


def test_validate_checks_the_claimed_reward(env, cluster):
    empty = compiler_gym.CompilerEnvState(benchmark=CRC32, walltime=1,
                                          commandline="opt  input.bc -o output.bc")
    result = env.validate(empty)
    assert result.okay() and not result.reward_validated
    assert str(result) == "✅  kiln-bench-v0/crc32"
    assert result.benchmark_semantics_validated
    with compiler_gym.make("llvm-v0", reward_space="IrInstructionCount",
                           cluster=cluster) as rewarded:
        result = rewarded.validate(empty._replace(reward=0))
        assert result.okay() and result.reward_validated and not result.reward_validation_failed
        assert str(result) == "✅  kiln-bench-v0/crc32  0.0000"
        result = rewarded.validate(empty._replace(reward=1))
        assert not result.okay() and result.reward_validation_failed
        assert str(result) == (
            "❌  kiln-bench-v0/crc32  Expected reward 1.0 but received reward 0.0")
        rewarded.multistep([rewarded.action_space.flags.index("-mem2reg")])
        assert rewarded.validate().okay()  # the current state, its reward replayed
    with pytest.warns(UserWarning, match="Validating state with reward, but environment has "
                                         "no reward space set"):
        result = env.validate(empty._replace(reward=0))
    assert result.okay() and not result.reward_validated
    broken = empty._replace(commandline="opt -no-such-pass input.bc -o output.bc")
    result = env.validate(broken)
    assert not result.okay() and result.actions_replay_failed


def test_errors_of_compiler_gym_types(cluster):
    require_type(cluster, "llvm")
    env = compiler_gym.make("llvm-v0", benchmark=CRC32, cluster=cluster)
    with pytest.raises(SessionNotFound):
        env.step(0)
    env.reset()
    with pytest.raises(LookupError, match="Observation space not found: nope"):
        env.observation_space = "nope"
    with pytest.raises(NotImplementedError, match="service parameters"):
        env.send_param("a", "b")
    with pytest.raises(NotImplementedError, match="clang-19's own include paths"):
        env.make_benchmark("x.c", system_includes=False)
    env.close()
    with pytest.raises(ServiceIsClosed):
        env.step(0)
    with pytest.raises(ServiceIsClosed):
        env.reset()


def test_aliases_and_step_forms(env):
    assert env.unwrapped is env and env.spec.id == "llvm-v0"
    assert env.version == compiler_gym.__version__
    assert env.ir == env.observation["Ir"] and len(env.ir_sha1) == 40
    with pytest.warns(DeprecationWarning, match="multistep"):
        env.step([0, 1])
    assert env.actions == [0, 1]
    with pytest.warns(DeprecationWarning, match="renamed `observation_spaces`"):
        observations, _, _, _ = env.step(2, observations=["IrInstructionCount"])
    assert isinstance(observations[0], int)
    assert env.action_space.to_string([0, 1]) == " ".join(env.action_space.flags[:2])
    assert env.action_space.names == env.action_space.flags  # CompilerGym named them so
    assert sorted(env.action_space.flags) == sorted(set(env.action_space.flags))


def test_benchmark_from_seed_and_datasets(env):
    csmith = env.datasets["generator://csmith-v0"]
    benchmark = csmith.benchmark_from_seed(7)
    assert benchmark == "generator://csmith-v0/7"
    env.reset(benchmark=benchmark)
    assert env.benchmark == "generator://csmith-v0/7"
    with pytest.raises(NotImplementedError, match="finite dataset"):
        env.datasets["kiln-bench-v0"].benchmark_from_seed(1)


class _Halve(RewardWrapper):
    def convert_reward(self, reward):
        return reward / 2


class _Sum(ObservationWrapper):
    def __init__(self, env):
        super().__init__(env)
        self.observation_space = "Autophase"

    def convert_observation(self, observation):
        return int(np.sum(observation))


class _Reversed(ActionWrapper):
    def action(self, action):
        return self.env.action_space.n - 1 - action


def test_base_wrappers(env):
    assert CompilerEnvWrapper(env).reset() is None
    halved = _Halve(env)
    halved.reward_space = "IrInstructionCount"
    halved.reset()
    mem2reg = env.action_space.flags.index("-mem2reg")
    _, reward, _, _ = halved.step(mem2reg)
    assert reward > 0 and halved.episode_reward == pytest.approx(reward)
    assert env.episode_reward == pytest.approx(reward)  # the unwrapped env's, converted
    summed = _Sum(env)
    assert isinstance(summed.reset(), int)
    assert isinstance(summed.step(mem2reg)[0], int)
    reversed_env = _Reversed(env)
    reversed_env.reset()
    reversed_env.step(0)
    assert env.actions == [env.action_space.n - 1]
    fork = halved.fork()
    try:
        assert isinstance(fork, _Halve) and fork.benchmark == env.benchmark
    finally:
        fork.close()


def test_random_search_writes_compiler_gym_s_files(cluster, tmp_path):
    require_type(cluster, "llvm")
    from kiln.compiler_gym.random_search import random_search, replay_actions_from_logs

    def make_env():
        made = compiler_gym.make("llvm-autophase-ic-v0", cluster=cluster)
        made.benchmark = CRC32
        return made

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        random_search(make_env=make_env, outdir=tmp_path, patience=5, total_runtime=2, nproc=1)
    for name in ("random_search.json", "random_search_progress.csv",
                 "random_search_best_actions.txt", "optimized.bc"):
        assert (tmp_path / name).is_file(), name
    with make_env() as env:
        replay_actions_from_logs(env, tmp_path)
    assert (tmp_path / "random_search_best_actions_progress.csv").is_file()
    assert (tmp_path / "random_search_best_actions_commandline.txt").read_text().startswith(
        "opt-19")


def test_validate_after_every_step_uri_parts_and_action_space_setter(env):
    from kiln.compiler_gym.wrappers import ValidateBenchmarkAfterEveryStep

    checked = ValidateBenchmarkAfterEveryStep(env)
    checked.reset()
    _, _, done, info = checked.step(env.action_space.flags.index("-mem2reg"))
    assert not done and "error_details" not in info
    uri = env.benchmark.uri
    assert (uri.scheme, uri.dataset, uri.path) == ("benchmark", "kiln-bench-v0", "/crc32")
    assert env.benchmark.is_validatable()
    env.action_space = "PassesAndPipelines"  # as CompilerGym, used from the next reset
    env.reset()
    assert env.action_space.name == "PassesAndPipelines"
    assert "-scc-oz-module-inliner" in env.action_space.flags


def test_service_spec_and_fork_after_close(cluster):
    require_type(cluster, "llvm")
    env = compiler_gym.make("llvm-v0", cluster=cluster)
    assert env.benchmark  # a default benchmark before any reset, as CompilerGym's
    assert "render.modes" in env.metadata
    env.benchmark = QSORT
    assert env.benchmark != QSORT  # set for the next reset only
    env.reset(benchmark=CRC32)
    env.step(0)
    assert env.service is not None
    env.close()
    assert env.service is None and env.actions == [0]
    with env.fork() as fork:  # a closed env forks into a new session, its actions replayed
        assert fork.actions == [0] and fork.benchmark == CRC32
    env.spec._kwargs["benchmark"] = QSORT
    with env.spec.make() as made:
        assert made.benchmark == QSORT and made.spec.id == "llvm-v0"
    from kiln.compiler_gym.envs import llvm

    assert llvm.observation_spaces["Autophase"].value == "Autophase"
    assert llvm.reward_spaces["IrInstructionCountOz"].value == "IrInstructionCountOz"


def test_custom_benchmark_and_reward_spaces_leave_the_episode_reward(env, tmp_path):
    source = tmp_path / "example.c"
    source.write_text("int twice(int x) { return 2 * x; }\nint main(void) { return twice(0); }\n")
    benchmark = env.make_benchmark(source)
    env.reset(benchmark=benchmark)
    assert env.benchmark.uri.startswith("benchmark://user-v0/")
    assert not env.benchmark.is_validatable()
    with env.fork() as fork:
        assert fork.ir_sha1 == env.ir_sha1
    env.reward_space = "IrInstructionCountOz"
    env.reset(benchmark=CRC32)
    mem2reg = env.action_space.flags.index("-mem2reg")
    _, rewards, _, _ = env.step(mem2reg, reward_spaces=["IrInstructionCount"])
    assert rewards[0] > 0 and env.episode_reward == 0
    # The env's own reward, taken next, covers both steps.
    _, reward, _, _ = env.step(mem2reg)
    assert reward > 0 and env.episode_reward == reward


def test_wrapper_bases_are_abstract_and_validation_penalises(env):
    from kiln.compiler_gym.wrappers import ValidateBenchmarkAfterEveryStep

    with pytest.raises(TypeError):
        ObservationWrapper(env)
    with pytest.raises(TypeError):
        RewardWrapper(env)
    env.reset()
    benchmark_type = type(env.benchmark)
    original = benchmark_type.ivalidate
    benchmark_type.ivalidate = lambda *_: iter(["Oh no!"])
    try:
        checked = ValidateBenchmarkAfterEveryStep(env, reward_penalty=-5)
        _, reward, done, info = checked.step(0)
        assert (reward, done, info["error_details"]) == (-5, True, "Oh no!")
    finally:
        benchmark_type.ivalidate = original


def test_a_step_after_the_session_died_returns_the_reward_on_error(env):
    env.reward_space = "IrInstructionCount"
    env.reset(benchmark=CRC32)
    env.episode_reward = 10
    with env.fork() as other:
        other.episode_reward = 10
        other.service.close()  # the session goes away under the env
        _, reward, done, info = other.step(0)
        assert done and reward == -10 and info["error_type"] == "ServiceIsClosed"
    env.reward_space.default_negates_returns = False
    env.reward_space.default_value = 2.5
    env.service.close()
    _, reward, done, _ = env.step(0)
    assert done and reward == 2.5


def test_view_call_forms_missing_names_and_ir_header(env, cluster):
    start = env.observation.IrInstructionCount()
    env.step(env.action_space.flags.index("-reg2mem"))
    after = env.observation["IrInstructionCount"]
    o0 = env.observation["IrInstructionCountO0"]
    o3, oz = env.observation["IrInstructionCountO3"], env.observation["IrInstructionCountOz"]
    assert start == o0 and after != start
    assert env.reward.IrInstructionCount() == start - after
    assert env.reward.IrInstructionCountNorm() == pytest.approx((start - after) / start)
    assert env.reward.IrInstructionCountO3() == pytest.approx((start - after) / (start - o3))
    assert env.reward.IrInstructionCountOz() == pytest.approx((start - after) / (start - oz))
    with pytest.raises(KeyError) as missing:
        env.reward["invalid value"]
    assert str(missing.value) == "'invalid value'"
    with pytest.raises(NotImplementedError, match="linked binaries"):
        env.reward_space = "TextSizeBytes"
    # CompilerGym's IR text named the module "-" (it read it from stdin).
    assert env.ir.startswith("; ModuleID = '-'\nsource_filename = \"-\"\n")
    states = [compiler_gym.CompilerEnvState(benchmark=b, walltime=0, commandline="")
              for b in (CRC32, QSORT)]
    results = list(compiler_gym.validate_states(
        lambda: compiler_gym.make("llvm-v0", cluster=cluster), states, nproc=2, inorder=True))
    assert [r.state for r in results] == states and all(r.okay() for r in results)


def test_derived_observation_spaces_and_refused_names(env):
    env.observation.add_derived_space(id="IrLen", base_id="Ir", space=None,
                                      translate=lambda ir: [len(ir)])
    assert env.observation["IrLen"] == [len(env.ir)] == env.observation.IrLen()
    env.observation_space = "IrLen"
    assert env.reset() == [len(env.ir)]
    assert env.step(env.action_space.flags.index("-mem2reg"))[0] == [len(env.ir)]
    with env.fork() as fork:
        assert fork.observation["IrLen"] == [len(fork.ir)]
    with pytest.raises(NotImplementedError, match="inst2vec"):
        env.observation.spaces["Inst2vec"]
    with pytest.raises(KeyError):
        env.observation.spaces["NoSuchSpace"]


def test_a_benchmark_that_does_not_build_raises_benchmark_init_error(env, tmp_path):
    from kiln.compiler_gym.errors import BenchmarkInitError

    broken = tmp_path / "broken.ll"
    broken.write_text("define i32 @f() {\n  ret i32 %nowhere\n}\n")
    with pytest.raises(BenchmarkInitError):
        env.make_benchmark(broken)
    bad_c = tmp_path / "bad.c"
    bad_c.write_text("int f( {\n")
    with pytest.raises(BenchmarkInitError):
        env.make_benchmark(bad_c)


def test_state_and_commandline_stay_readable_after_close(cluster):
    # CompilerGym's random_search returns the closed env of the best actions,
    # and llvm_autotuning applies its state: the record is kept locally.
    require_type(cluster, "llvm")
    env = compiler_gym.make("llvm-v0", benchmark=CRC32, reward_space="IrInstructionCount",
                            cluster=cluster)
    env.reset()
    env.step(env.action_space.flags.index("-mem2reg"))
    before = env.state
    env.close()
    assert env.state.commandline == before.commandline == env.commandline()
    assert env.state.benchmark == CRC32 and env.state.reward == before.reward
    with pytest.raises(ServiceIsClosed):
        env.step(0)
    never = compiler_gym.make("llvm-v0", benchmark=CRC32, cluster=cluster)
    never.close()
    with pytest.raises(ServiceIsClosed):
        never.state  # noqa: B018 (no episode was ever started: nothing to read)


def test_datasets_install_is_a_no_op_as_llvm_autotuning_calls_it(env):
    dataset = env.datasets["kiln-bench-v0"]
    assert dataset.installed
    dataset.install()
    assert len(list(dataset.benchmark_uris())) == dataset.size


def test_copy_is_refused_and_deepcopy_forks(env):
    import copy

    with pytest.raises(TypeError, match=r"do not support shallow copies\. Use deepcopy\(\)"):
        copy.copy(env)
    with copy.deepcopy(env) as twin:
        assert twin.state == env.state
        env.step(env.action_space["-mem2reg"])
        assert twin.state != env.state  # its own session


def test_a_dataset_outlives_its_env_and_pickles(cluster):
    import pickle

    require_type(cluster, "llvm")
    with compiler_gym.make("llvm-v0", cluster=cluster) as made:
        dataset = made.datasets["kiln-bench-v0"]
        generator = made.datasets["generator://csmith-v0"]
    # The env is closed: CompilerGym's datasets still list their benchmarks.
    first = next(dataset.benchmarks())
    assert str(first.uri).startswith("benchmark://kiln-bench-v0/")
    copied = pickle.loads(pickle.dumps(generator))
    assert copied == generator and copied != dataset
    assert str(next(copied.benchmarks()).uri) == "generator://csmith-v0/0"


def test_a_space_of_ones_own_is_refused_with_the_reason(env):
    with pytest.raises(NotImplementedError, match="RewardWrapper"):
        env.reward.add_space(object())

    class OwnReward(compiler_gym.spaces.Reward):  # as CompilerGym's docs define one
        def update(self, actions, observations, observation_view):
            return 1.0

    with pytest.raises(NotImplementedError, match="RewardWrapper"):
        OwnReward(name="own", observation_spaces=["Runtime"])
    with pytest.raises(NotImplementedError, match="RewardWrapper"):
        OwnReward("own")
    with pytest.raises(NotImplementedError, match="add_derived_space"):
        env.observation.add_space(object())
