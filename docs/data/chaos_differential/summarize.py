"""The table of docs/faults.md ("The differential harness") from the
`kiln bench chaos --episodes ... --json` outputs beside this file, one per
fault kind and session type (<type>-<fault>.json; the command that wrote each
is in commands.txt). scripts/figures writes the page's table with table().

    /usr/bin/python3 docs/data/chaos_differential/summarize.py
"""

import glob
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
COLUMNS = ("episodes", "steps_compared", "values_compared", "reward_mismatches",
           "observation_mismatches", "outcome_mismatches", "faults_injected",
           "sessions_restored", "faulted_seconds")


def rows(here=HERE):
    """(run name, row) of every output's rows, by file name."""
    for path in sorted(glob.glob(os.path.join(here, "*.json"))):
        if os.path.basename(path) == "meta.json":
            continue
        with open(path) as f:
            report = json.load(f)
        for row in report["rows"]:
            yield os.path.splitext(os.path.basename(path))[0], row


def table(here=HERE):
    lines = ["| run | type | fault | " + " | ".join(c.replace("_", " ") for c in COLUMNS) + " |",
             "|---|---|---|" + "---|" * len(COLUMNS)]
    for run, row in rows(here):
        cells = [f"{row[c]:.0f}" for c in COLUMNS]
        lines.append(f"| {run} | {row['session_type']} | {row['fault']} | " + " | ".join(cells) + " |")
    return lines


def main():
    print("\n".join(table()))


if __name__ == "__main__":
    main()
