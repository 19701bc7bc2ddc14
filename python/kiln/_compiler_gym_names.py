"""The names of CompilerGym's LLVM surface and what kiln serves for them:
env ids, observation and reward spaces (with their translation to kiln's),
and CompilerGym's Benchmark / Dataset / Datasets views of kiln's datasets.
kiln.compiler_gym builds its env on these."""

from typing import Any, Dict, List, Tuple
from urllib.parse import parse_qs, urlparse, urlunparse

import numpy as np

from .errors import NotFound, SessionLost
from .program_graph import ProgramGraph

# env id -> (observation space, reward space), as CompilerGym registers them.
_ENV_IDS = {
    "llvm-v0": (None, None),
    "llvm-ic-v0": (None, "IrInstructionCountOz"),
    "llvm-codesize-v0": (None, "ObjectTextSizeOz"),
    "llvm-autophase-ic-v0": ("Autophase", "IrInstructionCountOz"),
    "llvm-autophase-codesize-v0": ("Autophase", "ObjectTextSizeOz"),
    "llvm-ir-ic-v0": ("Ir", "IrInstructionCountOz"),
    "llvm-ir-codesize-v0": ("Ir", "ObjectTextSizeOz"),
}
COMPILER_GYM_ENVS = sorted(_ENV_IDS)

# CompilerGym observation spaces that kiln serves under the same name.
_SAME_OBSERVATIONS = (
    "Ir", "IrSha1", "Bitcode", "InstCount", "InstCountDict", "Autophase", "AutophaseDict",
    "IrInstructionCount", "IrInstructionCountO0", "IrInstructionCountO3", "IrInstructionCountOz",
    "ObjectTextSizeBytes", "ObjectTextSizeO0", "ObjectTextSizeO3", "ObjectTextSizeOz",
    "Buildtime", "Runtime", "IsBuildable", "IsRunnable",
)
# Computed here from one kiln observation: name -> kiln space it comes from.
_DERIVED_OBSERVATIONS = {"InstCountNorm": "InstCount", "InstCountNormDict": "InstCountDict",
                         "Programl": "Programl", "ProgramlJson": "Programl"}
_UNSUPPORTED_OBSERVATIONS = {
    "BitcodeFile": "kiln never names a host path to a client; use env.write_bitcode(path)",
    "CpuInfo": "kiln has no CpuInfo observation",
    "Inst2vec": "kiln has no inst2vec embeddings",
    "Inst2vecEmbeddingIndices": "kiln has no inst2vec embeddings",
    "Inst2vecPreprocessedText": "kiln has no inst2vec embeddings",
    "LexedIr": "kiln has no IR lexer observation",
    "LexedIrTuple": "kiln has no IR lexer observation",
    "TextSizeBytes": "kiln measures object files (ObjectTextSize*), not linked binaries",
    "TextSizeO0": "kiln measures object files (ObjectTextSize*), not linked binaries",
    "TextSizeO3": "kiln measures object files (ObjectTextSize*), not linked binaries",
    "TextSizeOz": "kiln measures object files (ObjectTextSize*), not linked binaries",
}
# Reward name -> (cost observation, what the drop is divided by: "" nothing,
# "Norm" the unoptimized cost, "O3"/"Oz" the improvement that level makes).
_REWARDS = {
    "IrInstructionCount": ("IrInstructionCount", ""),
    "IrInstructionCountNorm": ("IrInstructionCount", "Norm"),
    "IrInstructionCountO3": ("IrInstructionCount", "O3"),
    "IrInstructionCountOz": ("IrInstructionCount", "Oz"),
    "ObjectTextSizeBytes": ("ObjectTextSizeBytes", ""),
    "ObjectTextSizeNorm": ("ObjectTextSizeBytes", "Norm"),
    "ObjectTextSizeO3": ("ObjectTextSizeBytes", "O3"),
    "ObjectTextSizeOz": ("ObjectTextSizeBytes", "Oz"),
}
# The prefix of a cost's baseline observations (IrInstructionCountO0, ...).
_BASELINE_PREFIX = {
    "IrInstructionCount": "IrInstructionCount",
    "ObjectTextSizeBytes": "ObjectTextSize",
}
# CompilerGym's LLVM datasets, for the error that says what kiln has instead.
_COMPILER_GYM_DATASETS = (
    "anghabench-v1", "blas-v0", "cbench-v1", "chstone-v0", "clgen-v0", "github-v0",
    "jotaibench-v0", "linux-v0", "mibench-v1", "npb-v0", "opencv-v0", "poj104-v1",
    "tensorflow-v0",
)


def _unsupported(what: Any, why: Any) -> Any:
    raise NotImplementedError(f"kiln.compiler_gym: {what} is not available on kiln: {why}")


