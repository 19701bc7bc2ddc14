"""What of CompilerGym's package kiln.compiler_gym does not have, and why:
importing such a module, or taking such a name from a module it has,
raises NotImplementedError naming the reason (not ImportError or
AttributeError), so a script learns at once what to change."""

import importlib.abc
import importlib.util
import sys
from types import ModuleType
from typing import Any, Dict, Optional

_NOT_CARRIED = "not carried over from CompilerGym"
_NO_DATASET_FILES_WHY = ("kiln's datasets are served by its workers; a program of your own is "
                         "env.make_benchmark() (kiln.make_benchmark)")
# Module (under compiler_gym) -> why kiln has none; a prefix covers its submodules.
MODULES: Dict[str, str] = {
    "util.runfiles_path": "kiln installs no CompilerGym site data (runfiles, cache, logs directory)",
    "util.download": "kiln downloads nothing: its workers read datasets the cluster serves",
    "util.registration": "kiln.compiler_gym.make serves a fixed set of env ids (COMPILER_GYM_ENVS)",
    "util.executor": "kiln runs episodes on its cluster: use threads or kiln.VectorEnv",
    "util.thread_pool": "kiln runs episodes on its cluster: use threads or kiln.VectorEnv",
    "util.parallelization": "kiln runs episodes on its cluster: use threads or kiln.VectorEnv",
    "service": "CompilerGym's gRPC compiler service: kiln's sessions run on kiln's workers "
               "(write a session type of your own with kiln's session kit)",
    "envs.gcc": "kiln serves LLVM sessions (llvm-v0 and the ids of COMPILER_GYM_ENVS) only",
    "envs.loop_tool": "kiln serves LLVM sessions (llvm-v0 and the ids of COMPILER_GYM_ENVS) only",
    "envs.mlir": "kiln serves LLVM sessions (llvm-v0 and the ids of COMPILER_GYM_ENVS) only",
    "third_party": "CompilerGym's bundled LLVM 10 tools and data (inst2vec, cBench): kiln runs "
                   "LLVM 19 on its workers",
    "bin": "CompilerGym's command-line tools: kiln's are `kiln eval`, `kiln replay` and "
           "`kiln validate`",
    "envs.llvm.compute_observation": "it ran CompilerGym's LLVM service binary on a bitcode "
                                     "file: kiln computes observations in sessions on its "
                                     "workers (env.observation[name])",
    "envs.llvm.benchmark_from_command_line": "use env.make_benchmark_from_command_line() "
                                             "(kiln.benchmark_from_clang_invocation)",
    "envs.llvm.datasets": "CompilerGym's LLVM 10 datasets (cBench, ...) are not served: kiln's "
                          "are env.datasets (kiln-bench-v0, csmith-v0, llvm-stress-v0)",
    "envs.llvm.service": "CompilerGym's LLVM service binary: kiln's LLVM sessions run on kiln's "
                         "workers",
    "envs.llvm.llvm_rewards": "kiln computes rewards in its sessions (env.reward_space names "
                              "them)",
    "envs.llvm.lexed_ir": _NOT_CARRIED,
    "datasets.files_dataset": _NO_DATASET_FILES_WHY,
    "datasets.tar_dataset": _NO_DATASET_FILES_WHY,
    "datasets.benchmark_source": _NO_DATASET_FILES_WHY,
    "spaces": ("CompilerGym's space classes took a name and gym's arguments; kiln's spaces "
               "are gymnasium's (kiln.spaces): compare env.observation_space.shape / .dtype "
               "instead"),
    "leaderboard": _NOT_CARRIED,
    "util.commands": _NOT_CARRIED,
    "util.debug_util": _NOT_CARRIED,
    "util.filesystem": _NOT_CARRIED,
    "util.logging": _NOT_CARRIED,
    "util.minimize_trajectory": _NOT_CARRIED,
    "util.permutation": _NOT_CARRIED,
    "util.decorators": _NOT_CARRIED,
}
# Names of the top-level module and of compiler_gym.spaces kiln does not give.
TOP_LEVEL_NAMES: Dict[str, str] = {
    "cache_path": "kiln keeps no CompilerGym cache directory",
    "site_data_path": "kiln installs no CompilerGym site data",
    "transient_cache_path": "kiln keeps no CompilerGym cache directory",
    "download": "kiln downloads nothing: its workers read datasets the cluster serves",
    "get_debug_level": "kiln logs through its own flags (--log-level)",
    "set_debug_level": "kiln logs through its own flags (--log-level)",
    "get_logging_level": "kiln logs through its own flags (--log-level)",
    "config": "kiln's build has the LLVM env only: there is nothing to configure",
}
_NOT_LLVM = "kiln serves LLVM sessions (llvm-v0 and the ids of COMPILER_GYM_ENVS) only"
# Names of compiler_gym.envs and compiler_gym.envs.llvm kiln does not give.
ENVS_NAMES: Dict[str, str] = {"GccEnv": _NOT_LLVM, "LoopToolEnv": _NOT_LLVM, "MlirEnv": _NOT_LLVM}
LLVM_NAMES: Dict[str, str] = {
    "compute_observation": MODULES["envs.llvm.compute_observation"],
    "BenchmarkFromCommandLine": MODULES["envs.llvm.benchmark_from_command_line"],
    "ClangInvocation": "kiln compiles a command line with env.make_benchmark_from_command_line() "
                       "(kiln.benchmark_from_clang_invocation)",
    "get_system_library_flags": "kiln compiles with clang-19's own include and library paths "
                                "on the machine that calls make_benchmark",
    "get_system_includes": "kiln compiles with clang-19's own include paths",
    "LLVM_SERVICE_BINARY": MODULES["envs.llvm.service"],
}
_NO_DATASET_FILES = _NO_DATASET_FILES_WHY
# Names of compiler_gym.datasets kiln does not give.
DATASETS_NAMES: Dict[str, str] = {
    "BenchmarkSource": "kiln's benchmarks carry no sources: env.observation['Ir'] gives the IR",
    "BenchmarkWithSource": "kiln's benchmarks carry no sources: env.observation['Ir'] gives the IR",
    "FilesDataset": _NO_DATASET_FILES, "TarDataset": _NO_DATASET_FILES,
    "TarDatasetWithManifest": _NO_DATASET_FILES, "DatasetInitError": _NO_DATASET_FILES,
    "activate": "kiln's workers serve every dataset they list: nothing to activate",
    "deactivate": "kiln's workers serve every dataset they list: nothing to deactivate",
    "delete": "kiln downloads nothing: there is no local copy to delete",
    "require": "kiln downloads nothing: its workers read datasets the cluster serves",
    "round_robin_iterables": _NOT_CARRIED,
    "DatasetBenchmarkIterator": _NOT_CARRIED,
}
_VIEWS_WHY = ("CompilerGym's view classes wrapped its service's spaces: kiln's env.observation "
              "and env.reward are views of their own (index them by name)")
