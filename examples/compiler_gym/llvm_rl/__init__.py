# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.
# CompilerGym v0.2.5's examples/llvm_rl, the parts that run without ray and
# hydra, ported to kiln (each file says what changed): the Autophase wrappers
# (wrappers.py), and the pydantic models of the environment, benchmarks,
# training, validation and testing sets (model/). Left out, and why:
#  - model/agent.py, model/model.py, model/inference_result.py, train.py,
#    test.py, info.py: they train and test with ray[rllib] and read their config
#    with hydra / omegaconf, none of which is installed (no Debian package);
#    model.py also runs on compiler_gym.util.executor, which kiln has not
#    (NotImplementedError: kiln runs episodes on its cluster). kiln.sb3 and
#    examples/python/sb3_ppo.py train PPO on kiln instead;
#  - AutophaseActionSpace (wrappers.py) names LLVM 10 passes that LLVM 19 has not
#    (-prune-eh, -loop-unswitch, ...): making one raises the action space's
#    reason for the first of them.
