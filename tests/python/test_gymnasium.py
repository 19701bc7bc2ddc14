"""kiln's envs are gymnasium's (issue 45): gymnasium's checker passes on every
env id, its wrappers and vector wrappers take kiln's envs, reset(seed=,
options=) is honoured (per env in the vector env), and kiln works without
gymnasium. gymnasium comes from the shared third_party folder (conftest.py)
when it is not installed."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import kiln
from conftest import require_type

gymnasium = pytest.importorskip("gymnasium")
from gymnasium import spaces  # noqa: E402
from gymnasium.utils.env_checker import check_env  # noqa: E402

TYPES = {"llvm-v0": "llvm", "llvm-ic-v0": "llvm", "llvm-autophase-ic-v0": "llvm",
         "mlgo-inline-v0": "mlgo-inline", "noop-v0": "noop"}


def test_every_env_id_is_covered_here():
    assert sorted(TYPES) == kiln.env_ids()


@pytest.mark.parametrize("env_id", sorted(TYPES))
def test_gymnasium_check_env_passes_without_a_warning(cluster, env_id):
    require_type(cluster, TYPES[env_id])
    with kiln.make(env_id, cluster=cluster) as env:
        assert isinstance(env, gymnasium.Env) and env.unwrapped is env
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # gymnasium's checker warns for what it does not fail
            check_env(env, skip_close_check=True)


def test_spaces_are_gymnasiums_and_keep_kilns_answers(cluster):
    require_type(cluster, "llvm")
    with kiln.make("llvm-autophase-ic-v0", cluster=cluster) as env:
        action = env.action_space
        assert isinstance(action, spaces.Discrete) and action.n == 142
        assert action.name == "PassesAll" and action.kind == "named_discrete"
        assert action["mem2reg"] == action.index("-mem2reg") and action[action["gvn"]] == "gvn"
        assert action.flags[action["gvn"]] == "-gvn" and len(action) == 142
        assert isinstance(action.kiln, kiln.Space) and action.kiln.names == action.names
        observed = env.observation_spaces
        assert isinstance(env.observation_space, spaces.Box)
        assert env.observation_space.shape == (56,) and env.observation_space.dtype == np.int64
        assert isinstance(observed["IrInstructionCount"], spaces.Box)
        assert observed["IrInstructionCount"].shape == ()
        assert isinstance(observed["Ir"], spaces.Text)
        assert isinstance(observed["AutophaseDict"], spaces.Dict)
        assert list(observed["AutophaseDict"].spaces)[:2] == ["BBNumArgsHi", "BBNumArgsLo"]
        assert isinstance(observed["Runtime"], spaces.Sequence)
        assert isinstance(observed["Bitcode"], kiln.spaces.Bytes)
        env.reset()
        for name in ("Ir", "IrInstructionCount", "AutophaseDict", "Bitcode", "InstCount"):
            assert env.observation[name] in observed[name], name
        assert not action.contains(True) and not action.contains(142)


def test_spaces_survive_pickling_and_copying_as_gymnasium_spaces(cluster):
    import copy
    import pickle

    with kiln.make("noop-v0", cluster=cluster) as env:
        space = env.action_space
        copied = copy.deepcopy(space)
        assert copied == space and copied.names == space.names  # a copy keeps kiln's view
        unpickled = pickle.loads(pickle.dumps(space))  # what SubprocVecEnv sends
        assert unpickled == space and isinstance(unpickled, spaces.Discrete)
        with pytest.raises(AttributeError, match="pickled"):
            unpickled.names


def test_reset_seed_and_options_are_honoured(cluster):
    with kiln.make("noop-v0", cluster=cluster) as env:
        env.reset(seed=11)
        first = [env.action_space.sample() for _ in range(20)], env.np_random.integers(1 << 30)
        env.reset(seed=11)
        again = [env.action_space.sample() for _ in range(20)], env.np_random.integers(1 << 30)
        assert first == again
        observation, info = env.reset(options={"benchmark": "benchmark://noop-v0/other"})
        assert info["benchmark"] == "benchmark://noop-v0/other" and observation == 0
        with pytest.raises(kiln.InvalidArgument, match="unknown reset option.*'colour'"):
            env.reset(options={"colour": "red"})
    with kiln.make("llvm-v0", cluster=cluster) as env:
        if "llvm" in kiln.session_types(cluster):
            env.reset(options={"action_space": "PassesAndPipelines"})
            assert env.action_space.n == 144


def test_metadata_and_spec_are_what_gymnasium_reads(cluster):
    with kiln.make("noop-v0", cluster=cluster) as env:
        assert env.metadata["render_modes"] == [] and env.render_mode is None
        assert env.spec.id == "noop-v0" and env.spec.nondeterministic is False
        assert env.spec.max_episode_steps is None
        assert isinstance(env.np_random, np.random.Generator)


def test_gymnasium_wrappers_wrap_a_kiln_env(cluster):
    from gymnasium.wrappers import (
        FlattenObservation,
        NormalizeReward,
        RecordEpisodeStatistics,
        TimeLimit,
    )

    with kiln.make("noop-v0", cluster=cluster, reward_space="Sum") as env:
        wrapped = NormalizeReward(RecordEpisodeStatistics(TimeLimit(env, max_episode_steps=3)))
        assert wrapped.spec.additional_wrappers  # gymnasium could copy kiln's spec
        wrapped.reset(seed=1)
        rewards = []
        for step in range(3):
            _, reward, terminated, truncated, info = wrapped.step(1)
            rewards.append(reward)
            assert not terminated and truncated == (step == 2)
        assert info["episode"]["l"] == 3 and info["episode"]["r"] == pytest.approx(3.0)
        assert all(isinstance(r, float) for r in rewards) and rewards[0] != 1.0  # normalised
    with kiln.make("noop-v0", cluster=cluster, observation_space="Tensor") as env:
        flat = FlattenObservation(env)
        observation, _ = flat.reset()
        assert observation.shape == (4,) and observation in flat.observation_space


def test_flatten_observation_flattens_a_dict_observation(cluster):
    require_type(cluster, "mlgo-inline")
    from gymnasium.wrappers import FlattenObservation

    with kiln.make("mlgo-inline-v0", cluster=cluster) as env:
        flat = FlattenObservation(env)
        observation, _ = flat.reset()
        assert observation.shape == (len(env.observation_space.spaces),)
        assert observation in flat.observation_space


def test_gymnasium_make_and_make_vec_make_kiln_envs(cluster):
    for env_id in kiln.env_ids():
        assert f"kiln/{env_id}" in gymnasium.registry
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # gymnasium's passive checker wraps what make() gives
        env = gymnasium.make("kiln/noop-v0", cluster=cluster, reward_space="Sum",
                             max_episode_steps=2)
        try:
            assert isinstance(env.unwrapped, kiln.Env)
            assert env.unwrapped.spec.session_type == "noop"  # kiln's spec stays
            assert env.unwrapped.gymnasium_spec.id == "kiln/noop-v0"
            env.reset(seed=0)
            assert env.step(1)[1:4] == (1.0, False, False)
            assert env.step(1)[3] is True  # gymnasium's TimeLimit
        finally:
            env.close()
    envs = gymnasium.make_vec("kiln/noop-v0", num_envs=2, cluster=cluster)
    try:
        assert isinstance(envs, kiln.VectorEnv)  # kiln.make_vec, the vector entry point
        assert list(envs.reset(seed=1)[0]) == [0, 0]
    finally:
        envs.close()


def test_gymnasiums_own_vector_env_runs_kiln_envs(cluster):
    envs = gymnasium.vector.SyncVectorEnv(
        [lambda: kiln.make("noop-v0", cluster=cluster, reward_space="Sum")] * 2)
    try:
        observations, _ = envs.reset(seed=3)
        assert observations.shape == (2,)
        _, rewards, _, _, _ = envs.step(np.array([1, 2]))
        assert list(rewards) == [1.0, 2.0]
    finally:
        envs.close()


def test_gymnasiums_async_vector_env_runs_kiln_envs(cluster):
    require_type(cluster, "llvm")
    endpoint = cluster.endpoint  # each subprocess's env reaches the same cluster
    envs = gymnasium.vector.AsyncVectorEnv(
        [lambda: kiln.make("llvm-autophase-ic-v0", cluster=endpoint)] * 2)
    try:
        observations, _ = envs.reset(seed=1)
        assert observations.shape == (2, 56) and observations in envs.observation_space
        observations, rewards, *_ = envs.step(np.array([1, 2]))
        assert observations.shape == (2, 56) and rewards.shape == (2,)
    finally:
        envs.close()


def test_vector_env_is_gymnasiums_with_batched_spaces(cluster):
    with kiln.make_vec("noop-v0", 3, cluster=cluster, observation_space="Tensor") as envs:
        assert isinstance(envs, gymnasium.vector.VectorEnv) and envs.unwrapped is envs
        assert envs.metadata["autoreset_mode"] == kiln._gymnasium.NEXT_STEP
        assert isinstance(envs.action_space, spaces.MultiDiscrete)
        assert isinstance(envs.single_observation_space, spaces.Box)
        observations, _ = envs.reset(seed=2)
        assert observations.shape == (3, 4) and observations in envs.observation_space
        actions = envs.action_space.sample()
        assert actions in envs.action_space
        observations = envs.step(actions)[0]
        assert observations in envs.observation_space
        assert envs.get_attr("benchmark") == ("benchmark://noop-v0/0",) * 3
        assert envs.get_attr("episode_steps") == (1, 1, 1)
        assert envs.call("reward_space") == (None, None, None)
        with pytest.raises(AttributeError, match="no attribute 'colour'"):
            envs.get_attr("colour")
        with pytest.raises(kiln.Unimplemented):
            envs.set_attr("benchmark", ["x"] * 3)


def test_vector_reset_seeds_each_env_and_takes_options(cluster):
    benchmarks = [f"benchmark://noop-v0/b{i}" for i in range(16)]

    def drawn(seed):
        with kiln.make_vec("noop-v0", 4, cluster=cluster, benchmarks=benchmarks,
                           benchmark_order="random", max_episode_steps=1) as envs:
            _, infos = envs.reset(seed=seed)
            seen = [list(infos["benchmark"])]
            for _ in range(3):  # an ending step, then the autoreset step
                seen.append(list(envs.step(np.ones(4, dtype=np.int64))[4].get("benchmark", [])))
            return seen

    same = drawn([5, 5, 7, 7])
    assert [s[0] for s in same if s] == [s[1] for s in same if s]  # env 0 and 1 alike
    assert [s[2] for s in same if s] == [s[3] for s in same if s]
    assert same == drawn([5, 5, 7, 7])
    assert [s[0] for s in same if s] != [s[2] for s in same if s]
    with pytest.raises(kiln.InvalidArgument, match="a list of 4"):
        drawn([1, 2])
    with kiln.make_vec("noop-v0", 2, cluster=cluster) as envs:
        _, infos = envs.reset(options={"benchmark": ["benchmark://noop-v0/x", "benchmark://noop-v0/y"]})
        assert list(infos["benchmark"]) == ["benchmark://noop-v0/x", "benchmark://noop-v0/y"]
        with pytest.raises(kiln.InvalidArgument, match="unknown reset option"):
            envs.reset(options={"reset_mask": [True, False]})


def test_same_step_autoreset_gives_the_next_episode_and_the_final_one(cluster):
    with kiln.make_vec("noop-v0", 2, cluster=cluster, max_episode_steps=2, reward_space="Sum",
                       autoreset_mode="same_step") as envs:
        assert envs.metadata["autoreset_mode"] == kiln._gymnasium.SAME_STEP
        envs.reset()
        envs.step([1, 1])
        observations, rewards, _, truncations, infos = envs.step([2, 2])
        assert list(truncations) == [True, True] and list(rewards) == [2.0, 2.0]
        assert list(observations) == [0, 0]  # the next episode's first observation
        assert list(infos["final_obs"]) == [3, 3] and infos["_final_obs"].all()
        assert infos["final_info"][0]["actions_applied"] == 1
        observations, rewards, *_ = envs.step([4, 4])  # no reset step: the action counts
        assert list(observations) == [4, 4] and list(rewards) == [4.0, 4.0]


def test_gymnasium_vector_wrappers_wrap_kilns_vector_env(cluster):
    from gymnasium.wrappers.vector import (
        FlattenObservation,
        NormalizeReward,
        RecordEpisodeStatistics,
    )

    with kiln.make_vec("noop-v0", 2, cluster=cluster, max_episode_steps=2, reward_space="Sum",
                       observation_space="Tensor") as envs:
        wrapped = RecordEpisodeStatistics(NormalizeReward(FlattenObservation(envs)))
        observations, _ = wrapped.reset(seed=0)
        assert observations.shape == (2, 4)
        wrapped.step(np.array([1, 1]))
        _, rewards, _, truncations, infos = wrapped.step(np.array([1, 1]))
        assert truncations.all() and rewards.dtype == np.float64
        assert list(infos["episode"]["l"]) == [2, 2] and infos["_episode"].all()


def test_kiln_works_without_gymnasium():
    """Without gymnasium (blocked from importing), kiln's envs are its own
    classes and still run an episode, a vector env step and a reset(seed=)."""
    script = (
        "import sys; sys.modules['gymnasium'] = None\n"
        "import kiln, numpy as np\n"
        "assert not kiln._gymnasium.AVAILABLE\n"
        "with kiln.LocalCluster(workers=1, slots=2) as c:\n"
        "    with kiln.make('noop-v0', cluster=c, reward_space='Sum') as env:\n"
        "        assert isinstance(env.action_space, kiln.Space)\n"
        "        obs, info = env.reset(seed=1, options={'benchmark': 'benchmark://noop-v0/0'})\n"
        "        assert env.step(2)[1] == 2.0 and env.unwrapped is env\n"
        "        assert isinstance(env.np_random, np.random.Generator)\n"
        "    with kiln.make_vec('noop-v0', 2, cluster=c, reward_space='Sum') as envs:\n"
        "        envs.reset(seed=[1, 2])\n"
        "        assert list(envs.step(envs.action_space.sample())[0].shape) == [2]\n"
        "        assert isinstance(envs.action_space, kiln.BatchSpace)\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=False, env=dict(os.environ))
    assert done.returncode == 0 and "ok" in done.stdout, done.stdout + done.stderr


def test_env_and_vector_env_take_their_spec_from_one_helper():
    import inspect

    from kiln import registry

    shared = registry.SpecOwner.__dict__["spec"]
    assert inspect.getattr_static(kiln.Env, "spec") is shared
    assert inspect.getattr_static(kiln.VectorEnv, "spec") is shared
    owner = registry.SpecOwner()
    owner.spec = registry.spec("noop-v0")
    owner.spec = "gymnasium's EnvSpec"  # what gymnasium.make records
    assert owner.spec.id == "noop-v0" and owner.gymnasium_spec == "gymnasium's EnvSpec"