def _check_observation(name: Any) -> Any:
    if name in _SAME_OBSERVATIONS or name in _DERIVED_OBSERVATIONS:
        return name
    if name in _UNSUPPORTED_OBSERVATIONS:
        _unsupported(f"observation space {name!r}", _UNSUPPORTED_OBSERVATIONS[name])
    raise LookupError(f"Observation space not found: {name}")


_UNSUPPORTED_REWARDS = {
    name: "kiln measures object files (ObjectTextSize* rewards), not linked binaries"
    for name in ("TextSizeBytes", "TextSizeNorm", "TextSizeO3", "TextSizeOz")
}


def _check_reward(name: Any) -> Any:
    if name in _UNSUPPORTED_REWARDS:
        _unsupported(f"reward space {name!r}", _UNSUPPORTED_REWARDS[name])
    if name not in _REWARDS:
        raise LookupError(f"Reward space not found: {name}")
    return name


# CompilerGym read every module from stdin, so its IR text named it "-";
# kiln's worker prints the module without these two lines.
_IR_HEADER = "; ModuleID = '-'\nsource_filename = \"-\"\n"


def _translate(name: Any, value: Any) -> Any:
    """kiln's value of observation `name` as CompilerGym types it."""
    if name == "Ir" and not value.startswith("; ModuleID"):
        return _IR_HEADER + value
    if name == "Bitcode":
        return np.frombuffer(value, dtype=np.int8).copy()
    if name == "InstCountNorm":
        total = max(int(value[0]), 1)
        return (np.asarray(value[1:], dtype=np.float64) / total).astype(np.float32)
    if name in ("Programl", "ProgramlJson"):
        graph = ProgramGraph.from_bytes(value)
        # ProGraML's forms: a networkx.MultiDiGraph and node-link JSON, with
        # the differences docs/program-graph.md lists.
        return graph.to_networkx() if name == "Programl" else graph.to_node_link()
    if name == "InstCountNormDict":
        total = max(int(value.get("TotalInstsCount", 0)), 1)
        return {k: v / total for k, v in value.items() if k != "TotalInstsCount"}
    return value


def _benchmark_uri(benchmark: Any) -> Any:
    uri = str(benchmark.uri if isinstance(benchmark, Benchmark) else benchmark)
    if "://" not in uri:
        uri = "benchmark://" + uri  # CompilerGym's short form, "cbench-v1/crc32"
    return uri


def _dataset_of(uri: Any) -> Any:
    """"benchmark://kiln-bench-v0" for benchmark://kiln-bench-v0/crc32; None for file:// URIs."""
    scheme, _, rest = uri.partition("://")
    if scheme not in ("benchmark", "generator"):
        return None
    return f"{scheme}://{rest.split('/')[0]}"


class BenchmarkUri(str):
    """A benchmark's URI, a str with CompilerGym's parts
    (scheme://dataset/path?params#fragment): scheme ("benchmark"), dataset
    ("kiln-bench-v0"), path ("/crc32"), params ({"a": ["b"]}) and fragment."""

    @classmethod
    def from_string(cls, uri: str) -> "BenchmarkUri":
        """The URI of a string, "benchmark://" implied without a scheme, as
        CompilerGym's BenchmarkUri.from_string ("cbench-v1/crc32"; "" is "benchmark:")."""
        text = str(uri).strip()
        parts = urlparse(text)
        if not parts.scheme and not parts.netloc:
            parts = urlparse(f"benchmark://{text}")
        return cls(urlunparse(parts))

    @staticmethod
    def canonicalize(uri: str) -> str:
        """The URI's canonical string ("test-v0" is "benchmark://test-v0")."""
        return str(BenchmarkUri.from_string(uri))

    @property
    def scheme(self) -> Any:
        """The scheme: benchmark, generator (or file)."""
        return urlparse(self).scheme

    @property
    def dataset(self) -> Any:
        """The dataset's name, e.g. "kiln-bench-v0"."""
        return urlparse(self).netloc

    @property
    def path(self) -> Any:
        """The benchmark within its dataset, e.g. "/crc32"."""
        return urlparse(self).path

    @property
    def params(self) -> Dict[str, List[str]]:
        """The query's parameters ("?a=b&c=d" is {"a": ["b"], "c": ["d"]})."""
        return parse_qs(urlparse(self).query)

    @property
    def fragment(self) -> str:
        """The fragment after "#" ("" without one)."""
        return urlparse(self).fragment


