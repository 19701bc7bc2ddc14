"""The compatibility env's views: env.observation and env.reward (lookups
by name, `spaces`, CompilerGym's call form, derived observations), and
the CompilerEnv base class scripts check against."""

from typing import Any, Dict


class _Spaces(dict):
    """A view's spaces by name; a name kiln does not serve says why."""

    check: Any = None

    def __missing__(self, name: str) -> Any:
        if self.check is not None:
            try:
                self.check(name)  # NotImplementedError for what kiln does not have
            except LookupError:
                pass
        raise KeyError(name)


class _Views:
    """env.observation / env.reward: value lookups by name, `spaces` by name."""

    def __init__(self, lookup: Any, spaces: Dict[str, Any], check: Any = None,
                 derive: Any = None) -> None:
        self._lookup, self.spaces = lookup, _Spaces(spaces)
        self.spaces.check = check
        self._derive = derive

    def add_derived_space(self, id: str, base_id: str, space: Any,  # noqa: A002 (gym's name)
                          translate: Any, **kwargs: Any) -> None:
        """A new observation `id`: translate(the value of `base_id`), in `space`."""
        if self._derive is None:
            raise NotImplementedError("only observations have derived spaces")
        self._derive(id, base_id, space, translate)

    def add_space(self, space: Any) -> None:
        """NotImplementedError: CompilerGym computed a space of the user's own
        (a Reward subclass's update()) in its env; kiln computes observations
        and rewards in its sessions on the workers."""
        raise NotImplementedError(
            f"env.{'observation' if self._derive else 'reward'}.add_space() is not available "
            "on kiln: kiln computes observations and rewards in its sessions; compute a reward "
            "of your own from env.observation[...] in a RewardWrapper, an observation with "
            "env.observation.add_derived_space()")

    def __getitem__(self, name: Any) -> Any:
        name = getattr(name, "id", getattr(name, "name", name))
        self.spaces[name]  # pylint: disable=pointless-statement  (KeyError for a name it lacks)
        return self._lookup(name)

    def __getattr__(self, name: str) -> Any:
        """env.observation.Autophase(): CompilerGym's call form of a lookup."""
        spaces = self.__dict__.get("spaces")
        if spaces is None or name.startswith("_"):
            raise AttributeError(name)
        try:
            spaces[name]  # pylint: disable=pointless-statement  (NotImplementedError says why)
        except KeyError:
            raise AttributeError(name) from None
        return lambda: self[name]


class CompilerEnv:
    """The base class CompilerGym's scripts name in isinstance() checks and
    type hints; every compatibility env is one."""
