# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.
# Ported to kiln from CompilerGym v0.2.5's examples/llvm_autotuning/autotuners/random_.py.
# What a user had to change, and nothing else:
#  - the imports: kiln.compiler_gym for compiler_gym;
#  - kiln keeps no CompilerGym cache directory (compiler_gym.util.runfiles_path
#    raises NotImplementedError): the temporary directory is made in the system's
#    temporary directory (dir=None) instead of transient_cache_path(".").
from tempfile import TemporaryDirectory

from llvm_autotuning.optimization_target import OptimizationTarget

from kiln.compiler_gym.envs import CompilerEnv
from kiln.compiler_gym.random_search import random_search as lib_random_search


def random(
    env: CompilerEnv,
    optimization_target: OptimizationTarget,
    search_time_seconds: int,
    patience: int = 350,
    **kwargs
) -> None:
    """Run a random search on the environment.

    :param env: The environment to optimize.

    :param optimization_target: The target to optimize for.

    :param search_time_seconds: The total search time.

    :param patience: The number of steps to search without an improvement before
        resetting to a new trajectory.
    """
    with TemporaryDirectory(
        dir=None, prefix="autotune-"
    ) as tmpdir:
        final_env = lib_random_search(
            make_env=lambda: optimization_target.make_env(env.benchmark),
            outdir=tmpdir,
            total_runtime=search_time_seconds,
            patience=patience,
            nproc=1,
        )
    env.apply(final_env.state)
    final_env.close()
