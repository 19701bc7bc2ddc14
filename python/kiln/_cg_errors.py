"""kiln.compiler_gym.errors: CompilerGym's exception classes, with the same
bases, so that a script's `except ServiceError` / `except
BenchmarkInitError` catches what the compatibility env raises for the same
failure."""

from typing import Any, Dict


class ServiceError(Exception):
    """An error the compiler service reported."""


class SessionNotFound(ServiceError):
    """No episode to act on: step() or an observation before reset()."""


class ServiceOSError(ServiceError, OSError):
    """The service failed in the operating system's terms."""


class ServiceInitError(ServiceError, OSError):
    """The service could not start."""


class EnvironmentNotSupported(ServiceInitError):
    """The environment does not run on this system."""


class ServiceTransportError(ServiceError, OSError):
    """The connection to the service broke (kiln: the session was lost)."""


class ServiceIsClosed(ServiceError, TypeError):
    """The env was closed: no more calls."""


class BenchmarkInitError(OSError):
    """A benchmark could not be loaded."""


class DatasetInitError(OSError):
    """A dataset could not be set up."""


class DownloadFailed(IOError):
    """A download failed (kiln downloads nothing: never raised)."""


class TooManyRequests(DownloadFailed):
    """A download was refused for its rate (never raised by kiln)."""


class ValidationError:
    """One error that validation found: `type` says what, `data` holds the
    evidence (as CompilerGym's pydantic model; ordered by type, data)."""

    def __init__(self, type: str, data: Any = None) -> None:  # noqa: A002 (CompilerGym's name)
        self.type = type
        self.data: Dict[str, Any] = dict(data or {})

    def dict(self) -> Dict[str, Any]:
        """{"type": ..., "data": ...}."""
        return {"type": self.type, "data": self.data}

    def json(self) -> str:
        """The error as JSON text (CompilerGym's pydantic .json())."""
        import json  # pylint: disable=import-outside-toplevel

        return json.dumps(self.dict())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ValidationError):
            return NotImplemented
        return (self.type, self.data) == (other.type, other.data)

    def __lt__(self, other: "ValidationError") -> bool:
        if not isinstance(other, ValidationError):
            return True
        return (self.type, repr(self.data)) < (other.type, repr(other.data))

    def __hash__(self) -> int:
        return hash(self.type)

    def __repr__(self) -> str:
        return f"ValidationError(type={self.type!r}, data={self.data!r})"


__all__ = [
    "ValidationError",
    "BenchmarkInitError",
    "ServiceError",
    "SessionNotFound",
    "ServiceOSError",
    "ServiceInitError",
    "EnvironmentNotSupported",
    "ServiceTransportError",
    "ServiceIsClosed",
    "DownloadFailed",
    "TooManyRequests",
    "DatasetInitError",
]
