"""Where envs run: a coordinator address, a LocalCluster the caller owns, or
(cluster=None) the embedded single-node cluster, which starts with the first
env that needs it and stops when the last one closes.
"""

import atexit
import os
import threading

from . import _kiln
from .errors import InvalidArgument

# Transports a kiln coordinator can listen on.
_SCHEMES = ("tcp://", "ipc://")


class LocalCluster:
    """A coordinator, `workers` workers and `nesting_hosts` nesting hosts (for
    kiln.Experiment) in this process, on loopback.

    Usable as a context manager; pass it as `cluster=` to kiln.make().
    """

    def __init__(
        self,
        workers=1,
        slots=2,
        ready_timeout=10.0,
        nesting_hosts=0,
        datasets=None,
        fault_injection=False,
        client_tuning=False,
    ):
        """`datasets`: {name: directory} of corpora the workers serve as
        benchmark://name/<module> (what `kiln local --dataset NAME=DIR` does).
        `fault_injection`: the operator's --enable-fault-injection, for tests
        of faults: the noop type's crash and hang hooks, and the llvm passes
        that crash LLVM 19 as actions. `client_tuning`: the operator's
        --allow-client-tuning: clients may lower settings every session of a
        worker shares (its caches), e.g. a bench that must not replay steps
        from the transition cache.

        Each worker runs in a child process of this one (forked): a crash
        inside LLVM costs a worker restart and a replay of its sessions, not
        this process, and a restarted worker has a new endpoint."""
        for name, value in (("workers", workers), ("slots", slots), ("nesting_hosts", nesting_hosts)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise InvalidArgument(f"{name} must be an int, got {type(value).__name__}")
        if datasets is not None and not isinstance(datasets, dict):
            raise InvalidArgument(f"datasets must be a dict of name: directory, got {datasets!r}")
        flags = [f"{name}={os.fspath(root)}" for name, root in (datasets or {}).items()]
        self._raw = _kiln.LocalCluster(
            workers=workers,
            slots=slots,
            ready_timeout=ready_timeout,
            nesting_hosts=nesting_hosts,
            datasets=flags,
            fault_injection=bool(fault_injection),
            client_tuning=bool(client_tuning),
        )
        self.workers = workers
        self.slots = slots
        self.nesting_hosts = nesting_hosts

    @property
    def endpoint(self):
        """The coordinator's address (tcp://127.0.0.1:<port>)."""
        return self._raw.endpoint

    @property
    def worker_endpoints(self):
        return self._raw.worker_endpoints

    @property
    def running(self):
        return self._raw.running

    def close(self):
        """Stops every worker and the coordinator; sessions on it are lost."""
        self._raw.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = self.endpoint if self.running else "stopped"
        return f"LocalCluster(workers={self.workers}, slots={self.slots}, {state})"


class _EmbeddedCluster:
    """The cluster behind cluster=None, counted by the leases handed out.

    This is the one piece of process-wide state in kiln: envs made without a
    cluster share a single embedded cluster rather than each starting one.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._cluster = None
        self._leases = 0

    def acquire(self):
        with self._lock:
            if self._cluster is None:
                # A plain worker for envs, a nesting host for experiments.
                self._cluster = LocalCluster(workers=1, slots=2, nesting_hosts=1)
            self._leases += 1
            return self._cluster.endpoint

    def release(self):
        with self._lock:
            self._leases -= 1
            if self._leases > 0 or self._cluster is None:
                return
            cluster, self._cluster = self._cluster, None
        cluster.close()

    def endpoint(self):
        with self._lock:
            return self._cluster.endpoint if self._cluster is not None else None

    def shutdown(self):
        with self._lock:
            cluster, self._cluster, self._leases = self._cluster, None, 0
        if cluster is not None:
            cluster.close()


_EMBEDDED = _EmbeddedCluster()
# Worker threads must be joined before the interpreter tears down.
atexit.register(_EMBEDDED.shutdown)


def embedded_cluster_endpoint():
    """The embedded cluster's coordinator address while it runs, else None."""
    return _EMBEDDED.endpoint()


class ClusterLease:
    """An env's hold on its cluster; release() once, share() for forks."""

    def __init__(self, endpoint, keep=None, embedded=False):
        self.endpoint = endpoint
        self._keep = keep  # a LocalCluster the caller passed: keep it alive
        self._embedded = embedded
        self._released = False

    def share(self):
        if self._embedded:
            _EMBEDDED.acquire()
        return ClusterLease(self.endpoint, self._keep, self._embedded)

    def release(self):
        if self._released:
            return
        self._released = True
        if self._embedded:
            _EMBEDDED.release()


def lease(cluster):
    """A ClusterLease for `cluster` (None, an address, or a LocalCluster)."""
    if cluster is None:
        return ClusterLease(_EMBEDDED.acquire(), embedded=True)
    if isinstance(cluster, LocalCluster):
        return ClusterLease(cluster.endpoint, keep=cluster)
    if isinstance(cluster, str):
        if not cluster.startswith(_SCHEMES) or len(cluster) <= len("tcp://"):
            raise InvalidArgument(
                f"cluster {cluster!r} is not a coordinator address (e.g. tcp://127.0.0.1:7700)"
            )
        return ClusterLease(cluster)
    raise InvalidArgument(
        "cluster must be None (embedded), a 'tcp://host:port' address or a kiln.LocalCluster, "
        f"got {type(cluster).__name__}"
    )
