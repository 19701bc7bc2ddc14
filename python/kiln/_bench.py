"""What the Python benches (kiln.bench_vector, bench_runtime, bench_graph)
share: timing one call, min/median summaries, and their command line (a
table by default, the same figures as JSON with --json)."""

import argparse
import statistics
import time


def timed(fn):
    """(seconds, value) of one call of fn()."""
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def summary(values):
    return {"min": min(values), "median": statistics.median(values), "runs": len(values)}


def parser(module, doc):
    """The bench's argument parser, with --json already on it."""
    made = argparse.ArgumentParser(prog=f"python3 -m kiln.{module}", description=doc,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    made.add_argument("--json", action="store_true", help="print the figures as JSON")
    return made
