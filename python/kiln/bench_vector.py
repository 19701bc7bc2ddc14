"""kiln.VectorEnv's figures: `python3 -m kiln.bench_vector [--json] [--quick]`.

Each row is judged against what a user would otherwise run, in the same run,
on the same cluster (an embedded one: one worker of --slots slots):
- llvm-autophase-ic-v0 over kiln-bench-v0 (random actions, episodes of 20
  steps) with 1, 8, 32 and 128 envs: the vector env's steps/s against a
  Python loop over as many single envs (`x_loop`), a vector env of one
  subprocess per env over pipes as gymnasium's AsyncVectorEnv builds it
  (`x_subprocess`), and what the worker's slots can do: slots / the mean
  worker time per step the worker reported in the same run (`x_slots`);
- noop-v0 with 128 envs: steps/s into Python, against the subprocess vector
  env;
- 128 envs: the time from make_vec to the first batch of observations, and
  the client's memory per env (its RSS grown by making and resetting them).
Every way runs the same work: whole cycles of episodes (each env's 20 steps
and the reset that begins its next episode, which counts as a step, as
gymnasium's autoreset step does), until --seconds have passed, over the same
benchmarks in the same order. A step's worker time is all the worker spent
on it (actions, observations; for a reset, the benchmark, the module and its
first observations). Every figure is the min and median of --runs runs
(default 3).
"""

import json
import multiprocessing
import resource
import statistics
import time

import numpy as np

import kiln

from . import _bench
from ._bench import summary

EPISODE_STEPS = 20


def _rss_kib():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _actions(vec, fixed):
    return np.full(vec.num_envs, fixed) if fixed is not None else vec.action_space.sample()


def _vector_rate(env_id, envs, endpoint, benchmarks, seconds, seed, fixed_action=None,
                 episode_steps=EPISODE_STEPS):
    """Steps/s of a kiln.VectorEnv, and the worker's mean time per step (us).
    Random actions, or `fixed_action` for every env and step."""
    with kiln.make_vec(env_id, envs, cluster=endpoint, benchmarks=benchmarks,
                       max_episode_steps=episode_steps, seed=seed) as vec:
        vec.reset(seed=seed)
        # One cycle: every env's episode, then the step that resets it.
        cycle = 1 if episode_steps is None else episode_steps + 1
        steps, worker_us, start = 0, [], time.perf_counter()
        while time.perf_counter() - start < seconds:
            for _ in range(cycle):
                _, _, _, _, infos = vec.step(_actions(vec, fixed_action))
                steps += envs
                if "worker_us" in infos:
                    worker_us.extend(infos["worker_us"][infos["_worker_us"]].tolist())
        rate = steps / (time.perf_counter() - start)
    return rate, (statistics.fmean(worker_us) if worker_us else 0.0)


def _async_rate(env_id, envs, endpoint, benchmarks, seconds, seed, batch):
    """Steps/s of EnvPool's pair: recv() the first `batch` envs that answer,
    send() them their next action at once; the worker's mean time per step."""
    with kiln.make_vec(env_id, envs, cluster=endpoint, benchmarks=benchmarks,
                       max_episode_steps=EPISODE_STEPS, seed=seed, batch_size=batch) as vec:
        vec.async_reset()
        rng = np.random.default_rng(seed)
        n = vec.single_action_space.n
        steps, worker_us, start = 0, [], time.perf_counter()
        while time.perf_counter() - start < seconds:
            _, _, _, _, infos = vec.recv()
            ids = infos["env_id"]
            steps += len(ids)
            if "worker_us" in infos:
                worker_us.extend(infos["worker_us"][infos["_worker_us"]].tolist())
            vec.send(rng.integers(n, size=len(ids)), ids)
        rate = steps / (time.perf_counter() - start)
        while vec._core.in_flight_count:
            vec.recv()
    return rate, (statistics.fmean(worker_us) if worker_us else 0.0)


class _Cycle:
    """The benchmarks in the order a VectorEnv's episodes take them
    ("cycle"): every baseline runs the same programs in the same order."""

    def __init__(self, benchmarks):
        self.benchmarks = benchmarks
        self.next = 0

    def draw(self):
        benchmark = self.benchmarks[self.next % len(self.benchmarks)]
        self.next += 1
        return benchmark


def _loop_rate(env_id, envs, endpoint, benchmarks, seconds, seed):
    """Steps/s of a Python loop over `envs` single envs, one blocking step each."""
    cycle = _Cycle(benchmarks)
    singles = [kiln.make(env_id, cluster=endpoint) for _ in range(envs)]
    try:
        rng = np.random.default_rng(seed)
        for env in singles:
            env.reset(benchmark=cycle.draw())
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            for _ in range(EPISODE_STEPS):
                for env in singles:
                    env.step(int(rng.integers(env.action_space.n)))
            for env in singles:
                env.reset(benchmark=cycle.draw())
            steps += envs * (EPISODE_STEPS + 1)
        return steps / (time.perf_counter() - start)
    finally:
        for env in singles:
            env.close()


