"""One generator per figures block: NAME(root) returns (markdown text, data
paths it read, relative to the repository). Each reads committed data only
(docs/data/); the summaries that docs/data/*/summarize.py print are imported
from there, not written again."""

import importlib.util
import json
import re
import statistics


class MissingData(Exception):
    """A data file a generator needs is not in the tree (its path)."""


def path(root, rel):
    full = root / rel
    if not full.exists():
        raise MissingData(rel)
    return full


def load_json(root, rel):
    return json.loads(path(root, rel).read_text())


def summarizer(root, folder):
    """docs/data/<folder>/summarize.py as a module."""
    rel = f"docs/data/{folder}/summarize.py"
    spec = importlib.util.spec_from_file_location(f"summarize_{folder}", path(root, rel))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def num(value, digits=0):
    """1,234 / 1,234.5: thousands separated, as the guide writes them."""
    return f"{value:,.{digits}f}"


WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen")


def word(count, capital=False):
    """A small count as a word (four runs), a larger one in figures."""
    text = WORDS[count] if 0 <= count < len(WORDS) else num(count)
    return text[0].upper() + text[1:] if capital else text


def span(values, digits=0, unit=""):
    low, high = min(values), max(values)
    if num(low, digits) == num(high, digits):
        return f"{num(low, digits)}{unit}"
    return f"{num(low, digits)}-{num(high, digits)}{unit}"


def listed(items):
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


# ---------------------------------------------------------------- runtime.md

RUNTIME = "docs/data/runtime_bench/"
RUNTIME_MODES = (
    ("one-worker", "one worker (`kiln bench runtime`)"),
    ("two-workers", "two worker processes, host-wide locks (`--sessions 2 --workers 2`)"),
    ("two-workers-no-locks", "two worker processes, no locks (`... "
     "--worker-flag=--runtime-cpu-locks=off`): two measurements on one CPU at once, "
     "as even one worker's sessions did before"),
    ("two-cpus", "two measuring CPUs (`--sessions 2 --worker-flag=--runtime-cpus=2`)"),
)


def runtime_data(root):
    path(root, RUNTIME)
    bench = summarizer(root, "runtime_bench")
    reports = [(mode, name, report) for mode, name, report in bench.reports(str(root / RUNTIME))
               if report is not None]
    return bench, bench.by_mode(str(root / RUNTIME)), reports


def load_averages(report):
    """The 1-minute load averages before and after a run, from its notes."""
    for note in report["notes"]:
        found = re.search(r"before: ([\d.]+) .*after: ([\d.]+) ", note)
        if note.startswith("host load average") and found:
            return [float(found.group(1)), float(found.group(2))]
    return []


