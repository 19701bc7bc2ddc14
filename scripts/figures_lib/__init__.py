"""The blocks of README.md and docs/ that scripts/figures writes from
committed data: core.py finds and checks them, generators.py makes each."""
