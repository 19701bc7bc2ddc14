"""Gym-style episodes on the noop session type: make, reset, step, multistep,
fork, close, observations as numpy/bytes/str, rewards and info."""

import threading
import time

import numpy as np
import pytest

import kiln


@pytest.fixture
def env(cluster):
    with kiln.make("noop-v0", cluster=cluster, reward_space="Sum", timeout=10) as e:
        yield e


def test_reset_and_step_return_gym_tuples(env):
    observation, info = env.reset()
    assert observation == 0 and info == {"benchmark": "benchmark://noop-v0/0"}
    observation, reward, terminated, truncated, info = env.step(3)
    assert (observation, reward, terminated, truncated) == (3, 3.0, False, False)
    assert info == {"action_had_no_effect": False, "new_action_space": None, "actions_applied": 1,
                    "restored": False}
    assert env.actions == [3]


def test_multistep_applies_all_in_one_round_trip(env):
    env.reset()
    observation, reward, terminated, _, info = env.multistep([1, 2, 4])
    assert observation == 7 and reward == 7.0 and not terminated
    assert info["actions_applied"] == 3
    assert env.observation["Steps"] == 3


def test_end_of_episode_stops_the_multistep(env):
    env.reset()
    observation, reward, terminated, _, info = env.multistep([1, "end-episode", 5])
    assert terminated and info["actions_applied"] == 2
    assert observation == 1 and reward == 1.0
    assert env.actions == [1, 9]


def test_action_had_no_effect(env):
    env.reset()
    assert env.step("no-effect")[4]["action_had_no_effect"] is True
    assert env.step(0)[4]["action_had_no_effect"] is True
    assert env.step(5)[4]["action_had_no_effect"] is False
    assert env.multistep([0, 8])[4]["action_had_no_effect"] is True


def test_rewards_sum_to_the_change_of_the_metric(env):
    env.reset()
    env.action_space.seed(3)
    rewards = []
    for _ in range(40):
        action = env.action_space.sample()
        if action == 9:
            continue
        rewards.append(env.step(action)[1])
    assert sum(rewards) == env.episode_reward == env.observation["Sum"]


def test_observations_have_numpy_types(cluster):
    with kiln.make("noop-v0", cluster=cluster, observation_space="Tensor", timeout=10) as env:
        observation, _ = env.reset()
        assert isinstance(observation, np.ndarray)
        assert observation.dtype == np.int64 and observation.shape == (4,)
        observation = env.multistep([2, 3])[0]
        np.testing.assert_array_equal(observation, [5, 2, 10, 4])
        assert env.step(1)[1] == 0.0  # no reward space: reward 0.0 (gymnasium wants a number)
        assert env.observation_space.name == "Tensor"
        blob = env.observation["Bytes4K"]
        assert isinstance(blob, bytes) and len(blob) == 4096
        assert isinstance(env.observation["Benchmark"], str)


def test_no_observation_space(cluster):
    with kiln.make("noop-v0", cluster=cluster, observation_space=None, timeout=10) as env:
        # gymnasium wants a space: the one whose only member is None.
        assert env.reset()[0] is None and None in env.observation_space
        assert env.step(1)[0] is None


def test_reset_with_a_benchmark_and_a_new_episode(env):
    env.reset()
    env.step(7)
    observation, info = env.reset(benchmark="benchmark://noop-v0/other")
    assert observation == 0 and info["benchmark"] == "benchmark://noop-v0/other"
    assert env.benchmark == "benchmark://noop-v0/other"
    assert env.observation["Benchmark"] == "benchmark://noop-v0/other"
    assert env.episode_reward == 0.0 and env.actions == []


def test_fork_copies_state_then_diverges(env):
    env.reset()
    env.multistep([3, 4])
    child = env.fork()
    try:
        assert child.observation["Sum"] == 7 and child.actions == [3, 4]
        assert child.step(2)[:2] == (9, 2.0)  # reward baseline carried over
        assert env.step(1)[:2] == (8, 1.0)
        assert child.observation["Sum"] == 9 and env.observation["Sum"] == 8
        assert child.episode_reward == 9.0 and env.episode_reward == 8.0
    finally:
        child.close()
    assert env.step(1)[0] == 9  # the parent survives its child's close


def test_close_is_idempotent_and_final(cluster):
    env = kiln.make("noop-v0", cluster=cluster, timeout=10)
    env.reset()
    env.close()
    env.close()
    with pytest.raises(kiln.InvalidArgument, match="closed"):
        env.step(1)
    with pytest.raises(ValueError, match="closed"):
        env.reset()


