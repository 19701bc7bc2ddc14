"""Datasets and benchmarks as the workers list them, through the worker-level
parameters "<prefix>.datasets" (lines "name<TAB>size<TAB>description", then
"<TAB>bytes<TAB>skipped<TAB>rejected" from workers that scan corpora),
"<prefix>.benchmarks" (value "dataset[:limit]" -> one benchmark URI a line),
"<prefix>.benchmark_sizes" (the same -> "uri<TAB>bytes" lines) and
"<prefix>.problems" (value "dataset" -> "module<TAB>kind<TAB>reason" lines).
"""

from dataclasses import dataclass
from typing import Optional

from ._closing import Closing
from .errors import InternalError, InvalidArgument, NotFound

# Session types whose workers answer the dataset parameters, by key prefix.
DATASETS_PREFIX = {"llvm": "llvm", "mlgo-inline": "llvm", "mlgo-regalloc": "llvm"}


@dataclass(frozen=True)
class Dataset:
    name: str
    size: Optional[int]  # None: unbounded (a generator such as csmith)
    description: str
    bytes: int = 0  # its modules' total size (0 for generators)
    skipped: int = 0  # files the worker's scan left out (see Datasets.problems)
    rejected: int = 0  # modules LLVM 19 refused when a session loaded them


@dataclass(frozen=True)
class Problem:
    """A module a dataset does not serve: kind "skipped" (by the worker's scan)
    or "rejected" (LLVM 19 refused it when a session loaded it)."""

    module: str
    kind: str
    reason: str


def parse_datasets(text):
    """The Datasets in a "<prefix>.datasets" answer; InternalError if malformed."""
    datasets = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split("\t", 2)
        if len(fields) != 3 or not fields[0]:
            raise InternalError(
                f"dataset line {number} is not 'name<TAB>size<TAB>description': {line!r}"
            )
        name, size, description = fields
        try:
            count = int(size)
        except ValueError:
            count = None
        unbounded = count is None or count < 0
        counts = [0, 0, 0]
        rest = description.split("\t")
        if len(rest) == 4 and all(field.isdigit() for field in rest[1:]):
            description, counts = rest[0], [int(field) for field in rest[1:]]
        datasets.append(Dataset(name, None if unbounded else count, description, *counts))
    return datasets


def parse_benchmark_sizes(text):
    """{uri: bytes} from a "<prefix>.benchmark_sizes" answer, in its order."""
    sizes = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        uri, tab, size = line.partition("\t")
        if not tab or not size.isdigit():
            raise InternalError(f"benchmark line {number} is not 'uri<TAB>bytes': {line!r}")
        sizes[uri] = int(size)
    return sizes


def parse_problems(text):
    """The Problems in a "<prefix>.problems" answer."""
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split("\t", 2)
        if len(fields) != 3:
            raise InternalError(
                f"problem line {number} is not 'module<TAB>kind<TAB>reason': {line!r}"
            )
        problems.append(Problem(*fields))
    return problems


def parse_benchmarks(text):
    """The benchmark URIs in a "<prefix>.benchmarks" answer."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def worker_for(client, session_type):
    """The endpoint of a worker that hosts `session_type`."""
    for worker in client.list_cluster():
        if session_type in worker["session_types"]:
            return worker["endpoint"]
    raise NotFound(f"no worker in the cluster hosts session type {session_type!r}")


class Datasets(Closing):
    """The datasets of one session type: iterate, index by name, list benchmarks."""

    def __init__(self, client, session_type, on_close=None):
        self._client = client
        self._session_type = session_type
        self._prefix = DATASETS_PREFIX.get(session_type)
        self._on_close = on_close
        self._datasets = None
        self._endpoint = None

    def _worker(self):
        if self._client is None:
            raise InvalidArgument("this dataset listing has been closed")
        if self._endpoint is None:
            self._endpoint = worker_for(self._client, self._session_type)
        return self._endpoint

    def _query(self, key, value):
        endpoint = self._worker()
        try:
            return self._client.worker_parameter(endpoint, f"{self._prefix}.{key}", value)
        except NotFound as error:
            if "worker parameter" not in str(error):
                raise  # e.g. an unknown dataset: the worker's own words
            raise NotFound(
                f"the worker hosting {self._session_type!r} does not list datasets: {error}"
            ) from None

    def _all(self):
        if self._datasets is None:
            self._worker()  # an unhosted type is an error, not an empty listing
            if self._prefix is None:
                self._datasets = []
            else:
                self._datasets = parse_datasets(self._query("datasets", ""))
        return self._datasets

    @property
    def names(self):
        return [d.name for d in self._all()]

    def __iter__(self):
        return iter(self._all())

    def __len__(self):
        return len(self._all())

    def __contains__(self, name):
        return self._find(name) is not None

    def __getitem__(self, name):
        """The Dataset called `name`, by its full name or without the scheme
        ("kiln-bench-v0" for "benchmark://kiln-bench-v0")."""
        dataset = self._find(name)
        if dataset is None:
            raise NotFound(f"no dataset {name!r}; there are: {', '.join(self.names) or 'none'}")
        return dataset

    def _find(self, name):
        for dataset in self._all():
            if name in (dataset.name, dataset.name.partition("://")[2]):
                return dataset
        return None

    def benchmarks(self, dataset, limit=None):
        """URIs of `dataset`'s benchmarks (the first `limit` if given). An
        unbounded generator needs a limit: its URIs are <dataset>/<seed>."""
        found = self[dataset]  # a clear NotFound before asking the worker
        if limit is not None:
            if not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0:
                raise InvalidArgument(f"limit must be a positive int, got {limit!r}")
        if found.size is None:
            if limit is None:
                raise InvalidArgument(f"dataset {found.name!r} is unbounded: give a limit")
            return [f"{found.name}/{seed}" for seed in range(limit)]
        query = found.name if limit is None else f"{found.name}:{limit}"
        return parse_benchmarks(self._query("benchmarks", query))

    def benchmark_sizes(self, dataset, limit=None):
        """{uri: bytes} of `dataset`'s benchmarks (the first `limit` if given)."""
        found = self[dataset]
        if limit is not None:
            if not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0:
                raise InvalidArgument(f"limit must be a positive int, got {limit!r}")
        if found.size is None:
            raise InvalidArgument(f"dataset {found.name!r} is a generator: its programs have no size")
        query = found.name if limit is None else f"{found.name}:{limit}"
        return parse_benchmark_sizes(self._query("benchmark_sizes", query))

    def problems(self, dataset):
        """The modules of `dataset` the worker skipped (when it scanned the corpus)
        or rejected (when a session loaded them and LLVM 19 refused), with why."""
        found = self[dataset]
        if found.size is None:
            return []
        return parse_problems(self._query("problems", found.name))

    def close(self):
        self._client = None
        if self._on_close is not None:
            on_close, self._on_close = self._on_close, None
            on_close()

    def __repr__(self):
        return f"Datasets({self._session_type!r}, {self.names})"
