"""Stable-Baselines3 on kiln: `python3 -m kiln.bench_sb3 [--json] [--quick]`.

One row: SB3's PPO ("MlpPolicy", its defaults but n_steps) learning on
llvm-autophase-ic-v0 over kiln-bench-v0 with --envs envs, steps/s of
model.learn() (rollouts and updates), on kiln's vector env through
kiln.sb3.make_vec_env, judged against SB3's own SubprocVecEnv of as many
kiln.make() envs (one process per env, as SB3 users run many envs), in the
same run on the same embedded cluster (one worker of --slots slots, its
transition cache off: neither may replay the other's steps). Both run
episodes of --episode-steps steps over the same benchmarks, each new episode
on the next; torch uses one thread. The two take turns, --runs times each,
which goes first alternating; figures are min / median.

Needs stable_baselines3 (and gymnasium) importable.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from typing import Any, Callable, List, Optional

import kiln

from . import _bench
from ._bench import summary

ENV_ID = "llvm-autophase-ic-v0"


def _cycling_env(endpoint: str, benchmarks: List[str], offset: int, episode_steps: int) -> Any:
    """A kiln.make() env whose episodes take the benchmarks in turn (from
    `offset`), limited to `episode_steps` steps: what one subprocess runs."""
    import gymnasium

    class Cycle(gymnasium.Wrapper):
        def __init__(self, env: Any):
            super().__init__(env)
            self.next = offset

        def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None) -> Any:
            benchmark = benchmarks[self.next % len(benchmarks)]
            self.next += 1
            return self.env.reset(seed=seed, options={"benchmark": benchmark})

    env = kiln.make(ENV_ID, cluster=endpoint, faults_as_truncation=True)
    return gymnasium.wrappers.TimeLimit(Cycle(env), max_episode_steps=episode_steps)


def _env_maker(endpoint: str, benchmarks: List[str], offset: int,
               episode_steps: int) -> Callable[[], Any]:
    return lambda: _cycling_env(endpoint, benchmarks, offset, episode_steps)


def _learn_rate(envs: Any, timesteps: int, n_steps: int, seed: int) -> float:
    import stable_baselines3 as sb3

    model = sb3.PPO("MlpPolicy", envs, n_steps=n_steps, seed=seed, device="cpu", verbose=0)
    start = time.perf_counter()
    model.learn(timesteps)
    return timesteps / (time.perf_counter() - start)


def _kiln_rate(endpoint: str, benchmarks: List[str], envs: int, episode_steps: int,
               timesteps: int, n_steps: int, seed: int) -> float:
    from .sb3 import make_vec_env

    vec = make_vec_env(ENV_ID, envs, cluster=endpoint, benchmarks=benchmarks,
                       max_episode_steps=episode_steps, seed=seed)
    try:
        return _learn_rate(vec, timesteps, n_steps, seed)
    finally:
        vec.close()


def _subproc_rate(endpoint: str, benchmarks: List[str], envs: int, episode_steps: int,
                  timesteps: int, n_steps: int, seed: int) -> float:
    from stable_baselines3.common.vec_env import SubprocVecEnv

    vec = SubprocVecEnv([_env_maker(endpoint, benchmarks, i, episode_steps)
                         for i in range(envs)], start_method="forkserver")
    try:
        return _learn_rate(vec, timesteps, n_steps, seed)
    finally:
        vec.close()


def _children_find_sb3() -> None:
    """SubprocVecEnv's processes import stable_baselines3 and kiln where this
    one did (a folder put on sys.path, not on PYTHONPATH, is not inherited)."""
    import stable_baselines3

    paths = [os.path.dirname(os.path.dirname(os.path.abspath(stable_baselines3.__file__))),
             os.path.dirname(os.path.dirname(os.path.abspath(kiln.__file__)))]
    known = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    os.environ["PYTHONPATH"] = os.pathsep.join([p for p in known if p] +
                                               [p for p in paths if p not in known])


def run(runs: int = 3, envs: int = 8, episode_steps: int = 16, timesteps: int = 4096,
        n_steps: int = 64, slots: int = 2) -> List[dict]:
    """The bench's rows (one): see the module doc."""
    import torch

    torch.set_num_threads(1)
    _children_find_sb3()
    kiln_rates: List[float] = []
    subproc_rates: List[float] = []
    with kiln.LocalCluster(workers=1, slots=slots, client_tuning=True) as local:
        endpoint = local.endpoint
        client = kiln._kiln.Client(endpoint, 60.0, "", "", "")
        for worker in local.worker_endpoints:
            client.worker_parameter(worker, "service.transition_cache.set_max_size", "0")
        with kiln.datasets(endpoint) as datasets:
            benchmarks = datasets.benchmarks("benchmark://kiln-bench-v0")
        # Every program read once before any run: the first arm measured must
        # not pay for the worker's cold benchmark cache alone.
        with kiln.make_vec(ENV_ID, len(benchmarks), cluster=endpoint,
                           benchmarks=benchmarks) as warm:
            warm.reset()
        arms = [(kiln_rates, _kiln_rate), (subproc_rates, _subproc_rate)]
        for run_index in range(runs):
            for rates, rate in arms if run_index % 2 == 0 else arms[::-1]:
                rates.append(rate(endpoint, benchmarks, envs, episode_steps, timesteps, n_steps,
                                  run_index))
    return [{
        "env": ENV_ID, "envs": envs, "algorithm": "PPO MlpPolicy",
        "timesteps": timesteps, "n_steps": n_steps, "episode_steps": episode_steps,
        "judged_against": (
            f"SB3's SubprocVecEnv of {envs} kiln.make() envs (x_subprocess), same PPO, same "
            "episodes over the same benchmarks, same cluster, taking turns"),
        "kiln_vector_steps_per_s": summary(kiln_rates),
        "subproc_vec_env_steps_per_s": summary(subproc_rates),
        "x_subprocess": statistics.median(kiln_rates) / statistics.median(subproc_rates),
    }]


def _table(rows: List[dict]) -> str:
    lines = ["kiln bench sb3 (python3 -m kiln.bench_sb3): PPO learn() steps/s min / median"]
    for row in rows:
        k, s = row["kiln_vector_steps_per_s"], row["subproc_vec_env_steps_per_s"]
        lines.append(
            f"  {row['env']} x{row['envs']}: kiln.sb3 vector env {k['min']:.0f} / "
            f"{k['median']:.0f}; SubprocVecEnv {s['min']:.0f} / {s['median']:.0f} "
            f"(x{row['x_subprocess']:.2f})")
        lines.append(f"    judged against: {row['judged_against']}")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> None:
    """The command line (see the module doc)."""
    parser = _bench.parser("bench_sb3", __doc__)
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (min/median)")
    parser.add_argument("--envs", type=int, default=8, help="envs (both ways)")
    parser.add_argument("--timesteps", type=int, default=4096, help="PPO steps per run")
    parser.add_argument("--slots", type=int, default=2, help="the embedded worker's slots")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 1 run, 2 envs, 128 steps")
    args = parser.parse_args(argv)
    if args.quick:
        rows = run(runs=1, envs=2, episode_steps=8, timesteps=128, n_steps=32, slots=args.slots)
    else:
        rows = run(runs=args.runs, envs=args.envs, timesteps=args.timesteps, slots=args.slots)
    print(json.dumps({"rows": rows}, indent=1) if args.json else _table(rows))


if __name__ == "__main__":
    main()
