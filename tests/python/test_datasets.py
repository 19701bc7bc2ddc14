"""Dataset and benchmark listing through the worker-level parameters."""

import pytest

import kiln
from kiln.datasets import parse_benchmarks, parse_datasets
from conftest import require_type


def test_parse_datasets():
    text = "kiln-bench-v0\t20\tsmall C programs\ncsmith-v0\t-1\trandom programs\n\nx\tmany\ta\tb\n"
    datasets = parse_datasets(text)
    assert [d.name for d in datasets] == ["kiln-bench-v0", "csmith-v0", "x"]
    assert [d.size for d in datasets] == [20, None, None]
    assert datasets[2].description == "a\tb"
    with pytest.raises(kiln.InternalError, match="line 1"):
        parse_datasets("only-a-name")
    assert parse_benchmarks("a://1\n\n b://2 \n") == ["a://1", "b://2"]


def test_a_type_without_datasets_lists_none(cluster):
    with kiln.make("noop-v0", cluster=cluster, timeout=10) as env:
        assert len(env.datasets) == 0 and list(env.datasets) == []
        with pytest.raises(KeyError, match="no dataset 'kiln-bench-v0'"):
            env.datasets.benchmarks("kiln-bench-v0")


def test_a_type_nobody_hosts(cluster):
    with kiln.datasets(cluster, session_type="no-such-type") as listing:
        with pytest.raises(kiln.NotFound, match="hosts session type 'no-such-type'"):
            listing.names
    with pytest.raises(kiln.InvalidArgument, match="closed"):
        listing.names


def test_embedded_listing_holds_and_releases_the_cluster():
    listing = kiln.datasets(session_type="noop")
    assert kiln.embedded_cluster_endpoint() is not None
    assert listing.names == []
    listing.close()
    assert kiln.embedded_cluster_endpoint() is None


def test_llvm_datasets_and_benchmarks(cluster):
    require_type(cluster, "llvm")
    with kiln.datasets(cluster, session_type="llvm", timeout=60) as listing:
        assert "benchmark://kiln-bench-v0" in listing.names and "kiln-bench-v0" in listing
        bench = listing["kiln-bench-v0"]
        assert bench.size and bench.size > 0 and bench.description
        uris = listing.benchmarks("kiln-bench-v0", limit=3)
        assert len(uris) == 3 and all(u.startswith("benchmark://kiln-bench-v0/") for u in uris)
        assert len(listing.benchmarks("kiln-bench-v0")) == bench.size
        assert listing["csmith-v0"].size is None  # a generator
        assert listing.benchmarks("csmith-v0", limit=2) == [
            "generator://csmith-v0/0", "generator://csmith-v0/1"]
        with pytest.raises(ValueError, match="unbounded"):
            listing.benchmarks("csmith-v0")
        with pytest.raises(ValueError, match="limit"):
            listing.benchmarks("kiln-bench-v0", limit=0)
    with kiln.make("llvm-v0", cluster=cluster, timeout=60) as env:
        assert "benchmark://kiln-bench-v0" in env.datasets.names
        env.reset(benchmark=uris[1])  # a listed benchmark is one the worker serves
        assert env.observation["IrInstructionCount"] > 0


def test_parse_counts_sizes_and_problems():
    from kiln.datasets import Problem, parse_benchmark_sizes, parse_problems

    (mine,) = parse_datasets("benchmark://mine\t3\tdirectory corpus\t1200\t2\t1\n")
    assert (mine.size, mine.description, mine.bytes, mine.skipped, mine.rejected) == (
        3, "directory corpus", 1200, 2, 1)
    assert parse_benchmark_sizes("benchmark://mine/a\t10\nbenchmark://mine/b\t20\n") == {
        "benchmark://mine/a": 10, "benchmark://mine/b": 20}
    with pytest.raises(kiln.InternalError, match="uri<TAB>bytes"):
        parse_benchmark_sizes("benchmark://mine/a\tmany\n")
    (problem,) = parse_problems("sub/x.bc\tskipped\ta symlink\tthat leads out\n")
    assert problem == Problem("sub/x.bc", "skipped", "a symlink\tthat leads out")


GOOD_IR = "define i32 @f() {\n  ret i32 0\n}\n"
UNVERIFIABLE_IR = ("define i32 @f(i1 %c) {\nentry:\n  br i1 %c, label %a, label %b\n"
                   "a:\n  %x = add i32 1, 2\n  br label %b\nb:\n  ret i32 %x\n}\n")


def test_an_operators_corpus_lists_sizes_and_why_modules_are_refused(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    (corpus / "good.ll").write_text(GOOD_IR)
    (corpus / "sub" / "also.ll").write_text(GOOD_IR)
    (corpus / "unverifiable.ll").write_text(UNVERIFIABLE_IR)
    # Cut short: the bitcode magic, then 3 bytes (LLVM reads whole 32-bit words).
    (corpus / "truncated.bc").write_bytes(b"BC\xc0\xde\x35\x14\x00")
    (tmp_path / "secret.ll").write_text(GOOD_IR)
    (corpus / "escape.ll").symlink_to(tmp_path / "secret.ll")
    with kiln.LocalCluster(datasets={"mine": corpus}) as local:
        require_type(local, "llvm")
        with kiln.datasets(local, session_type="llvm", timeout=60) as listing:
            mine = listing["mine"]
            assert mine.size == 4 and mine.skipped == 1 and mine.rejected == 0
            sizes = listing.benchmark_sizes("mine")
            assert sizes["benchmark://mine/good"] == len(GOOD_IR)
            assert mine.bytes == sum(sizes.values())
            assert str(corpus) not in mine.description
            (skipped,) = listing.problems("mine")
            assert (skipped.module, skipped.kind) == ("escape.ll", "skipped")
        with kiln.make("llvm-v0", cluster=local, timeout=60) as env:
            for module, why in (("unverifiable", "does not dominate"),
                                ("truncated", "not valid LLVM bitcode")):
                with pytest.raises(kiln.InvalidArgument, match=why) as refused:
                    env.reset(benchmark=f"benchmark://mine/{module}")
                assert f"benchmark://mine/{module}" in str(refused.value)
                assert str(tmp_path) not in str(refused.value)
            env.reset(benchmark="benchmark://mine/sub/also")  # a good module still starts
            assert env.observation["IrInstructionCount"] == 1
        with kiln.datasets(local, session_type="llvm", timeout=60) as listing:
            assert listing["mine"].rejected == 2
            problems = {p.module: p for p in listing.problems("mine")}
            assert problems["unverifiable"].kind == "rejected"
            assert "does not dominate" in problems["unverifiable"].reason
            assert problems["truncated"].kind == "rejected"


def test_a_bad_dataset_for_a_local_cluster_names_the_flag(tmp_path):
    with pytest.raises(kiln.InvalidArgument, match="--dataset"):
        kiln.LocalCluster(datasets={"bad/name": tmp_path})
    with pytest.raises(kiln.InvalidArgument, match="dict"):
        kiln.LocalCluster(datasets=["mine=/x"])
