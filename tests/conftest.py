"""Shared fixtures: small random models built from a seeded generator (no shipped weights needed)."""

import numpy as np
import pytest

from speclab.gpt import GPTConfig
from speclab.weights import random_model


@pytest.fixture(scope="session")
def tiny_model():
    """2 layers, width 32, context 64, float64: fast enough for thousands of forwards."""
    return random_model(
        GPTConfig(n_layer=2, n_head=4, n_embd=32, n_ctx=64), np.random.default_rng(0)
    )
