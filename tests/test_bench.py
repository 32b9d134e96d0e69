"""Tests for speclab.bench: shapes, records and arithmetic, never speed.

Timings themselves are not asserted (they depend on the machine); what is checked is
that the right things are timed, interleaved, summarised and saved.
"""

import numpy as np
import pytest

from speclab import bench, timing
from speclab.gpt import GPTConfig, forward
from speclab.kv_cache import KVCache
from speclab.weights import random_model


def test_forward_cost_shape(tiny_model):
    timings = bench.forward_cost(tiny_model, np.random.default_rng(0), n_past=20,
                                 n_new_values=[1, 2, 5], repeats=3)  # fmt: skip
    assert timings.label == "n_new"
    assert timings.values.tolist() == [1, 2, 5]
    assert timings.times.shape == (3, 3)
    assert np.all(timings.times > 0)


def spy_on_forward(monkeypatch):
    """Record (new positions, cached positions before, cache given) of every bench forward."""
    calls = []

    def spy(params, config, tokens, cache=None):
        calls.append((len(tokens), len(cache) if cache is not None else None))
        return forward(params, config, tokens, cache)

    monkeypatch.setattr(bench, "forward", spy)
    return calls


def test_forward_cost_times_n_new_positions_on_n_past_cached(tiny_model, monkeypatch):
    calls = spy_on_forward(monkeypatch)
    bench.forward_cost(tiny_model, np.random.default_rng(0), n_past=20, n_new_values=[1, 2, 5],
                       repeats=3)  # fmt: skip
    timed = [call for call in calls if call != (20, 0)]  # (20, 0): filling the cache
    assert sorted(set(timed)) == [(1, 20), (2, 20), (5, 20)]  # every setting, the same past
    assert len(timed) >= 3 * 3  # each setting in every repeat (warm-ups may add more)


def test_cache_vs_recompute_times_one_step_against_the_whole_sequence(tiny_model, monkeypatch):
    calls = spy_on_forward(monkeypatch)
    bench.cache_vs_recompute(tiny_model, np.random.default_rng(0), seq_lens=[4, 16], repeats=2)
    timed = set(calls) - {(3, 0), (15, 0)}  # filling the caches (the spy's cache starts empty)
    assert timed == {(1, 3), (1, 15), (4, None), (16, None)}


def test_forward_cost_from_an_empty_past(tiny_model):
    timings = bench.forward_cost(tiny_model, np.random.default_rng(0), n_past=0,
                                 n_new_values=[1, 4], repeats=2)  # fmt: skip
    assert timings.times.shape == (2, 2)


def test_forward_cost_refuses_what_does_not_fit(tiny_model):
    with pytest.raises(ValueError, match="context window"):
        bench.forward_cost(tiny_model, np.random.default_rng(0), n_past=60, n_new_values=[8])


def test_cache_vs_recompute_shapes(tiny_model):
    result = bench.cache_vs_recompute(tiny_model, np.random.default_rng(0), seq_lens=[4, 16, 64],
                                      repeats=2)  # fmt: skip
    assert set(result) == {"with cache", "without cache"}
    for timings in result.values():
        assert timings.label == "n_seq"
        assert timings.values.tolist() == [4, 16, 64]
        assert timings.times.shape == (3, 2)


def test_instrumented_forward_equals_gpt_forward(tiny_model):
    params, config = tiny_model.params, tiny_model.config
    tokens = np.random.default_rng(3).integers(0, 256, 30)
    plain_cache, timed_cache = KVCache(config), KVCache(config)
    for chunk in (tokens[:10], tokens[10:11], tokens[11:16], tokens[16:]):
        expected = forward(params, config, chunk, plain_cache)
        logits, seconds, calls = bench.instrumented_forward(params, config, chunk, timed_cache)
        assert logits.shape == (len(chunk), config.n_vocab)
        np.testing.assert_array_equal(logits, expected)  # same arithmetic, same order
        assert len(timed_cache) == len(plain_cache)
        assert set(seconds) == set(calls) == set(bench.TIMED_PARTS)
        assert all(value >= 0 for value in seconds.values())
    n_layer = config.n_layer
    assert calls["weight matmuls"] == 4 * n_layer + 1  # qkv, proj, fc, proj; the LM head
    assert calls["attention matmuls"] == 2 * n_layer
    assert calls["GELU"] == n_layer
    assert calls["LayerNorm"] == 2 * n_layer + 1
    np.testing.assert_array_equal(timed_cache.keys[:, :, :30], plain_cache.keys[:, :, :30])