def runtime_table(root):
    bench, modes, reports = runtime_data(root)
    runs = {mode: sum(1 for m, _, _ in reports if m == mode) for mode in modes}
    programs = {program for rows in modes.values() for program, _ in rows}
    shape = re.search(r"(\d+) runs a measurement, (\d+) rounds", reports[0][2]["title"])
    loads = [load for _, _, report in reports for load in load_averages(report)]
    counts = sorted(set(runs.values()))
    lines = [
        f"On the project's 2-core development VM, shared with other builds (1-minute load "
        f"averages between {min(loads):.1f} and {max(loads):.1f} during the runs, noted in each "
        f"output), {listed(word(c) for c in counts)} runs of each mode below, {len(programs)} "
        f"programs, {shape.group(1)} runs a measurement, {shape.group(2)} rounds; the outputs "
        "are in `docs/data/runtime_bench/` and the table comes from them "
        "(`/usr/bin/python3 docs/data/runtime_bench/summarize.py` prints them all). `ratio_pct` "
        "is min/median/max over the runs; \"within\" counts the runs judged within noise. "
        "Each worker measures on CPU 1 of 0-1 (the default plan), compile work kept on CPU 0 "
        "meanwhile.",
        "",
        "| mode | program | 2 at once: ratio_pct | within | 4 at once: ratio_pct | within "
        "| wait in line (median, 2 / 4) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for mode, label in RUNTIME_MODES:
        rows = modes.get(mode)
        if rows is None:
            raise MissingData(f"{RUNTIME}{mode}-1.json")
        for index, program in enumerate(dict.fromkeys(p for p, _ in rows)):
            cells, waits = [], []
            for level in ("2", "4"):
                seen = rows.get((program, level))
                if seen is None:
                    cells += ["", ""]
                    continue
                cells.append(" / ".join(num(v) for v in bench.span([r["ratio_pct"] for r in seen])))
                cells.append(f"{bench.within(seen)} of {len(seen)}")
                waits.append(num(statistics.median(r["queued_ms"] for r in seen)))
            lines.append((f"| {label if index == 0 else ''} | {program} | " + " | ".join(cells)
                          + f" | {' / '.join(waits)} ms |").replace("|  |", "| |").replace("|  |", "| |"))
    return "\n".join(lines), [RUNTIME]


def runtime_findings(root):
    bench, modes, reports = runtime_data(root)

    def rows_of(mode, levels=("2", "4")):
        return [r for (program, level), seen in modes[mode].items() if level in levels
                for r in seen]

    def medians(mode):
        return [statistics.median(r["ratio_pct"] for r in seen)
                for (_, level), seen in modes[mode].items() if level != "1 (alone)"]

    one = rows_of("one-worker")
    one_within = sum(r["judge"] == "within noise" for r in one)
    # The rows of one worker judged out of noise: which run, its load, the spreads.
    outside = []
    for mode, name, report in reports:
        if mode != "one-worker":
            continue
        alone = {r["program"]: r for r in report["rows"] if r["sessions"] == "1 (alone)"}
        for r in report["rows"]:
            if r["sessions"] != "1 (alone)" and r["judge"] != "within noise":
                outside.append((name, max(load_averages(report)), r, alone[r["program"]]))
    highest = max(reports, key=lambda item: max(load_averages(item[2])) if item[0] == "one-worker"
                  else 0)
    if outside:
        programs = listed(dict.fromkeys(r["program"] for _, _, r, _ in outside))
        ratios = listed(f"{r['ratio_pct']:.0f}%" for _, _, r, _ in outside)
        same_run = {name for name, *_ in outside} == {highest[1]}
        where = (f"from the run with the highest load ({max(load_averages(highest[2])):.1f})"
                 if same_run else "from the runs with load averages of "
                 + listed(sorted({f'{load:.1f}' for _, load, _, _ in outside})))
        iqr = span([r["iqr_pct"] for _, _, r, _ in outside], unit="%")
        alone_iqr = span([a["iqr_pct"] for _, _, _, a in outside], unit="%")
        not_within = (f" The {word(len(outside))} that are not ({programs} at {ratios}) are {where}, "
                      f"where the spread (IQR) of those rows was {iqr} of their median and "
                      f"alone's {alone_iqr}: the neighbours, not the other sessions.")
    else:
        not_within = ""
    locks = rows_of("two-workers")
    no_locks = rows_of("two-workers-no-locks")
    waits = {level: [statistics.median(r["queued_ms"] for r in seen)
                     for (_, l), seen in modes["one-worker"].items() if l == level]
             for level in ("2", "4")}
    alone_ms = [r["median_ms"] for r in rows_of("one-worker", ("1 (alone)",))]
    iqrs = [r["iqr_pct"] for seen in modes["one-worker"].values() for r in seen]
    crc32_alone = [r["median_ms"] for rows in modes.values()
                   for r in rows.get(("crc32", "1 (alone)"), [])]
    lines = [
        "- Measurements of one worker taking turns on its measuring CPU get what each "
        f"gets alone: the median ratio is {span(medians('one-worker'), unit='%')}, and "
        f"{one_within} of {len(one)} rows are within noise.{not_within}",
        "- Two worker processes sharing the host-wide locks do the same "
        f"({sum(r['judge'] == 'within noise' for r in locks)} of {len(locks)} within noise); "
        "without the locks, their measurements land on the same CPU at once and the medians "
        f"grow by {span([r['ratio_pct'] - 100 for r in no_locks], unit='%')} "
        f"({sum(r['judge'] == 'within noise' for r in no_locks)} of {len(no_locks)} within "
        "noise): the distortion the issue reported, now only when the operator turns the locks "
        "off for workers whose CPUs are not their own.",
        "- A CPU each is not enough on this VM: two measurements at once on CPUs 0 and 1 ran "
        f"{span([m - 100 for m in medians('two-cpus')], unit='%')} slower (median) than alone. "
        "The two vCPUs share what the VM's host gives them (caches, memory bandwidth, possibly "
        "one physical core), and no CPU is left for compile work. That is why the default plan "
        "measures on half the cores; `--runtime-cpus` is for hosts where this bench shows more "
        "is safe.",
        f"- The price of the line is the wait: {span([w / 1000 for w in waits['2']], 1)} s for "
        f"the second of two sessions, {span([w / 1000 for w in waits['4']], 1)} s on average "
        f"with four ({modes_runs(reports)} runs of {span(alone_ms, unit=' ms')} programs each, "
        "alone), counted in each `RuntimeStats` (`queued_s`). The neighbours' noise on this "
        f"machine stays large (in the one-worker runs the IQR was {span(iqrs, unit='%')} of "
        f"the median; alone, crc32's median ranged from {num(min(crc32_alone))} to "
        f"{num(max(crc32_alone))} ms over the {word(len(crc32_alone))} runs): compare states measured "
        "close together, with a target, and read a runtime reward as a trend.",
    ]
    return "\n".join(lines), [RUNTIME]


def modes_runs(reports):
    """The runs a measurement, from the outputs' title."""
    return int(re.search(r"(\d+) runs a measurement", reports[0][2]["title"]).group(1))


# ---------------------------------------------------------------- faults.md

CHAOS = "docs/data/chaos_differential/"
STEPPING = "docs/data/chaos_stepping/"


def chaos_differential(root):
    path(root, CHAOS)
    harness = summarizer(root, "chaos_differential")
    rows = list(harness.rows(str(root / CHAOS)))
    episodes = {row["episodes"] for _, row in rows}
    steps = set()
    for run, _ in rows:
        notes = load_json(root, f"{CHAOS}{run}.json")["notes"]
        steps |= {int(m) for note in notes for m in re.findall(r"(\d+) actions per episode", note)}
    lines = [
        f"Figures: {listed(num(e) for e in sorted(episodes))} episodes of "
        f"{listed(str(s) for s in sorted(steps))} steps under each fault, of llvm sessions and "
        "of mlgo-inline sessions (whose episodes run opt-19 processes on the channel), from the "
        "JSON outputs in docs/data/chaos_differential/ (commands, commits and machine in its "
        "commands.txt; this table is what its summarize.py prints):",
        "",
        *harness.table(str(root / CHAOS)),
    ]
    return "\n".join(lines), [CHAOS]


def chaos_differential_notes(root):
    path(root, CHAOS)
    rows = dict(summarizer(root, "chaos_differential").rows(str(root / CHAOS)))
    for run in ("llvm-partition-2s", "llvm-nest-child-3-6s", "llvm-nest-child-1-3s"):
        if run not in rows:
            raise MissingData(f"{CHAOS}{run}.json")
    partition, child, fast = (rows["llvm-partition-2s"], rows["llvm-nest-child-3-6s"],
                              rows["llvm-nest-child-1-3s"])
    mismatches = partition["outcome_mismatches"]
    lines = [
        "- `freeze` and `partition` at 2 s outages mostly delay steps (a frozen worker's "
        "connections drop only after the 3 s ZMTP heartbeat timeout); the "
        f"{'one partition mismatch is a step' if mismatches == 1 else f'{mismatches:.0f} partition mismatches are steps'} "
        "that ran out of the bench's 5 s request deadline (`--request-seconds 5`, the default of "
        "the bench, not of a user's client).",
        "- `nest-child` killed every 1-3 s: in the 3-6 s run each kill (the child started again, "
        f"its six sessions replayed) added about "
        f"{(child['faulted_seconds'] - child['quiet_seconds']) / child['faults_injected']:.1f} s "
        f"to the run (({child['faulted_seconds']:.0f} - {child['quiet_seconds']:.0f} s) / "
        f"{child['faults_injected']:.0f} kills), but kills that close together, with the bench's "
        f"5 s deadline, lose sessions ({fast['outcome_mismatches']:.0f} of "
        f"{fast['episodes']:.0f} episodes did not run their course: not restored in time, an "
        "error, never a wrong number).",
    ]
    return "\n".join(lines), [CHAOS]


def chaos_stepping(root):
    path(root, STEPPING)
    runs = [load_json(root, f"{STEPPING}run-{n}.json") for n in (1, 2, 3)]
    rows = [run["rows"][0] for run in runs]
    every = {m for run in runs for note in run["notes"]
             for m in re.findall(r"a kill every ([\d.]+-[\d.]+) s", note)}
    deadline = {m for run in runs for note in run["notes"]
                for m in re.findall(r"restored until their request's deadline \((\d+) s\)", note)}
    lines = [
        "`kiln bench chaos --session-type llvm --heartbeat-seconds 1 --same-endpoints "
        "--request-seconds 0` runs the cluster as a user's script would (default heartbeats, "
        "workers started again on their ports, the client's default request deadline of "
        f"{listed(sorted(deadline))} s) with llvm sessions stepping and a worker killed every "
        f"{listed(sorted(every))} s: {len(rows)} runs, {sum(r['steps_lost'] for r in rows):.0f} "
        f"steps lost, {sum(r['reward_mismatches'] for r in rows):.0f} rewards unlike what their "
        f"step did, {span([r['sessions_restored'] for r in rows])} sessions restored and "
        f"{span([r['workers_killed'] for r in rows])} workers killed each "
        "(docs/data/chaos_stepping/). With the bench's own 5 s deadline, a restore that meets "
        "kill after kill (an llvm replay of hundreds of steps outlasts the time between kills) "
        "can run out of time and lose the step (`steps_lost`), which is the deadline doing what "
        "it says.",
    ]
    return "\n".join(lines), [STEPPING]


# ---------------------------------------------------------------- security.md

IDENTITY = "docs/data/identity_steps/"
PASS = "docs/data/experiment_pass/"


def rtt_rows(root, folder, prefix):
    """Per run (rtt-run1..3.json), the row whose path starts with prefix."""
    found = []
    for n in (1, 2, 3):
        rows = load_json(root, f"{folder}rtt-run{n}.json")["rows"]
        found.append(next(r for r in rows if r["path"].startswith(prefix)))
    return found


def identity_steps(root):
    secret = rtt_rows(root, IDENTITY, "raw step, client by secret")
    passed = rtt_rows(root, IDENTITY, "raw step, client by pass")
    runs = {r["runs"] for r in secret + passed}
    lines = [
        "The cost on the step path, from `kiln bench rtt --iterations 3000 --idle-sessions 200 "
        f"--no-pinned` run {word(len(secret))} times on a 2-CPU VM shared with other work "
        "(docs/data/identity_steps/rtt-run{1,2,3}.json; rows `raw step, client by secret / by "
        f"pass`, {listed(f'{r:.0f}' for r in sorted(runs))} interleaved runs of 3,000 raw noop "
        "steps to the same worker each): the worker's check alone, when every request comes "
        "from another client than the one before, is "
        f"{span([r['check_ns_other_client'] for r in passed])} ns for a pass against "
        f"{span([r['check_ns_other_client'] for r in secret])} ns for hashing a secret "
        "(BLAKE2b); when the same client sends again, both are one 16-byte comparison. The raw "
        f"step's p50, best of {listed(f'{r:.0f}' for r in sorted(runs))} runs, was "
        + listed(f"{s['p50_us_min']:.1f}/{p['p50_us_min']:.1f}" for s, p in zip(secret, passed))
        + " us (secret/pass): equal within the machine's noise (medians "
        + listed(f"{p['x_judged_p50_median']:.3f}x" for p in passed)
        + "). The client adds one map lookup by endpoint per request.",
    ]
    return "\n".join(lines), [IDENTITY]


def experiment_pass(root):
    key = rtt_rows(root, PASS, "experiment request, by key")
    passed = rtt_rows(root, PASS, "experiment request, by pass")
    steps = rtt_rows(root, PASS, "raw step, client by pass")
    differ = max(abs(p["check_ns_other_client"] + p["client_stamp_ns"]
                     - k["check_ns_other_client"] - k["client_stamp_ns"])
                 for k, p in zip(key, passed)) / 1000
    lines = [
        "The work on the step path: a host compares 32 bytes where it hashed the presented key "
        "before (BLAKE2b, the cost of the secret's check above); the client adds, per request to "
        "a worker, one map lookup by endpoint and a comparison of its 16-byte key, and one keyed "
        "hash per host and key. `kiln bench rtt` reports both, the host's check and the client's "
        "stamp in ns per request, as the rows `experiment request, by key (hosts before #48)` "
        f"and `experiment request, by pass (#48)`. {word(len(key), True)} runs of `kiln bench rtt "
        "--iterations 3000 --idle-sessions 200 --no-pinned` on a 2-CPU VM shared with other work "
        "(docs/data/experiment_pass/rtt-run{1,2,3}.json, commands.txt): the host's check "
        + listed(f"{r['check_ns_other_client']:.1f}" for r in passed) + " ns by pass against "
        + listed(f"{r['check_ns_other_client']:.1f}" for r in key) + " ns by key; the client's "
        "stamp " + listed(f"{r['client_stamp_ns']:.1f}" for r in passed) + " ns by pass against "
        + listed(f"{r['client_stamp_ns']:.1f}" for r in key) + " ns by key (run 2 ran beside a "
        f"build: both paths alike slower). Per request the two differ by at most {differ:.2f} us "
        "either way, against a raw step's p50 of "
        f"{span([r['p50_us_median'] for r in steps], unit=' us')} (median of each run) in the "
        "same runs.",
    ]
    return "\n".join(lines), [PASS]


HOSTILE = "docs/data/hostile_module_costs.txt"


def hostile_runs(root):
    """[[{row name: p50 us}] per run] per set of runs (a `# ` header line starts a set)."""
    sets = []
    for line in path(root, HOSTILE).read_text().splitlines():
        if line.startswith("# ") and (not sets or sets[-1]):
            sets.append([])
        elif line.startswith("## run"):
            sets[-1].append({})
        found = re.match(r"^(.+?)\s+p50\s+([\d.]+) us", line)
        if found and sets and sets[-1]:
            sets[-1][-1][found.group(1).strip()] = float(found.group(2))
    return [s for s in sets if s]


def hostile_module_costs(root):
    first, second = hostile_runs(root)[:2]

    def cost(runs, row, unit="µs", scale=1.0, digits=1):
        values = [run[row] / scale for run in runs]
        return (f"{num(min(values), digits)} {unit} min, "
                f"{num(statistics.median(values), digits)} {unit} median")

    lines = [
        "What it costs (llvm_engine_microbench, the microbench of `kiln bench llvm`, on "
        f"kiln-bench-v0/huffman; {word(len(first))} runs on the shared 2-core machine while other "
        "builds ran, output in docs/data/hostile_module_costs.txt; min and median of the runs' "
        "p50):",
        "",
        "| what | cost | beside |",
        "|---|---|---|",
        "| `checkClientModule`, once per module a worker loads (then cached) | "
        f"{cost(second, 'client module check')} with the nesting and value checks (rows of "
        "\"A client's module\" from statements of assembly on; the second set of runs in the "
        f"data file, while the test suite ran); {cost(first, 'client module check')} before "
        f"them | parse+verify in the same runs: {cost(second, 'parse+verify', digits=0)} "
        f"({cost(first, 'parse+verify', digits=0)} in the first set) |",
        "| a confined thread for one in-process codegen | "
        f"{cost(first, 'confined thread (no work)')} | objectTextSize: "
        f"{cost(first, 'objectTextSize', 'ms', 1000)} |",
        "| a compiler's ruleset, once per opt/llc started | "
        f"{cost(first, 'compiler ruleset')} | llc-19 on the module, 5 runs each: "
        f"{cost(first, 'llc-19 child', 'ms', 1000)} unconfined; "
        f"{cost(first, 'llc-19 child (confined)', 'ms', 1000)} confined (the difference is the "
        "machine's noise, not the confinement) |",
    ]
    return "\n".join(lines), [HOSTILE]


# ---------------------------------------------------------------- mlgo.md, validation.md

MLGO = "docs/data/mlgo_baseline.json"


def mlgo_baseline(root):
    report = load_json(root, MLGO)

    def pct(value):
        return f"{value:+.2f}%"

    lines = [
        "| set | type | modules | before: equal | before: mean reward | before: max \\|diff\\| "
        "| after: equal | after: rewards &ne; 0 | after: max \\|diff\\| | LLVM default: bytes "
        "identical | LLVM default: size equal | LLVM default: mean diff | LLVM default: max "
        "\\|diff\\| |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    compile_rows = []
    for r in report["rows"]:
        if r["type"] == "mlgo-compile":
            compile_rows.append(f"| {r['set']} | {r['modules']:.0f} | "
                                f"{r['inline_default_equal']:.0f} | {r['llvm_pipeline_equal']:.0f} |")
            continue
        lines.append(
            f"| {r['set']} | {r['type']} | {r['modules']:.0f} | {r['before_equal']:.0f} | "
            f"{pct(r['before_mean_reward_pct'])} | {r['before_max_abs_bytes']:.0f} B | "
            f"{r['after_equal']:.0f} | {r['after_nonzero_rewards']:.0f} | "
            f"{r['after_max_abs_bytes']:.0f} B | {r['llvm_bytes_identical']:.0f} | "
            f"{r['llvm_size_equal']:.0f} | {pct(r['llvm_mean_diff_pct'])} | "
            f"{r['llvm_max_abs_bytes']:.0f} B |")
    lines += ["", "| set | mlgo-compile modules | `inline-default` job = `DefaultNativeSize` | "
              "`compile -passes=scc-oz-module-inliner` job = `LlvmDefaultNativeSize` |",
              "|---|---:|---:|---:|", *compile_rows, ""]
    match = all(r["builds_here_match_worker"] == r["modules"] for r in report["rows"]
                if r["type"] != "mlgo-compile")
    lines.append("In every row the two builds made in the bench's process have the sizes the "
                 "worker observed (`builds_here_match_worker` = modules: "
                 f"{'yes' if match else 'no'}). The run names the modules whose reference build "
                 "is not LLVM's default build's bytes:")
    lines.append("")
    for note in report["notes"]:
        if "the reference build is not LLVM's default build's bytes on" in note:
            lines.append("- " + re.sub(r"(benchmark|generator)://", "", note))
    return "\n".join(lines), [MLGO]


VALIDATION = "docs/data/action_validation.json"
PUT_BACK = "docs/data/action_validation_put_back.json"


def campaign(root, rel):
    return next(r for r in load_json(root, rel)["rows"] if r.get("figure") == "campaign")


def action_validation(root):
    default, put_back = campaign(root, VALIDATION), campaign(root, PUT_BACK)
    lines = [
        "The llvm env's actions keep programs' behaviour: `kiln bench actions --validate` runs "
        "sequences of every action on every runnable program, validates each final state (and "
        "its ASan build), and a pass that miscompiles is no action. The committed campaigns "
        "(`docs/data/`) are summarized in the [actions reference](actions.md): "
        f"{default['miscompiles']:.0f} miscompiles over {num(default['sequences'])} sequences of "
        f"the default action space, and {put_back['miscompiles']:.0f} of "
        f"{num(put_back['sequences'])} sequences miscompiled when the denied `structurizecfg` (a "
        "GPU pass CompilerGym's action space had) is put back.",
    ]
    return "\n".join(lines), [VALIDATION, PUT_BACK]


GENERATORS = {f.__name__: f for f in (
    runtime_table, runtime_findings, chaos_differential, chaos_differential_notes,
    chaos_stepping, identity_steps, experiment_pass, hostile_module_costs, mlgo_baseline,
    action_validation)}


# ---------------------------------------------------------------- opt_equivalence.md

EQUIVALENCE = "docs/data/opt_equivalence.txt"
SUMMARY = re.compile(r"^(\S+): (\d+) actions x 3 applications equal opt-19's text: (\d+); "
                     r".*instcombine stopped by opt's fixpoint check: (\d+)"
                     r"(?:; LLVM failed in both, at the same application: (.*))?$")
SUITE = re.compile(r"^Modules/\S+/(kiln_bench_v0|csmith_v0)_(\w+) Passed")
UNEQUAL = re.compile(r"^([\w-]+): kiln compile error: pass '[^']+' on '([^']+)': LLVM failed: "
                     r"crashed with signal (\d+).*opt compile error: opt-19 killed by signal (\d+)")


def grouped(modules):
    """{set: [names]} in the order met; csmith seeds as ranges."""
    sets = {}
    for module in modules:
        dataset, name = module.split("/", 1)
        sets.setdefault(dataset, []).append(name.removesuffix(".bc"))
    return sets


def seeds(numbers):
    numbers = sorted(int(n) for n in numbers)
    runs, start = [], numbers[0]
    for previous, current in zip(numbers, numbers[1:] + [None]):
        if current != previous + 1:
            runs.append(f"{start} to {previous}" if previous != start else f"{start}")
            start = current
    return "seeds " + listed(runs)


def opt_equivalence(root):
    suite, lines = [], []
    unequal = {}
    for line in path(root, EQUIVALENCE).read_text().splitlines():
        if found := SUITE.match(line):
            suite.append(found.group(1).replace("_", "-") + "/" + found.group(2))
        elif found := SUMMARY.match(line):
            lines.append(found.groups())
        elif found := UNEQUAL.match(line):
            unequal.setdefault(found.group(2), set()).add(
                (found.group(1), found.group(3) == found.group(4) == "11"))
    modules = list(dict.fromkeys(m for m, *_ in lines))
    crashing = [m for m in modules
                if any(int(equal) < int(actions) or (both and both != "none")
                       for name, actions, equal, _, both in lines if name == m)]
    equal = suite + [m for m in modules if m not in crashing and m not in suite]
    fixpoint = [m for m in modules if any(int(f) > 0 for name, _, _, f, _ in lines if name == m)]
    counts = sorted({int(actions) for _, actions, *_ in lines}, reverse=True)
    labels = {"kiln-bench-v0": "kiln-bench-v0", "csmith-v0": "csmith-v0",
              "zlib": "debian-mini's zlib"}
    out = [
        "[data/opt_equivalence.txt](data/opt_equivalence.txt) holds the output of the runs: "
        f"ctest's verdict for the {word(len(suite))} suite modules, and the summary line the "
        f"test printed for each of {len(modules)} more modules. Some lines count "
        f"{listed(str(c) for c in counts)} actions, because some runs started before "
        "`structurizecfg` left the table.",
        "",
        f"- Every action equals opt-19's text after applications 1, 2 and 3 on {len(equal)} "
        "modules:",
    ]
    for dataset, names in grouped(equal).items():
        names_text = seeds(names) if dataset == "csmith-v0" else listed(names)
        out.append(f"  - {labels.get(dataset, dataset)}: {names_text}")
    fix = grouped(fixpoint)
    out.append(f"- opt stopped `instcombine` on its fixpoint check on {len(fixpoint)} of the "
               "modules with a summary line: " + "; ".join(
                   f"{labels.get(d, d)} {listed(n)}" for d, n in fix.items())
               + ". On those modules kiln's `instcombine` equals "
               "`instcombine<no-verify-fixpoint>`, and so does opt's text.")
    if crashing:
        passes = sorted({p for m in crashing for p, _ in unequal.get(m, ())})
        segv = all(both for m in crashing for _, both in unequal.get(m, ()))
        where = grouped(crashing)
        out.append(
            "- On " + "; ".join(f"{d} {seeds(n) if d == 'llvm-stress-v0' else listed(n)}"
                                for d, n in where.items())
            + ", " + listed(f"`{p}`" for p in passes)
            + f" crash LLVM 19{' with a SIGSEGV' if segv else ''}, in kiln and in opt-19 alike. "
            "kiln ends the episode with a compile error naming the pass. Every other action "
            f"equals opt-19's text on those {word(len(crashing))} modules.")
    return "\n".join(out), [EQUIVALENCE]


GENERATORS[opt_equivalence.__name__] = opt_equivalence


# ---------------------------------------------------------------- evaluation.md

LEADERBOARD = "docs/data/leaderboard/"
SET_NAMES = {"kiln-bench-v0": "kiln-bench-v0 (all)",
             "held-out": "held-out (never trained on)"}


def leaderboard(root):
    path(root, LEADERBOARD)
    rows = summarizer(root, "leaderboard").rows(str(root / LEADERBOARD))
    if not rows:
        raise MissingData(f"{LEADERBOARD}*.json (no run: scripts/leaderboard writes them)")
    lines = [
        "| programs | agent | -Oz / agent, geomean (mean ± spread over seeds) | seeds | "
        "steps per program | states valid / invalid / failed |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        seeds = ", ".join(str(s) for s in row["seeds"]) or "-"
        spread = f" ± {row['spread']:.3f}" if len(row["seeds"]) > 1 else ""
        budget = num(row["budget"]) if row["budget"] else "-"
        states = (f"{row['valid']} / {row['invalid']} / {row['failed']}" if row["seeds"]
                  else "-")
        lines.append(f"| {SET_NAMES[row['set']]} ({row['programs']}) | {row['agent']} | "
                     f"{row['mean']:.3f}x{spread} | {seeds} | {budget} | {states} |")
    return "\n".join(lines), [LEADERBOARD]


GENERATORS[leaderboard.__name__] = leaderboard


# ---------------------------------------------------------------- nesting.md

NESTING_SWEEP = "docs/data/nesting_sweep.json"
LAYOUT_COLORS = {"dedicated": "#888888", "shared": "#1f77b4", "nested": "#d62728"}


def nesting_layout_rows(report):
    """{(K, L): {layout: row}} of `kiln bench nesting --json`'s layout rows."""
    cells = {}
    for row in report["rows"]:
        if "experiment" in row:
            continue
        key = (int(row["experiments"]), row["lull_target_pct"] / 100)
        cells.setdefault(key, {})[row["layout"]] = row
    return cells


def sweep_lines(k, cells):
    """{line: [(lull, aggregate collection steps/s)]} for K experiments: a
    line per layout, and the ideal (the dedicated layout's times ideal_x)."""
    lines = {}
    for (count, lull), layouts in sorted(cells.items()):
        if count != k:
            continue
        for name, row in layouts.items():
            lines.setdefault(name, []).append((lull, row["aggregate_collect_steps_s"]))
        if "dedicated" in layouts and "nested" in layouts:
            lines.setdefault("ideal", []).append(
                (lull, layouts["dedicated"]["aggregate_collect_steps_s"]
                 * layouts["nested"]["ideal_x"]))
    return lines


def sweep_chart(k, cells):
    """The lines of sweep_lines as an inline SVG chart."""
    lines = sweep_lines(k, cells)
    lulls = sorted({lull for series in lines.values() for lull, _ in series})
    top_rate = max(rate for series in lines.values() for _, rate in series)
    width, height, left, bottom, top, right = 560, 240, 60, 40, 12, 110

    def x(lull):
        return left + (width - left - right) * lull

    def y(rate):
        return top + (height - top - bottom) * (1 - rate / max(top_rate, 1e-9))

    svg = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
           "font-family='sans-serif' font-size='11'>",
           f"<line x1='{left}' y1='{height - bottom}' x2='{width - right}' "
           f"y2='{height - bottom}' stroke='#888'/>",
           f"<line x1='{left}' y1='{top}' x2='{left}' y2='{height - bottom}' stroke='#888'/>",
           f"<text x='4' y='{top + 10}'>{top_rate:.0f}/s</text>",
           f"<text x='4' y='{height - bottom}'>0</text>",
           f"<text x='{left}' y='{height - 6}'>lull, K = {k} experiments</text>"]
    for lull in lulls:
        svg.append(f"<text x='{x(lull) - 10:.0f}' y='{height - bottom + 14}'>{lull:.2f}</text>")
    for i, (name, series) in enumerate(sorted(lines.items())):
        color = LAYOUT_COLORS.get(name, "#2ca02c")
        dash = " stroke-dasharray='5,3'" if name == "ideal" else ""
        coords = " ".join(f"{x(lull):.1f},{y(rate):.1f}" for lull, rate in sorted(series))
        svg.append(f"<polyline fill='none' stroke='{color}' stroke-width='2'{dash} "
                   f"points='{coords}'/>")
        svg.append(f"<text x='{width - right + 8}' y='{top + 14 * (i + 1)}' fill='{color}'>"
                   f"{name}</text>")
    svg.append("</svg>")
    return "\n".join(svg)


def nesting_sweep(root):
    report = load_json(root, NESTING_SWEEP)
    cells = nesting_layout_rows(report)
    if not cells:
        raise MissingData(f"{NESTING_SWEEP} (no layout rows)")
    lines = ["| K | lull | layout | collection steps/s | x dedicated (ideal) | "
             "wall x dedicated (ideal) | Jain | host budget |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (k, lull), layouts in sorted(cells.items()):
        for name in ("dedicated", "shared", "nested"):
            row = layouts.get(name)
            if row is None:
                continue
            judged = name != "dedicated"
            lines.append(
                f"| {k} | {lull:.2f} (measured {row['lull_pct'] / 100:.2f}) | {name} | "
                f"{num(row['aggregate_collect_steps_s'], 1)} | "
                + (f"{row['x_aggregate']:.2f}x ({row['ideal_x']:.2f}x)" if judged else "1x")
                + " | "
                + (f"{row['x_wall']:.2f}x ({row['ideal_x_wall']:.2f}x)" if judged else "1x")
                + f" | {row['fairness_jain_pct']:.0f}% | {row['host_budget']} |")
    charts = [sweep_chart(k, cells) for k in sorted({k for k, _ in cells})]
    text = ("\n".join(lines) + "\n\nAggregate collection steps/s against the lull, a line per "
            "layout, the ideal dashed (the dedicated layout's times ideal_x):\n\n"
            + "\n".join(charts))
    return text, [NESTING_SWEEP]


GENERATORS[nesting_sweep.__name__] = nesting_sweep
