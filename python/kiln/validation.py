"""What `env.validate()` says: whether the optimized program still behaves
like the benchmark as it came.

The worker builds the session's current module into an executable, runs it
on every input of the benchmark's run spec in its sandbox, runs the
benchmark's unoptimized build on the same inputs, and compares exit status
and output (and, with `asan=True`, runs an AddressSanitizer build of the
optimized module too). Every difference is a `ValidationError` with its
evidence.
"""

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ValidationError:
    """One difference: `kind` is one of build-failed, reference-failed,
    timeout, crash, sanitizer, exit-status, output."""

    kind: str
    input: str
    message: str
    evidence: str = ""

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}" + (f" ({self.evidence})" if self.evidence else "")


@dataclass(frozen=True)
class ValidationResult:
    """The verdict for one state of one benchmark."""

    benchmark: str
    inputs: int
    asan: bool
    errors: tuple = field(default_factory=tuple)

    @property
    def okay(self) -> Any:
        """True when the program behaved the same on every input."""
        return not self.errors

    def error_details(self) -> Any:
        """Every error, one per line."""
        return "\n".join(str(error) for error in self.errors)

    def __bool__(self) -> bool:
        return self.okay

    def __str__(self) -> str:
        if self.okay:
            return f"✅ {self.benchmark}: the same on {self.inputs} input(s)"
        return f"❌ {self.benchmark}: {len(self.errors)} error(s)\n{self.error_details()}"

    @classmethod
    def from_json(cls, benchmark: Any, text: Any) -> Any:
        """The result the worker's JSON report gives for `benchmark`."""
        report = json.loads(text)
        errors = tuple(
            ValidationError(e["kind"], e["input"], e["message"], e.get("evidence", ""))
            for e in report["errors"]
        )
        return cls(benchmark, int(report["inputs"]), bool(report["asan"]), errors)
