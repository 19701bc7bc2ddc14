# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.
# CompilerGym v0.2.5's examples/llvm_autotuning, ported to kiln (each file
# says what changed). Its greedy and random autotuners run (Autotuner,
# OptimizationTarget codesize and binsize, Benchmarks, JustKeepGoingEnv).
# Left out, and why:
#  - autotuners/nevergrad_.py, autotuners/opentuner_.py: nevergrad and opentuner
#    are not installed (no Debian package); opentuner's also drives CompilerGym's
#    service and bundled opt, which kiln has not;
#  - experiment.py, tune.py: hydra is not installed (no Debian package), and the
#    experiment runs its jobs on compiler_gym.util.executor (submitit), which kiln
#    has not (NotImplementedError: kiln runs episodes on its cluster);
#  - info.py: reads experiment.py's logs (and needs typer);
#  - the runtime target: RuntimePointEstimateReward raises NotImplementedError
#    (kiln's Runtime observation runs as the benchmark's run spec says).
