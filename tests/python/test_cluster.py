"""Where envs run: the embedded cluster (cluster=None) starts with the first
env and stops with the last one, forks included; LocalCluster objects and
coordinator addresses work as clusters too."""

import gc

import pytest

import kiln


def embedded():
    return kiln.embedded_cluster_endpoint()


@pytest.fixture(autouse=True)
def no_embedded_cluster_between_tests():
    assert embedded() is None
    yield
    gc.collect()
    assert embedded() is None


def test_embedded_cluster_lives_with_the_last_env():
    first = kiln.make("noop-v0")
    address = embedded()
    assert address is not None and address.startswith("tcp://127.0.0.1:")
    second = kiln.make("noop-v0")
    assert embedded() == address  # shared, not a second cluster
    first.reset()
    second.reset()
    first.close()
    assert embedded() == address
    assert second.step(4)[0] == 4  # still served after the first env closed
    second.close()
    assert embedded() is None
    with pytest.raises(kiln.Timeout):  # really stopped: nobody answers there any more
        kiln.make("noop-v0", cluster=address, timeout=0.3)


def test_forks_hold_the_embedded_cluster():
    parent = kiln.make("noop-v0")
    parent.reset()
    parent.step(2)
    child = parent.fork()
    parent.close()
    assert embedded() is not None
    assert child.step(3)[0] == 5
    child.close()
    assert embedded() is None


def test_a_forgotten_env_releases_the_cluster_when_collected():
    env = kiln.make("noop-v0")
    env.reset()
    assert embedded() is not None
    del env
    gc.collect()
    assert embedded() is None


def test_a_failed_make_releases_the_cluster():
    with pytest.raises(kiln.NotFound):
        kiln.make("noop-v0", observation_space="Nope")
    assert embedded() is None


def test_embedded_cluster_restarts_on_demand():
    with kiln.make("noop-v0") as env:
        env.reset()
    assert embedded() is None
    with kiln.make("noop-v0") as env:
        assert env.reset()[0] == 0


def test_local_cluster_object_and_address():
    with kiln.LocalCluster(workers=2, slots=1) as local:
        assert local.running and len(local.worker_endpoints) == 2
        assert kiln.session_types(local) == sorted(kiln.session_types(local.endpoint))
        assert "noop" in kiln.session_types(local)
        envs = [kiln.make("noop-v0", cluster=local.endpoint, timeout=10) for _ in range(4)]
        for i, env in enumerate(envs):
            env.reset()
            assert env.step(i)[0] == i
        for env in envs:
            env.close()
        assert embedded() is None  # an explicit cluster never starts the embedded one
    assert not local.running
    with pytest.raises(kiln.NotFound, match="stopped"):
        local.endpoint
