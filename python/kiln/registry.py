"""The env ids kiln.make() knows: which session type each one starts and
which observation and reward spaces it uses unless told otherwise."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union

from . import _gymnasium
from .errors import InvalidArgument, NotFound

#: gymnasium.make("kiln/<env id>") makes kiln.make("<env id>").
GYMNASIUM_NAMESPACE = "kiln"


@dataclass
class EnvSpec:
    """What kiln.make(id) starts: the session type, the default benchmark,
    observation, reward and action spaces. It also has the fields of
    gymnasium's EnvSpec that gymnasium's checker and wrappers read
    (nondeterministic, max_episode_steps, additional_wrappers, ...)."""

    id: str
    session_type: str
    benchmark: str
    observation_space: Optional[str] = None
    reward_space: Optional[str] = None
    action_space: str = ""  # empty = the type's first action space
    # Worker-level parameters "<prefix>.datasets" / "<prefix>.benchmarks" list
    # the datasets; None when the type has none.
    datasets_prefix: Optional[str] = None
    # gymnasium's EnvSpec fields. kiln's episodes have no step limit of their
    # own (gymnasium.wrappers.TimeLimit or VectorEnv(max_episode_steps=) add
    # one); a session type's steps are deterministic unless it says otherwise.
    entry_point: str = "kiln:make"
    vector_entry_point: str = "kiln:make_vec"
    reward_threshold: Optional[float] = None
    nondeterministic: bool = False
    max_episode_steps: Optional[int] = None
    order_enforce: bool = True
    disable_env_checker: bool = True
    kwargs: dict = field(default_factory=dict)
    additional_wrappers: tuple = ()

    def __hash__(self) -> int:
        return hash((self.id, self.session_type, self.benchmark))

    def make(self, **kwargs: Any) -> Any:
        """kiln.make(self, **kwargs) (gymnasium's EnvSpec.make)."""
        from .env import make

        return make(self, **{**self.kwargs, **kwargs})


_SPECS = {
    spec.id: spec
    for spec in (
        EnvSpec("noop-v0", "noop", "benchmark://noop-v0/0", observation_space="Sum"),
        EnvSpec("llvm-v0", "llvm", "benchmark://kiln-bench-v0/crc32", datasets_prefix="llvm"),
        EnvSpec(
            "llvm-ic-v0",
            "llvm",
            "benchmark://kiln-bench-v0/crc32",
            observation_space="IrInstructionCount",
            reward_space="IrInstructionCountOz",
            datasets_prefix="llvm",
        ),
        EnvSpec(
            "llvm-autophase-ic-v0",
            "llvm",
            "benchmark://kiln-bench-v0/crc32",
            observation_space="Autophase",
            reward_space="IrInstructionCountOz",
            datasets_prefix="llvm",
        ),
        EnvSpec(
            "mlgo-inline-v0",
            "mlgo-inline",
            "benchmark://kiln-bench-v0/crc32",
            observation_space="Features",
            reward_space="NativeSizeSaved",
            datasets_prefix="llvm",
        ),
    )
}


def env_ids() -> list[str]:
    """Every env id kiln.make() accepts."""
    return sorted(_SPECS)


def spec(env_id: Union[str, EnvSpec]) -> EnvSpec:
    """The EnvSpec of `env_id`; kiln.NotFound listing the known ids otherwise.
    An EnvSpec passes through: that is how a user-defined session type is made."""
    if isinstance(env_id, EnvSpec):
        return env_id
    if not isinstance(env_id, str):
        raise InvalidArgument(f"env id must be a str, got {type(env_id).__name__}")
    try:
        return _SPECS[env_id]
    except KeyError:
        raise NotFound(f"unknown env id {env_id!r}; kiln knows {', '.join(env_ids())}") from None


class SpecOwner:
    """The `spec` of kiln's Env and VectorEnv (a base of both, before
    gymnasium's, whose `spec` attribute it stands for)."""

    _spec: EnvSpec
    # gymnasium.make("kiln/<id>") / make_vec record their own EnvSpec here.
    gymnasium_spec: Any = None

    @property
    def spec(self) -> EnvSpec:
        """kiln's EnvSpec of the env id (with gymnasium's EnvSpec fields)."""
        return self._spec

    @spec.setter
    def spec(self, value: Any) -> None:
        # A kiln EnvSpec is the env's; the gymnasium EnvSpec that
        # gymnasium.make records is kept apart, kiln's staying.
        if isinstance(value, EnvSpec):
            self._spec = value
        else:
            self.gymnasium_spec = value


def _register_with_gymnasium() -> None:
    """Registers every env id as "kiln/<id>" with gymnasium (make and
    make_vec, whose entry points are kiln.make and kiln.make_vec)."""
    if not _gymnasium.AVAILABLE:
        return
    registered = _gymnasium.gymnasium.registry
    for env_id in _SPECS:
        name = f"{GYMNASIUM_NAMESPACE}/{env_id}"
        if name not in registered:
            _gymnasium.gymnasium.register(
                id=name, entry_point="kiln:make", vector_entry_point="kiln:make_vec",
                kwargs={"env_id": env_id})


_register_with_gymnasium()
