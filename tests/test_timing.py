"""Tests for speclab.timing: the machine record and interleaved timing (never speed)."""

import json

import numpy as np
import pytest

from speclab import timing


def test_machine_record_fields():
    record = timing.machine_record()
    for field in ("speclab", "python", "numpy", "cpu", "blas", "OPENBLAS_CORETYPE",
                  "load_average_1min"):  # fmt: skip
        assert field in record
    assert record["numpy"] == np.__version__
    assert isinstance(record["cpu"], str) and record["cpu"]
    for library in record["blas"]:
        assert {"library", "version", "kernel", "threads"} <= set(library)
    json.dumps(record)  # JSON-able


def test_interleaved_times_runs_every_task_in_shuffled_rounds():
    log = []
    tasks = {
        name: (lambda name=name: log.append(("prepare", name)), lambda name=name: log.append(name))
        for name in "abc"
    }
    times = timing.interleaved_times(tasks, repeats=6, rng=np.random.default_rng(1), warmup=2)
    assert set(times) == set("abc")
    assert all(t.shape == (6,) and np.all(t >= 0) for t in times.values())
    worked = [entry for entry in log if isinstance(entry, str)]
    assert len(worked) == 3 * (6 + 2)
    rounds = [worked[i : i + 3] for i in range(0, len(worked), 3)]
    assert all(sorted(r) == ["a", "b", "c"] for r in rounds)  # every task once per round
    assert len({tuple(r) for r in rounds}) > 1  # and not always in the same order
    for i, entry in enumerate(log):  # each work is right after its own prepare
        if isinstance(entry, str):
            assert log[i - 1] == ("prepare", entry)


def test_interleaved_times_needs_a_repeat():
    with pytest.raises(ValueError, match="repeats"):
        timing.interleaved_times({}, repeats=0, rng=np.random.default_rng(0))


def test_timings_summaries_against_numpy():
    times = np.array([[1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 9.0, 8.0]])  # [2 settings, 4 rounds]
    timings = timing.Timings("n_new", np.array([1, 5]), times)
    assert np.allclose(timings.median, [2.5, 6.0])
    assert np.allclose(timings.q25, np.quantile(times, 0.25, axis=1))
    assert np.allclose(timings.q75, np.quantile(times, 0.75, axis=1))
    paired = times[1] / times[0]  # [2, 2, 3, 2]
    assert timings.ratio(5, 1)["median"] == pytest.approx(np.median(paired))
    assert timings.ratio(5, 1)["q75"] == pytest.approx(np.quantile(paired, 0.75))
    rows = timings.rows(base=1)
    assert [row["n_new"] for row in rows] == [1, 5]
    assert rows[1]["ratio_to_1"] == pytest.approx(2.0)
    assert rows[0]["repeats"] == 4
    with pytest.raises(KeyError, match="not measured"):
        timings.index(3)


def test_cpu_caches_are_sizes_in_bytes():
    caches = timing.cpu_caches()
    assert all(isinstance(size, int) and size > 0 for size in caches.values())
    assert all(name in {"L1d", "L1", "L2", "L3", "L4"} for name in caches)
    assert timing.machine_record()["caches"] == caches


@pytest.mark.parametrize("n_threads", ["1", 2.5, 0, -1, True])
def test_blas_threads_takes_a_whole_number_from_one(n_threads):
    """A notebook's THREADS = "1" ended in threadpoolctl's TypeError, and 0 or -1 passed."""
    with pytest.raises(ValueError, match=f"BLAS threads {n_threads!r}: give a whole number"):
        timing.blas_threads(n_threads)
    with timing.blas_threads(np.int64(1)), timing.blas_threads(None):
        pass