def _subprocess_env(conn, env_id, endpoint, benchmarks, seed, fixed_action=None):
    """One env in its own process, driven over a pipe (AsyncVectorEnv's shape);
    its episodes take `benchmarks` in turn."""
    env = kiln.make(env_id, cluster=endpoint)
    cycle = _Cycle(benchmarks)
    rng = np.random.default_rng(seed)
    try:
        while True:
            command = conn.recv()
            if command == "close":
                break
            if command == "reset":
                observation, _ = env.reset(benchmark=cycle.draw())
                conn.send(observation)
                continue
            action = fixed_action if fixed_action is not None else int(
                rng.integers(env.action_space.n))
            observation, reward, terminated, truncated, _ = env.step(action)
            conn.send((observation, reward, terminated, truncated))
    finally:
        env.close()


def _subprocess_rate(env_id, envs, endpoint, benchmarks, seconds, seed, fixed_action=None,
                     episode_steps=EPISODE_STEPS):
    """Steps/s of one subprocess per env over pipes: send to all, then wait for all."""
    context = multiprocessing.get_context("spawn")
    pipes, processes = [], []
    for i in range(envs):
        parent, child = context.Pipe()
        process = context.Process(
            target=_subprocess_env,
            # Env i's k-th episode runs benchmark i + k * envs: the order in
            # which a VectorEnv's episodes, all starting and ending together,
            # take them.
            args=(child, env_id, endpoint,
                  [benchmarks[(i + k * envs) % len(benchmarks)] for k in range(len(benchmarks))],
                  seed + i, fixed_action),
            daemon=True)
        process.start()
        pipes.append(parent)
        processes.append(process)
    try:
        def sweep(command):
            for pipe in pipes:
                pipe.send(command)
            for pipe in pipes:
                pipe.recv()

        sweep("reset")
        # One cycle: every env's episode, then the step that resets it.
        cycle = ["step"] if episode_steps is None else ["step"] * episode_steps + ["reset"]
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            for command in cycle:
                sweep(command)
            steps += envs * len(cycle)
        return steps / (time.perf_counter() - start)
    finally:
        for pipe in pipes:
            pipe.send("close")
        for process in processes:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()


def _first_step(env_id, envs, endpoint, benchmarks, seed):
    """Seconds from make_vec to the first batch of observations, and the
    client's RSS growth per env (KiB)."""
    before = _rss_kib()
    start = time.perf_counter()
    vec = kiln.make_vec(env_id, envs, cluster=endpoint, benchmarks=benchmarks, seed=seed)
    try:
        vec.reset(seed=seed)
        took = time.perf_counter() - start
        return took, (_rss_kib() - before) / envs
    finally:
        vec.close()



