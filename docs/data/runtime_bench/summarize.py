"""The tables of docs/runtime.md from the `kiln bench runtime --json` outputs
beside this file: per mode, program and level, the ratio to alone (ratio_pct)
and the worst session's, min / median / max over the runs, and how many runs
judged it within noise. scripts/figures makes the page's table from by_mode().

    /usr/bin/python3 docs/data/runtime_bench/summarize.py
"""

import glob
import json
import os
import re
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))


def reports(here=HERE):
    """(mode, run file name, report) of every output, empty ones as None."""
    for path in sorted(glob.glob(os.path.join(here, "*.json"))):
        if os.path.basename(path) == "meta.json":
            continue
        mode = re.sub(r"-\d+\.json$", "", os.path.basename(path))
        if os.path.getsize(path) == 0:
            yield mode, os.path.basename(path), None
            continue
        with open(path) as f:
            yield mode, os.path.basename(path), json.load(f)


def by_mode(here=HERE):
    """{mode: {(program, sessions): [row of each run]}}, in file order."""
    modes = {}
    for mode, _, report in reports(here):
        if report is None:
            continue
        for row in report["rows"]:
            modes.setdefault(mode, {}).setdefault((row["program"], row["sessions"]), []).append(row)
    return modes


def span(values):
    """min / median / max."""
    return min(values), statistics.median(values), max(values)


def within(seen):
    return sum(r["judge"] == "within noise" for r in seen)


def main():
    for mode, name, report in reports():
        if report is None:
            print(f"{name}: empty (a run still going, or one that failed)")
    for mode, rows in by_mode().items():
        print(f"\n{mode}")
        print(f"  {'program':<10} {'sessions':<10} {'runs':>4} {'median_ms':>17} {'ratio_pct':>17}"
              f" {'worst_session_pct':>17} {'within':>6} {'queued_ms':>9}")
        for (program, sessions), seen in rows.items():
            def spanned(field):
                return "{:.0f}/{:.0f}/{:.0f}".format(*span([r[field] for r in seen]))
            queued = statistics.median(r["queued_ms"] for r in seen)
            print(f"  {program:<10} {sessions:<10} {len(seen):>4} {spanned('median_ms'):>17}"
                  f" {spanned('ratio_pct'):>17} {spanned('worst_session_pct'):>17}"
                  f" {'-' if sessions.startswith('1') else within(seen):>6} {queued:>9.0f}")


if __name__ == "__main__":
    main()