class Benchmark:
    """A benchmark as CompilerGym names one: `uri`; equal to its URI string."""

    def __init__(self, uri: Any) -> None:
        self.uri = BenchmarkUri(_benchmark_uri(uri))

    def is_validatable(self) -> Any:
        """Whether kiln can run the program to validate it: the datasets'
        benchmarks (their run specs say how), not a program of the user's
        own (benchmark://user-v0/...), which comes without inputs."""
        return self.uri.dataset != "user-v0"

    def ivalidate(self, env: Any) -> Any:
        """The errors of `env`'s current program against this benchmark's
        behaviour, one at a time (kiln's validation in the worker)."""
        from ._cg_validation import semantics_errors  # pylint: disable=import-outside-toplevel

        result = env.unwrapped._env.validate()
        yield from semantics_errors(result)

    def validate(self, env: Any) -> Any:
        """Every error ivalidate() finds, as a list."""
        return list(self.ivalidate(env))

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, (Benchmark, str)):
            return self.uri == _benchmark_uri(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.uri)

    def __str__(self) -> str:
        return self.uri

    def __repr__(self) -> str:
        return f"Benchmark({self.uri})"


class Dataset:
    """One of kiln's datasets with CompilerGym's accessors."""

    def __init__(self, listing: Any = None, datasets: Any = None, **kwargs: Any) -> None:
        if kwargs or listing is None or isinstance(listing, str):
            # CompilerGym's Dataset(name=, description=, license=, ...) defined a dataset
            # of the user's own, served by its service.
            raise NotImplementedError(
                "Dataset(name=...) is not available on kiln: kiln's datasets are served by its "
                "workers; a program of your own is env.make_benchmark() (kiln.make_benchmark)")
        self.name, self.size, self.description = listing.name, listing.size, listing.description
        self._datasets = datasets
        self._cluster: Any = None  # where a listing of its own connects (None: embedded)

    installed = True  # kiln's workers serve it: nothing to download

    def install(self) -> None:
        """Nothing to do: CompilerGym downloaded a dataset here, kiln's
        workers serve theirs."""

    def benchmark_uris(self, limit: Any = None) -> Any:
        """The URIs of its benchmarks (a generator's first 1,000 seeds without a limit)."""
        if self.size is None and limit is None:
            limit = 1000  # a generator: its first seeds
        if self._datasets is None:  # unpickled: its own connection
            self._datasets = _own_listing(self._cluster)
        try:
            uris = self._datasets.benchmarks(self.name, limit)
        except SessionLost:
            # The env it came from was closed; CompilerGym's datasets outlive their env.
            self._datasets = _own_listing(self._cluster)
            uris = self._datasets.benchmarks(self.name, limit)
        yield from uris

    def benchmarks(self, limit: Any = None) -> Any:
        """Its benchmarks, as benchmark_uris() lists them."""
        return (Benchmark(uri) for uri in self.benchmark_uris(limit))

    def benchmark(self, uri: Any = None) -> Any:
        """The benchmark of `uri`, or the dataset's first."""
        return Benchmark(uri) if uri is not None else next(self.benchmarks())

    def benchmark_from_seed(self, seed: Any, max_retries: Any = 3) -> Any:
        """The benchmark a generator dataset makes from `seed`
        ("generator://csmith-v0/7"); a finite dataset has none (use
        random_benchmark(seed))."""
        del max_retries  # kiln's worker generates at reset; a failure raises there
        if self.size is not None:
            raise NotImplementedError(
                f"{self.name} is a finite dataset: benchmark_from_seed() is for generators "
                "(csmith-v0, llvm-stress-v0); random_benchmark(random_state=seed) picks one of "
                "its benchmarks")
        return Benchmark(f"{self.name}/{int(seed)}")

    def random_benchmark(self, random_state: Any = None) -> Any:
        """One of its benchmarks, drawn with random_state (a seed or a numpy Generator)."""
        rng = random_state if isinstance(random_state, np.random.Generator) else (
            np.random.default_rng(random_state))
        uris = list(self.benchmark_uris())
        return Benchmark(uris[int(rng.integers(len(uris)))])

    def __len__(self) -> int:
        if self.size is None:
            raise TypeError(f"{self.name} is an unbounded generator")
        return self.size

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Dataset) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __reduce__(self) -> Any:
        """Pickles (for multiprocessing, as CompilerGym's datasets do) without
        the cluster connection: the copy opens its own when it lists benchmarks."""
        cluster = self._cluster if isinstance(self._cluster, str) else None  # an address
        return (_unpickled_dataset, (self.name, self.size, self.description, cluster))

    def __repr__(self) -> str:
        return f"Dataset({self.name})"


def _own_listing(cluster: Any) -> Any:
    """A dataset listing of its own on `cluster` (None: the embedded one, as kiln.make)."""
    from .env import datasets  # pylint: disable=import-outside-toplevel

    return datasets(cluster)


