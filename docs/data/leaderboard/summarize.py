"""The leaderboard's runs (scripts/leaderboard), summed up: per program set
and agent, the geomean of -Oz's IR instruction count over the agent's (as
`kiln eval` reports it: invalid and failed benchmarks at -O0's size), mean
and spread over the seeds, with the validity counts; and the -O0 and -O3
baselines on the same programs. Run directly, it prints the rows.

    /usr/bin/python3 docs/data/leaderboard/summarize.py
"""

import json
import math
import pathlib
import re
import statistics
import sys

RUN = re.compile(r"^(?P<set>kiln-bench-v0|held-out)-(?P<agent>[a-z-]+?)-seed(?P<seed>\d+)\.json$")


def geomean(values):
    values = [max(v, 1e-12) for v in values]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else 1.0


def reports(folder):
    """[(set, agent, seed, report)] of every run in `folder`; PPO's files hold
    {"ppo": report, "random_search": report}, one agent row each."""
    found = []
    for path in sorted(pathlib.Path(folder).glob("*.json")):
        match = RUN.match(path.name)
        if not match:
            continue
        data = json.loads(path.read_text())
        set_name, agent, seed = match["set"], match["agent"], int(match["seed"])
        if agent.startswith("ppo-"):
            observation = agent[len("ppo-"):]
            training = data["ppo"].get("training")
            label = f"PPO ({observation}"
            if training:
                label += f", trained {training['env_steps']:,} steps"
            found.append((set_name, label + ")", seed, data["ppo"]))
            found.append((set_name, f"random search (PPO's budget, {observation} run)", seed,
                          data["random_search"]))
        else:
            found.append((set_name, agent, seed, data))
    return found


def baselines(report):
    """(-Oz/-O0, -Oz/-O3 or None) geomeans over a report's benchmarks."""
    rows = report["benchmarks"]
    o0 = geomean(r["ir_instruction_count_oz"] / max(r["ir_instruction_count_o0"], 1) for r in rows)
    if all("ir_instruction_count_o3" in r for r in rows):
        o3 = geomean(r["ir_instruction_count_oz"] / max(r["ir_instruction_count_o3"], 1)
                     for r in rows)
    else:
        o3 = None
    return o0, o3


def rows(folder):
    """[{set, agent, seeds, mean, spread, budget, valid, invalid, failed,
    programs}] in the order the runs were written, then the baselines."""
    grouped = {}
    for set_name, agent, seed, report in reports(folder):
        grouped.setdefault((set_name, agent), []).append((seed, report))
    table = []
    for (set_name, agent), runs in grouped.items():
        scores = [r["geomean_ir_instruction_count_vs_oz"] for _, r in runs]
        counts = [r.get("counts", {}) for _, r in runs]
        table.append({
            "set": set_name, "agent": agent, "seeds": sorted(s for s, _ in runs),
            "mean": statistics.fmean(scores),
            "spread": statistics.stdev(scores) if len(scores) > 1 else 0.0,
            "budget": runs[0][1].get("step_budget", 0),
            "programs": len(runs[0][1]["benchmarks"]) + len(runs[0][1].get("failures", [])),
            "valid": sum(c.get("valid", 0) + c.get("verified_only", 0) for c in counts),
            "invalid": sum(c.get("invalid", 0) for c in counts),
            "failed": sum(c.get("failed", 0) + c.get("not_measured", 0) for c in counts),
        })
    for set_name in dict.fromkeys(row["set"] for row in table):
        report = next(r for s, _, _, r in reports(folder) if s == set_name)
        o0, o3 = baselines(report)
        for agent, value in (("-O0", o0), ("-O3", o3), ("-Oz", 1.0)):
            if value is not None:
                table.append({"set": set_name, "agent": agent, "seeds": [], "mean": value,
                              "spread": 0.0, "budget": 0, "programs": len(report["benchmarks"]),
                              "valid": 0, "invalid": 0, "failed": 0})
    return table


if __name__ == "__main__":
    folder = sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent
    for row in rows(folder):
        print(f"{row['set']:14} {row['agent']:46} {row['mean']:.3f} +- {row['spread']:.3f} "
              f"(seeds {row['seeds']}, {row['programs']} programs, budget {row['budget']})")