def test_step_breakdown_parts_add_up_to_the_forward(tiny_model):
    result = bench.step_breakdown(tiny_model, np.random.default_rng(0), n_new=3, n_past=10,
                                  repeats=3)  # fmt: skip
    assert result.parts == bench.PARTS and result.parts[-1] == "Python overhead"
    assert result.seconds.shape == result.calls.shape == (len(bench.PARTS),)
    assert result.part_times.shape == (3, len(bench.PARTS) - 1)
    assert result.forward_times.shape == (3,)
    overhead = result.forward_times - result.part_times.sum(axis=1)  # per round
    assert result.seconds[-1] == pytest.approx(np.median(overhead))
    assert np.allclose(result.seconds[:-1], np.median(result.part_times, axis=0))
    assert result.forward_seconds == pytest.approx(np.median(result.forward_times))
    assert result.calls[-1] == 0 and result.calls[0] == 4 * tiny_model.config.n_layer + 1
    assert [row["part"] for row in result.rows()] == list(bench.PARTS)


def test_numpy_call_seconds_is_a_small_positive_time():
    seconds = bench.numpy_call_seconds(np.random.default_rng(0), n_calls=10, repeats=2)
    assert 0 < seconds < 1


def test_skeleton_model_makes_the_same_calls_on_tiny_arrays(tiny_model):
    skeleton = bench.skeleton_model(tiny_model.config, np.random.default_rng(0))
    assert skeleton.config.n_embd == tiny_model.config.n_head
    assert skeleton.config.n_layer == tiny_model.config.n_layer
    tokens = [1, 2, 3]
    _, _, calls = bench.instrumented_forward(skeleton.params, skeleton.config, tokens,
                                             KVCache(skeleton.config))  # fmt: skip
    _, _, real_calls = bench.instrumented_forward(tiny_model.params, tiny_model.config, tokens,
                                                  KVCache(tiny_model.config))  # fmt: skip
    assert calls == real_calls


def test_forward_times_per_model(tiny_model):
    skeleton = bench.skeleton_model(tiny_model.config, np.random.default_rng(0))
    times = bench.forward_times({"model": tiny_model, "skeleton": skeleton},
                                np.random.default_rng(0), n_past=8, n_new=2, repeats=3)  # fmt: skip
    assert set(times) == {"model", "skeleton"}
    assert all(t.shape == (3,) for t in times.values())


def test_width_sweep_one_curve_per_width():
    curves = bench.width_sweep([32, 64], np.random.default_rng(0), n_new_values=[1, 5],
                               n_past=8, n_layer=1, repeats=2)  # fmt: skip
    assert list(curves) == [32, 64]
    assert all(c.times.shape == (2, 2) for c in curves.values())
    model = bench.width_model(768, np.random.default_rng(0), n_layer=1, n_ctx=24)
    assert model.config.n_head == 12 and model.config.n_embd == 768  # GPT-2 small's heads


def test_matmul_params_of_gpt2_small():
    config = GPTConfig(n_layer=12, n_head=12, n_embd=768, n_ctx=1024, n_vocab=50257)
    # GPT-2 small has 124M parameters; position embeddings (0.8M) and biases/gains are not
    # read by the matrix products.
    assert bench.matmul_params(config) == 12 * 12 * 768**2 + 50257 * 768
    assert 123e6 < bench.matmul_params(config) < 124e6


