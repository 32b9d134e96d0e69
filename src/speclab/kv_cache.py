"""The key/value cache: what a decoder keeps so each step computes only the new positions.

Lesson 04 measures what it saves; lesson 05 rolls it back after a rejected draft
(`truncate`). Storage is preallocated for the whole context window, so appending writes
into place instead of copying the cache, and truncating only moves a length.
Shapes: per layer, keys and values are [n_head, n_ctx, d_head]; the first len(cache) are valid.

The cache every GPT-2 implementation keeps for decoding (its memory and time costs are
analysed in Pope et al. 2022, "Efficiently Scaling Transformer Inference"). Left out: paging
and sharing between sequences (vLLM), quantized keys and values, and eviction of old
positions: a full cache refuses more (`append`).
"""

import numpy as np


class KVCache:
    """Keys and values of every layer for positions 0..len(self)-1."""

    def __init__(self, config, dtype=np.float64):
        if hasattr(config, "config"):  # a model: KVCache(target) was read as a config
            raise TypeError("KVCache needs the model's config: KVCache(model.config)")
        if not all(hasattr(config, name) for name in ("n_layer", "n_head", "n_embd", "n_ctx")):
            raise TypeError(f"KVCache needs a GPTConfig, got a {type(config).__name__}")
        if np.dtype(dtype).kind != "f":  # an integer cache rounded every key silently
            raise TypeError(f"a KV cache holds floats (float64 or float32), not {np.dtype(dtype)}")
        d_head = config.n_embd // config.n_head
        shape = (config.n_layer, config.n_head, config.n_ctx, d_head)
        self.keys = np.zeros(shape, dtype=dtype)  # [n_layer, n_head, n_ctx, d_head]
        self.values = np.zeros(shape, dtype=dtype)  # [n_layer, n_head, n_ctx, d_head]
        self.n_ctx = config.n_ctx
        self.length = 0  # positions held, the same in every layer

    def __len__(self) -> int:
        return self.length

    def append(self, layer: int, k, v):
        """Store k, v [n_head, n_new, d_head] after the held positions of one layer.

        Returns the keys and values of all positions so far, [n_head, n_past + n_new, d_head]
        (views, not copies). The length moves on once the last layer has appended.
        """
        n_new = k.shape[1]
        end = self.length + n_new
        if end > self.n_ctx:
            raise ValueError(f"KV cache full: {self.length} + {n_new} > n_ctx = {self.n_ctx}")
        self.keys[layer, :, self.length : end] = k
        self.values[layer, :, self.length : end] = v
        if layer == self.keys.shape[0] - 1:
            self.length = end
        return self.keys[layer, :, :end], self.values[layer, :, :end]

    def truncate(self, n: int):
        """Forget every position from n on (the rollback after a rejected draft)."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise TypeError(f"truncate expects an integer length, got {n!r}")
        if not 0 <= n <= self.length:
            raise ValueError(f"cannot truncate a cache of {self.length} positions to {n}")
        self.length = int(n)
