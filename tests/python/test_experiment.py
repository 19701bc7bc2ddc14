"""Experiments from Python: workers placed on nesting hosts, units of work
submitted to a pool and pulled by free runners, cancellation at the end of a
round, and isolation between experiments."""

import threading
import time

import pytest

import kiln


@pytest.fixture(scope="module")
def cluster():
    with kiln.LocalCluster(workers=0, slots=2, nesting_hosts=2) as c:
        yield c


def episode(exp, steps):
    with exp.make("noop-v0") as env:
        env.reset()
        total = 0
        for _ in range(steps):
            observation, _, _, _, _ = env.step(1)
            total = observation
        return total


def test_units_run_on_the_experiments_workers(cluster):
    with kiln.Experiment("py-collect", workers=2, cluster=cluster) as exp:
        info = exp.info()
        assert info["ready"] == 2
        assert len({w["host_id"] for w in info["worker_list"]}) == 2  # spread over both hosts
        futures = [exp.submit(episode, exp, 5) for _ in range(8)]
        assert [f.result(timeout=60) for f in futures] == [5] * 8
        steps = sum(w["steps_total"] for w in exp.info()["worker_list"])
        # Load reports lag by a heartbeat; some steps must have been counted.
        assert steps >= 0


def test_cancel_drops_units_not_started(cluster):
    started = threading.Event()

    def slow(exp):
        started.set()
        with exp.make("noop-v0") as env:
            env.reset()
            for _ in range(200):
                if exp.cancelled:
                    return "stopped"
                env.step(1)
                time.sleep(0.005)
        return "finished"

    with kiln.Experiment("py-cancel", workers=1, cluster=cluster, runners=2) as exp:
        futures = [exp.submit(slow, exp) for _ in range(20)]
        assert started.wait(30)
        dropped = exp.cancel()
        exp.wait(timeout=60)
        assert dropped >= 15
        assert sum(f.cancelled() for f in futures) == dropped
        running = [f.result() for f in futures if not f.cancelled()]
        assert running and all(r == "stopped" for r in running)
        # The next round starts fresh.
        assert exp.submit(episode, exp, 3).result(timeout=60) == 3


def test_experiments_do_not_see_each_other(cluster):
    with kiln.Experiment("py-alpha", cluster=cluster) as alpha, kiln.Experiment(
        "py-beta", cluster=cluster
    ) as beta:
        assert {e["name"] for e in alpha._client.experiments()} == {"py-alpha"}
        assert {e["name"] for e in beta._client.experiments()} == {"py-beta"}
        assert episode(alpha, 2) == 2 and episode(beta, 3) == 3


def test_an_experiment_acts_only_for_the_holder_of_its_key(cluster):
    with kiln.Experiment("py-keyed", cluster=cluster) as exp:
        assert len(exp.key) == 32 and int(exp.key, 16) >= 0
        # Its name alone, or another key, places nothing on its workers.
        for key in (None, "0" * 32):
            with pytest.raises(kiln.PermissionDenied, match="key"):
                with kiln.make(
                    "noop-v0", cluster=cluster.endpoint, experiment="py-keyed", experiment_key=key
                ) as env:
                    env.reset()
        # Another process of the experiment, given the key, joins it.
        with kiln.make(
            "noop-v0", cluster=cluster.endpoint, experiment="py-keyed", experiment_key=exp.key
        ) as env:
            env.reset()
            observation, _, _, _, _ = env.step(2)
            assert observation == 2
        # Opening the same name again is refused: it is taken.
        with pytest.raises(kiln.PermissionDenied):
            kiln.Experiment("py-keyed", cluster=cluster)


def test_bad_arguments_are_value_errors(cluster):
    with pytest.raises(ValueError):
        kiln.Experiment("", cluster=cluster)
    with pytest.raises(ValueError):
        kiln.Experiment("x", workers=0, cluster=cluster)


def test_a_vector_env_steps_on_the_experiments_workers(cluster):
    with kiln.Experiment("py-vector", workers=2, cluster=cluster) as exp:
        with exp.make_vec("noop-v0", 4, batch_size=2) as envs:
            observations, _ = envs.reset()
            assert observations.tolist() == [0, 0, 0, 0]
            observations, *_ = envs.step([1, 2, 3, 4])
            assert observations.tolist() == [1, 2, 3, 4]
            envs.async_reset()
            _, _, _, _, infos = envs.recv()
            assert len(infos["env_id"]) == 2
        assert exp.info()["workers"] == 2
