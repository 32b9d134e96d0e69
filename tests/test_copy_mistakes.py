"""benchmarks/copy_mistakes.py: the repeat's bytes, against the inference forward and the
one-byte definition of the context a copier needs."""

import numpy as np
import pytest
from benchmark_scripts import load

from speclab.copy_metrics import copy_probes
from speclab.corpus import context_needed
from speclab.gpt import GPTConfig, forward
from speclab.weights import flatten, init_params

VAL_TEXT = np.frombuffer(
    b"".join(f"def f_{i}(a, b):\n    return a * {i} + b\n\n".encode() for i in range(400)),
    dtype=np.uint8,
)


def test_repeat_bytes_are_the_repeats_surprises_places_and_needs():
    config = GPTConfig(n_layer=1, n_head=2, n_embd=8, n_ctx=256)
    params = init_params(config, np.random.default_rng(4), dtype=np.float64)
    for value in flatten(params).values():
        value += np.random.default_rng(5).standard_normal(value.shape) * 0.3
    probes = copy_probes(VAL_TEXT, config.n_ctx, n=2)
    found = load("copy_mistakes").repeat_bytes(params, config.n_head, probes)
    bits, places, needs = [], [], []
    for text, first, second in probes:
        logits = forward(params, config, list(text))
        log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        idx = np.arange(second.start, second.stop)
        bits.append(-log_probs[idx - 1, list(text[second])] / np.log(2))
        places.append(idx - second.start)
        needs.append([context_needed(text[first], j) for j in range(first.stop - first.start)])
    assert found["bits"] == pytest.approx(np.concatenate(bits), abs=1e-6)
    assert found["place"].tolist() == np.concatenate(places).tolist()
    assert found["need"].tolist() == np.concatenate(needs).tolist()


def test_bands_cover_every_byte_once():
    script = load("copy_mistakes")
    values = np.arange(0, 40)
    for bands in (script.PLACES, script.NEEDS):
        counts = sum(script.band(values, lo, hi).astype(int) for lo, hi in bands)
        assert counts[values >= bands[0][0]].tolist() == [1] * int((values >= bands[0][0]).sum())
