"""kiln's compiler tools for language-model agents (docs/tools.md).

A trainer registers the tools from :func:`schema` (the function-calling format
OpenAI-compatible trainers take as it is) and answers its model's tool calls
with a :class:`ToolRunner`: a call is a tool name and its JSON arguments, the
answer a dict, either the tool's result or ``{"error": {"code", "message"}}``
(never an exception for what the model wrote). The compile work runs on a
kiln cluster without the GIL, so a rollout worker's threads, asyncio tasks and
batches compile at once.
"""

import json
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union

from . import _kiln
from .cluster import LocalCluster, lease
from .errors import InvalidArgument

Arguments = Union[str, Mapping[str, Any]]
# A call in a batch: (name, arguments), {"name", "arguments"}, or an OpenAI
# tool call {"function": {"name", "arguments"}}.
Call = Union[Tuple[str, Arguments], Mapping[str, Any]]


def _arguments_text(arguments: Arguments) -> str:
    if isinstance(arguments, str):
        return arguments
    if isinstance(arguments, Mapping):
        return json.dumps(dict(arguments))
    raise InvalidArgument(
        f"tool arguments must be a JSON string or a dict, got {type(arguments).__name__}"
    )


def _name_and_arguments(call: Call) -> Tuple[str, str]:
    if isinstance(call, Mapping):
        function = call.get("function", call)
        if not isinstance(function, Mapping) or "name" not in function:
            raise InvalidArgument(f"a tool call needs a name: {call!r}")
        return str(function["name"]), _arguments_text(function.get("arguments", "{}"))
    if isinstance(call, (tuple, list)) and len(call) == 2:
        return str(call[0]), _arguments_text(call[1])
    raise InvalidArgument(f"a tool call is (name, arguments) or a tool-call dict, got {call!r}")


class ToolRunner:
    """Runs tool calls for one caller on a cluster.

    `cluster`: None (the embedded single-node cluster kiln.make uses), a
    coordinator address, or a kiln.LocalCluster. `caller`: whose calls these
    are; episodes belong to their caller, and each caller has its own quotas.
    `limits`: ToolLimits fields by name (max_module_bytes,
    max_passes_per_call, max_episodes_per_caller, max_ir_text_bytes,
    max_concurrent_calls_per_caller, prefix_cache_entries).
    Usable as a context manager; close() ends its episodes.
    """

    def __init__(
        self,
        cluster: Union[None, str, LocalCluster] = None,
        caller: str = "default",
        timeout: float = 60.0,
        key_file: Optional[str] = None,
        limits: Optional[Mapping[str, int]] = None,
    ) -> None:
        if not isinstance(caller, str) or not caller:
            raise InvalidArgument(f"caller must be a non-empty string, got {caller!r}")
        self._lease = lease(cluster)
        try:
            self._raw = _kiln.ToolExecutor(
                endpoint=self._lease.endpoint,
                timeout=timeout,
                key_file=key_file or "",
                limits=dict(limits or {}),
            )
        except BaseException:
            self._lease.release()
            raise
        self.caller = caller

    def call(self, name: str, arguments: Arguments = "{}") -> Dict[str, Any]:
        """One tool call: its result, or {"error": {"code", "message"}}."""
        answer: Dict[str, Any] = json.loads(
            self._raw.call(self.caller, name, _arguments_text(arguments))
        )
        return answer

    async def acall(self, name: str, arguments: Arguments = "{}") -> Dict[str, Any]:
        """call() for asyncio: it runs on the loop's executor, without the GIL."""
        import asyncio

        text = _arguments_text(arguments)
        raw = await asyncio.get_running_loop().run_in_executor(
            None, self._raw.call, self.caller, name, text
        )
        answer: Dict[str, Any] = json.loads(raw)
        return answer

    def call_batch(self, calls: Iterable[Call]) -> List[Dict[str, Any]]:
        """Many calls at once (a rollout batch's); their answers, in order."""
        pairs = [_name_and_arguments(call) for call in calls]
        return [json.loads(answer) for answer in self._raw.call_batch(self.caller, pairs)]

    def schema(self) -> List[Dict[str, Any]]:
        """The tool list as this runner's cluster serves it."""
        tools: List[Dict[str, Any]] = json.loads(self._raw.schema(False))
        return tools

    def result_schemas(self) -> Dict[str, Any]:
        """{tool: the JSON schema of its answer}, and the error's under "error"."""
        schemas: Dict[str, Any] = json.loads(self._raw.schema(True))
        return schemas

    def stats(self) -> Dict[str, int]:
        """Calls, errors, passes asked and applied, prefix-cache hits, sessions started."""
        stats: Dict[str, int] = self._raw.stats()
        return stats

    def close(self) -> None:
        """Ends this caller's episodes and lets the cluster go."""
        if self._lease is None:
            return
        self._raw.forget_caller(self.caller)
        self._raw = None  # type: ignore[assignment]
        self._lease.release()
        self._lease = None  # type: ignore[assignment]

    def __enter__(self) -> "ToolRunner":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_lease", None) is not None:
            self.close()


def schema(cluster: Union[None, str, LocalCluster] = None) -> List[Dict[str, Any]]:
    """The tools in the function-calling format, each a dict
    {"type": "function", "function": {"name", "description", "parameters"}}."""
    with ToolRunner(cluster) as runner:
        return runner.schema()


def result_schemas(cluster: Union[None, str, LocalCluster] = None) -> Dict[str, Any]:
    """{tool: the JSON schema (Draft 2020-12) of its answer}; errors under "error"."""
    with ToolRunner(cluster) as runner:
        return runner.result_schemas()

