"""kiln's exceptions: one class per kiln error code (schema/error_codes.txt).

The extension raises these for every error a worker, the coordinator or the
client reports; each class also derives from the builtin that a Python caller
would expect (ValueError for bad input, KeyError for an unknown name, ...).
"""

import builtins
from typing import TYPE_CHECKING

from kiln.error_codes import CODES


class KilnError(Exception):
    """Base of every kiln error; `code` names the kind as kiln logs it."""

    code = "internal"


def _text_of_key(self):
    # KeyError would show the message quoted, as if it were the key.
    return str(self.args[0]) if self.args else ""


# One class per code of schema/error_codes.txt (through the generated
# kiln.error_codes), so that C++, the wire and Python cannot disagree.
for _name, _builtin, _text, _meaning in CODES:
    if not _name:
        continue  # ok is no error
    _bases = (KilnError, getattr(builtins, _builtin)) if _builtin else (KilnError,)
    _body: dict[str, object] = {"code": _text, "__doc__": _meaning[0].upper() + _meaning[1:] + ".",
             "__module__": __name__}
    if _builtin == "KeyError":
        _body["__str__"] = _text_of_key
    globals()[_name] = type(_name, _bases, _body)

__all__ = ["KilnError"] + [name for name, *_ in CODES if name]

if TYPE_CHECKING:
    # What the loop above makes, spelled out for type checkers (which do not
    # run it); tests/python/test_typing.py holds this list to CODES.
    class InvalidArgument(KilnError, ValueError): ...
    class NotFound(KilnError, KeyError): ...
    class Timeout(KilnError, TimeoutError): ...
    class SessionLost(KilnError, ConnectionError): ...
    class Overloaded(KilnError): ...
    class CompileError(KilnError): ...
    class PermissionDenied(KilnError, PermissionError): ...
    class Unimplemented(KilnError, NotImplementedError): ...
    class InternalError(KilnError): ...


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