VIEWS_NAMES: Dict[str, str] = {"ObservationView": _VIEWS_WHY, "RewardView": _VIEWS_WHY}
_SPACES_WHY = ("CompilerGym's space classes took a name and gym's arguments; kiln's spaces are "
               "gymnasium's (kiln.spaces): compare env.observation_space.shape / .dtype instead")
SPACE_NAMES: Dict[str, str] = {name: _SPACES_WHY for name in (
    "Box", "CommandlineFlag", "DefaultRewardFromObservation", "Dict", "Discrete", "NamedDiscrete",
    "Permutation", "RuntimeReward", "Scalar", "Sequence", "SpaceSequence", "Tuple")}


def missing(module: str, name: str, reasons: Dict[str, str]) -> Any:
    """A module's __getattr__: NotImplementedError for a name CompilerGym had."""
    if name in reasons:
        raise NotImplementedError(f"{module}.{name} is not available on kiln: {reasons[name]}")
    raise AttributeError(f"module {module!r} has no attribute {name!r}")


def _reason(relative: str) -> Optional[str]:
    parts = relative.split(".")
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in MODULES:
            return MODULES[".".join(parts[:end])]
    return None


class MissingModules(importlib.abc.MetaPathFinder):
    """Finds no module: raises NotImplementedError for one of MODULES under
    `prefixes` (kiln.compiler_gym., and compiler_gym. when aliased)."""

    def __init__(self, prefixes: tuple) -> None:
        self.prefixes = prefixes

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        """None, after raising for a module CompilerGym had and kiln has not;
        the spec of compiler_gym.util.flags' modules (built by _cg_flags)."""
        for prefix in self.prefixes:
            if fullname.startswith(prefix):
                relative = fullname[len(prefix):]
                if relative == "util.flags" or relative.startswith("util.flags."):
                    return _flags_spec(fullname, relative)
                why = _reason(relative)
                if why is not None:
                    raise NotImplementedError(f"{fullname} is not available on kiln: {why}")
        return None


class _Built(importlib.abc.Loader):
    """Loads a module built already (one object under both of its names)."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module

    def create_module(self, spec: Any) -> ModuleType:
        """The module built already."""
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing: the module was built complete."""


def _flags_spec(fullname: str, relative: str) -> Any:
    from . import _cg_flags  # pylint: disable=import-outside-toplevel

    module = _cg_flags.load(relative)
    if module is None:
        return None
    return importlib.util.spec_from_loader(fullname, _Built(module),
                                           is_package=relative == "util.flags")


def install(prefixes: tuple) -> None:
    """Puts the finder last on sys.meta_path (once)."""
    if not any(isinstance(f, MissingModules) for f in sys.meta_path):
        sys.meta_path.append(MissingModules(prefixes))
