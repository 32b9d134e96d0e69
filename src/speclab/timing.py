"""Timing honestly: the machine record and interleaved timing (lessons 04, 06 and 07).

What a timing depends on is recorded next to it (`machine_record`: versions, processor,
caches, the BLAS library and kernel that ran, the OpenBLAS overrides, the load average),
and every setting is timed in the same run, interleaved (`interleaved_times`: each round
runs every task once, in a fresh random order), with `time.perf_counter`. Results are
medians with the interquartile range, and the result that matters is a ratio paired within
a round (`Timings.ratio`), not an absolute time. The benchmarks (speclab.bench for lesson
04, speclab.bench_decode for lesson 06) and lesson 07's notebook use these.

threadpoolctl (the BLAS record and thread limit) and tqdm (progress bars) are imported
where used. Left out: hardware counters (cycles, instructions).
"""

import os
import platform
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from speclab.render import counted
from speclab.weights import Model

# --- the machine record ---------------------------------------------------------------------


def cpu_model() -> str:
    """The processor's name as the operating system reports it."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_caches() -> dict[str, int]:
    """Data cache sizes in bytes of the first processor, {"L1d": ..., "L2": ..., "L3": ...}.

    Read from Linux's sysfs; empty where the system does not say.
    """
    units = {"K": 1024, "M": 1024**2, "G": 1024**3}
    caches = {}
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level, kind, size = ((index / f).read_text().strip() for f in ("level", "type", "size"))
        except OSError:
            continue
        if kind == "Instruction" or not size:
            continue
        multiplier = units.get(size[-1], 1)
        digits = size[:-1] if size[-1] in units else size
        caches[f"L{level}" + ("d" if kind == "Data" else "")] = int(digits) * multiplier
    return caches


def blas_record() -> list[dict]:
    """Each BLAS library numpy loaded: library, version, kernel (architecture), threads."""
    from threadpoolctl import threadpool_info

    return [
        {
            "library": info.get("internal_api"),
            "version": info.get("version"),
            "kernel": info.get("architecture"),
            "threads": info.get("num_threads"),
            "threading_layer": info.get("threading_layer"),
            "file": Path(info.get("filepath", "")).name,
        }
        for info in threadpool_info()
        if info.get("user_api") == "blas"
    ]


def machine_record() -> dict:
    """What a timing depends on: versions, processor, BLAS kernel, OpenBLAS overrides."""
    import speclab

    return {
        "speclab": speclab.__version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "caches": cpu_caches(),
        "blas": blas_record(),
        "load_average_1min": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),  # None: not set
        "OPENBLAS_L2_SIZE": os.environ.get("OPENBLAS_L2_SIZE"),
    }


def model_record(model: Model) -> dict:
    """Which model was timed: name, shape, dtype and (if trained) its validation loss."""
    return {
        "name": model.name,
        "config": {key: int(value) for key, value in model.config.__dict__.items()},
        "dtype": str(model.params["wte"].dtype),
        "val_bits_per_byte": model.meta.get("val_bits_per_byte"),
        "trained_steps": model.meta.get("trained_steps"),
    }


def blas_threads(n_threads: int | None):
    """A context that limits BLAS to n_threads (None: leave the library's default)."""
    from contextlib import nullcontext

    from threadpoolctl import threadpool_limits

    if n_threads is None:
        return nullcontext()
    if isinstance(n_threads, bool) or not isinstance(n_threads, int | np.integer) or n_threads < 1:
        raise ValueError(  # threadpoolctl said "limits must either be an int, a list, ..."
            f"BLAS threads {n_threads!r}: give a whole number from 1 up (or None: the library's "
            "default)"
        )
    return threadpool_limits(limits=int(n_threads), user_api="blas")  # an np.int64 too


# --- interleaved timing ----------------------------------------------------------------------

# A task is (prepare, work): prepare() runs untimed just before work(), which is timed.
Task = tuple[Callable[[], object], Callable[[], object]]


def interleaved_times(
    tasks: dict[Hashable, Task],
    repeats: int,
    rng: np.random.Generator,
    warmup: int = 1,
    progress: bool = False,
) -> dict[Hashable, np.ndarray]:
    """Seconds per run of each task, {key: [repeats]}.

    Each round runs every task once, in a fresh random order, so slow drifts of the
    machine (another process, a clock change) fall on all tasks alike. The first
    `warmup` rounds are run but not kept.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    keys = list(tasks)
    times = {key: np.empty(repeats) for key in keys}  # each [repeats]
    rounds = range(-warmup, repeats)
    if progress:
        from tqdm.auto import tqdm

        rounds = tqdm(rounds, desc="timing", unit="round", leave=False)
    for round_index in rounds:
        for index in rng.permutation(len(keys)):
            prepare, work = tasks[keys[index]]
            prepare()
            start = time.perf_counter()
            work()
            elapsed = time.perf_counter() - start
            if round_index >= 0:
                times[keys[index]][round_index] = elapsed
    return times


@dataclass(frozen=True)
class Timings:
    """Interleaved measurements: times[i, r] is round r of the setting values[i], in seconds."""

    label: str  # what varies: "n_new", "n_seq", ...
    values: np.ndarray  # [n_settings]
    times: np.ndarray  # [n_settings, repeats]

    @classmethod
    def from_dict(cls, label: str, measured: dict) -> "Timings":
        values = list(measured)
        return cls(label, np.array(values), np.stack([measured[v] for v in values]))

    @property
    def median(self) -> np.ndarray:  # [n_settings]
        return np.median(self.times, axis=1)

    @property
    def q25(self) -> np.ndarray:  # [n_settings]
        return np.quantile(self.times, 0.25, axis=1)

    @property
    def q75(self) -> np.ndarray:  # [n_settings]
        return np.quantile(self.times, 0.75, axis=1)

    def index(self, value) -> int:
        found = np.flatnonzero(self.values == value)
        if found.size == 0:
            raise KeyError(f"{self.label} = {value} was not measured ({self.values.tolist()})")
        return int(found[0])

    def ratios(self, base) -> np.ndarray:
        """Each setting's time over base's in the same round: [n_settings, repeats]."""
        return self.times / self.times[self.index(base)]

    def ratio(self, value, base) -> dict:
        """Median and interquartile range of the paired ratio time(value) / time(base)."""
        paired = self.ratios(base)[self.index(value)]  # [repeats]
        low, mid, high = np.quantile(paired, [0.25, 0.5, 0.75])
        return {"median": float(mid), "q25": float(low), "q75": float(high)}

    def rows(self, base=None) -> list[dict]:
        """One dict per setting (for CSV): median and quartiles in seconds, ratio to base."""
        table = []
        for i, value in enumerate(self.values.tolist()):
            row = {self.label: value, "median_s": float(self.median[i])}
            row |= {"q25_s": float(self.q25[i]), "q75_s": float(self.q75[i])}
            row["repeats"] = int(self.times.shape[1])
            if base is not None:
                row[f"ratio_to_{base}"] = float(np.median(self.ratios(base)[i]))
            table.append(row)
        return table


def describe_blas(machine: dict) -> str:
    blas = machine["blas"]
    if not blas:
        return "BLAS: not found by threadpoolctl"
    found = ", ".join(
        f"{b['library']} {b['version']} kernel {b['kernel']}, {counted(b['threads'], 'thread')}"
        for b in blas
    )
    coretype = machine["OPENBLAS_CORETYPE"]
    return f"BLAS: {found}; OPENBLAS_CORETYPE {coretype if coretype is not None else 'not set'}"


def load_text(machine: dict) -> str:
    load = machine.get("load_average_1min")
    return "unknown" if load is None else f"{load:.2f}"


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (None where the system does not say)."""
    try:
        return list(os.getloadavg())
    except (OSError, AttributeError):
        return None
