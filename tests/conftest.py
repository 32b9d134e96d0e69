"""Shared fixtures: small random models built from a seeded generator (no shipped weights needed).

BLAS runs single-threaded in tests (and in the notebook kernels they start, which inherit the
environment): pytest-xdist already keeps both cores busy, and the matrices here are so small
that a second BLAS thread only adds waiting (on a loaded machine, OpenBLAS threads spinning for
each other made small forwards 15x slower). Set before numpy is imported. Timing lives in
`speclab bench`, never in tests.
"""

import os
import signal

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

# A shell that starts a job in the background without job control (`make test &` in a
# script) starts it with Ctrl-C ignored, and Python then never raises KeyboardInterrupt, in
# pytest or in the commands the tests start. The Ctrl-C tests need Ctrl-C as a terminal
# delivers it: put the usual handler back (commands started from here inherit the default).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

import numpy as np  # noqa: E402
import pytest

from speclab.gpt import GPTConfig  # noqa: E402
from speclab.weights import random_model  # noqa: E402


@pytest.fixture(scope="session")
def tiny_model():
    """2 layers, width 32, context 64, float64: fast enough for thousands of forwards."""
    return random_model(
        GPTConfig(n_layer=2, n_head=4, n_embd=32, n_ctx=64), np.random.default_rng(0)
    )


@pytest.fixture
def refuse_to_list(monkeypatch):
    """refuse_to_list(folder): listing that folder fails as for a folder of another user (as
    root, chmod cannot show it); glob, which lists through os.scandir, then finds nothing
    there, as it does for real."""
    real_scandir = os.scandir

    def refuse_for(locked):
        def scandir(path="."):
            if os.fspath(path) == os.fspath(locked):
                raise PermissionError(13, "Permission denied", str(path))
            return real_scandir(path)

        monkeypatch.setattr(os, "scandir", scandir)

    return refuse_for


_CORPUS_NOTE = []  # filled once, on the first test that needs the training corpus


def pytest_runtest_setup(item):
    """Tests marked training_corpus recompute the README's copy figures from held-out text,
    which is the running Python's standard library: on another version it is other text (other
    held-out functions and probes), so they are skipped there, with the reason, not failed."""
    if item.get_closest_marker("training_corpus") is None:
        return
    if not _CORPUS_NOTE:
        from speclab.corpus import load_corpus, other_corpus_note
        from speclab.weights import load_target

        _CORPUS_NOTE.append(other_corpus_note([load_target()], load_corpus(1)["record"]))
    if _CORPUS_NOTE[0]:
        pytest.skip(_CORPUS_NOTE[0])
