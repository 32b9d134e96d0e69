import numpy as np
import pytest

from speclab.gpt import GPTConfig
from speclab.kv_cache import KVCache

CONFIG = GPTConfig(n_layer=2, n_head=2, n_embd=8, n_ctx=10)


def test_append_and_truncate():
    cache = KVCache(CONFIG)
    rng = np.random.default_rng(0)
    k, v = rng.standard_normal((2, 2, 3, 4))  # [n_head, n_new, d_head] each
    for layer in range(2):
        k_all, v_all = cache.append(layer, k, v)
    assert len(cache) == 3
    assert k_all.shape == (2, 3, 4)
    np.testing.assert_array_equal(v_all, v)
    cache.truncate(1)
    assert len(cache) == 1
    k_all, _ = cache.append(0, k[:, :2], v[:, :2])
    np.testing.assert_array_equal(k_all[:, 1:], k[:, :2])
    np.testing.assert_array_equal(k_all[:, :1], k[:, :1])


def test_storage_is_preallocated_not_copied():
    cache = KVCache(CONFIG)
    before = cache.keys.ctypes.data
    for layer in range(2):
        cache.append(layer, np.ones((2, 4, 4)), np.ones((2, 4, 4)))
    assert cache.keys.ctypes.data == before


def test_errors():
    cache = KVCache(CONFIG)
    with pytest.raises(ValueError, match="cannot truncate"):
        cache.truncate(1)
    with pytest.raises(TypeError):
        cache.truncate(0.5)
    with pytest.raises(ValueError, match="KV cache full"):
        cache.append(0, np.ones((2, 11, 4)), np.ones((2, 11, 4)))
