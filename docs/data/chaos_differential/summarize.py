"""The table of docs/faults.md ("The differential harness") from the
`kiln bench chaos --episodes ... --json` outputs beside this file, one per
fault kind and session type (<type>-<fault>.json; the command that wrote each
is in commands.txt).

    /usr/bin/python3 docs/data/chaos_differential/summarize.py
"""

import glob
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
COLUMNS = ("episodes", "steps_compared", "values_compared", "reward_mismatches",
           "observation_mismatches", "outcome_mismatches", "faults_injected",
           "sessions_restored", "faulted_seconds")


def main():
    print("| run | type | fault | " + " | ".join(c.replace("_", " ") for c in COLUMNS) + " |")
    print("|---|---|---|" + "---|" * len(COLUMNS))
    for path in sorted(glob.glob(os.path.join(HERE, "*.json"))):
        with open(path) as f:
            report = json.load(f)
        for row in report["rows"]:
            cells = [f"{row[c]:.0f}" for c in COLUMNS]
            run = os.path.splitext(os.path.basename(path))[0]
            print(f"| {run} | {row['session_type']} | {row['fault']} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
