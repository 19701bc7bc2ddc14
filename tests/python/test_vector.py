"""kiln.VectorEnv: gymnasium's vector semantics, EnvPool's async pair, and
faults that end one env's episode as truncated instead of raising."""

import os
import signal
import time

import numpy as np
import pytest

import kiln
from kiln import _kiln

DATA = os.path.join(os.path.dirname(__file__), "..", "llvm_engine", "data")


def test_batched_steps_truncation_and_autoreset(cluster):
    with kiln.make_vec("noop-v0", 4, cluster=cluster, max_episode_steps=3) as envs:
        assert envs.action_space.shape == (4,)
        # gymnasium's batch of a Discrete: a MultiDiscrete of the same n per env.
        assert list(envs.action_space.nvec) == [envs.single_action_space.n] * 4
        observations, infos = envs.reset(seed=5)
        assert observations.dtype == np.int64 and observations.tolist() == [0, 0, 0, 0]
        assert infos["_benchmark"].all()
        actions = np.array([1, 2, 3, 4])
        for step in range(1, 4):
            observations, rewards, terminations, truncations, infos = envs.step(actions)
            assert observations.tolist() == (actions * step).tolist()
            assert rewards.dtype == np.float64 and rewards.shape == (4,)
            assert not terminations.any()
            assert truncations.tolist() == [step == 3] * 4
            assert infos["actions_applied"].tolist() == [1, 1, 1, 1]
        # The step after the episode ended resets: its action is ignored.
        observations, rewards, terminations, truncations, infos = envs.step(actions)
        assert observations.tolist() == [0, 0, 0, 0]
        assert rewards.tolist() == [0.0] * 4
        assert not truncations.any() and not terminations.any()
        assert infos["_benchmark"].all() and "actions_applied" not in infos
        observations, *_ = envs.step(actions)
        assert observations.tolist() == actions.tolist()


def test_a_terminated_episode_resets_on_the_next_step(cluster):
    with kiln.make_vec("noop-v0", 2, cluster=cluster) as envs:
        envs.reset()
        end = envs.single_action_space.index("end-episode")
        _, _, terminations, truncations, _ = envs.step([end, 1])
        assert terminations.tolist() == [True, False] and not truncations.any()
        observations, _, _, _, infos = envs.step([1, 1])
        assert observations.tolist() == [0, 2]
        assert infos["_benchmark"].tolist() == [True, False]


def test_async_send_recv_returns_the_first_batch_with_ids(cluster):
    with kiln.make_vec("noop-v0", 6, cluster=cluster, batch_size=2) as envs:
        envs.async_reset()
        seen = set()
        totals = np.zeros(6, dtype=np.int64)
        for _ in range(12):
            observations, _, _, _, infos = envs.recv()
            ids = infos["env_id"]
            assert len(ids) == 2 and len(set(ids.tolist())) == 2
            assert observations.tolist() == totals[ids].tolist()
            seen.update(ids.tolist())
            actions = ids % 5
            totals[ids] += actions
            envs.send(actions, ids)
        assert seen == set(range(6))
        with pytest.raises(kiln.InvalidArgument, match="already has a step in flight"):
            in_flight = [i for i in range(6) if envs._core.in_flight(i)]
            envs.send([1], [in_flight[0]])
        with pytest.raises(kiln.InvalidArgument, match="out of range"):
            envs.send([1], [6])


def test_resets_do_not_wait_for_their_starts_recv_answers_them(cluster):
    with kiln.make_vec("noop-v0", 4, cluster=cluster, batch_size=4,
                       max_episode_steps=2) as envs:
        envs.async_reset()
        # Every start is still in flight: async_reset() only placed them.
        assert envs._core.in_flight_count == 4
        with pytest.raises(kiln.InvalidArgument, match="still starting"):
            envs.send([1], [0])
        observations, rewards, _, _, infos = envs.recv()
        assert sorted(infos["env_id"].tolist()) == [0, 1, 2, 3]
        assert observations.tolist() == [0, 0, 0, 0] and rewards.tolist() == [0, 0, 0, 0]
        assert infos["_worker_us"].all()  # the worker's time on each start
        for _ in range(2):
            envs.send([1, 1, 1, 1], [0, 1, 2, 3])
            _, _, _, truncations, infos = envs.recv()
        assert truncations.all()
        # The next send resets every env: it returns with their starts in
        # flight, and recv() gives each its new episode's first observation.
        envs.send([3, 3, 3, 3], [0, 1, 2, 3])
        assert envs._core.in_flight_count == 4
        observations, rewards, terminations, truncations, infos = envs.recv()
        assert observations.tolist() == [0, 0, 0, 0]
        assert not terminations.any() and not truncations.any()
        assert sorted(infos["env_id"].tolist()) == [0, 1, 2, 3]


