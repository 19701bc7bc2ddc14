"""Stable-Baselines3 on kiln's vector env: one learner, many envs, one process.

A single kiln env needs nothing: it is a gymnasium.Env, so

    model = stable_baselines3.PPO("MlpPolicy", kiln.make("llvm-autophase-ic-v0"))

trains as it is (SB3 puts it in its DummyVecEnv). For many envs, SB3 wants
its own VecEnv class, whose step autoresets in the same step and keeps the
ended episode's last observation in infos[i]["terminal_observation"]; this
adapter gives it kiln's vector env in that shape:

    from kiln.sb3 import make_vec_env
    envs = make_vec_env("llvm-autophase-ic-v0", 16, max_episode_steps=45)
    model = stable_baselines3.PPO("MlpPolicy", envs).learn(10_000)

Every step of every env is in flight at once across the cluster from the
learner's thread (no subprocess per env, as SB3's SubprocVecEnv needs). A
fault (a compile error, a worker lost beyond restore, a timeout) ends that
env's episode as a truncation (infos[i]["TimeLimit.truncated"], the reason in
infos[i]["fault"]) and the env starts its next episode: training goes on.

Needs stable_baselines3 (and so gymnasium) importable: pip install
stable-baselines3; kiln itself does not depend on it.
"""

from __future__ import annotations

from typing import Any, Iterable, List, Optional, Sequence, Union

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv as _SB3VecEnv

from ._gymnasium import SAME_STEP
from .errors import InvalidArgument, Unimplemented
from .vector import VectorEnv

__all__ = ["KilnVecEnv", "make_vec_env"]


def make_vec_env(env_id: Any, num_envs: int, **kwargs: Any) -> "KilnVecEnv":
    """A KilnVecEnv over kiln.make_vec(env_id, num_envs, **kwargs) (the
    arguments of kiln.VectorEnv; autoreset_mode is same-step, as SB3 wants)."""
    if kwargs.get("autoreset_mode", "same_step") != "same_step":
        raise InvalidArgument("SB3's VecEnv autoresets in the same step: leave autoreset_mode out")
    kwargs["autoreset_mode"] = "same_step"
    return KilnVecEnv(VectorEnv(env_id, num_envs, **kwargs))


class KilnVecEnv(_SB3VecEnv):
    """SB3's VecEnv over a kiln.VectorEnv made with autoreset_mode="same_step"
    (make_vec_env makes both). Observations and actions are the vector env's;
    infos are SB3's list of dicts, one per env."""

    def __init__(self, venv: VectorEnv):
        if not isinstance(venv, VectorEnv):
            raise InvalidArgument(f"KilnVecEnv wants a kiln.VectorEnv, got {type(venv).__name__}")
        if venv.metadata.get("autoreset_mode") != SAME_STEP:
            raise InvalidArgument(
                "KilnVecEnv needs a VectorEnv made with autoreset_mode='same_step' (SB3 resets "
                "an env in the step that ends its episode); kiln.sb3.make_vec_env makes one"
            )
        self.venv = venv
        self._actions: Optional[np.ndarray] = None
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)

    # --- SB3's VecEnv --------------------------------------------------------
    def reset(self) -> Any:
        """Starts every env's episode with the seeds and options set by
        seed() / set_options() (used once, as SB3's own VecEnvs do)."""
        seeds = None if all(s is None for s in self._seeds) else list(self._seeds)
        options = _merged_options(self._options)
        observations, infos = self.venv.reset(seed=seeds, options=options)
        self.reset_infos = _split_infos(infos, self.num_envs)
        self._reset_seeds()
        self._reset_options()
        return observations

    def step_async(self, actions: np.ndarray) -> None:
        """Keeps the actions for step_wait() (kiln sends them all there at once)."""
        self._actions = actions

    def step_wait(self) -> Any:
        """(observations, rewards, dones, infos) as SB3 wants them: an env
        whose episode ended is already reset, its last observation in
        infos[i]["terminal_observation"], a truncation (a step limit or a
        fault) said by infos[i]["TimeLimit.truncated"]."""
        if self._actions is None:
            raise InvalidArgument("step_wait() without step_async(): send the actions first")
        actions, self._actions = self._actions, None
        observations, rewards, terminations, truncations, infos = self.venv.step(actions)
        dones = terminations | truncations
        per_env = _split_infos(infos, self.num_envs)
        final_obs = infos.get("final_obs")
        final_info = infos.get("final_info")
        result = []
        for i, info in enumerate(per_env):
            if dones[i]:
                self.reset_infos[i] = info
                info = dict(final_info[i]) if final_info is not None else {}
                info["terminal_observation"] = final_obs[i] if final_obs is not None else None
            info["TimeLimit.truncated"] = bool(truncations[i] and not terminations[i])
            result.append(info)
        return observations, rewards.astype(np.float32), dones, result

    def close(self) -> None:
        """Closes the kiln vector env (its sessions end)."""
        self.venv.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> List[Any]:
        """kiln.VectorEnv.get_attr(attr_name) of the envs at `indices`."""
        values = self.venv.get_attr(attr_name)
        return [values[i] for i in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Not supported (kiln's envs have no per-env attributes to set)."""
        self.venv.set_attr(attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None,
                   **method_kwargs: Any) -> List[Any]:
        """kiln.VectorEnv.call(method_name, ...) for the envs at `indices`."""
        values = self.venv.call(method_name, *method_args, **method_kwargs)
        return [values[i] for i in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> List[bool]:
        """False for each: kiln's envs are not gymnasium-wrapped one by one."""
        return [False for _ in self._get_indices(indices)]

    def get_images(self) -> Sequence[Optional[np.ndarray]]:
        """kiln's envs draw nothing."""
        raise Unimplemented("kiln's envs have no rendering")


def _split_infos(infos: dict, count: int) -> List[dict]:
    """gymnasium's vector infos (arrays with "_key" masks) as one dict per env."""
    result: List[dict] = [{} for _ in range(count)]
    for key, values in infos.items():
        if key.startswith("_") or key in ("final_obs", "final_info"):
            continue
        mask = infos.get("_" + key)
        for i in range(count):
            if mask is None or mask[i]:
                value = values[i]
                result[i][key] = value.item() if isinstance(value, np.generic) else value
    return result


def _merged_options(options: Iterable[dict]) -> Optional[dict]:
    """SB3's per-env reset options as kiln's: {"benchmark": one per env}."""
    options = list(options)
    if not any(options):
        return None
    keys = set().union(*options)
    if keys - {"benchmark"}:
        raise InvalidArgument(
            f"unknown reset option(s) {sorted(keys - {'benchmark'})}; kiln takes 'benchmark'"
        )
    if not all("benchmark" in o for o in options):
        raise InvalidArgument("reset option 'benchmark' must be given for every env or none")
    return {"benchmark": [o["benchmark"] for o in options]}
