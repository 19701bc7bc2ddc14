"""Space objects over real worker spaces (noop), and the value conversions
between Python and kiln (numpy dtypes and shapes, hostile values)."""

import math

import numpy as np
import pytest

import kiln
from kiln import _kiln


@pytest.fixture(scope="module")
def env(cluster):
    with kiln.make("noop-v0", cluster=cluster, timeout=10) as e:
        yield e


def test_named_discrete_action_space(env):
    space = env.action_space
    assert space.kind == "named_discrete"
    assert space.n == 10 and len(space) == 10
    assert space.names[:2] == ["add-0", "add-1"] and space.names[-1] == "end-episode"
    assert space.index("add-3") == 3 and space["no-effect"] == 8 and space[9] == "end-episode"
    assert (space.low, space.high) == (0, 9)
    assert space.contains(0) and space.contains(9) and 5 in space
    assert space.contains(np.int64(4)) and space.contains(np.int32(4))
    for bad in (10, -1, 1.5, "add-1", None, [1], True):
        assert not space.contains(bad), bad
    with pytest.raises(kiln.NotFound, match="unknown action 'add-99' in space 'noop'"):
        space.index("add-99")
    with pytest.raises(KeyError):
        space["nope"]
    with pytest.raises(ValueError, match="out of range"):
        space[10]
    with pytest.raises(AttributeError, match="not discrete"):
        env.observation_spaces["Tensor"].n


def test_sample_stays_inside_and_is_seeded(env):
    space = env.action_space
    space.seed(7)
    first = [space.sample() for _ in range(200)]
    # gymnasium's Discrete samples np.int64; kiln's own view, int.
    assert all(isinstance(a, (int, np.integer)) and space.contains(a) for a in first)
    assert set(first) == set(range(10))  # 200 draws over 10 choices see every one
    space.seed(7)
    assert [space.sample() for _ in range(200)] == first


def test_observation_spaces_describe_the_worker(env):
    # kiln's view of each (gymnasium's Box has array bounds; kiln says None
    # for no bound).
    spaces = {name: kiln.spaces.view_of(s) for name, s in env.observation_spaces.items()}
    assert list(spaces) == ["Sum", "Steps", "Bytes16", "Bytes4K", "Tensor", "Benchmark",
                            "Reward:Sum"]
    assert spaces["Sum"].kind == "int64" and spaces["Sum"].low == 0 and spaces["Sum"].high is None
    assert spaces["Sum"].default == 0 and spaces["Sum"].dtype == np.int64
    assert spaces["Tensor"].kind == "int64_box" and spaces["Tensor"].shape == (4,)
    bytes16 = spaces["Bytes16"]
    assert (bytes16.kind, bytes16.low, bytes16.high) == ("bytes", 16, 16)
    assert spaces["Benchmark"].kind == "string"


@pytest.mark.parametrize("name", ["Sum", "Steps", "Bytes16", "Bytes4K", "Tensor", "Benchmark"])
def test_samples_are_members(env, name):
    space = env.observation_spaces[name]
    space.seed(1)
    for _ in range(50):
        value = space.sample()
        assert space.contains(value), (name, value)
    assert not space.contains(object())


def test_box_contains_checks_shape_and_dtype(env):
    space = env.observation_spaces["Tensor"]
    assert space.contains(np.arange(4, dtype=np.int64))
    assert space.contains(np.arange(4, dtype=np.int32))  # widened to int64
    assert not space.contains(np.arange(5))
    assert not space.contains(np.zeros(4, dtype=np.float64))
    assert not space.contains([1, 2, 3, 4])  # a list is not a tensor


@pytest.mark.parametrize(
    "value",
    [0, -5, 2**63 - 1, 1.25, True, False, "text", "ünï", b"\x00\xff", None, [1, "a", [2.5]],
     {"a": 1, "b": [True]}, (1, 2)],
)
def test_python_values_round_trip(value):
    back = _kiln.to_value_and_back(value)
    expected = list(value) if isinstance(value, tuple) else value
    assert back == expected and type(back) is type(expected)


@pytest.mark.parametrize(
    "dtype, expected",
    [(np.int64, np.int64), (np.int32, np.int64), (np.uint8, np.int64), (np.bool_, np.int64),
     (np.float32, np.float32), (np.float64, np.float64), (np.float16, np.float64)],
)
def test_numpy_arrays_keep_shape_and_map_dtype(dtype, expected):
    array = np.arange(6).reshape(2, 3).astype(dtype)
    back = _kiln.to_value_and_back(array)
    assert isinstance(back, np.ndarray)
    assert back.dtype == expected and back.shape == (2, 3)
    np.testing.assert_array_equal(back, array.astype(expected))


def test_non_contiguous_and_empty_arrays():
    strided = np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::2]
    np.testing.assert_array_equal(_kiln.to_value_and_back(strided), strided)
    empty = _kiln.to_value_and_back(np.zeros((0, 3), dtype=np.int64))
    assert empty.shape == (0, 3)


def test_numpy_scalars_become_builtins():
    assert _kiln.to_value_and_back(np.int16(3)) == 3
    assert type(_kiln.to_value_and_back(np.float32(0.5))) is float
    assert _kiln.to_value_and_back(np.bool_(True)) is True


def looped_list():
    items = []
    items.append(items)
    return items


@pytest.mark.parametrize(
    "value, message",
    [(object(), "type 'object'"), ({1, 2}, "type 'set'"), (1j, "type 'complex'"),
     (2**64, "does not fit in 64 bits"), ({1: "a"}, "dict keys must be str"),
     (np.array([1j]), "dtype 'complex128'"), (np.array(["a"]), "dtype '<U1'"),
     (looped_list(), "nests deeper than")],
)
def test_hostile_values_are_refused(value, message):
    with pytest.raises(kiln.InvalidArgument, match=message) as raised:
        _kiln.to_value_and_back(value)
    assert isinstance(raised.value, ValueError)


def test_nan_and_inf_doubles_survive():
    assert math.isnan(_kiln.to_value_and_back(float("nan")))
    assert _kiln.to_value_and_back(float("-inf")) == float("-inf")


def test_a_pass_left_out_of_the_llvm_actions_says_why(cluster):
    with kiln.make("llvm-v0", cluster=cluster, timeout=120) as llvm:
        space = llvm.action_space
        assert space.index("gvn") == space.index("-gvn")
        # docs/actions.md's reason, after the near names the worker gives.
        with pytest.raises(kiln.NotFound, match="unknown action 'newgvn'.*not deterministic"):
            space.index("newgvn")
        with pytest.raises(kiln.NotFound, match="removed in LLVM 15"):
            space.index("-loop-unswitch")
        with pytest.raises(kiln.NotFound) as plain:
            space.index("no-such-pass")
        assert "left out" not in str(plain.value)
