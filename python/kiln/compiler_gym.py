"""CompilerGym's LLVM surface on kiln: scripts written for CompilerGym
v0.2.5 run with one import changed,

    import kiln.compiler_gym as compiler_gym
    env = compiler_gym.make("llvm-autophase-ic-v0", benchmark="benchmark://kiln-bench-v0/crc32")
    observation = env.reset()
    observation, reward, done, info = env.step(env.action_space.sample())

gym-0.21 tuples, CompilerGym's observation and reward space names, env.observation[...] /
env.reward[...] lookups, fork, state, commandline, validate, datasets, the
wrappers and the modules scripts import: kiln.compiler_gym.envs, .errors,
.util, .random_search, .wrappers. When no real compiler_gym is installed,
importing this module also makes `compiler_gym` and its submodules name
these (so `from compiler_gym.wrappers import TimeLimit` in the same script
works unchanged). What kiln has no counterpart for raises
NotImplementedError saying why; CompilerGym's datasets that kiln does not
serve (cbench-v1, ...) raise kiln.NotFound naming the datasets it has.
docs/evaluation.md lists every call and what it does here.
"""

import enum
import importlib.util
import sys
from typing import Any, List, Optional

from . import _cg_errors as errors
from . import _cg_missing
from . import _cg_random_search as random_search
from . import _cg_util as util
from . import wrappers
from ._cg_env import CompilerEnv, CompilerGymEnv, LlvmEnv, make_env
from ._cg_space import Commandline, UnknownAction
from ._cg_validation import ValidationResult, validate_states
from ._compiler_gym_names import (
    _DERIVED_OBSERVATIONS,
    _REWARDS,
    _SAME_OBSERVATIONS,
    Benchmark,
    BenchmarkUri,
    COMPILER_GYM_ENVS,
    Dataset,
    Datasets,
    ObservationSpaceSpec,
    Reward,
)
from .state import CompilerEnvStateReader, CompilerEnvStateWriter
from .state import CompilerGymEnvState as CompilerEnvState

__version__ = "0.2.5+kiln"
# A package without files of its own: the import of a submodule it lacks
# reaches _cg_missing's finder, which says why (compiler_gym.service, ...).
__path__: List[str] = []
ValidationError = errors.ValidationError
OBSERVATION_SPACE_NAMES = [*_SAME_OBSERVATIONS, *_DERIVED_OBSERVATIONS]
REWARD_SPACE_NAMES = list(_REWARDS)


def make(env_id: str, benchmark: Any = None, observation_space: Any = None,
         reward_space: Any = None, cluster: Optional[str] = None, timeout: float = 120.0,
         action_space: Any = None, **kwargs: Any) -> CompilerGymEnv:
    """compiler_gym.make(): one of COMPILER_GYM_ENVS on kiln (cluster: see
    kiln.make). action_space: "PassesAll" (the default: single passes, as
    CompilerGym's) or "PassesAndPipelines" (the same actions at the same
    indices, then whole pipelines such as scc-oz-module-inliner)."""
    return make_env(env_id, benchmark=benchmark, observation_space=observation_space,
                    reward_space=reward_space, cluster=cluster, timeout=timeout,
                    action_space=action_space, **kwargs)


def _module(name: str, doc: str, **attributes: Any) -> Any:
    module = type(sys)(f"{__name__}.{name}", doc)
    module.__dict__.update(attributes)
    module.__path__ = []  # type: ignore[attr-defined]  # a package: its missing submodules say why
    module.__all__ = sorted(attributes)  # type: ignore[attr-defined]
    return module


envs = _module("envs", "CompilerGym's env classes on kiln.",
               CompilerEnv=CompilerEnv, LlvmEnv=LlvmEnv, CompilerGymEnv=CompilerGymEnv)
envs.COMPILER_GYM_ENVS = COMPILER_GYM_ENVS
envs.__getattr__ = lambda name: _cg_missing.missing(  # type: ignore[attr-defined]
    f"{__name__}.envs", name, _cg_missing.ENVS_NAMES)
envs.llvm = _module(
    "envs.llvm", "CompilerGym's LLVM env on kiln.", LlvmEnv=LlvmEnv,
    make_benchmark=CompilerGymEnv.make_benchmark,
    observation_spaces=enum.Enum("observation_spaces", {n: n for n in OBSERVATION_SPACE_NAMES}),
    reward_spaces=enum.Enum("reward_spaces", {n: n for n in REWARD_SPACE_NAMES}))
envs.llvm.__getattr__ = lambda name: _cg_missing.missing(  # type: ignore[attr-defined]
    f"{__name__}.envs.llvm", name, _cg_missing.LLVM_NAMES)
# The modules CompilerGym's classes live in, which scripts import them from.
envs.compiler_env = _module("envs.compiler_env", "CompilerGym's env base class on kiln.",
                            CompilerEnv=CompilerEnv)
envs.llvm.llvm_env = _module("envs.llvm.llvm_env", "CompilerGym's LlvmEnv on kiln.",
                             LlvmEnv=LlvmEnv)
envs.llvm.llvm_benchmark = _module("envs.llvm.llvm_benchmark", "CompilerGym's make_benchmark.",
                                   make_benchmark=CompilerGymEnv.make_benchmark)
envs.llvm.llvm_benchmark.__getattr__ = lambda name: _cg_missing.missing(  # type: ignore
    f"{__name__}.envs.llvm.llvm_benchmark", name, _cg_missing.LLVM_NAMES)