def test_step_before_reset_is_refused(cluster):
    with kiln.make("noop-v0", cluster=cluster, timeout=10) as env:
        with pytest.raises(kiln.InvalidArgument, match="reset"):
            env.step(1)
        with pytest.raises(kiln.InvalidArgument, match="reset"):
            env.fork()


def test_reward_space_can_change_mid_episode(env):
    env.reset()
    env.multistep([5, 5])
    env.reward_space = "Steps"
    assert env.reward_space == "Steps" and env.episode_reward == 0.0
    assert env.step(1)[1] == 1.0
    env.reward_space = None
    assert env.step(1)[1] == 0.0 and env.reward_space is None


def test_session_parameters(env):
    env.reset()
    env.multistep([2, 2])
    assert env.set_parameter("noop.sum", "") == "4"
    with pytest.raises(kiln.InvalidArgument, match="noop.busy_us"):
        env.set_parameter("noop.busy_us", "soon")
    # A mistyped key is the caller's mistake: the session is not taken for
    # lost and replayed under a new id (issue 48).
    with pytest.raises(kiln.InvalidArgument, match="no session parameter 'noop.nothing'"):
        env.set_parameter("noop.nothing", "1")
    assert env.set_parameter("noop.sum", "") == "4"


def test_envs_step_in_parallel_threads(cluster):
    """Blocking calls release the GIL, and one env per thread needs no locking."""
    errors = []

    def run(seed):
        try:
            with kiln.make("noop-v0", cluster=cluster, reward_space="Sum", timeout=10) as env:
                env.reset()
                env.set_parameter("noop.busy_us", "2000")  # 2 ms of worker CPU per action
                for _ in range(30):
                    env.step(1)
                assert env.episode_reward == 30.0
        except Exception as error:  # noqa: BLE001 - reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    start = time.monotonic()
    for thread in threads:
        thread.start()
    ticks = 0
    while any(t.is_alive() for t in threads) and time.monotonic() - start < 60:
        ticks += 1  # the main thread keeps running Python while the envs wait
        time.sleep(0.001)
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert ticks > 10


def test_forks_of_one_env_step_from_threads_at_once(cluster):
    """As CompilerGym scripts do: fork one env from several threads and step
    each fork on its own thread. The forks share their parent's client, which
    is single-threaded in C++: the binding serializes its use, so every sum
    stays exact and nothing crashes."""
    errors = []
    with kiln.make("noop-v0", cluster=cluster, reward_space="Sum", timeout=10) as env:
        env.reset()
        env.multistep([3, 4])
        go = threading.Barrier(4, timeout=30)

        def run(seed):
            try:
                go.wait()
                with env.fork() as child:
                    expected = 7
                    for i in range(200):
                        add = 1 + (seed + i) % 7  # the adding actions
                        expected += add
                        assert child.step(add)[0] == expected
                    assert child.set_parameter("noop.sum", "") == str(expected)
                    assert child.observation["Sum"] == expected
            except Exception as error:  # noqa: BLE001 - reported by the main thread
                errors.append(error)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(t.is_alive() for t in threads)
        assert not errors, errors
        assert env.observation["Sum"] == 7  # the parent is untouched


def test_a_session_read_from_another_thread_waits_for_its_step(cluster):
    """A step may move its session (a restore) or end it: the session's
    endpoint, id and ended, read from another thread meanwhile, wait for the
    step instead of reading what it is changing."""
    busy = 4.0  # seconds of worker CPU for the step: the worker answers no sooner
    with kiln.make("noop-v0", cluster=cluster, timeout=30) as env:
        env.reset()
        env.set_parameter("noop.busy_us", str(int(busy * 1e6)))
        session = env._session
        endpoint = session.endpoint
        observer = kiln._kiln.Client(cluster.endpoint, 10.0)
        sent, done = [], []

        def step():
            sent.append(time.monotonic())
            env.step(1)
            done.append(True)

        stepping = threading.Thread(target=step)
        stepping.start()
        try:
            # The worker's heartbeat (every second) shows the step running,
            # so the stepping thread holds the client now.
            deadline = time.monotonic() + busy
            while not done and time.monotonic() < deadline and not any(
                w["endpoint"] == endpoint and w["busy_slots"] > 0 for w in observer.list_cluster()
            ):
                time.sleep(0.02)
            assert not done, "the step ended before its worker was seen running it"
            read = (session.endpoint, session.id, session.ended)
            waited = time.monotonic() - sent[0]
        finally:
            stepping.join(timeout=30)
        assert done, "the step did not end"
        assert waited >= busy, f"the read came {waited:.2f} s after the step was sent"
        assert read[0] == endpoint and not read[2]
