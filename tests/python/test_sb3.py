"""Stable-Baselines3 trains on kiln with no glue (issue 45): PPO and A2C on
kiln.make("llvm-autophase-ic-v0") as it is, PPO on many envs through
kiln.sb3's VecEnv over kiln's vector env, faults ending as truncations.
Briefly (a few hundred steps): what is checked is that the loss and the
reward move, not that a policy is learnt. stable_baselines3 2.4.1 comes from
the shared third_party folder (conftest.py) when it is not installed."""

import os

import numpy as np
import pytest

import kiln
from conftest import require_type

sb3 = pytest.importorskip("stable_baselines3")
torch = pytest.importorskip("torch")
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from stable_baselines3.common.vec_env import VecMonitor  # noqa: E402

from kiln.sb3 import KilnVecEnv, make_vec_env  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "..", "llvm_engine", "data")


@pytest.fixture(autouse=True)
def one_thread():
    torch.set_num_threads(1)  # two cores: the worker needs the other


class Recorder(BaseCallback):
    """The loss of each update (logged before the next rollout) and the
    rewards of each rollout."""

    def __init__(self, loss_key):
        super().__init__()
        self.loss_key, self.losses, self.rewards = loss_key, [], []

    def _on_rollout_start(self):
        loss = self.logger.name_to_value.get(self.loss_key)
        if loss is not None:
            self.losses.append(float(loss))

    def _on_rollout_end(self):
        self.rewards.append(np.array(self.model.rollout_buffer.rewards))

    def _on_step(self):
        return True

    def finish(self, model):
        self.losses.append(float(model.logger.name_to_value[self.loss_key]))


def parameters(model):
    return torch.cat([p.detach().flatten().clone() for p in model.policy.parameters()])


def assert_moved(recorder, before, model):
    assert len(recorder.losses) >= 2 and all(np.isfinite(recorder.losses))
    assert len(set(recorder.losses)) > 1, recorder.losses  # the loss moves
    rewards = np.concatenate([r.ravel() for r in recorder.rewards])
    assert np.isfinite(rewards).all() and rewards.std() > 0  # the reward moves with the actions
    assert not torch.equal(before, parameters(model))  # the policy was updated


@pytest.mark.parametrize("algorithm, options, loss_key", [
    ("PPO", {"n_steps": 32, "batch_size": 32, "n_epochs": 2}, "train/loss"),
    ("A2C", {"n_steps": 8}, "train/value_loss"),
])
def test_ppo_and_a2c_train_on_a_kiln_env_as_it_is(cluster, algorithm, options, loss_key):
    require_type(cluster, "llvm")
    with kiln.make("llvm-autophase-ic-v0", cluster=cluster) as env:
        model = getattr(sb3, algorithm)("MlpPolicy", env, seed=0, device="cpu", **options)
        before = parameters(model)
        recorder = Recorder(loss_key)
        model.learn(3 * options["n_steps"], callback=recorder)
        recorder.finish(model)
        assert_moved(recorder, before, model)


def test_sb3s_own_checker_passes_and_a_scalar_observation_trains_reshaped(cluster):
    """SB3's checker takes llvm-autophase-ic-v0 as it is. SB3 cannot take a
    Box of shape () (its MlpPolicy flattens from the second axis), which a
    scalar observation (IrInstructionCount) is: gymnasium's
    ReshapeObservation makes it (1,), and SB3 trains."""
    require_type(cluster, "llvm")
    import gymnasium
    from stable_baselines3.common.env_checker import check_env

    with kiln.make("llvm-autophase-ic-v0", cluster=cluster) as env:
        check_env(env)
    with kiln.make("llvm-ic-v0", cluster=cluster) as env:
        reshaped = gymnasium.wrappers.ReshapeObservation(env, (1,))
        check_env(reshaped)
        model = sb3.PPO("MlpPolicy", reshaped, n_steps=16, batch_size=16, n_epochs=1, seed=0,
                        device="cpu")
        before = parameters(model)
        model.learn(16)
        assert not torch.equal(before, parameters(model))


