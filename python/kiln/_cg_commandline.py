"""The compatibility env's command lines. kiln prints one opt-19 call per
action, chained through pipes, each with the action's exact `-passes=`
text:

    opt-19 -passes=mem2reg input.bc -o - | opt-19 -passes=gvn - -o output.bc

because that is what an action is (one opt-19 run with fresh analyses,
tests/llvm_engine/opt_equivalence_test.cpp), and because one `-passes=`
list of them is not: opt-19 refuses a list that mixes pass levels
("unknown function pass 'canonicalize-aliases'") and a loop pass such as
licm nested without its MemorySSA adaptor. CompilerGym's own form,
"opt -flag ... input.bc -o output.bc", is read too."""

import shlex
from typing import Any, List, Sequence

from ._cg_space import pipelines_to_actions

OPT = "opt-19"


def format_commandline(pipelines: Sequence[str], textformat: bool = False) -> str:
    """The command for these actions' pipelines, from input.bc to output.bc
    (textformat: input.ll to output.ll, written as text with -S)."""
    source, sink = ("input.ll", "output.ll") if textformat else ("input.bc", "output.bc")
    text_flag = " -S" if textformat else ""
    if not pipelines:
        return f"{OPT} {source}{text_flag} -o {sink}"
    stages = []
    for i, pipeline in enumerate(pipelines):
        first, last = i == 0, i + 1 == len(pipelines)
        stages.append(f"{OPT} -passes={shlex.quote(pipeline)} {source if first else '-'}"
                      f"{text_flag if last else ''} -o {sink if last else '-'}")
    return " | ".join(stages)


def parse_commandline(commandline: str, space: Any) -> List[int]:
    """The actions of a command line in kiln's form (above), CompilerGym's
    ("opt -flag ... input.bc -o output.bc") or a list of flags or names.
    ValueError for a command line that is none of these, UnknownAction
    (a ValueError and LookupError) for a pass no action has."""
    try:
        words = shlex.split(commandline.replace("|", " | "))
    except ValueError as error:
        raise ValueError(f"Invalid commandline: `{commandline}`: {error}") from None
    if not words:
        return []
    if words[0] == "opt":
        return space.from_commandline(" ".join(_compiler_gym_flags(commandline, words)))
    if words[0] != OPT:
        if not words[0].startswith("-") and words[0] not in space.pass_names:
            raise ValueError(f"Invalid commandline: `{commandline}`: neither `{OPT} ...`, "
                             "`opt ... input.bc -o output.bc` nor a list of actions")
        return [space.index(word) for word in words]
    stages: List[List[str]] = [[]]
    for word in words:
        if word == "|":
            stages.append([])
        else:
            stages[-1].append(word)
    pipelines = []
    for stage in stages:
        passes = [w.split("=", 1)[1] for w in stage if w.startswith(("-passes=", "--passes="))]
        if not stage or stage[0] != OPT or len(passes) > 1 or (not passes and len(stages) > 1):
            raise ValueError(f"Invalid commandline: `{commandline}`: each stage is one "
                             f"`{OPT} -passes=<action's pipeline>`")
        pipelines.extend(passes)
    return pipelines_to_actions(space, pipelines)


def _compiler_gym_flags(commandline: str, words: List[str]) -> List[str]:
    for tail in (["input.ll", "-S", "-o", "output.ll"], ["input.bc", "-o", "output.bc"]):
        if words[-len(tail):] == tail:
            return words[1:-len(tail)]
    raise ValueError(f"Invalid commandline: `{commandline}`")