def run(runs=3, seconds=3.0, sizes=(1, 8, 32, 128), slots=2, subprocess_sizes=(1, 8, 32),
        many=128, subprocess_many=32, async_envs=32):
    rows = []
    with kiln.LocalCluster(workers=1, slots=slots, client_tuning=True) as local:
        endpoint = local.endpoint
        # Every way runs the same episodes (same seeds): none may replay the
        # steps another ran before from the worker's transition cache.
        client = kiln._kiln.Client(endpoint, 60.0, "", "", "")
        for worker in local.worker_endpoints:
            client.worker_parameter(worker, "service.transition_cache.set_max_size", "0")
        benchmarks = kiln.datasets(endpoint).benchmarks("benchmark://kiln-bench-v0")
        env_id = "llvm-autophase-ic-v0"
        # Every program read once before any row: the first row measured
        # must not pay for the worker's cold benchmark cache alone.
        with kiln.make_vec(env_id, len(benchmarks), cluster=endpoint,
                           benchmarks=benchmarks) as warm:
            warm.reset()
        for envs in sizes:
            vector, loop, sub, capacity = [], [], [], []
            for run_index in range(runs):
                rate, worker_us = _vector_rate(env_id, envs, endpoint, benchmarks, seconds,
                                               run_index)
                vector.append(rate)
                if worker_us > 0:
                    capacity.append(slots * 1e6 / worker_us)
                loop.append(_loop_rate(env_id, envs, endpoint, benchmarks, seconds, run_index))
                if envs in subprocess_sizes:
                    sub.append(_subprocess_rate(env_id, envs, endpoint, benchmarks, seconds,
                                                run_index))
            row = {
                "env": env_id, "envs": envs,
                "judged_against": (
                    "a Python loop over as many single envs (x_loop), one subprocess per env "
                    "over pipes (x_subprocess), the worker's slots at their measured worker "
                    "time per step (x_slots); same work: whole episode cycles over the same "
                    "benchmarks in the same order, same cluster"),
                "vector_steps_per_s": summary(vector),
                "loop_steps_per_s": summary(loop),
                "x_loop": statistics.median(vector) / statistics.median(loop),
                "slot_capacity_steps_per_s": summary(capacity) if capacity else None,
                "x_slots": (statistics.median(vector) / statistics.median(capacity)
                            if capacity else None),
            }
            if sub:
                row["subprocess_steps_per_s"] = summary(sub)
                row["x_subprocess"] = statistics.median(vector) / statistics.median(sub)
            rows.append(row)
        rates, capacity = [], []
        for run_index in range(runs):
            rate, worker_us = _async_rate(env_id, async_envs, endpoint, benchmarks, seconds,
                                          run_index, async_envs // 2)
            rates.append(rate)
            if worker_us > 0:
                capacity.append(slots * 1e6 / worker_us)
        rows.append({
            "env": env_id, "envs": async_envs, "mode": f"send/recv, batch {async_envs // 2}",
            "judged_against": "the worker's slots at their measured worker time per step "
                              "(x_slots), same benchmarks",
            "vector_steps_per_s": summary(rates),
            "slot_capacity_steps_per_s": summary(capacity) if capacity else None,
            "x_slots": (statistics.median(rates) / statistics.median(capacity)
                        if capacity else None),
        })
        noop, noop_sub = [], []
        for run_index in range(runs):
            # Steps into Python: the same add action every step, as `kiln
            # bench rtt` steps, in one long episode (a random noop action
            # ends it one time in 13, and a reset is a session start).
            noop.append(_vector_rate("noop-v0", many, endpoint, ["benchmark://noop-v0/0"],
                                     seconds, run_index, fixed_action=1, episode_steps=None)[0])
            # Fewer processes than envs: 128 interpreters would not fit the
            # machine's memory comfortably, and more only adds switching.
            noop_sub.append(_subprocess_rate("noop-v0", subprocess_many, endpoint,
                                             ["benchmark://noop-v0/0"], seconds, run_index,
                                             fixed_action=1, episode_steps=None))
        rows.append({
            "env": "noop-v0", "envs": many,
            "judged_against": (f"{subprocess_many} subprocess envs over pipes, the same action "
                               "every step (x_subprocess); target 50,000 steps/s"),
            "vector_steps_per_s": summary(noop),
            "subprocess_steps_per_s": summary(noop_sub),
            "subprocess_envs": subprocess_many,
            "x_subprocess": statistics.median(noop) / statistics.median(noop_sub),
        })
        first, memory = [], []
        for run_index in range(runs):
            took, kib = _first_step(env_id, many, endpoint, benchmarks, run_index)
            first.append(took)
            memory.append(kib)
        rows.append({"env": env_id, "envs": many, "first_batch_s": summary(first),
                     "client_kib_per_env": summary(memory),
                     "judged_against": "- (time and memory, no baseline)"})
    return rows


def _table(rows):
    lines = ["kiln bench vector (python3 -m kiln.bench_vector): steps/s min / median"]
    for row in rows:
        if "first_batch_s" in row:
            lines.append(
                f"  {row['env']} x{row['envs']}: first batch {row['first_batch_s']['min']:.2f} / "
                f"{row['first_batch_s']['median']:.2f} s; client memory "
                f"{row['client_kib_per_env']['median']:.0f} KiB per env")
            continue
        v = row["vector_steps_per_s"]
        mode = f" ({row['mode']})" if "mode" in row else ""
        text = f"  {row['env']} x{row['envs']}{mode}: vector {v['min']:.0f} / {v['median']:.0f}"
        if "loop_steps_per_s" in row:
            loop = row["loop_steps_per_s"]
            text += (f"; single-env loop {loop['min']:.0f} / {loop['median']:.0f} "
                     f"(x{row['x_loop']:.2f})")
        if row.get("subprocess_steps_per_s"):
            sub = row["subprocess_steps_per_s"]
            text += (f"; subprocess envs{' x' + str(row['subprocess_envs']) if 'subprocess_envs' in row else ''} "
                     f"{sub['min']:.0f} / {sub['median']:.0f} (x{row['x_subprocess']:.2f})")
        if row.get("x_slots") is not None:
            cap = row["slot_capacity_steps_per_s"]
            text += f"; slots can do {cap['median']:.0f} (x{row['x_slots']:.2f})"
        lines.append(text)
        lines.append(f"    judged against: {row['judged_against']}")
    return "\n".join(lines)


def main(argv=None):
    parser = _bench.parser("bench_vector", __doc__)
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (min/median)")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement")
    parser.add_argument("--slots", type=int, default=2, help="the embedded worker's slots")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 1 run of 0.3 s, at most 8 envs")
    args = parser.parse_args(argv)
    if args.quick:
        rows = run(runs=1, seconds=0.3, sizes=(1, 8), slots=args.slots, subprocess_sizes=(1,),
                   many=8, subprocess_many=2, async_envs=8)
    else:
        rows = run(runs=args.runs, seconds=args.seconds, slots=args.slots)
    print(json.dumps({"rows": rows}, indent=1) if args.json else _table(rows))


if __name__ == "__main__":
    main()
