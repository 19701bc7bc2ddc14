"""kiln.CompilerEnvState and the states CSV: the pure-Python reader and
writer against the C++ ones (include/kiln/client/env_state.h, bound as
kiln._kiln.parse_states_csv / states_to_csv) on the very same texts and files."""

import io
import random

import pytest

import kiln
from kiln import _kiln, states
from kiln.state import CompilerEnvState


def cxx_states(text, action_space=None):
    return [
        CompilerEnvState(b, c, w, r, v)
        for b, r, w, c, v in _kiln.parse_states_csv(text, action_space)
    ]


def cxx_csv(state_list):
    return _kiln.states_to_csv(
        [(s.benchmark, s.reward, s.walltime, s.commandline, s.validity or "") for s in state_list]
    )


def random_states(rng, count):
    names = ["gvn", "sroa", "mem2reg", "instcombine", "loop-unroll", "simplifycfg"]
    out = []
    for i in range(count):
        benchmark = rng.choice(
            ["benchmark://kiln-bench-v0/qsort", "file://dir/a,b.ll", 'file://q"uote.ll']
        ) + str(i)
        commandline = " ".join(rng.choice(names) for _ in range(rng.randrange(0, 8)))
        reward = rng.choice([None, 0.0, 1.0, -0.5, 1e-7, 12345678.9, 1 / 3, 1e17, rng.random()])
        walltime = rng.choice([0.0, 2.0, 1e-05, rng.random() * 100, 1e16])
        validity = rng.choice([None, None, "valid", "invalid", "verified-only", "unvalidated"])
        out.append(CompilerEnvState(benchmark, commandline, walltime, reward, validity))
    return out


def test_python_and_cxx_write_the_same_bytes_and_read_each_other():
    rng = random.Random(7)
    for _ in range(20):
        state_list = random_states(rng, rng.randrange(0, 12))
        text = states.to_csv(state_list)
        assert text == cxx_csv(state_list)
        assert states.parse_csv(text) == state_list
        assert cxx_states(text) == state_list
        for ours, theirs, written in zip(states.parse_csv(text), cxx_states(text), state_list):
            assert ours.walltime == theirs.walltime
            assert ours.reward == theirs.reward
            assert ours.validity == theirs.validity == written.validity


def test_a_validity_column_is_written_when_known_and_checked_when_read():
    valid = CompilerEnvState("benchmark://x/a", "gvn", 1.0, 0.5, "valid")
    plain = CompilerEnvState("benchmark://x/b", "", 2.0)
    text = states.to_csv([valid, plain])
    assert text.startswith("benchmark,reward,walltime,commandline,validity\n")
    assert states.to_csv([plain]).startswith("benchmark,reward,walltime,commandline\n")
    assert [s.validity for s in states.parse_csv(text)] == ["valid", None]
    bad = "benchmark,reward,walltime,commandline,validity\nb://x,1,2,gvn,probably\n"
    for reader in (states.parse_csv, cxx_states):
        with pytest.raises(kiln.InvalidArgument, match="line 2: validity 'probably' is none of"):
            reader(bad)
    with pytest.raises(kiln.InvalidArgument, match="validity"):
        CompilerEnvState("b://x", "", 0, None, "maybe")


def test_compiler_gym_shape():
    state = CompilerEnvState("benchmark://kiln-bench-v0/qsort", "mem2reg gvn", 1.5, 0.25)
    assert CompilerEnvState.csv_header() == "benchmark,reward,walltime,commandline"
    assert state.to_csv() == "benchmark://kiln-bench-v0/qsort,0.25,1.5,mem2reg gvn"
    assert CompilerEnvState.from_csv(state.to_csv()) == state
    assert CompilerEnvState.from_json(state.json()) == state
    assert state.actions == ["mem2reg", "gvn"]
    # Equality as CompilerGym's: walltime ignored, rewards within 1e-5.
    assert state == state._replace(walltime=99.0, reward=0.25 + 1e-7)
    assert state != state._replace(reward=None)
    assert state != state._replace(commandline="gvn mem2reg")
    assert CompilerEnvState("b://x", ["gvn", "sroa"]).commandline == "gvn sroa"


def test_files_round_trip(tmp_path):
    state_list = random_states(random.Random(3), 30)
    path = tmp_path / "states.csv"
    states.write_csv(path, state_list)
    assert states.read_csv(path) == state_list
    assert cxx_states(path.read_text()) == state_list
    buffer = io.StringIO()
    states.write_csv(buffer, state_list)
    buffer.seek(0)
    assert states.read_csv(buffer) == state_list
    with pytest.raises(kiln.NotFound, match="no such file"):
        states.read_csv(tmp_path / "absent.csv")
    with pytest.raises(kiln.InvalidArgument, match="cannot read"):
        states.read_csv(tmp_path)


