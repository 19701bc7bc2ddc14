"""The program graph from Python: the Programl observation decoded into numpy
arrays, node-link JSON and networkx, every conversion round-tripping, and
malformed bytes refused with the reason."""

import json

import networkx
import numpy as np
import pytest

import kiln
from kiln.program_graph import EDGE_FLOWS, NODE_KINDS


@pytest.fixture(scope="module")
def graph_and_counts(cluster):
    with kiln.make("llvm-v0", cluster=cluster) as env:
        env.reset(benchmark="benchmark://kiln-bench-v0/crc32")
        data = env.observation["Programl"]
        counts = env.observation["InstCountDict"]
        env.step(env.action_space.names.index("mem2reg"))
        after = env.observation["Programl"]
    return data, counts, after


def test_the_observation_decodes_into_arrays_a_gnn_reads(graph_and_counts):
    data, counts, after = graph_and_counts
    assert isinstance(data, bytes) and data.startswith(b"KPG2")
    graph = kiln.ProgramGraph.from_bytes(data)
    # One instruction node per instruction, plus the root.
    instructions = int((graph.node_kind == NODE_KINDS.index("instruction")).sum())
    assert instructions == counts["TotalInstsCount"] + 1
    assert graph.texts[graph.node_text[0]] == "[external]"
    features = graph.node_features()
    assert features.shape == (graph.num_nodes, 2) and features.dtype == np.int64
    total = 0
    for flow in EDGE_FLOWS:
        index = graph.edge_index(flow)
        assert index.shape[0] == 2 and index.dtype == np.int64
        assert (index < graph.num_nodes).all()
        assert graph.edge_positions(flow).shape == (index.shape[1],)
        total += index.shape[1]
        assert index.shape[1] > 0, flow
    assert total == graph.num_edges
    # Control edges join instructions only; data edges touch a variable or constant.
    control = graph.edge_index("control")
    assert (graph.node_kind[control] == 0).all()
    data_edges = graph.edge_index("data")
    assert ((graph.node_kind[data_edges[0]] != 0) | (graph.node_kind[data_edges[1]] != 0)).all()
    # Every node but the root, globals and constants belongs to a function.
    kinds = graph.node_kind[1:]
    functions = graph.node_function[1:]
    assert (functions[kinds == 0] != kiln.program_graph.NO_INDEX).all()
    # A vocabulary of the learner's own: unknown texts get its size.
    vocabulary = {"add": 0, "load": 1}
    mapped = graph.node_features(vocabulary)[:, 1]
    assert set(np.unique(mapped)) <= {0, 1, 2}
    # mem2reg removes the loads and stores of locals: a smaller graph.
    assert kiln.ProgramGraph.from_bytes(after).num_nodes < graph.num_nodes


def test_every_form_round_trips(graph_and_counts):
    data = graph_and_counts[0]
    graph = kiln.ProgramGraph.from_bytes(data)
    assert graph.to_bytes() == data
    node_link = graph.to_node_link()
    text = json.dumps(node_link)
    nx_graph = networkx.node_link_graph(json.loads(text))
    assert isinstance(nx_graph, networkx.MultiDiGraph)
    assert nx_graph.number_of_nodes() == graph.num_nodes
    assert nx_graph.number_of_edges() == graph.num_edges
    assert kiln.ProgramGraph.from_node_link(json.loads(text)) == graph
    direct = graph.to_networkx()
    assert direct.nodes[0]["text"] == "[external]"
    assert kiln.ProgramGraph.from_networkx(direct) == graph
    assert kiln.ProgramGraph.from_networkx(nx_graph) == graph


