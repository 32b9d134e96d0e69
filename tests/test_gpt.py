"""The forward pass, checked against independent oracles rather than its own output."""

import numpy as np
import pytest

from speclab.gpt import GPTConfig, forward, gelu, layer_norm, softmax
from speclab.kv_cache import KVCache


def naive_forward(params, config, tokens):
    """A second, deliberately plain implementation: loops over positions and heads."""
    n_seq, n_embd, n_head = len(tokens), config.n_embd, config.n_head
    d_head = n_embd // n_head

    def ln(x, g, b):
        return g * (x - x.mean()) / np.sqrt(((x - x.mean()) ** 2).mean() + 1e-5) + b

    x = np.array([params["wte"][t] + params["wpe"][i] for i, t in enumerate(tokens)])
    for block in params["h"]:
        a = np.array([ln(row, **block["ln_1"]) for row in x])
        qkv = a @ block["attn"]["c_attn"]["w"] + block["attn"]["c_attn"]["b"]
        q, k, v = qkv[:, :n_embd], qkv[:, n_embd : 2 * n_embd], qkv[:, 2 * n_embd :]
        out = np.zeros((n_seq, n_embd))
        for h in range(n_head):
            cols = slice(h * d_head, (h + 1) * d_head)
            for i in range(n_seq):
                scores = np.array([q[i, cols] @ k[j, cols] for j in range(i + 1)]) / np.sqrt(d_head)
                weights = np.exp(scores - scores.max())
                weights /= weights.sum()
                out[i, cols] = weights @ v[: i + 1, cols]
        x = x + out @ block["attn"]["c_proj"]["w"] + block["attn"]["c_proj"]["b"]
        a = np.array([ln(row, **block["ln_2"]) for row in x])
        hidden = a @ block["mlp"]["c_fc"]["w"] + block["mlp"]["c_fc"]["b"]
        hidden = 0.5 * hidden * (1 + np.tanh(np.sqrt(2 / np.pi) * (hidden + 0.044715 * hidden**3)))
        x = x + hidden @ block["mlp"]["c_proj"]["w"] + block["mlp"]["c_proj"]["b"]
    x = np.array([ln(row, **params["ln_f"]) for row in x])
    return x @ params["wte"].T


def test_matches_naive_implementation(tiny_model):
    tokens = list(np.random.default_rng(1).integers(0, 256, 12))
    logits = forward(tiny_model.params, tiny_model.config, tokens)
    assert logits.shape == (12, 256)
    np.testing.assert_allclose(
        logits, naive_forward(tiny_model.params, tiny_model.config, tokens), atol=1e-10
    )


def test_causal_future_does_not_change_past(tiny_model):
    rng = np.random.default_rng(2)
    tokens = list(rng.integers(0, 256, 20))
    other = tokens[:10] + list(rng.integers(0, 256, 10))
    a = forward(tiny_model.params, tiny_model.config, tokens)
    b = forward(tiny_model.params, tiny_model.config, other)
    np.testing.assert_allclose(a[:10], b[:10], atol=1e-12)


def test_cached_one_at_a_time_equals_uncached(tiny_model):
    """Tolerance 1e-10: float64 rounding differs between a 1-row and an n-row product by ~1e-16
    per operation; a few hundred operations deep that stays far below 1e-10."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(1, tiny_model.config.n_ctx + 1))
        tokens = list(rng.integers(0, 256, n))
        full = forward(tiny_model.params, tiny_model.config, tokens)
        cache = KVCache(tiny_model.config)
        steps = np.concatenate(
            [forward(tiny_model.params, tiny_model.config, [t], cache) for t in tokens]
        )
        assert len(cache) == n
        np.testing.assert_allclose(steps, full, atol=1e-10)
        assert np.array_equal(steps.argmax(-1), full.argmax(-1))


def test_verify_n_at_once_equals_n_single_steps(tiny_model):
    rng = np.random.default_rng(4)
    prefix, new = list(rng.integers(0, 256, 30)), list(rng.integers(0, 256, 6))
    batched_cache, single_cache = KVCache(tiny_model.config), KVCache(tiny_model.config)
    forward(tiny_model.params, tiny_model.config, prefix, batched_cache)
    forward(tiny_model.params, tiny_model.config, prefix, single_cache)
    at_once = forward(tiny_model.params, tiny_model.config, new, batched_cache)
    singles = np.concatenate(
        [forward(tiny_model.params, tiny_model.config, [t], single_cache) for t in new]
    )
    np.testing.assert_allclose(at_once, singles, atol=1e-10)


def test_truncate_then_reappend_equals_never_appended(tiny_model):
    rng = np.random.default_rng(5)
    tokens, wrong = list(rng.integers(0, 256, 20)), list(rng.integers(0, 256, 5))
    cache = KVCache(tiny_model.config)
    forward(tiny_model.params, tiny_model.config, tokens[:15], cache)
    forward(tiny_model.params, tiny_model.config, wrong, cache)
    cache.truncate(15)
    after = forward(tiny_model.params, tiny_model.config, tokens[15:], cache)
    full = forward(tiny_model.params, tiny_model.config, tokens)
    np.testing.assert_allclose(after, full[15:], atol=1e-10)


def test_context_window_is_a_clear_error(tiny_model):
    with pytest.raises(ValueError, match="context window"):
        forward(tiny_model.params, tiny_model.config, [1] * 65)
    cache = KVCache(tiny_model.config)
    forward(tiny_model.params, tiny_model.config, [1] * 60, cache)
    with pytest.raises(ValueError, match="context window"):
        forward(tiny_model.params, tiny_model.config, [1] * 5, cache)
    assert len(cache) == 60  # nothing appended by the failed call
    with pytest.raises(ValueError, match="at least one"):
        forward(tiny_model.params, tiny_model.config, [])


def test_small_functions():
    x = np.array([[1.0, 2.0, 3.0]])
    np.testing.assert_allclose(softmax(x).sum(), 1.0)
    y = layer_norm(x, np.ones(3), np.zeros(3))
    np.testing.assert_allclose(y.mean(), 0, atol=1e-12)
    np.testing.assert_allclose(y.std(), 1, atol=1e-4)
    assert gelu(np.array(0.0)) == 0
    np.testing.assert_allclose(gelu(np.array(10.0)), 10.0)


def test_config_validation():
    with pytest.raises(ValueError, match="divisible"):
        GPTConfig(n_layer=1, n_head=3, n_embd=8, n_ctx=4)
    with pytest.raises(ValueError, match="positive integer"):
        GPTConfig(n_layer=0, n_head=1, n_embd=8, n_ctx=4)


def test_params_config_and_cache_of_two_models_are_named_not_broadcast(tiny_model):
    """forward(draft.params, target.config, ...) ended in "could not broadcast input array
    from shape (4,1,16) into shape (4,1,32)"."""
    import re

    from speclab.gpt import GPTConfig, forward
    from speclab.kv_cache import KVCache
    from speclab.weights import random_model

    other = random_model(
        GPTConfig(n_layer=1, n_head=2, n_embd=16, n_ctx=64), np.random.default_rng(1)
    )
    with pytest.raises(
        ValueError, match=re.escape("params (n_embd 16, n_layer 1) are not of the model")
    ):
        forward(other.params, tiny_model.config, [1, 2])
    with pytest.raises(ValueError, match="the cache was made for another model"):
        forward(tiny_model.params, tiny_model.config, [1, 2], KVCache(other.config))


