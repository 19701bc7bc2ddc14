"""kiln: CompilerGym-style compiler environments served by a kiln cluster.

    import kiln
    with kiln.make("llvm-ic-v0") as env:
        observation, info = env.reset()
        observation, reward, terminated, truncated, info = env.step(env.action_space.sample())

With cluster=None an embedded single-node cluster starts in this process and
stops with the last env; pass cluster="tcp://host:port" for a real cluster.

With gymnasium installed, kiln's envs, vector envs and spaces are gymnasium's
(kiln.sb3 gives Stable-Baselines3 many envs through kiln's vector env);
without it, kiln's own classes with the same attributes.
"""

from .benchmarks import Benchmark, benchmark_from_clang_invocation, make_benchmark
from .cluster import LocalCluster, embedded_cluster_endpoint
from .datasets import Dataset, Datasets
from .env import Env, datasets, make, session_types
from .experiment import Experiment
from .errors import (
    CompileError,
    InternalError,
    InvalidArgument,
    KilnError,
    NotFound,
    Overloaded,
    PermissionDenied,
    SessionLost,
    Timeout,
    Unimplemented,
)
from .registry import EnvSpec, env_ids, spec
from .evaluation import best_states, evaluate
from . import tools, wrappers
from .spaces import Space
from .vector import BatchSpace, VectorEnv, make_vec
from .state import CompilerEnvState
from .validation import ValidationError, ValidationResult
from .program_graph import ProgramGraph, ProgramGraphError
from . import state as states
from ._kiln import __version__, keygen

__all__ = [
    "make",
    "make_vec",
    "VectorEnv",
    "BatchSpace",
    "Experiment",
    "env_ids",
    "spec",
    "EnvSpec",
    "Env",
    "Space",
    "CompilerEnvState",
    "ValidationResult",
    "ValidationError",
    "ProgramGraph",
    "ProgramGraphError",
    "states",
    "tools",
    "LocalCluster",
    "embedded_cluster_endpoint",
    "datasets",
    "Dataset",
    "Datasets",
    "session_types",
    "keygen",
    "KilnError",
    "InvalidArgument",
    "NotFound",
    "Timeout",
    "SessionLost",
    "Overloaded",
    "CompileError",
    "PermissionDenied",
    "Unimplemented",
    "InternalError",
    "Benchmark",
    "make_benchmark",
    "benchmark_from_clang_invocation",
    "evaluate",
    "best_states",
    "wrappers",
]