def test_malformed_bytes_are_refused_with_the_reason(graph_and_counts):
    data = graph_and_counts[0]
    with pytest.raises(kiln.ProgramGraphError, match="KPG2"):
        kiln.ProgramGraph.from_bytes(b"PNG" + data)
    for cut in (10, 25, len(data) // 3, len(data) - 1):
        with pytest.raises(kiln.ProgramGraphError, match="truncated"):
            kiln.ProgramGraph.from_bytes(data[:cut])
    with pytest.raises(kiln.ProgramGraphError, match="after its last edge"):
        kiln.ProgramGraph.from_bytes(data + b"\0")
    huge = bytearray(data)
    huge[4:8] = (0xFFFFFFFF).to_bytes(4, "little")
    with pytest.raises(kiln.ProgramGraphError, match="over the bounds"):
        kiln.ProgramGraph.from_bytes(bytes(huge))
    # An edge to a node that does not exist.
    graph = kiln.ProgramGraph.from_bytes(data)
    link = graph.to_node_link()
    link["links"][0]["target"] = graph.num_nodes + 5
    with pytest.raises(kiln.ProgramGraphError, match="does not exist"):
        kiln.ProgramGraph.from_node_link(link)
    with pytest.raises(kiln.ProgramGraphError, match="node-link"):
        kiln.ProgramGraph.from_node_link({"nodes": [{"id": 0}]})
    with pytest.raises(ValueError, match="unknown edge flow"):
        graph.edge_index("dataflow")


def test_the_graph_bench_prints_every_row_it_documents(capsys):
    from kiln import bench_graph

    bench_graph.main(["--quick", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert [r["benchmark"] for r in report["programs"]] == [
        "benchmark://kiln-bench-v0/crc32", "generator://csmith-v0/1"]
    for row in report["programs"]:
        assert row["nodes"] > 0 and row["edges"] > row["nodes"]
        assert row["graph_bytes"] > row["bitcode_bytes"] > 0
        assert row["node_link_json_bytes"] > row["graph_bytes"]
        for key in ("programl_new_state_s", "programl_cached_s", "floor_ir_instruction_count_s",
                    "autophase_s", "ir_text_s"):
            assert row[key]["median"] > 0, key
        assert row["judged_against"]
    bench_graph.main(["--quick"])
    assert "ns per node" in capsys.readouterr().out


def test_nodes_carry_programl_s_full_text_and_blocks(graph_and_counts):
    graph = kiln.ProgramGraph.from_bytes(graph_and_counts[0])
    full = graph.node_full_texts()
    texts = graph.node_texts()
    assert full[0] == ""  # the root
    kinds = graph.node_kind
    for i in range(1, graph.num_nodes):
        if kinds[i] == NODE_KINDS.index("instruction"):
            # The instruction as LLVM prints it, its opcode in it.
            assert texts[i] in full[i].split(" = ")[-1].split()[0:2], (texts[i], full[i])
        elif kinds[i] == NODE_KINDS.index("constant"):
            assert full[i].startswith(texts[i] + " ") or texts[i] == "struct", full[i]
        else:
            assert full[i].startswith(texts[i] + " ") and full[i].split()[-1][0] in "%@", full[i]
    # A constant says its value, not only its type (crc32 uses 0xEDB88320).
    constants = {full[i] for i in range(graph.num_nodes) if kinds[i] == 2}
    assert any(c.startswith("i32 ") and c[4:].lstrip("-").isdigit() for c in constants)
    # Node-link and networkx give them as ProGraML's features.
    node_link = graph.to_node_link()
    assert node_link["nodes"][1]["features"] == {"full_text": [full[1]]}
    assert "features" not in node_link["nodes"][0]
    assert [f["name"] for f in node_link["graph"]["function"]] == graph.function_names
    nx_graph = graph.to_networkx()
    assert nx_graph.nodes[1]["features"]["full_text"] == [full[1]]
    assert kiln.ProgramGraph.from_networkx(nx_graph) == graph
    # Every variable made by an instruction sits in a block of its function.
    variables = (kinds == 1) & (graph.node_function != kiln.program_graph.NO_INDEX)
    assert (graph.node_block[variables] != kiln.program_graph.NO_INDEX).sum() > 0


def test_the_former_wire_form_still_decodes(graph_and_counts):
    data = graph_and_counts[0]
    graph = kiln.ProgramGraph.from_bytes(data)
    bare = kiln.ProgramGraph(graph.texts, graph.function_names, graph.node_kind, graph.node_text,
                             graph.node_function, graph.node_block, graph.edge_flow,
                             graph.edge_source, graph.edge_target, graph.edge_position)
    wire = bare.to_bytes()  # a KPG2 without full texts: KPG1 is it less one count
    former = b"KPG1" + wire[4:20] + wire[24:]
    decoded = kiln.ProgramGraph.from_bytes(former)
    assert decoded == bare and decoded.node_full_texts() == [""] * graph.num_nodes


def test_pytorch_geometric_layout(graph_and_counts):
    torch = pytest.importorskip("torch")
    graph = kiln.ProgramGraph.from_bytes(graph_and_counts[0])
    data = graph.to_pyg({"add": 0, "load": 1})
    get = data.__getitem__ if isinstance(data, dict) else data.__getattribute__
    assert get("x").dtype == torch.int64 and tuple(get("x").shape) == (graph.num_nodes, 2)
    assert tuple(get("edge_index").shape) == (2, graph.num_edges)
    assert tuple(get("edge_attr").shape) == (graph.num_edges, 2)
    assert int(get("num_nodes")) == graph.num_nodes
    assert (get("edge_attr")[:, 0] == get("edge_flow")).all()
    assert int(get("node_block")[0]) == -1 and int(get("node_function")[0]) == -1
    assert set(get("x")[:, 1].tolist()) <= {0, 1, 2}