def test_a_model_passed_where_params_config_or_cache_go_is_named():
    """A student's forward(target, target.config, tokens) had ended in "'Model' object is not
    subscriptable", KVCache(target) in "no attribute 'n_embd'", and an integer cache ran
    on with keys rounded to whole numbers (the argmax agreed 35 % of the time)."""
    from speclab.weights import random_model

    config = GPTConfig(n_layer=1, n_head=2, n_embd=8, n_ctx=16)
    model = random_model(config, np.random.default_rng(0))
    with pytest.raises(TypeError, match=r"forward\(model.params, model.config, tokens\)"):
        forward(model, model.config, [1, 2])
    with pytest.raises(TypeError, match=r"forward\(model.params, model.config, tokens\)"):
        forward(model.params, model, [1, 2])
    for cache in (KVCache, True, []):
        with pytest.raises(TypeError, match=r"cache must be a KVCache\(model.config\) or None"):
            forward(model.params, config, [1, 2], cache)
    with pytest.raises(TypeError, match=r"KVCache\(model.config\)"):
        KVCache(model)
    with pytest.raises(TypeError, match="needs a GPTConfig, got a dict"):
        KVCache({"n_embd": 8})
    for dtype in (np.int64, bool):
        with pytest.raises(TypeError, match="holds floats"):
            KVCache(config, dtype)
    cached = forward(model.params, config, [1, 2], KVCache(config, np.float32))  # still works
    assert cached.shape == (2, config.n_vocab)


def test_matches_naive_implementation_with_every_layer_norm_its_own(tiny_model):
    """random_model starts every LayerNorm as the identity (g = 1, b = 0), so the test above
    cannot tell ln_1 from ln_2 or ln_f: here each gets gains and biases of its own."""
    rng = np.random.default_rng(7)
    params = {**tiny_model.params, "h": [dict(block) for block in tiny_model.params["h"]]}
    for holder, name in [*((block, n) for block in params["h"] for n in ("ln_1", "ln_2")),
                         (params, "ln_f")]:  # fmt: skip
        n_embd = tiny_model.config.n_embd
        holder[name] = {"g": rng.uniform(0.5, 1.5, n_embd), "b": rng.normal(0, 0.3, n_embd)}
    tokens = list(rng.integers(0, 256, 10))
    np.testing.assert_allclose(
        forward(params, tiny_model.config, tokens),
        naive_forward(params, tiny_model.config, tokens),
        atol=1e-10,
    )


def test_softmax_of_large_scores_is_shift_invariant():
    """softmax(x) = softmax(x + c): computed as written, exp(1000) overflows to inf and the
    result is NaN; subtracting the row's maximum first keeps it finite."""
    assert softmax(np.array([[1000.0, 1000.0]])).tolist() == [[0.5, 0.5]]
    x = np.array([[1.0, 2.0, 3.0], [-4.0, 0.0, 4.0]])
    np.testing.assert_allclose(softmax(x + 800.0), softmax(x), rtol=1e-12)


def test_a_cache_fills_to_exactly_the_context_window_and_no_further(tiny_model):
    """n_ctx positions fit, in one forward or as the last of several; one more does not."""
    config = tiny_model.config
    tokens = list(np.random.default_rng(3).integers(0, 256, config.n_ctx))
    whole = forward(tiny_model.params, config, tokens)
    cache = KVCache(config)
    forward(tiny_model.params, config, tokens[:-4], cache)
    last = forward(tiny_model.params, config, tokens[-4:], cache)
    assert len(cache) == config.n_ctx
    np.testing.assert_allclose(last, whole[-4:], atol=1e-10)
    with pytest.raises(ValueError, match="context window"):
        forward(tiny_model.params, config, tokens[:1], cache)