def test_recv_with_nothing_sent_and_bad_arguments_are_clear_errors(cluster):
    with pytest.raises(kiln.InvalidArgument, match="num_envs"):
        kiln.make_vec("noop-v0", 0, cluster=cluster)
    with pytest.raises(kiln.InvalidArgument, match="batch_size"):
        kiln.make_vec("noop-v0", 2, batch_size=3, cluster=cluster)
    with kiln.make_vec("noop-v0", 2, cluster=cluster) as envs:
        with pytest.raises(kiln.InvalidArgument, match="nothing sent"):
            envs.recv()
        envs.reset()
        with pytest.raises(kiln.InvalidArgument, match="one action per env"):
            envs.step([1])
        with pytest.raises(kiln.InvalidArgument):
            envs.step([1, 10_000])  # not an action of the space: nothing is sent
        observations, *_ = envs.step([1, 1])
        assert observations.tolist() == [1, 1]


def test_benchmarks_cycle_through_a_dataset_and_a_seed_fixes_random_order(cluster):
    uris = kiln.datasets(cluster).benchmarks("benchmark://kiln-bench-v0")
    with kiln.make_vec(
        "llvm-autophase-ic-v0", 3, cluster=cluster, benchmarks="benchmark://kiln-bench-v0"
    ) as envs:
        observations, infos = envs.reset()
        assert infos["benchmark"].tolist() == uris[:3]
        assert observations.shape == (3, 56) and observations.dtype == np.int64
        mem2reg = envs.single_action_space.index("mem2reg")
        observations, rewards, *_ = envs.step([mem2reg] * 3)
        assert observations.shape == (3, 56) and rewards.dtype == np.float64

    def drawn(seed):
        with kiln.make_vec(
            "llvm-ic-v0", 4, cluster=cluster, benchmarks="benchmark://kiln-bench-v0",
            benchmark_order="random", seed=seed,
        ) as envs:
            return envs.reset()[1]["benchmark"].tolist()

    assert drawn(3) == drawn(3)


def test_a_checkpointed_benchmark_state_continues_where_it_stood(cluster):
    def make(order):
        return kiln.make_vec("llvm-ic-v0", 2, cluster=cluster, benchmarks="benchmark://kiln-bench-v0",
                             benchmark_order=order, seed=7)

    for order in ("cycle", "random"):
        with make(order) as envs:
            envs.reset(seed=7)
            saved = envs.benchmark_state()
            expected = envs.reset()[1]["benchmark"].tolist()
        # A new vector env (a resumed job) restores it: the same next benchmarks.
        with make(order) as resumed:
            resumed.set_benchmark_state(saved)
            assert resumed.reset()[1]["benchmark"].tolist() == expected, order
            with pytest.raises(kiln.InvalidArgument, match="benchmark state"):
                resumed.set_benchmark_state({"next": 1})


def test_a_compile_error_truncates_that_env_only_and_it_resets():
    # A real LLVM crash (loop-bound-split, an action only with fault
    # injection) in one env: its episode ends truncated with the reason; the
    # other env, on the same worker, is restored on the replacement worker.
    with kiln.LocalCluster(workers=1, slots=2, datasets={"crash": DATA},
                           fault_injection=True) as local:
        with kiln.make_vec(
            "llvm-ic-v0", 2, cluster=local,
            benchmarks=["benchmark://crash/loop_bound_split_crash", "benchmark://kiln-bench-v0/crc32"],
        ) as envs:
            observations, infos = envs.reset()
            crash = envs.single_action_space.index("loop-bound-split")
            mem2reg = envs.single_action_space.index("mem2reg")
            _, rewards, terminations, truncations, infos = envs.step([crash, mem2reg])
            assert truncations.tolist() == [True, False] and not terminations.any()
            assert infos["_fault"].tolist() == [True, False]
            assert infos["fault"][0].startswith("compile_error: ")
            assert envs.fault_counts["compile_error"] == 1
            # The truncated env starts its next episode (the next benchmark).
            _, _, _, truncations, infos = envs.step([mem2reg, mem2reg])
            assert infos["benchmark"][0] == "benchmark://crash/loop_bound_split_crash" or \
                infos["benchmark"][0] == "benchmark://kiln-bench-v0/crc32"
            assert not truncations.any()