def test_roofline_model_by_hand():
    # 1e9 weights of 2 bytes at 1e12 bytes/s: 2 ms to read; 1e14 flop/s: 2e9 flop per position.
    times = bench.roofline_time([1, 50, 100, 200], 1e9, 2, 1e12, 1e14)
    assert np.allclose(times, [2e-3, 2e-3, 2e-3, 4e-3])
    assert bench.roofline_free_positions(2, 1e12, 1e14) == pytest.approx(100)
    for bad in ((2, 0, 1e14), (2, 1e12, -1), ("2", 1e12, 1e14)):  # 0 had divided by zero
        with pytest.raises(ValueError, match="must be a positive number"):
            bench.roofline_free_positions(*bad)


def test_greedy_seconds_matches_an_uncached_greedy_loop(tiny_model):
    prompt = [10, 20, 30, 40]
    seconds, produced = bench.greedy_seconds(tiny_model, prompt, 6, 2, np.random.default_rng(0))
    assert seconds.shape == (2,)
    sequence = list(prompt)
    for _ in range(6):  # the oracle: recompute the whole sequence, no cache
        sequence.append(int(np.argmax(forward(tiny_model.params, tiny_model.config, sequence)[-1])))
    assert produced == sequence[len(prompt) :]


def test_greedy_seconds_decodes_what_the_lesson_05_decoder_decodes(tiny_model):
    from speclab.decoding import greedy_decode

    prompt = [65, 66, 67, 10, 65]
    _, produced = bench.greedy_seconds(tiny_model, prompt, 12, 1, np.random.default_rng(0))
    assert produced == greedy_decode(tiny_model, prompt, 12).tokens


def test_random_model_is_what_the_width_slider_uses():
    model = random_model(GPTConfig(1, 2, 128, 32), np.random.default_rng(0))
    assert timing.model_record(model)["dtype"] == "float64"


def test_forward_report_pair_is_written_together(tmp_path):
    rows = [{"n_new": 1, "median_s": 0.5}]
    json_path, csv_path = bench.save_report({"forward_cost": rows}, tmp_path)
    before = json_path.read_bytes(), csv_path.read_bytes()
    with pytest.raises(TypeError):
        bench.save_report({"forward_cost": rows, "machine": object()}, tmp_path)
    assert (json_path.read_bytes(), csv_path.read_bytes()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["forward.csv", "forward.json"]


def test_against_reads_two_interquartile_ranges():
    low, high = {"q25": 1.0, "q75": 1.2}, {"q25": 1.3, "q75": 1.5}
    assert bench.against(low, high) == "below" and bench.against(high, low) == "above"
    assert bench.against(low, {"q25": 1.1, "q75": 1.4}) == "overlapping"


@pytest.mark.parametrize(
    ("outside", "verdict"),
    [
        ({512: (1.0, 1.1), 768: (0.9, 1.0)}, "cheaper"),
        ({512: (2.0, 2.1), 768: (1.9, 2.2)}, "dearer"),
        ({512: (1.4, 1.7), 768: (1.5, 1.6)}, "level"),
        ({512: (1.0, 1.1), 768: (1.5, 1.6)}, "mixed"),
        ({512: (1.0, 1.1), 768: (2.0, 2.1)}, "mixed"),
    ],
)
def test_beyond_the_cache_compares_with_the_widest_width_that_fits(outside, verdict):
    inside = {128: (1.9, 2.5), 256: (1.5, 1.6)}  # 128's range is wide: 256 is the one compared
    spread = {w: {"q25": a, "q75": b} for w, (a, b) in (inside | outside).items()}
    fits = {w: w in inside for w in spread}
    assert bench.beyond_the_cache(spread, fits) == (256, [512, 768], verdict)
    assert bench.beyond_the_cache(spread, dict.fromkeys(spread, True)) is None
    assert bench.beyond_the_cache(spread, dict.fromkeys(spread, False)) is None
