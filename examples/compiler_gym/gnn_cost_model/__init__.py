# CompilerGym v0.2.5's examples/gnn_cost_model, ported to kiln: a GNN that
# predicts the instruction count of a ProGraML graph. What runs and what not:
#  - the graph it reads: kiln.compiler_gym's Programl observation is the networkx
#    MultiDiGraph compiler_gym_dataset.py's process_networkx_graph() takes (node
#    "text" and "type", edge "flow" and "position", all ints but the text);
#  - the model and the dataset need DGL (dgl.graph, dgl.batch,
#    dgl.nn.pytorch.conv.GatedGraphConv), which Debian does not package and
#    these machines cannot pip install: with DGL installed they import as they
#    are. kiln.program_graph's ProgramGraph.to_pyg() gives PyTorch Geometric's
#    layout instead (tensors, no new dependency);
#  - train.py downloads CompilerGym's state-transition database from
#    dl.fbaipublicfiles.com (compiler_gym.util.download raises
#    NotImplementedError: kiln downloads nothing). Build such a database from
#    kiln's Programl observations to train on kiln.
