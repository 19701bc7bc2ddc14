"""kiln's exceptions: one class per kiln error kind (common/base/status.h).

The extension raises these for every error a worker, the coordinator or the
client reports; each class also derives from the builtin that a Python caller
would expect (ValueError for bad input, KeyError for an unknown name, ...).
"""


class KilnError(Exception):
    """Base of every kiln error; `code` names the kind as kiln logs it."""

    code = "internal"


class InvalidArgument(KilnError, ValueError):
    """The request is wrong (bad action, bad parameter): fix it, do not retry."""

    code = "invalid argument"


class NotFound(KilnError, KeyError):
    """The named env, space, session type, benchmark or dataset does not exist."""

    code = "not found"

    def __str__(self):
        # KeyError would show the message quoted, as if it were the key.
        return str(self.args[0]) if self.args else ""


class Timeout(KilnError, TimeoutError):
    """A deadline passed; the operation may be retried."""

    code = "timeout"


class SessionLost(KilnError, ConnectionError):
    """The worker or coordinator is gone: reset the env (or restore) and retry."""

    code = "disconnected"


class Overloaded(KilnError):
    """No capacity right now: back off and retry."""

    code = "overloaded"


class CompileError(KilnError):
    """The compiler failed on this input; the session is over (reset the env)."""

    code = "compile error"


class PermissionDenied(KilnError, PermissionError):
    """The peer may not do this (another experiment's session, unregistered)."""

    code = "permission denied"


class Unimplemented(KilnError, NotImplementedError):
    """The session type does not support this operation."""

    code = "unimplemented"


class InternalError(KilnError):
    """A bug in kiln: please report it."""

    code = "internal"


__all__ = [
    "KilnError",
    "InvalidArgument",
    "NotFound",
    "Timeout",
    "SessionLost",
    "Overloaded",
    "CompileError",
    "PermissionDenied",
    "Unimplemented",
    "InternalError",
]


# Each error class by its name (how the extension names an error it returns
# rather than raises).
BY_NAME = {cls.__name__: cls for cls in KilnError.__subclasses__()}

# Errors that are faults of the cluster or the program, not of the caller's
# code: with faults_as_truncation (kiln.make) and in a kiln.VectorEnv they
# end the episode as truncated, named by these reasons.
FAULT_REASONS = {
    "CompileError": "compile_error",
    "SessionLost": "session_lost",
    "Timeout": "timeout",
    "Overloaded": "overloaded",
}