envs.llvm.specs = _module("envs.llvm.specs", "CompilerGym's space name enums.",
                          observation_spaces=envs.llvm.observation_spaces,
                          reward_spaces=envs.llvm.reward_spaces)
datasets = _module("datasets", "CompilerGym's dataset classes over kiln's datasets.",
                   Benchmark=Benchmark, BenchmarkUri=BenchmarkUri, Dataset=Dataset,
                   Datasets=Datasets)
spaces = _module("spaces", "CompilerGym's space classes kiln gives.",
                 Commandline=Commandline, Reward=Reward)
spaces.__getattr__ = lambda name: _cg_missing.missing(  # type: ignore[attr-defined]
    f"{__name__}.spaces", name, _cg_missing.SPACE_NAMES)
spaces.reward = _module("spaces.reward", "CompilerGym's Reward.", Reward=Reward)
spaces.commandline = _module("spaces.commandline", "CompilerGym's Commandline.",
                             Commandline=Commandline)
datasets.__getattr__ = lambda name: _cg_missing.missing(  # type: ignore[attr-defined]
    f"{__name__}.datasets", name, _cg_missing.DATASETS_NAMES)
datasets.uri = _module("datasets.uri", "CompilerGym's benchmark URI.", BenchmarkUri=BenchmarkUri)
# The modules CompilerGym's dataset classes live in, which scripts import them from.
datasets.benchmark = _module("datasets.benchmark", "CompilerGym's Benchmark.", Benchmark=Benchmark)
datasets.dataset = _module("datasets.dataset", "CompilerGym's Dataset.", Dataset=Dataset)
datasets.datasets = _module("datasets.datasets", "CompilerGym's Datasets.", Datasets=Datasets)
for _submodule in (datasets.benchmark, datasets.dataset, datasets.datasets):
    _submodule.__getattr__ = datasets.__getattr__  # type: ignore[attr-defined]
views = _module("views", "CompilerGym's view classes kiln gives.",
                ObservationSpaceSpec=ObservationSpaceSpec)
views.__getattr__ = lambda name: _cg_missing.missing(  # type: ignore[attr-defined]
    f"{__name__}.views", name, _cg_missing.VIEWS_NAMES)
compiler_env_state = _module("compiler_env_state", "CompilerGym's state classes.",
                             CompilerEnvState=CompilerEnvState,
                             CompilerEnvStateReader=CompilerEnvStateReader,
                             CompilerEnvStateWriter=CompilerEnvStateWriter)
validation_result = _module("validation_result", "CompilerGym's validation result.",
                            ValidationResult=ValidationResult)
validate = _module("validate", "CompilerGym's validate_states().",
                   validate_states=validate_states)

# The submodules a script imports, under this module's name.
_SUBMODULES = {
    "wrappers": wrappers, "errors": errors, "util": util, "random_search": random_search,
    "envs": envs, "envs.llvm": envs.llvm, "envs.compiler_env": envs.compiler_env,
    "envs.llvm.llvm_env": envs.llvm.llvm_env, "envs.llvm.llvm_benchmark": envs.llvm.llvm_benchmark,
    "envs.llvm.specs": envs.llvm.specs, "datasets": datasets,
    "datasets.uri": datasets.uri, "datasets.benchmark": datasets.benchmark,
    "datasets.dataset": datasets.dataset, "datasets.datasets": datasets.datasets,
    "spaces": spaces, "spaces.reward": spaces.reward, "spaces.commandline": spaces.commandline,
    "views": views, "compiler_env_state": compiler_env_state,
    "validation_result": validation_result, "validate": validate,
}
util.__path__ = []  # type: ignore[attr-defined]
for _name in util.SUBMODULES:
    setattr(util, _name, util)
    _SUBMODULES[f"util.{_name}"] = util
for _name in ("truncate", "tabulate", "capture_output", "temporary_working_directory"):
    _SUBMODULES[f"util.{_name}"] = getattr(util, _name)
for _name, _value in _SUBMODULES.items():
    sys.modules[f"{__name__}.{_name}"] = _value


def _alias_compiler_gym() -> bool:
    """`compiler_gym` and its submodules name these, unless the real
    CompilerGym is installed (then it is left alone)."""
    if "compiler_gym" in sys.modules or importlib.util.find_spec("compiler_gym") is not None:
        return sys.modules.get("compiler_gym") is sys.modules[__name__]
    sys.modules["compiler_gym"] = sys.modules[__name__]
    for name, value in _SUBMODULES.items():
        sys.modules[f"compiler_gym.{name}"] = value
    return True


# A module CompilerGym had and kiln has not raises NotImplementedError saying why.
_cg_missing.install((f"{__name__}.", "compiler_gym.") if _alias_compiler_gym()
                    else (f"{__name__}.",))


def __getattr__(name: str) -> Any:
    """NotImplementedError for a name of CompilerGym's package kiln does not give."""
    return _cg_missing.missing(__name__, name, _cg_missing.TOP_LEVEL_NAMES)

__all__ = [
    "make", "COMPILER_GYM_ENVS", "CompilerEnv", "CompilerEnvState", "CompilerEnvStateReader",
    "CompilerEnvStateWriter", "LlvmEnv", "Benchmark", "ValidationResult", "ValidationError",
    "UnknownAction", "validate_states", "wrappers", "errors", "util", "random_search", "envs",
    "datasets", "spaces",
    "views", "__version__",
]
