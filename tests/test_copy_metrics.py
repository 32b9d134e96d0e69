"""speclab.copy_metrics: copy probes, the copy gap against the inference forward, the copy test."""

import numpy as np
import pytest

from speclab.copy_metrics import copy_gap, copy_probes
from speclab.gpt import GPTConfig, forward
from speclab.weights import flatten, init_params

VAL_TEXT = np.frombuffer(
    b"".join(f"def f_{i}(a, b):\n    return a * {i} + b\n\n".encode() for i in range(400)),
    dtype=np.uint8,
)


@pytest.mark.parametrize("far", [False, True])
def test_copy_probes_repeat_a_snippet_after_a_blank_line(far):
    n_ctx = 256
    for text, first, second in copy_probes(VAL_TEXT, n_ctx, far=far):
        assert len(text) <= n_ctx
        assert text[first] == text[second] and len(text[first]) >= 30
        assert text[first.stop : second.start] == b"\n\n" and second.stop == len(text)
        if far:  # the repeat sits in the last quarter of the context, not near the start
            assert second.start >= n_ctx // 2


def test_copy_probes_are_the_issues_snippets_of_80_to_200_bytes_when_the_context_holds_them():
    """The issue defines the copy gap on snippets of 80-200 bytes; 64 probes by default, each
    the same at every call (a training run's validations compare like with like)."""
    text = np.frombuffer(
        b"".join(f"value_{i} = compute({i}, {i * 7})  # step {i}\n".encode() for i in range(4000)),
        dtype=np.uint8,
    )
    for far in (False, True):
        probes = copy_probes(text, 1024, far=far)
        assert len(probes) == 64 and probes == copy_probes(text, 1024, far=far)
        assert all(80 <= len(t[first]) <= 200 for t, first, _ in probes)
        short = copy_probes(text, 1024, n=5, far=far, lengths=(60, 120))
        assert all(60 <= len(t[first]) <= 120 for t, first, _ in short)
        other = copy_probes(text, 1024, far=far, rng=np.random.default_rng(1))
        assert len(other) == 64 and other != probes  # another generator: other probes
        assert other == copy_probes(text, 1024, far=far, rng=np.random.default_rng(1))


def test_copy_gap_matches_the_inference_forward():
    """copy_gap's per-byte surprises, recomputed with speclab.gpt.forward (an independent
    implementation of the same model) over the whole probe."""
    config = GPTConfig(n_layer=2, n_head=2, n_embd=8, n_ctx=256)
    params = init_params(config, np.random.default_rng(2), dtype=np.float64)
    for value in flatten(params).values():
        value += np.random.default_rng(3).standard_normal(value.shape) * 0.3
    probes = copy_probes(VAL_TEXT, config.n_ctx, n=3)
    bits = {"first": [], "second": [], "second_bytes": []}
    for text, first, second in probes:
        logits = forward(params, config, list(text))  # [n, n_vocab]
        log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        for name, part in (("first", first), ("second", second)):
            idx = np.arange(part.start, part.stop)
            surprise = -log_probs[idx - 1, list(text[part])] / np.log(2)
            bits[name].append(surprise.mean())
        bits["second_bytes"].append(surprise)
    got = copy_gap(params, config.n_head, probes)
    gaps = np.subtract(bits["first"], bits["second"])
    assert got["probes"] == 3
    repeats = np.concatenate([b for b in bits["second_bytes"]])
    assert got["missed"] == pytest.approx(np.mean(repeats > np.log2(10)), abs=1e-4)
    assert got["missed_bits"] == pytest.approx(
        repeats[repeats > np.log2(10)].sum() / repeats.sum(), abs=1e-3
    )
    assert got["se"] == pytest.approx(np.std(gaps, ddof=1) / np.sqrt(3), abs=2e-4)
    assert got["first"] == pytest.approx(np.mean(bits["first"]), abs=1e-4)
    assert got["gap"] == pytest.approx(np.mean(bits["first"]) - np.mean(bits["second"]), abs=2e-4)
    two = copy_gap(params, config.n_head, probes[:2])  # ddof=1: the spread of two is |a - b|
    assert two["se"] == pytest.approx(abs(gaps[0] - gaps[1]) / 2, abs=2e-4) and two["se"] > 0
    assert np.isnan(copy_gap(params, config.n_head, probes[:1])["se"])  # one probe, no spread


def test_a_model_that_ignores_its_context_has_no_gap_and_misses_what_it_does_not_expect():
    """With the last LayerNorm's gain at 0 the model predicts one fixed distribution after
    any context (here: a space, most likely), so a repeat costs exactly what the first
    occurrence cost, and the missed bytes are those that distribution gives less than one
    chance in ten: an oracle that needs no forward."""
    config = GPTConfig(n_layer=2, n_head=2, n_embd=8, n_ctx=256)
    params = init_params(config, np.random.default_rng(2), dtype=np.float64)
    space = params["wte"][ord(" ")]
    params["ln_f"]["g"][:] = 0
    params["ln_f"]["b"][:] = 40 * space / np.sum(space**2)
    logits = params["wte"] @ params["ln_f"]["b"]  # [n_vocab], the same after every context
    bits = -(logits - np.log(np.exp(logits).sum())) / np.log(2)
    probes = copy_probes(VAL_TEXT, config.n_ctx, n=3)
    repeats = np.concatenate([bits[list(text[second])] for text, _, second in probes])
    got = copy_gap(params, config.n_head, probes)
    assert got["gap"] == 0 and got["first"] == got["second"]
    assert 0 < got["missed"] < 1  # the spaces are expected, the rest missed
    assert got["missed"] == pytest.approx(np.mean(repeats > np.log2(10)), abs=1e-4)
    missed = repeats[repeats > np.log2(10)]
    assert got["missed_bits"] == pytest.approx(missed.sum() / repeats.sum(), abs=1e-4)


