"""The LLVM and MLGO env ids. Each test runs when this build's workers offer
the session type and is skipped, with the reason, when they do not."""

import numpy as np
import pytest

import kiln
from conftest import require_type

BENCHMARK = "benchmark://kiln-bench-v0/crc32"


def test_llvm_ic_episode_rewards_sum_to_the_oz_improvement(cluster):
    require_type(cluster, "llvm")
    with kiln.make("llvm-ic-v0", cluster=cluster, benchmark=BENCHMARK, timeout=120) as env:
        assert env.action_space.kind == "named_discrete" and env.action_space.n > 10
        start, _ = env.reset(seed=11)
        assert isinstance(start, int) and start > 0
        o0 = env.observation["IrInstructionCountO0"]
        oz = env.observation["IrInstructionCountOz"]
        rewards = []
        for _ in range(12):
            observation, reward, terminated, _, info = env.step(env.action_space.sample())
            assert isinstance(reward, float) and isinstance(info["action_had_no_effect"], bool)
            rewards.append(reward)
            if terminated:
                break
        # One pass that always shrinks something, so the sum is not trivially 0.
        observation, reward, *_ = env.step("instcombine" if "instcombine" in env.action_space.names
                                           else env.action_space.names[0])
        rewards.append(reward)
        expected = (start - observation) / max(o0 - oz, 1)
        assert sum(rewards) == pytest.approx(expected, abs=1e-9)
        assert env.episode_reward == pytest.approx(expected, abs=1e-9)


def test_llvm_autophase_observation(cluster):
    require_type(cluster, "llvm")
    env = kiln.make("llvm-autophase-ic-v0", cluster=cluster, benchmark=BENCHMARK, timeout=120)
    with env:
        observation, _ = env.reset()
        assert isinstance(observation, np.ndarray) and observation.dtype == np.int64
        assert observation.ndim == 1 and observation.size > 0
        assert env.observation_space.contains(observation)
        child = env.fork()
        try:
            np.testing.assert_array_equal(child.observation["Autophase"], observation)
        finally:
            child.close()


def test_llvm_ir_and_bad_benchmark(cluster):
    require_type(cluster, "llvm")
    with kiln.make("llvm-v0", cluster=cluster, benchmark=BENCHMARK, timeout=120) as env:
        env.reset()
        assert "define" in env.observation["Ir"]
        assert isinstance(env.observation["Bitcode"], bytes)
        with pytest.raises(kiln.KilnError):
            env.reset(benchmark="benchmark://kiln-bench-v0/no-such-program")
        env.reset(benchmark=BENCHMARK)  # the env recovers with a good benchmark
        assert env.observation["IrInstructionCount"] > 0


def test_mlgo_inline_episode(cluster):
    require_type(cluster, "mlgo-inline")
    with kiln.make("mlgo-inline-v0", cluster=cluster, benchmark=BENCHMARK, timeout=120) as env:
        assert env.action_space.n == 2 and env.reward_space == "NativeSizeSaved"
        observation, _ = env.reset(seed=5)
        assert isinstance(observation, dict) and observation
        assert all(isinstance(v, np.ndarray) and v.dtype == np.int64 for v in observation.values())
        rewards, terminated = [], False
        for _ in range(2000):  # one decision per call site; crc32 has a handful
            _, reward, terminated, _, _ = env.step(env.action_space.sample())
            rewards.append(reward)
            if terminated:
                break
        assert terminated and all(isinstance(r, float) for r in rewards)
        # The reward is the native size saved against the default inliner.
        saved = env.observation["DefaultNativeSize"] - env.observation["NativeSize"]
        assert sum(rewards) == env.episode_reward == saved