def _unpickled_dataset(name: str, size: Any, description: str, cluster: Any = None) -> Dataset:
    listing = type("Listing", (), {"name": name, "size": size, "description": description})
    dataset = Dataset(listing, None)
    dataset._cluster = cluster
    return dataset


class Datasets:
    """env.datasets: iterate, look up by name, benchmark(uri)."""

    def __init__(self, kiln_datasets: Any, cluster: Any = None) -> None:
        self._raw = kiln_datasets
        self._listed = [Dataset(d, kiln_datasets) for d in kiln_datasets]
        for dataset in self._listed:
            dataset._cluster = cluster  # the env's: its datasets outlive it

    def __iter__(self) -> Any:
        return iter(self._listed)

    def __len__(self) -> int:
        return len(self._listed)

    def __getitem__(self, name: Any) -> Any:
        for dataset in self._listed:
            if name in (dataset.name, dataset.name.partition("://")[2]):
                return dataset
        raise _missing_dataset(name, self._listed)

    def __contains__(self, name: Any) -> bool:
        return any(name in (d.name, d.name.partition("://")[2]) for d in self._listed)

    def benchmark(self, uri: Any) -> Any:
        """The benchmark of `uri` (CompilerGym's short form too); kiln.NotFound for a dataset
        kiln has not."""
        if not isinstance(uri, (str, Benchmark)):
            raise TypeError(f"Expected a Benchmark or str, received: '{type(uri).__name__}'")
        uri = _benchmark_uri(uri)
        dataset = _dataset_of(uri)
        if dataset is not None:
            self[dataset]  # kiln.NotFound naming kiln's datasets if it has none such
        return Benchmark(uri)

    def benchmark_uris(self) -> Any:
        """The URIs of every finite dataset's benchmarks."""
        for dataset in self._listed:
            if dataset.size is not None:
                yield from dataset.benchmark_uris()


def _missing_dataset(name: Any, listed: Any) -> Any:
    have = ", ".join(f"{d.name} ({'unbounded' if d.size is None else d.size})" for d in listed)
    short = name.partition("://")[2] or name
    why = (" (CompilerGym's dataset needs CompilerGym's LLVM 10 downloads)"
           if short.split("/")[0] in _COMPILER_GYM_DATASETS else "")
    return NotFound(f"kiln has no dataset {short.split('/')[0]!r}{why}; kiln has: {have}")


class Reward:
    """A reward space as CompilerGym describes one."""

    def __init__(self, name: Any = None, *args: Any, **kwargs: Any) -> None:
        if args or kwargs or type(self) is not Reward:
            # CompilerGym's Reward(name=, observation_spaces=, ...) subclassed with update():
            # a reward of the user's own, computed in its env.
            raise NotImplementedError(
                "a Reward of your own is not available on kiln: kiln computes rewards in its "
                "sessions; compute yours from env.observation[...] in a RewardWrapper")
        self.name = self.id = name
        cost, baseline = _REWARDS[name]
        self.cost_observation = cost
        self.observation_spaces = [cost]  # what the reward is computed from
        self.success_threshold = None
        self.baseline = baseline
        self.deterministic = True
        self.platform_dependent = cost == "ObjectTextSizeBytes"
        # A normalised reward is a share of the starting cost: at most 1 (as CompilerGym's).
        self.reward_range = (-np.inf, 1.0 if name.endswith("Norm") else np.inf)
        self.min, self.max = self.reward_range
        # A step that fails returns default_value less the episode's reward
        # (CompilerGym's LLVM cost rewards negate the returns so far).
        self.default_value = 0.0
        self.default_negates_returns = True

    def reward_on_error(self, episode_reward: float) -> float:
        """The reward of a step that failed: default_value, less the
        episode's reward so far when default_negates_returns."""
        if self.default_negates_returns:
            return self.default_value - episode_reward
        return self.default_value

    @property
    def range(self) -> Tuple[float, float]:
        """The reward's lower and upper bounds, as CompilerGym's Reward.range."""
        return self.reward_range

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, Reward):
            return self.name == other.name
        if isinstance(other, str):
            return self.name == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)

    def __repr__(self) -> str:
        return self.name


class ObservationSpaceSpec:
    """An observation space as CompilerGym describes one: `id`, `space`;
    equal to its name."""

    def __init__(self, name: Any, space: Any) -> None:
        self.id = self.name = name
        self.space = space
        self.deterministic = getattr(space, "deterministic", True)
        self.platform_dependent = getattr(space, "platform_dependent", False)

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, ObservationSpaceSpec):
            return self.id == other.id
        if isinstance(other, str):
            return self.id == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"ObservationSpaceSpec({self.id})"