def test_compiler_gym_commandlines_and_headerless_rows():
    text = (
        "benchmark://x/a,1.0,2.0,opt -mem2reg -gvn input.bc -o output.bc\r\n"
        "\r\n"
        "benchmark://x/b,,,\n"
    )
    for parsed in (states.parse_csv(text), cxx_states(text)):
        assert [s.commandline for s in parsed] == ["-mem2reg -gvn", ""]
        assert parsed[1].reward is None and parsed[1].walltime == 0.0
    shuffled = "commandline,walltime,benchmark,reward\ngvn,3,benchmark://x/c,-2\n"
    expected = [CompilerEnvState("benchmark://x/c", "gvn", 3.0, -2.0)]
    assert states.parse_csv(shuffled) == expected == cxx_states(shuffled)


BAD = [
    ("benchmark,reward,walltime,commandline\nb://x,1.0,2.0\n", "line 2: 3 columns, expected 4"),
    ("b://x,1.0,2.0,gvn,extra\n", "line 1: 5 columns"),
    ("b://x,abc,2.0,gvn\n", "line 1: reward 'abc' is not a finite number"),
    ("b://x,1.0,2s,gvn\n", "line 1: walltime '2s' is not a finite number"),
    ("b://x,nan,2,gvn\n", "line 1: reward 'nan' is not a finite number"),
    ("b://x,1_0,2,gvn\n", "line 1: reward '1_0' is not a finite number"),
    ("b://x,1,-3,gvn\n", "line 1: walltime -3.0 is negative"),
    (",1,2,gvn\n", "line 1: the benchmark is empty"),
    ("b://x,1,2,gvn\nb://y,1,2,\"gvn\n", "line 2: a quoted field is never closed"),
    ('b://x,1,2,"gvn"x\n', "line 1: text after the closing quote"),
    ("benchmark,reward,walltime\nb://x,1,2\n", "line 1: the header lacks column 'commandline'"),
    ("benchmark,reward,walltime,commandline,x\n", "line 1: the header has an unknown column 'x'"),
    ('b://x,1,2,"gvn\nsroa"\n', r"line 1: the commandline has a control character \(byte 0x0a\)"),
    ("b://x,1,2,opt-19 -passes=gvn in.bc -o - | opt-19 -gvn - -o out.bc\n",
     "line 1: '-gvn' in a -passes= commandline"),
    ("b://x,1,2,opt-19 -passes=gvn -passes=sroa in.bc\n",
     "line 1: a stage of the commandline has two -passes="),
    ("b://x,1,2,opt-19 -passes=gvn in.bc -o - | sroa\n", "line 1: 'sroa' begins a stage"),
    ("b://x,1,2,opt-19 -passes=gvn in.bc -o - | opt-19 - -o out.bc\n",
     "line 1: a stage of the commandline has no -passes="),
    ("b://x,1,2,opt -gvn in.bc -o\n", "line 1: the commandline ends with '-o'"),
    ("b://x,1,2," + "gvn " * 10_001 + "\n", "line 1: the commandline has 10001 actions"),
    ("b://x,1,2," + "a" * (1 << 20) + "x\n", "line 1: the commandline is 1048577 bytes"),
]


@pytest.mark.parametrize("text,message", BAD, ids=[m[:40] for _, m in BAD])
def test_bad_rows_name_the_line_in_both_readers(text, message):
    with pytest.raises(kiln.InvalidArgument, match=message):
        states.parse_csv(text)
    with pytest.raises(kiln.InvalidArgument, match=message):
        _kiln.parse_states_csv(text)


CHAIN = ("opt-19 -passes=mem2reg input.bc -o - | opt-19 -passes='early-cse<memssa>' - -o - | "
         "opt-19 -passes=gvn - -o output.bc")


def test_the_compatibility_envs_opt_19_chain_reads_as_its_pipelines_in_both_readers():
    # kiln.compiler_gym's commandline(): one opt-19 per action, piped.
    text = f"benchmark://kiln-bench-v0/crc32,1.0,2.0,{CHAIN}\n"
    expected = ["mem2reg", "early-cse<memssa>", "gvn"]
    assert states.parse_csv(text)[0].commandline.split() == expected
    assert cxx_states(text)[0].commandline.split() == expected
    assert states.parse_commandline("opt-19 -passes=gvn input.ll -S -o output.ll") == ["gvn"]