def test_ppo_trains_on_many_envs_through_kilns_vector_env(cluster):
    require_type(cluster, "llvm")
    envs = VecMonitor(make_vec_env("llvm-autophase-ic-v0", 4, cluster=cluster,
                                   max_episode_steps=8, benchmarks="benchmark://kiln-bench-v0"))
    try:
        model = sb3.PPO("MlpPolicy", envs, n_steps=16, batch_size=32, n_epochs=2, seed=0,
                        device="cpu")
        before = parameters(model)
        recorder = Recorder("train/loss")
        model.learn(3 * 16 * 4, callback=recorder)
        recorder.finish(model)
        assert_moved(recorder, before, model)
        episodes = list(model.ep_info_buffer)
        assert episodes and all(e["l"] == 8 for e in episodes)  # truncated by the step limit
    finally:
        envs.close()


def test_kiln_vec_env_speaks_sb3s_vec_env_contract(cluster):
    import gymnasium
    from stable_baselines3.common.vec_env import VecEnv

    envs = make_vec_env("noop-v0", 2, cluster=cluster, max_episode_steps=2, reward_space="Sum")
    try:
        assert isinstance(envs, VecEnv) and envs.num_envs == 2
        envs.seed(4)
        observations = envs.reset()
        assert observations.tolist() == [0, 0]
        assert envs.reset_infos[0]["benchmark"] == "benchmark://noop-v0/0"
        observations, rewards, dones, infos = envs.step(np.array([1, 2]))
        assert rewards.tolist() == [1.0, 2.0] and not dones.any()
        assert infos[1]["TimeLimit.truncated"] is False
        observations, rewards, dones, infos = envs.step(np.array([1, 2]))
        # Ended and already reset, in the same step: SB3's autoreset.
        assert dones.all() and observations.tolist() == [0, 0]
        assert [i["terminal_observation"] for i in infos] == [2, 4]
        assert all(i["TimeLimit.truncated"] for i in infos)
        assert envs.get_attr("render_mode") == [None, None]
        assert envs.get_attr("benchmark", indices=[1]) == ["benchmark://noop-v0/0"]
        assert envs.env_is_wrapped(gymnasium.Wrapper) == [False, False]
    finally:
        envs.close()
    with kiln.make_vec("noop-v0", 1, cluster=cluster) as plain:
        with pytest.raises(kiln.InvalidArgument, match="same_step"):
            KilnVecEnv(plain)


def test_a_fault_ends_the_episode_as_a_truncation_and_training_goes_on():
    with kiln.LocalCluster(workers=1, slots=2, datasets={"crash": DATA},
                           fault_injection=True) as local:
        if "llvm" not in kiln.session_types(local):
            pytest.skip("no llvm worker in this build")
        envs = make_vec_env("llvm-ic-v0", 2, cluster=local, benchmarks=[
            "benchmark://crash/loop_bound_split_crash", "benchmark://kiln-bench-v0/crc32"])
        try:
            observations = envs.reset()
            space = envs.action_space
            crash, mem2reg = space.index("loop-bound-split"), space.index("mem2reg")
            envs.step_async(np.array([crash, mem2reg]))
            observations, rewards, dones, infos = envs.step_wait()
            assert dones.tolist() == [True, False] and rewards[0] == 0.0
            assert infos[0]["TimeLimit.truncated"] is True
            assert infos[0]["fault"].startswith("compile_error: ")
            assert "terminal_observation" in infos[0] and "terminal_observation" not in infos[1]
            assert envs.reset_infos[0]["benchmark"].startswith("benchmark://")
            observations, _, dones, _ = envs.step(np.array([mem2reg, mem2reg]))
            assert not dones.any() and observations.shape == (2,)
        finally:
            envs.close()


def test_the_sb3_example_trains_and_plays():
    import pathlib
    import subprocess
    import sys

    source = pathlib.Path(os.environ.get("KILN_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
    done = subprocess.run(
        [sys.executable, str(source / "examples" / "python" / "sb3_ppo.py"), "--envs", "2",
         "--timesteps", "64", "--n-steps", "16", "--episode-steps", "4",
         "--benchmarks", "benchmark://kiln-bench-v0/crc32"],
        capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "trained PPO for 64 steps" in done.stdout
    assert "mean return over 1 benchmarks: policy" in done.stdout


def test_the_sb3_bench_row_is_measured(capsys):
    import json

    from kiln import bench_sb3

    bench_sb3.main(["--quick", "--json"])
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert row["kiln_vector_steps_per_s"]["median"] > 0
    assert row["subproc_vec_env_steps_per_s"]["median"] > 0 and row["x_subprocess"] > 0
