"""The tables of docs/runtime.md from the `kiln bench runtime --json` outputs
beside this file: per mode, program and level, the ratio to alone (ratio_pct)
and the worst session's, min / median / max over the runs, and how many runs
judged it within noise.

    /usr/bin/python3 docs/data/runtime_bench/summarize.py
"""

import glob
import json
import os
import re
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    modes = {}
    for path in sorted(glob.glob(os.path.join(HERE, "*.json"))):
        mode = re.sub(r"-\d+\.json$", "", os.path.basename(path))
        if os.path.getsize(path) == 0:
            print(f"{os.path.basename(path)}: empty (a run still going, or one that failed)")
            continue
        with open(path) as f:
            report = json.load(f)
        for row in report["rows"]:
            key = (row["program"], row["sessions"])
            modes.setdefault(mode, {}).setdefault(key, []).append(row)
    for mode, rows in modes.items():
        print(f"\n{mode}")
        print(f"  {'program':<10} {'sessions':<10} {'runs':>4} {'median_ms':>17} {'ratio_pct':>17}"
              f" {'worst_session_pct':>17} {'within':>6} {'queued_ms':>9}")
        for (program, sessions), seen in rows.items():
            def span(field):
                values = [r[field] for r in seen]
                return (f"{min(values):.0f}/{statistics.median(values):.0f}"
                        f"/{max(values):.0f}")
            within = sum(r["judge"] == "within noise" for r in seen)
            queued = statistics.median(r["queued_ms"] for r in seen)
            print(f"  {program:<10} {sessions:<10} {len(seen):>4} {span('median_ms'):>17}"
                  f" {span('ratio_pct'):>17} {span('worst_session_pct'):>17}"
                  f" {'-' if sessions.startswith('1') else within:>6} {queued:>9.0f}")


if __name__ == "__main__":
    main()
