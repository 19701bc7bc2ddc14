"""CompilerGym's ValidationResult over what kiln checks: the replay of the
state's actions, the reward it claims (when the env has a deterministic
reward space), and the program's behaviour on the benchmark's inputs
(kiln's env.validate(), run in the worker's sandbox)."""

import itertools
import json
import re
from collections import Counter
import concurrent.futures
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional

from ._cg_errors import ValidationError
from .errors import NotFound, Unimplemented


def _as_error(error: Any) -> ValidationError:
    """An error as given, or read back from its dict()."""
    return ValidationError(**error) if isinstance(error, dict) else error


class ValidationResult:
    """What validating one state found; okay() when nothing failed."""

    def __init__(self, state: Any, walltime: float, reward_validated: bool = False,
                 actions_replay_failed: bool = False, reward_validation_failed: bool = False,
                 benchmark_semantics_validated: bool = False,
                 benchmark_semantics_validation_failed: bool = False,
                 errors: Optional[Iterable[ValidationError]] = None,
                 kiln_result: Any = None) -> None:
        if walltime < 0:
            raise ValueError("Walltime cannot be negative")
        if isinstance(state, dict):  # read back from json()
            from .state import CompilerGymEnvState  # pylint: disable=import-outside-toplevel

            state = CompilerGymEnvState(**state)
        self.state = state
        self.walltime = walltime
        self.reward_validated = reward_validated
        self.actions_replay_failed = actions_replay_failed
        self.reward_validation_failed = reward_validation_failed
        self.benchmark_semantics_validated = benchmark_semantics_validated
        self.benchmark_semantics_validation_failed = benchmark_semantics_validation_failed
        self.errors: List[ValidationError] = [_as_error(e) for e in errors or []]
        self.kiln_result = kiln_result  # kiln.ValidationResult of the semantics check, or None

    def okay(self) -> bool:
        """Whether the replay, the reward and the behaviour all held."""
        return not (self.actions_replay_failed or self.reward_validation_failed
                    or self.benchmark_semantics_validation_failed)

    @property
    def error_details(self) -> str:
        """The errors' types, counted ("3× Output differs") and numbered."""
        if not self.errors:
            return ""
        types = [e.type for e in self.errors]
        counts = sorted(Counter(types).items(), key=lambda item: -item[1])
        if len(counts) == 1:
            return types[0] if len(types) == 1 else f"{len(types)}× {types[0]}"
        parts = []
        for j, (message, count) in enumerate(counts, start=1):
            parts.append(f"[{j}/{len(counts)}] {count}× {message}" if count > 1
                         else f"[{j}/{len(counts)}] {message}")
            remaining = len(counts) - j
            if j >= 3 and remaining > 3:
                parts.append(f"... ({remaining} more {'error' if remaining == 1 else 'errors'})")
                break
        return ", ".join(parts)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ValidationResult):
            return False
        return (self.state == other.state
                and self.reward_validated == other.reward_validated
                and self.actions_replay_failed == other.actions_replay_failed
                and self.reward_validation_failed == other.reward_validation_failed
                and self.benchmark_semantics_validated == other.benchmark_semantics_validated
                and self.benchmark_semantics_validation_failed
                == other.benchmark_semantics_validation_failed
                and sorted(self.errors) == sorted(other.errors))

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        benchmark = re.sub(r"^benchmark://", "", str(self.state.benchmark))
        if not self.okay():
            message = ", ".join(self.error_details.strip().split("\n"))
            if len(message) > 50:
                message = message[:47] + "..."
            return f"❌  {benchmark}  {message}"
        if self.state.reward is None:
            return f"✅  {benchmark}"
        return f"✅  {benchmark}  {self.state.reward:.4f}"

    def __str__(self) -> str:
        return repr(self)

    def dict(self) -> dict:
        """The result's fields (CompilerGym's pydantic .dict())."""
        return {
            "state": self.state.dict() if hasattr(self.state, "dict") else self.state,
            "walltime": self.walltime,
            "reward_validated": self.reward_validated,
            "actions_replay_failed": self.actions_replay_failed,
            "reward_validation_failed": self.reward_validation_failed,
            "benchmark_semantics_validated": self.benchmark_semantics_validated,
            "benchmark_semantics_validation_failed": self.benchmark_semantics_validation_failed,
            "errors": [e.dict() for e in self.errors],
        }

    def json(self) -> str:
        """The result as JSON text (CompilerGym's pydantic .json())."""
        return json.dumps(self.dict())

    @classmethod
    def join(cls, results: Iterable["ValidationResult"]) -> "ValidationResult":
        """One result that is the union of results for the same state."""
        results = list(results)
        if not results:
            raise ValueError("No states to join")
        if any(r.state != results[0].state for r in results[1:]):
            raise ValueError("All states must be the same")
        return cls(
            state=results[0].state,
            walltime=sum(r.walltime for r in results),
            reward_validated=any(r.reward_validated for r in results),
            actions_replay_failed=any(r.actions_replay_failed for r in results),
            reward_validation_failed=any(r.reward_validation_failed for r in results),
            benchmark_semantics_validated=any(r.benchmark_semantics_validated for r in results),
            benchmark_semantics_validation_failed=any(
                r.benchmark_semantics_validation_failed for r in results),
            errors=list(itertools.chain.from_iterable(r.errors for r in results)),
        )


def validate_states(make_env: Callable[[], Any], states: Iterable[Any], nproc: Optional[int] = None,
                    inorder: bool = False) -> Iterator[ValidationResult]:
    """env.validate(state) of each state, each in an env of make_env(), on
    up to nproc threads; in the states' order with inorder, else as they
    finish."""
    def one(state: Any) -> ValidationResult:
        with make_env() as env:
            return env.validate(state)

    states = list(states)
    if nproc == 1:
        yield from map(one, states)
        return
    with concurrent.futures.ThreadPoolExecutor(max_workers=nproc or len(states) or 1) as pool:
        if inorder:
            yield from pool.map(one, states)
        else:
            futures = [pool.submit(one, state) for state in states]
            yield from (f.result() for f in concurrent.futures.as_completed(futures))


def semantics_errors(kiln_result: Any) -> List[ValidationError]:
    """kiln's validation errors as CompilerGym's (type: what differed)."""
    kinds = {
        "build-failed": "Failed to build the optimized program",
        "reference-failed": "Failed to run the unoptimized program",
        "timeout": "Execution timeout",
        "crash": "Runtime crash",
        "sanitizer": "Sanitizer error",
        "exit-status": "Exit status differs",
        "output": "Output differs",
    }
    return [ValidationError(type=kinds.get(e.kind, e.kind),
                            data={"input": e.input, "message": e.message,
                                  "evidence": e.evidence})
            for e in kiln_result.errors]


def replayed(replay: Any, state: Any, found: Dict[str, Any]) -> bool:
    """Applies `state` in `replay`; False (and the error in `found`) if that failed."""
    try:
        replay.apply(state)
        return True
    except (ValueError, OSError) as error:
        found["actions_replay_failed"] = True
        found["errors"].append(ValidationError(
            type="Action replay failed",
            data={"exception": str(error), "exception_type": type(error).__name__}))
        return False


def check_semantics(replay: Any, found: Dict[str, Any]) -> None:
    """kiln's behaviour check; a benchmark it cannot run is not validated."""
    try:
        result = replay._env.validate()
    except (Unimplemented, NotFound):
        return
    found["benchmark_semantics_validated"] = True
    found["kiln_result"] = result
    if not result.okay:
        found["benchmark_semantics_validation_failed"] = True
        found["errors"].extend(semantics_errors(result))