def _neighbours_rewards(crash):
    """Rewards and infos of envs 1 and 2 over three steps, env 0 crashing
    LLVM (and so its worker) at the second step when `crash`."""
    benchmarks = ["benchmark://crash/loop_bound_split_crash", "benchmark://kiln-bench-v0/bfs",
                  "benchmark://kiln-bench-v0/crc32"]
    with kiln.LocalCluster(workers=1, slots=3, datasets={"crash": DATA},
                           fault_injection=True) as local:
        with kiln.make_vec("llvm-ic-v0", 3, cluster=local, benchmarks=benchmarks) as envs:
            envs.reset()
            space = envs.single_action_space
            sroa, gvn, mem2reg = (space.index(name) for name in ("sroa", "gvn", "mem2reg"))
            crasher = space.index("loop-bound-split") if crash else mem2reg
            steps = [envs.step(actions) for actions in
                     ([mem2reg, sroa, sroa], [crasher, mem2reg, mem2reg], [mem2reg, gvn, gvn])]
            return ([step[1][1:].tolist() for step in steps],
                    [step[4].get("restored", np.zeros(3, dtype=bool))[1:].tolist()
                     for step in steps])


def test_neighbours_of_a_planted_llvm_crash_get_the_rewards_of_a_quiet_run():
    # The crash takes their worker down with it: they are restored on its
    # replacement, and their rewards must be those of a run without the
    # crash, bit for bit (they once counted the whole episode again), with
    # info["restored"] saying that a restore happened.
    quiet, quiet_restored = _neighbours_rewards(crash=False)
    crashed, crashed_restored = _neighbours_rewards(crash=True)
    assert crashed == quiet
    assert not any(any(step) for step in quiet_restored)
    assert any(any(step) for step in crashed_restored[1:]), crashed_restored


def test_a_worker_killed_mid_episode_does_not_break_the_loop():
    with kiln.LocalCluster(workers=2, slots=2) as local:
        with kiln.make_vec("noop-v0", 6, cluster=local) as envs:
            envs.reset()
            totals = np.zeros(6, dtype=np.int64)
            client = _kiln.Client(local.endpoint, 10.0, "", "", "")
            victim = client.list_cluster()[0]["pid"]
            for step in range(40):
                if step == 10:
                    os.kill(victim, signal.SIGKILL)
                actions = np.arange(6) % 4 + 1
                observations, _, _, truncations, infos = envs.step(actions)
                ended = truncations | infos.get("_benchmark", np.zeros(6, dtype=bool))
                totals = np.where(ended, 0, totals + actions)
                # A session restored by replay goes on from its sum; one lost
                # beyond restore ends truncated and starts again from 0.
                assert observations[~ended].tolist() == totals[~ended].tolist()
            assert sum(envs.fault_counts.values()) <= 6


def test_single_env_faults_as_truncation():
    with kiln.LocalCluster(workers=1, slots=2, datasets={"crash": DATA},
                           fault_injection=True) as local:
        with kiln.make("llvm-ic-v0", cluster=local, faults_as_truncation=True,
                       benchmark="benchmark://crash/loop_bound_split_crash") as env:
            first, _ = env.reset()
            crash = env.action_space.index("loop-bound-split")
            observation, reward, terminated, truncated, info = env.step(crash)
            assert truncated and not terminated and reward == 0.0
            assert observation == first
            assert info["fault"].startswith("compile_error: ")
            with pytest.raises(kiln.InvalidArgument, match="reset"):
                env.step(crash)


def test_the_vector_bench_prints_every_row_it_documents(capsys):
    from kiln import bench_vector

    bench_vector.main(["--quick", "--json"])
    rows = __import__("json").loads(capsys.readouterr().out)["rows"]
    llvm = [r for r in rows if r["env"] == "llvm-autophase-ic-v0" and "vector_steps_per_s" in r
            and "mode" not in r]
    assert [r["envs"] for r in llvm] == [1, 8]
    pair = [r for r in rows if "mode" in r]
    assert pair and pair[0]["x_slots"] > 0 and pair[0]["mode"].startswith("send/recv")
    for row in llvm:
        assert row["vector_steps_per_s"]["median"] > 0 and row["x_loop"] > 0
        assert row["x_slots"] > 0 and row["slot_capacity_steps_per_s"]["median"] > 0
    assert llvm[0]["x_subprocess"] > 0
    noop = [r for r in rows if r["env"] == "noop-v0"]
    assert noop and noop[0]["x_subprocess"] > 0
    assert all(row["judged_against"] for row in rows)
    first = [r for r in rows if "first_batch_s" in r]
    assert first and first[0]["first_batch_s"]["median"] > 0
    assert "client_kib_per_env" in first[0]
