"""What the program graph costs: `python3 -m kiln.bench_graph [--json] [--quick]`.

On an embedded cluster (one worker), for each kiln-bench-v0 program and
--csmith csmith programs, over --repeats fresh sessions:
- the client's wall time for a Programl observation of a new state (the
  worker walks the module and encodes the graph) and of the same state again
  (served from the state's cache), min / median;
- judged against, in the same sessions: IrInstructionCount (the round trip
  of a tiny observation: the floor), Autophase (another single walk over
  the module, with a 56-number answer) and Ir (the module printed as text,
  what a learner that parses IR itself would ask for);
- the graph's size: nodes, edges, bytes on the wire, against the module's
  bitcode and IR text.
"""

import json

import kiln

from . import _bench
from ._bench import summary, timed




def measure(env, benchmark, repeats):
    cold, cached, floor, autophase, ir = [], [], [], [], []
    data = text = bitcode = None
    for _ in range(repeats):
        env.reset(benchmark=benchmark)
        floor.append(timed(lambda: env.observation["IrInstructionCount"])[0])
        took, data = timed(lambda: env.observation["Programl"])
        cold.append(took)
        cached.append(timed(lambda: env.observation["Programl"])[0])
        autophase.append(timed(lambda: env.observation["Autophase"])[0])
        took, text = timed(lambda: env.observation["Ir"])
        ir.append(took)
    bitcode = env.observation["Bitcode"]
    graph = kiln.ProgramGraph.from_bytes(data)
    return {
        "benchmark": benchmark,
        "nodes": graph.num_nodes,
        "edges": graph.num_edges,
        "graph_bytes": len(data),
        "bitcode_bytes": len(bitcode),
        "ir_bytes": len(text.encode()),
        "node_link_json_bytes": len(json.dumps(graph.to_node_link())),
        "programl_new_state_s": summary(cold),
        "programl_cached_s": summary(cached),
        "floor_ir_instruction_count_s": summary(floor),
        "autophase_s": summary(autophase),
        "ir_text_s": summary(ir),
        "judged_against": "IrInstructionCount (the floor: a round trip), Autophase (one walk), "
                          "Ir (the module as text); bytes against bitcode, IR text and "
                          "node-link JSON",
    }


def run(benchmarks=None, csmith=5, repeats=5):
    with kiln.LocalCluster(workers=1, slots=2) as local:
        if benchmarks is None:
            benchmarks = kiln.datasets(local.endpoint).benchmarks("benchmark://kiln-bench-v0")
            benchmarks += [f"generator://csmith-v0/{seed}" for seed in range(1, csmith + 1)]
        with kiln.make("llvm-v0", cluster=local.endpoint) as env:
            rows = [measure(env, b, repeats) for b in benchmarks]
    return {"programs": rows}


def _table(report):
    ms = lambda row, key: f"{row[key]['min'] * 1e3:.2f}/{row[key]['median'] * 1e3:.2f}"
    lines = ["kiln bench graph (python3 -m kiln.bench_graph): milliseconds min/median, sizes",
             f"  {'benchmark':<34} {'nodes':>6} {'edges':>6} {'graph B':>8} {'bc B':>7}"
             f" {'ir B':>7} {'json B':>8} {'Programl':>12} {'cached':>11} {'floor':>11} {'Autophase':>11}"
             f" {'Ir':>11}"]
    for row in report["programs"]:
        lines.append(
            f"  {row['benchmark'].split('://')[1]:<34} {row['nodes']:>6} {row['edges']:>6}"
            f" {row['graph_bytes']:>8} {row['bitcode_bytes']:>7} {row['ir_bytes']:>7}"
            f" {row['node_link_json_bytes']:>8}"
            f" {ms(row, 'programl_new_state_s'):>12} {ms(row, 'programl_cached_s'):>11}"
            f" {ms(row, 'floor_ir_instruction_count_s'):>11} {ms(row, 'autophase_s'):>11}"
            f" {ms(row, 'ir_text_s'):>11}")
    rows = report["programs"]
    if rows:
        per_node = [r["programl_new_state_s"]["median"] / r["nodes"] * 1e9 for r in rows]
        ratio = [r["graph_bytes"] / r["bitcode_bytes"] for r in rows]
        lines.append(f"  Programl of a new state: {min(per_node):.0f}-{max(per_node):.0f} ns per node"
                     f" (round trip included); wire size {min(ratio):.1f}-{max(ratio):.1f}x"
                     " the bitcode")
        lines.append(f"    judged against: {rows[0]['judged_against']}")
    return "\n".join(lines)


def main(argv=None):
    parser = _bench.parser("bench_graph", __doc__)
    parser.add_argument("--repeats", type=int, default=5, help="fresh sessions per program")
    parser.add_argument("--csmith", type=int, default=5, help="csmith programs (seeds 1..N)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: two programs, 2 repeats")
    args = parser.parse_args(argv)
    if args.quick:
        report = run(benchmarks=["benchmark://kiln-bench-v0/crc32", "generator://csmith-v0/1"],
                     repeats=2)
    else:
        report = run(csmith=args.csmith, repeats=args.repeats)
    print(json.dumps(report, indent=1) if args.json else _table(report))


if __name__ == "__main__":
    main()
