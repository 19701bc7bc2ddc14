"""Experiments: named tenants whose workers run on nesting hosts, sharing the
machines with other experiments, plus a scheduler over them.

    with kiln.Experiment("search", workers=2) as exp:
        futures = [exp.submit(run_episode, exp, uri) for uri in benchmarks]
        results = [f.result() for f in futures]
        exp.cancel()   # end of a collection round: drop what has not started

Units of work run on a pool of threads; each usually makes its own env with
exp.make(...) (an env is used by one thread at a time), whose sessions the
coordinator places on the least loaded of the experiment's workers.
"""

import concurrent.futures
import threading

from . import _kiln
from . import cluster as cluster_module
from . import env as env_module
from . import vector as vector_module
from .errors import InvalidArgument


class Experiment:
    def __init__(
        self,
        name,
        workers=1,
        cluster=None,
        weight=1,
        session_types=None,
        runners=None,
        timeout=60.0,
        ready_timeout=30.0,
        key_file=None,
    ):
        if not isinstance(name, str) or not name:
            raise InvalidArgument("an experiment needs a non-empty name")
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
            raise InvalidArgument(f"workers must be a positive int, got {workers!r}")
        self.name = name
        self._timeout = timeout
        self._key_file = key_file
        self._lease = cluster_module.lease(cluster)
        try:
            self._client = _kiln.Client(self._lease.endpoint, timeout, name, key_file or "")
            opened = self._client.open_experiment(
                name, workers=workers, weight=weight, session_types=list(session_types or [])
            )
            self._key = opened["key"]
            self.status = self._client.wait_for_experiment(name, workers, ready_timeout)
        except BaseException:
            self._lease.release()
            raise
        self._lock = threading.Lock()
        self._outstanding = set()
        self._cancelled = threading.Event()
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=runners or max(2, 2 * workers), thread_name_prefix=f"kiln-{name}"
        )
        self._closed = False

    @property
    def endpoint(self):
        return self._lease.endpoint

    @property
    def key(self):
        """The experiment's key (32 hex digits): whoever holds it may act for the
        experiment (its envs, other processes of it: experiment_key= in kiln.make)."""
        return self._key

    @property
    def cancelled(self):
        """True after cancel() until the next round starts: running units should stop early."""
        return self._cancelled.is_set()

    def make(self, env_id, **kwargs):
        """An env whose sessions run on this experiment's workers."""
        kwargs.setdefault("key_file", self._key_file)
        return env_module.make(
            env_id,
            cluster=self.endpoint,
            experiment=self.name,
            experiment_key=self._key,
            **kwargs,
        )

    def make_vec(self, env_id, num_envs, **kwargs):
        """A kiln.VectorEnv whose sessions run on this experiment's workers."""
        kwargs.setdefault("key_file", self._key_file)
        return vector_module.make_vec(
            env_id,
            num_envs,
            cluster=self.endpoint,
            experiment=self.name,
            experiment_key=self._key,
            **kwargs,
        )

    def info(self):
        """The experiment as the coordinator sees it (workers, readiness, utilization)."""
        for experiment in self._client.experiments():
            if experiment["name"] == self.name:
                return experiment
        raise KeyError(self.name)

    def submit(self, fn, *args, **kwargs):
        """Runs fn(*args, **kwargs) on a free runner; returns a Future."""
        if self._closed:
            raise InvalidArgument(f"experiment '{self.name}' is closed")
        with self._lock:
            if not self._outstanding:
                self._cancelled.clear()  # a new round
            future = self._pool.submit(fn, *args, **kwargs)
            self._outstanding.add(future)
        future.add_done_callback(self._done)
        return future

    def _done(self, future):
        with self._lock:
            self._outstanding.discard(future)

    def cancel(self):
        """Drops the units that have not started and flags the running ones.

        Returns how many were dropped (their futures are cancelled)."""
        self._cancelled.set()
        with self._lock:
            pending = list(self._outstanding)
        return sum(1 for future in pending if future.cancel())

    def wait(self, timeout=None):
        """Blocks until every submitted unit has finished or was cancelled."""
        with self._lock:
            pending = list(self._outstanding)
        concurrent.futures.wait(pending, timeout=timeout)

    def close(self):
        """Cancels what is outstanding, waits for running units, closes the experiment."""
        if self._closed:
            return
        self._closed = True
        self.cancel()
        self._pool.shutdown(wait=True)
        try:
            self._client.close_experiment(self.name)
        finally:
            self._lease.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"Experiment({self.name!r}, endpoint={self.endpoint!r})"
