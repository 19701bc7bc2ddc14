"""The program graph of an llvm session's module (the "Programl" observation),
in the forms a learner uses: numpy arrays for a graph network, node-link JSON
for networkx, and the compact wire form the worker sends.

    graph = kiln.ProgramGraph.from_bytes(env.observation["Programl"])
    x = graph.node_features()            # [nodes, 2]: kind, text id
    edges = graph.edge_index("data")     # [2, data edges]
    graph.node_full_texts()              # ProGraML's full_text of each node
    nx_graph = graph.to_networkx()       # networkx.MultiDiGraph, ProGraML's attributes
    data = graph.to_pyg()                # PyTorch Geometric's layout (Data if installed)
    same = kiln.ProgramGraph.from_node_link(graph.to_node_link())

The schema (node kinds, edge flows, positions, how it differs from ProGraML)
is docs/program-graph.md.
"""

import struct
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

NODE_KINDS = ("instruction", "variable", "constant")
EDGE_FLOWS = ("control", "data", "call")
NO_INDEX = 0xFFFFFFFF
_MAGIC = b"KPG2"
_MAGIC_WITHOUT_FULL_TEXTS = b"KPG1"  # the form before full texts: still read
_MAX_NODES = 1 << 24
_MAX_EDGES = 1 << 26


class ProgramGraphError(ValueError):
    """The bytes or the node-link data are not a program graph; says why."""


def _pad4(offset: Any) -> Any:
    return (offset + 3) // 4 * 4


def _flow_index(flow: Any) -> Any:
    if flow is None:
        return None
    if isinstance(flow, str):
        if flow not in EDGE_FLOWS:
            raise ValueError(f"unknown edge flow {flow!r}; flows are {', '.join(EDGE_FLOWS)}")
        return EDGE_FLOWS.index(flow)
    return int(flow)


def _function_names(graph: Dict[str, Any]) -> List[Optional[str]]:
    """kiln's "functions" names, or ProGraML's "function" list's."""
    if "functions" in graph:
        return list(graph["functions"])
    return [f["name"] for f in graph.get("function", [])]


