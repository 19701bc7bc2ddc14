"""kiln.wrappers over a real llvm env: each wrapper's contract, forks of
wrapped envs, and the bad inputs each refuses with a clear error."""

import pytest

import kiln
from kiln import wrappers
from conftest import require_type

CRC32 = "benchmark://kiln-bench-v0/crc32"
QUICKSORT = "benchmark://kiln-bench-v0/quicksort"
BFS = "benchmark://kiln-bench-v0/bfs"


@pytest.fixture
def env(cluster):
    require_type(cluster, "llvm")
    with kiln.make("llvm-ic-v0", cluster=cluster, benchmark=CRC32, timeout=120) as made:
        yield made


def test_time_limit_truncates_after_n_actions_and_forks_keep_the_count(env):
    limited = wrappers.TimeLimit(env, max_episode_steps=3)
    with pytest.raises(kiln.InvalidArgument, match="reset"):
        limited.step(0)
    limited.reset()
    assert limited.step(0)[3] is False
    child = limited.fork()
    try:
        assert child.elapsed_steps == 1
        *_, terminated, truncated, _ = child.multistep([0, 1])
        assert truncated is True and terminated is False
    finally:
        child.close()
    assert limited.step(1)[3] is False  # the parent counts on its own
    *_, truncated, _ = limited.step(2)
    assert truncated is True
    limited.reset()
    assert limited.elapsed_steps == 0
    for bad in (0, -1, 2.5, "3"):
        with pytest.raises(kiln.InvalidArgument, match="max_episode_steps"):
            wrappers.TimeLimit(env, max_episode_steps=bad)


def test_benchmark_iterators(env):
    iterate = wrappers.IterateOverBenchmarks(env, [CRC32, QUICKSORT])
    iterate.reset()
    assert env.benchmark == CRC32
    iterate.reset()
    assert env.benchmark == QUICKSORT
    with pytest.raises(StopIteration):
        iterate.reset()
    with pytest.raises(TypeError, match="chooses the benchmark"):
        iterate.reset(benchmark=CRC32)

    cycle = wrappers.CycleOverBenchmarks(env, [CRC32, QUICKSORT])
    seen = []
    for _ in range(5):
        cycle.reset()
        seen.append(env.benchmark)
    assert seen == [CRC32, QUICKSORT, CRC32, QUICKSORT, CRC32]
    # A fork continues the sequence on its own copy.
    child = cycle.fork()
    try:
        child.reset()
        assert child.benchmark == QUICKSORT
        cycle.reset()
        assert env.benchmark == QUICKSORT
    finally:
        child.close()
    with pytest.raises(kiln.InvalidArgument, match="at least one"):
        wrappers.CycleOverBenchmarks(env, [])

    made = []
    again = wrappers.CycleOverBenchmarksIterator(env, lambda: made.append(1) or iter([BFS]))
    again.reset()
    again.reset()
    assert env.benchmark == BFS and len(made) == 2


def test_random_order_is_seeded_and_draws_from_the_list(env):
    def draws(seed):
        shuffled = wrappers.RandomOrderBenchmarks(env, [CRC32, QUICKSORT, BFS], rng=seed)
        out = []
        for _ in range(6):
            shuffled.reset()
            out.append(env.benchmark)
        return out

    first = draws(4)
    assert first == draws(4)
    assert set(first) <= {CRC32, QUICKSORT, BFS} and len(set(first)) > 1


def test_terminal_action_ends_the_episode_without_applying_what_follows(env):
    wrapped = wrappers.CommandlineWithTerminalAction(env)
    n = env.action_space.n
    assert wrapped.action_space.n == n + 1
    assert wrapped.action_space.names[-1] == "end-of-episode"
    assert wrapped.action_space.flags[-1] == "# end-of-episode"
    wrapped.reset()
    *_, terminated, _, info = wrapped.step(0)
    assert terminated is False and "terminal_action" not in info
    *_, terminated, _, info = wrapped.multistep([1, n, 2])
    assert terminated is True and info["terminal_action"] is True
    assert env.actions == [0, 1]  # action 2 came after the terminal one
    *_, terminated, _, _ = wrapped.step("end-of-episode")
    assert terminated is True


def test_constrained_commandline_renumbers_a_subset(env):
    names = env.action_space.names
    chosen = [names[5], names[2], names[9]]
    constrained = wrappers.ConstrainedCommandline(env, chosen, name="three")
    assert constrained.action_space.n == 3
    assert constrained.action_space.names == chosen
    assert constrained.action_space.name == "ConstrainedCommandline<three, 3>"
    constrained.reset()
    constrained.multistep([0, 2])
    constrained.step(names[2])
    assert env.actions == [5, 9, 2]
    assert constrained.actions == [0, 2, 1]
    with pytest.raises(kiln.InvalidArgument, match="out of range"):
        constrained.step(3)
    with pytest.raises(kiln.NotFound, match="no-such-pass"):
        wrappers.ConstrainedCommandline(env, ["no-such-pass"])
    with pytest.raises(TypeError, match="at least one"):
        wrappers.ConstrainedCommandline(env, [])
    for _ in range(20):
        assert constrained.action_space.sample() in constrained.action_space


def test_fork_on_step_undo_restores_the_state(env):
    undoable = wrappers.ForkOnStep(env)
    undoable.reset()
    start = undoable.observation["IrSha1"]
    instcombine = "instcombine" if "instcombine" in env.action_space.names else 0
    undoable.step(instcombine)
    after_one = undoable.observation["IrSha1"]
    undoable.step(env.action_space.names[1])
    assert len(undoable.stack) == 2
    undoable.undo()
    assert undoable.observation["IrSha1"] == after_one
    assert len(undoable.actions) == 1
    undoable.undo()
    assert undoable.observation["IrSha1"] == start
    assert undoable.actions == []
    undoable.undo()  # nothing left to undo: stays where it is
    assert undoable.observation["IrSha1"] == start
    with pytest.raises(NotImplementedError, match="cannot be forked"):
        undoable.fork()
    undoable.close()


def test_counter_counts_calls_and_forwards_setters(env):
    counted = wrappers.Counter(env)
    counted.reset()
    counted.step(0)
    counted.multistep([1, 2])
    child = counted.fork()
    child.close()
    assert counted.counters == {"close": 0, "fork": 1, "reset": 1, "step": 2}
    counted.observation_space = "Autophase"  # goes to the env, as in CompilerGym
    assert env.observation_space.name == "Autophase"
    counted.close()
    counted.close()
    assert counted.counters["close"] == 2


def test_wrappers_stack(env):
    stacked = wrappers.TimeLimit(
        wrappers.ConstrainedCommandline(wrappers.Counter(env), env.action_space.names[:4]), 2
    )
    stacked.reset()
    assert stacked.action_space.n == 4
    stacked.step(3)
    *_, truncated, _ = stacked.step(1)
    assert truncated is True
    assert env.actions == [3, 1]
    assert stacked.env.env.counters["step"] == 2
    assert stacked.unwrapped is env
