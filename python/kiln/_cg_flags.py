"""compiler_gym.util.flags on kiln: the absl flag modules CompilerGym's
example scripts import (episodes, episode_length, learning_rate, seed,
nproc, output_dir, benchmark_from_flags, env_from_flags). Each module
defines its flags when first imported, as CompilerGym's did, so a script
that does not import one keeps the flag name free for its own. Both
kiln.compiler_gym.util.flags.X and compiler_gym.util.flags.X name the same
module (flags are defined once). absl is not a dependency of kiln: without
it (Debian: python3-absl) importing one raises NotImplementedError saying
so."""

import multiprocessing
import sys
from types import ModuleType
from typing import Any, Callable, Dict, Optional

NO_ABSL = ("compiler_gym.util.flags defines absl flags, and absl is not installed "
           "(Debian: python3-absl; pip: absl-py): install it, or give the values as "
           "arguments (argparse) instead")
_PACKAGE = "kiln.compiler_gym.util.flags"
_loaded: Dict[str, ModuleType] = {}


def _plain(define: str, name: str, default: Any, help_text: str) -> Callable[[Any], Dict]:
    """A module that only defines one flag."""
    def build(flags: Any) -> Dict[str, Any]:
        getattr(flags, define)(name, default, help_text)
        return {}
    return build


def _benchmark_from_flags(flags: Any) -> Dict[str, Any]:
    flags.DEFINE_string(
        "benchmark", None, "The URI of the benchmark to use (benchmark:// implied when no "
        "scheme is given; file:/// names a bitcode or C file of your own).")

    def benchmark_from_flags() -> Optional[Any]:
        """--benchmark: its URI, a Benchmark of a file:/// path, or None."""
        value = flags.FLAGS.benchmark
        if not value:
            return None
        if value.startswith("file:///"):
            from .benchmarks import make_benchmark  # pylint: disable=import-outside-toplevel

            return make_benchmark(value[len("file://"):])
        return value
    return {"benchmark_from_flags": benchmark_from_flags}


def _env_from_flags(flags: Any) -> Dict[str, Any]:
    flags.DEFINE_string("env", None, "The name of an environment to use (one of "
                        "kiln.compiler_gym.COMPILER_GYM_ENVS).")
    flags.DEFINE_string("service", None, "CompilerGym's service address: kiln has no "
                        "CompilerGym service (its sessions run on kiln's workers).")
    flags.DEFINE_string("local_service_binary", None, "CompilerGym's service binary: kiln "
                        "has no CompilerGym service.")
    flags.DEFINE_string("observation", None, "The name of an observation space to use.")
    flags.DEFINE_string("reward", None, "The name of a reward space to use.")
    flags.DEFINE_boolean("ls_env", False, "Print the environments --env takes and exit.")
    flags.DEFINE_float("service_rpc_call_max_seconds", 300,
                       "The longest wait for one call to kiln's cluster (make's timeout=).")

    def env_from_flags(benchmark: Optional[Any] = None) -> Any:
        """compiler_gym.make(--env, benchmark) with --observation and --reward set."""
        from . import compiler_gym  # pylint: disable=import-outside-toplevel

        values = flags.FLAGS
        if values.ls_env:
            print("\n".join(sorted(compiler_gym.COMPILER_GYM_ENVS)))
            sys.exit(0)
        if values.service or values.local_service_binary:
            raise NotImplementedError(
                "--service / --local_service_binary name a CompilerGym service, and kiln has "
                "none: its sessions run on kiln's workers (drop the flag)")
        if not values.env:
            from absl import app  # pylint: disable=import-outside-toplevel

            raise app.UsageError("--env must be set")
        env = compiler_gym.make(values.env, benchmark=benchmark,
                                timeout=values.service_rpc_call_max_seconds)
        if values.observation:
            env.observation_space = values.observation
        if values.reward:
            env.reward_space = values.reward
        return env

    return {"env_from_flags": env_from_flags}


_MODULES: Dict[str, Callable[[Any], Dict[str, Any]]] = {
    "episodes": _plain("DEFINE_integer", "episodes", 2000, "The number of episodes to run."),
    "episode_length": _plain("DEFINE_integer", "episode_length", 5,
                             "The number of steps in each episode."),
    "learning_rate": _plain("DEFINE_float", "learning_rate", 0.008,
                            "The learning rate for training."),
    "seed": _plain("DEFINE_integer", "seed", 0xCC, "Random state initializer."),
    "nproc": _plain("DEFINE_integer", "nproc", multiprocessing.cpu_count(),
                    "The number of parallel processes to run."),
    "output_dir": _plain("DEFINE_string", "output_dir", None,
                         "The directory to read and write files to."),
    "benchmark_from_flags": _benchmark_from_flags,
    "env_from_flags": _env_from_flags,
}


def load(relative: str) -> Optional[ModuleType]:
    """The module for "util.flags" or "util.flags.<name>" (None for a name
    CompilerGym had not), built once; NotImplementedError without absl."""
    try:
        from absl import flags  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise NotImplementedError(f"compiler_gym.{relative} is not available: {NO_ABSL}") \
            from None
    name = relative[len("util.flags"):].lstrip(".")
    if name in _loaded:
        return _loaded[name]
    if name and name not in _MODULES:
        return None
    module = ModuleType(f"{_PACKAGE}.{name}" if name else _PACKAGE, __doc__)
    if name:
        module.__dict__.update(_MODULES[name](flags))
    else:
        module.__path__ = []  # type: ignore[attr-defined]  # a package of the modules above
    module.FLAGS = flags.FLAGS  # type: ignore[attr-defined]
    _loaded[name] = module
    return module