class ProgramGraph:
    """A program graph as flat arrays, one entry per node or edge."""

    def __init__(self, texts: Sequence[str], function_names: Sequence[Optional[str]],
                 node_kind: Any, node_text: Any, node_function: Any, node_block: Any,
                 edge_flow: Any, edge_source: Any, edge_target: Any, edge_position: Any,
                 full_texts: Sequence[str] = (), node_full_text: Any = None) -> None:
        self.texts = list(texts)
        # ProGraML's full_text: node i's is full_texts[node_full_text[i]];
        # none at all for a graph from a worker before them ("KPG1").
        self.full_texts = list(full_texts)
        self.node_full_text = (None if node_full_text is None
                               else np.asarray(node_full_text, dtype=np.uint32))
        self.function_names = list(function_names)
        self.node_kind = np.asarray(node_kind, dtype=np.uint8)
        self.node_text = np.asarray(node_text, dtype=np.uint32)
        self.node_function = np.asarray(node_function, dtype=np.uint32)
        self.node_block = np.asarray(node_block, dtype=np.uint32)
        self.edge_flow = np.asarray(edge_flow, dtype=np.uint8)
        self.edge_source = np.asarray(edge_source, dtype=np.uint32)
        self.edge_target = np.asarray(edge_target, dtype=np.uint32)
        self.edge_position = np.asarray(edge_position, dtype=np.uint32)
        self._check()

    # -- what a learner reads ------------------------------------------------

    @property
    def num_nodes(self) -> Any:
        """How many nodes."""
        return int(self.node_kind.size)

    @property
    def num_edges(self) -> Any:
        """How many edges."""
        return int(self.edge_flow.size)

    def edge_index(self, flow: Any = None) -> Any:
        """Edges of one flow ("control", "data", "call", or all for None) as
        an int64 array [2, edges]: row 0 sources, row 1 targets."""
        mask = self._flow_mask(flow)
        return np.stack([self.edge_source[mask], self.edge_target[mask]]).astype(np.int64)

    def edge_positions(self, flow: Any = None) -> Any:
        """The position of each edge edge_index(flow) lists, int64."""
        return self.edge_position[self._flow_mask(flow)].astype(np.int64)

    def node_features(self, vocabulary: Any = None) -> Any:
        """int64 [nodes, 2]: each node's kind and its text's id. With a
        vocabulary (text -> id) the ids are the vocabulary's, a text it lacks
        gets len(vocabulary); without one, indices into self.texts."""
        if vocabulary is None:
            ids = self.node_text.astype(np.int64)
        else:
            lookup = np.array([vocabulary.get(t, len(vocabulary)) for t in self.texts],
                              dtype=np.int64)
            ids = lookup[self.node_text] if self.texts else np.zeros(0, dtype=np.int64)
        return np.stack([self.node_kind.astype(np.int64), ids], axis=1)

    def node_texts(self) -> List[str]:
        """Each node's text: an opcode, or a type (ProGraML's `text`)."""
        return [self.texts[i] for i in self.node_text]

    def node_full_texts(self) -> List[str]:
        """Each node's ProGraML `full_text`: the instruction as LLVM prints
        it, a variable's "type name", a constant's "type value" ("" for the
        root, and for every node of a graph without full texts)."""
        if self.node_full_text is None:
            return [""] * self.num_nodes
        return [self.full_texts[i] for i in self.node_full_text]

    def to_pyg(self, vocabulary: Optional[Dict[str, int]] = None) -> Any:
        """The graph in PyTorch Geometric's layout: x (int64 [nodes, 2]: kind,
        text id, as node_features(vocabulary)), edge_index (int64 [2, edges]),
        edge_attr (int64 [edges, 2]: flow, position), edge_flow,
        edge_position, node_function and node_block (-1 for none) and
        num_nodes. A torch_geometric.data.Data when PyG is installed, else a
        dict of torch tensors when torch is, else of numpy arrays: kiln needs
        neither."""
        def signed(values: np.ndarray) -> np.ndarray:
            out = values.astype(np.int64)
            out[values == NO_INDEX] = -1
            return out

        flows = self.edge_flow.astype(np.int64)
        positions = self.edge_position.astype(np.int64)
        fields: Dict[str, Any] = {
            "x": self.node_features(vocabulary),
            "edge_index": self.edge_index(),
            "edge_attr": np.stack([flows, positions], axis=1).reshape(-1, 2),
            "edge_flow": flows,
            "edge_position": positions,
            "node_function": signed(self.node_function),
            "node_block": signed(self.node_block),
        }
        try:
            import torch  # pylint: disable=import-outside-toplevel
        except ImportError:
            fields["num_nodes"] = self.num_nodes
            return fields
        tensors: Dict[str, Any] = {k: torch.from_numpy(np.ascontiguousarray(v))
                                   for k, v in fields.items()}
        try:
            from torch_geometric.data import Data  # pylint: disable=import-outside-toplevel
        except ImportError:
            tensors["num_nodes"] = self.num_nodes
            return tensors
        return Data(num_nodes=self.num_nodes, **tensors)

    def _flow_mask(self, flow: Any) -> Any:
        index = _flow_index(flow)
        if index is None:
            return np.ones(self.num_edges, dtype=bool)
        return self.edge_flow == index

    # -- the wire form -------------------------------------------------------

    @classmethod
    def from_bytes(cls, data: Any) -> Any:
        """Decodes the "Programl" observation; ProgramGraphError says what is wrong."""
        data = bytes(data)
        with_full_texts = data.startswith(_MAGIC)
        if not with_full_texts and not data.startswith(_MAGIC_WITHOUT_FULL_TEXTS):
            raise ProgramGraphError(
                'not a program graph: it does not start with "KPG2" (or "KPG1")')
        header = 24 if with_full_texts else 20
        if len(data) < header:
            raise ProgramGraphError("the program graph is truncated: it ends in its header")
        nodes, edges, functions, ntexts = struct.unpack_from("<4I", data, 4)
        nfull = struct.unpack_from("<I", data, 20)[0] if with_full_texts else 0
        if nodes > _MAX_NODES or edges > _MAX_EDGES:
            raise ProgramGraphError(
                f"the program graph has {nodes} nodes and {edges} edges, over the bounds")
        offset = header

        def strings(count: Any, what: Any) -> Any:
            nonlocal offset
            out = []
            for _ in range(count):
                if offset + 4 > len(data):
                    raise ProgramGraphError(
                        f"the program graph is truncated: it ends in its {what}")
                (length,) = struct.unpack_from("<I", data, offset)
                offset += 4
                if offset + length > len(data):
                    raise ProgramGraphError(
                        f"the program graph is truncated: it ends in its {what}")
                out.append(data[offset:offset + length].decode("utf-8", errors="replace"))
                offset += length
            offset = _pad4(offset)
            return out

        texts = strings(ntexts, "texts")
        full_texts = strings(nfull, "full texts")

        def take(count: Any, dtype: Any, what: Any) -> Any:
            nonlocal offset
            size = count * np.dtype(dtype).itemsize
            if offset + size > len(data):
                raise ProgramGraphError(f"the program graph is truncated: it ends in its {what}")
            array = np.frombuffer(data, dtype=dtype, count=count, offset=offset)
            offset += size
            return array

        function_names = take(functions, "<u4", "function names")
        node_text = take(nodes, "<u4", "node texts")
        node_full_text = take(nodes, "<u4", "node full texts") if nfull else None
        node_function = take(nodes, "<u4", "node functions")
        node_block = take(nodes, "<u4", "node blocks")
        node_kind = take(nodes, "u1", "node kinds")
        offset = _pad4(offset)
        edge_source = take(edges, "<u4", "edge sources")
        edge_target = take(edges, "<u4", "edge targets")
        edge_position = take(edges, "<u4", "edge positions")
        edge_flow = take(edges, "u1", "edge flows")
        if offset != len(data):
            raise ProgramGraphError(
                f"the program graph has {len(data) - offset} bytes after its last edge")
        return cls(texts, [texts[i] if i < len(texts) else None for i in function_names],
                   node_kind, node_text, node_function, node_block,
                   edge_flow, edge_source, edge_target, edge_position,
                   full_texts, node_full_text)

    def to_bytes(self) -> Any:
        """The wire form, byte for byte as the worker writes it."""
        index = {t: i for i, t in enumerate(self.texts)}
        texts = list(self.texts)
        function_ids = []
        for name in map(str, self.function_names):  # _check() refused a None
            if name not in index:
                index[name] = len(texts)
                texts.append(name)
            function_ids.append(index[name])
        full = self.node_full_text is not None and bool(self.full_texts)
        out = bytearray(_MAGIC)
        out += struct.pack("<5I", self.num_nodes, self.num_edges, len(function_ids), len(texts),
                           len(self.full_texts) if full else 0)
        for table in (texts, self.full_texts if full else []):
            for text in table:
                raw = text.encode("utf-8")
                out += struct.pack("<I", len(raw)) + raw
            out += b"\0" * (_pad4(len(out)) - len(out))
        out += np.asarray(function_ids, dtype="<u4").tobytes()
        arrays = [self.node_text]
        if full and self.node_full_text is not None:
            arrays.append(self.node_full_text)
        for array in arrays + [self.node_function, self.node_block]:
            out += array.astype("<u4").tobytes()
        out += self.node_kind.astype("u1").tobytes()
        out += b"\0" * (_pad4(len(out)) - len(out))
        for array in (self.edge_source, self.edge_target, self.edge_position):
            out += array.astype("<u4").tobytes()
        out += self.edge_flow.astype("u1").tobytes()
        return bytes(out)

    # -- node-link JSON and networkx ----------------------------------------

    def to_node_link(self) -> Any:
        """A dict in ProGraML's node-link form (networkx.node_link_graph reads
        it): nodes with "type" (0 instruction, 1 variable, 2 constant),
        "text", "function" and "block" (None outside one) and "features"
        ({"full_text": [text]}, where the node has one); edges ("links")
        with "flow" (0 control, 1 data, 2 call) and "position"; "graph"
        with ProGraML's "function" and "module" lists and kiln's
        "functions" (the names)."""
        def optional(value: Any) -> Any:
            return None if value == NO_INDEX else int(value)

        full = self.node_full_texts()
        nodes = [{"id": i, "type": int(self.node_kind[i]), "text": self.texts[self.node_text[i]],
                  "function": optional(self.node_function[i]),
                  "block": optional(self.node_block[i])} for i in range(self.num_nodes)]
        for node, text in zip(nodes, full):
            if text:
                node["features"] = {"full_text": [text]}
        keys: Dict[Any, int] = {}
        links = []
        for e in range(self.num_edges):
            pair = (int(self.edge_source[e]), int(self.edge_target[e]))
            key = keys.get(pair, 0)
            keys[pair] = key + 1
            links.append({"source": pair[0], "target": pair[1], "key": key,
                          "flow": int(self.edge_flow[e]), "position": int(self.edge_position[e])})
        graph = {"functions": list(self.function_names),
                 "function": [{"name": name, "module": 0} for name in self.function_names],
                 "module": [{"name": ""}]}
        return {"directed": True, "multigraph": True, "graph": graph,
                "nodes": nodes, "links": links}

    @classmethod
    def from_node_link(cls, data: Any) -> Any:
        """The inverse of to_node_link (node ids 0..n-1 in order)."""
        try:
            nodes = sorted(data["nodes"], key=lambda n: n["id"])
            if [n["id"] for n in nodes] != list(range(len(nodes))):
                raise ProgramGraphError("node-link nodes must have the ids 0 to n-1")
            texts: List[str] = []
            index: Dict[str, int] = {}
            for node in nodes:
                if node["text"] not in index:
                    index[node["text"]] = len(texts)
                    texts.append(node["text"])

            def none_as(value: Any) -> Any:
                return NO_INDEX if value is None else int(value)

            links = data.get("links", data.get("edges", []))
            full = [(n.get("features") or {}).get("full_text", [""])[0] for n in nodes]
            full_texts = sorted(set(full)) if any(full) else []
            full_index = {t: i for i, t in enumerate(full_texts)}
            return cls(texts, _function_names(data.get("graph", {})),
                       [n["type"] for n in nodes], [index[n["text"]] for n in nodes],
                       [none_as(n.get("function")) for n in nodes],
                       [none_as(n.get("block")) for n in nodes],
                       [link["flow"] for link in links], [link["source"] for link in links],
                       [link["target"] for link in links], [link["position"] for link in links],
                       full_texts, [full_index[t] for t in full] if full_texts else None)
        except (KeyError, TypeError) as error:
            raise ProgramGraphError(f"not a program graph in node-link form: {error!r}") from None

    def to_networkx(self) -> Any:
        """A networkx.MultiDiGraph (networkx is Debian's python3-networkx)."""
        import networkx

        data = self.to_node_link()
        graph = networkx.MultiDiGraph(**data["graph"])
        for node in data["nodes"]:
            graph.add_node(node.pop("id"), **node)
        for e in range(self.num_edges):
            graph.add_edge(int(self.edge_source[e]), int(self.edge_target[e]),
                           flow=int(self.edge_flow[e]), position=int(self.edge_position[e]))
        return graph

    @classmethod
    def from_networkx(cls, graph: Any) -> Any:
        """The graph of a networkx graph to_networkx() made (or one in its schema)."""
        import networkx

        data = networkx.node_link_data(graph)
        data["graph"] = dict(graph.graph)
        return cls.from_node_link(data)

    # -- checks --------------------------------------------------------------

    def _check(self) -> None:
        n = self.num_nodes
        sizes = {self.node_text.size, self.node_function.size, self.node_block.size}
        if sizes != {n}:
            raise ProgramGraphError("the node arrays differ in length")
        if {self.edge_source.size, self.edge_target.size, self.edge_position.size} != {
                self.num_edges}:
            raise ProgramGraphError("the edge arrays differ in length")
        if n and (self.node_kind >= len(NODE_KINDS)).any():
            raise ProgramGraphError("a node kind is out of range (0-2)")
        if self.num_edges and (self.edge_flow >= len(EDGE_FLOWS)).any():
            raise ProgramGraphError("an edge flow is out of range (0-2)")
        if n and (self.node_text >= len(self.texts)).any():
            raise ProgramGraphError("a node text index is out of range")
        if self.node_full_text is not None and (
                self.node_full_text.size != n
                or (n and (self.node_full_text >= len(self.full_texts)).any())):
            raise ProgramGraphError("a node full text index is out of range")
        functions = self.node_function[self.node_function != NO_INDEX]
        if functions.size and (functions >= len(self.function_names)).any():
            raise ProgramGraphError("a node function index is out of range")
        if any(name is None for name in self.function_names):
            raise ProgramGraphError("a function name index is out of range")
        if self.num_edges and ((self.edge_source >= n).any() or (self.edge_target >= n).any()):
            raise ProgramGraphError("an edge joins a node that does not exist")

    def _edge_set(self) -> Any:
        return sorted(zip(self.edge_source.tolist(), self.edge_target.tolist(),
                          self.edge_flow.tolist(), self.edge_position.tolist()))

    def __eq__(self, other: Any) -> bool:
        """The same nodes (in order) and the same edges (in any order)."""
        if not isinstance(other, ProgramGraph):
            return NotImplemented
        mine, theirs = self.to_node_link(), other.to_node_link()
        return (mine["nodes"] == theirs["nodes"] and mine["graph"] == theirs["graph"]
                and self._edge_set() == other._edge_set())

    def __repr__(self) -> str:
        return (f"ProgramGraph({self.num_nodes} nodes, {self.num_edges} edges, "
                f"{len(self.function_names)} functions)")
