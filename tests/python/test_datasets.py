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