@pytest.mark.training_corpus
def test_copy_score_counts_to_the_first_mistake_of_plain_uncached_greedy():
    """The copy test against an uncached forward: the bytes counted are those plain argmax
    reproduces, and the recorded first mistake is that forward's argmax and probabilities."""
    from speclab.copy_metrics import copy_score, copy_test_prompts, held_out_functions
    from speclab.corpus import load_corpus
    from speclab.gpt import softmax
    from speclab.weights import load_target

    model = load_target()
    params, config = model.params, model.config
    corpus = load_corpus()
    # the sixth and eighth: short right runs, then a mistake (69 and 32 bytes, the shipped target)
    functions = held_out_functions(corpus["val"], corpus["train"])[5:8:2]
    score = copy_score(params, config, functions)
    pairs = copy_test_prompts(functions)
    for (prompt, rest), right, mistake in zip(
        pairs, score["bytes_copied"], score["first_mistakes"], strict=True
    ):
        p = softmax(forward(params, config, prompt + list(rest[:right]))[-1])
        assert all(  # every byte before it was the argmax
            int(np.argmax(forward(params, config, prompt + list(rest[:i]))[-1])) == rest[i]
            for i in range(right)
        )
        assert 0 < right < len(rest)
        assert mistake["chose"] == int(np.argmax(p)) != rest[right] == mistake["wanted"]
        assert mistake["p_chose"] == pytest.approx(p[mistake["chose"]], abs=1e-3)
        assert mistake["p_wanted"] == pytest.approx(p[rest[right]], abs=1e-3)


def test_the_copy_tests_eight_functions_are_spread_over_all_the_held_out_ones():
    """model_report's wider copy test (n=None) holds the 8 at an even stride, and only
    top-level functions of 120-400 bytes from the validation files, none from training."""
    from speclab.copy_metrics import held_out_functions
    from speclab.corpus import load_corpus

    corpus = load_corpus()
    val, train = corpus["val"], corpus["train"]
    every, eight = held_out_functions(val, train, n=None), held_out_functions(val, train)
    assert len(eight) == 8 and len(every) > 8
    assert eight == every[:: len(every) // 8][:8]
    assert all(f.startswith(b"def ") and 120 <= len(f) <= 401 for f in every)
    seen = train.tobytes()
    assert not any(f in seen for f in every)  # held-out files repeat some training functions
    assert len(held_out_functions(val, val[:0], n=None)) > len(every)  # and this finds them


def test_model_report_shows_a_hand_made_records_odd_values_as_they_are():
    """A record edited by hand may hold None or text where a number belongs: the report shows
    it as it is instead of failing on the format (`unsupported format string`)."""
    from benchmark_scripts import load

    report = load("model_report")
    assert report._shown_number(25250, ",") == "25,250"
    assert report._shown_number(65.64, ".1f") == "65.6"
    assert report._shown_number(None, ",") == "None"
    assert report._shown_number("x", ",") == "'x'"
    assert report._shown_number(True, ",") == "True"  # not formatted as the number 1


@pytest.mark.parametrize("n_ctx", [1, 4, 6, 9])
def test_copy_probes_name_a_context_too_short(n_ctx):
    from speclab.copy_metrics import copy_probes

    with pytest.raises(ValueError, match=f"a context of {n_ctx} is too short for the copy probes"):
        copy_probes(np.zeros(5000, dtype=np.uint8), n_ctx)


# --- edges a mutation audit found untested -----------------------------------------------

SMALL_VAL = np.frombuffer(
    b"".join(f"def f_{i}(a, b):\n    return a * {i} + b\n\n".encode() for i in range(400)),
    dtype=np.uint8,
)


def test_a_probe_snippet_takes_at_most_a_third_of_the_context():
    from speclab.copy_metrics import copy_probes

    for far in (False, True):
        probes = copy_probes(SMALL_VAL, 64, n=8, far=far)
        assert all(len(probe[field]) <= (64 - 4) // 3 for probe, field, _ in probes)


def test_functions_at_the_size_limit_and_filling_the_context_are_kept():
    """A function of exactly max_len bytes is found; one whose prompt and rest exactly fill
    the context is scored, not skipped."""
    from speclab.copy_metrics import copy_score, copy_test_prompts, held_out_functions
    from speclab.gpt import GPTConfig
    from speclab.weights import init_params

    body = b"def g():\n" + b"    x = 1\n" * 39  # the match is "\n" + body + "\n": 401 bytes
    val = np.frombuffer(b"x\n" + body + b"\n", dtype=np.uint8)
    assert held_out_functions(val, np.zeros(0, np.uint8), n=None, max_len=401) != []
    function = b"def h(a):\n" + b"    return a + 1\n" * 7
    ((prompt, rest),) = copy_test_prompts([function])
    config = GPTConfig(n_layer=1, n_head=2, n_embd=8, n_ctx=len(prompt) + len(rest))
    params = init_params(config, np.random.default_rng(0), dtype=np.float64)
    assert copy_score(params, config, [function])["bytes_to_copy"] == [len(rest)]
