# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.
# Ported to kiln from CompilerGym v0.2.5's examples/llvm_rl/model/__init__.py.
# What a user had to change, and nothing else:
#  - Model (model.py) needs ray[rllib], which is not installed (no Debian package):
#    its import is commented out, so that the models that need no ray import.
# from .model import Model

__all__ = [
    "Model",
]
