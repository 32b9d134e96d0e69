"""speclab.next_token against independent oracles: numpy's own softmax, the cached decoder,
and positions counted one forward at a time."""

import numpy as np
import pytest

from speclab.decoding import greedy_decode
from speclab.gpt import GPTConfig, forward
from speclab.kv_cache import KVCache
from speclab.next_token import (
    greedy_steps,
    next_token_logits,
    positions_computed,
    probabilities,
    top_choices,
)
from speclab.tokenizer import encode
from speclab.weights import random_model

CONFIG = GPTConfig(n_layer=2, n_head=2, n_embd=16, n_ctx=64)


@pytest.fixture(scope="module")
def model():
    return random_model(CONFIG, np.random.default_rng(3))


def test_probabilities_are_softmax_of_logits_over_temperature():
    logits = np.array([2.0, 1.0, 0.0])
    for t in (0.5, 1.0, 2.0):
        expected = np.exp(logits / t) / np.exp(logits / t).sum()
        np.testing.assert_allclose(probabilities(logits, t), expected, rtol=1e-12)
    np.testing.assert_allclose(
        probabilities(logits, 1.0), [0.665241, 0.244728, 0.090031], atol=1e-6
    )
    assert probabilities(logits, 0.0).tolist() == [1.0, 0.0, 0.0]  # greedy: all on the top
    hot, cold = probabilities(logits, 100.0), probabilities(logits, 0.05)
    assert np.ptp(hot) < 0.01 and cold[0] > 0.9999  # flat when hot, greedy when cold


def test_next_token_logits_equal_the_cached_forwards(model):
    tokens = encode("def f(x):\n    return")
    cache = KVCache(CONFIG)
    for token in tokens:
        cached = forward(model.params, CONFIG, [token], cache)[-1]
    np.testing.assert_allclose(next_token_logits(model, tokens), cached, rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="at least one character"):
        next_token_logits(model, [])
    long = encode("x" * 100)  # longer than n_ctx = 64: the model sees the last 64 tokens
    np.testing.assert_allclose(next_token_logits(model, long), next_token_logits(model, long[-64:]))


def test_top_choices_are_sorted_and_sum_below_one(model):
    logits = next_token_logits(model, encode("hello"))
    choices = top_choices(logits, n=10)
    assert [c.token for c in choices] == np.argsort(-logits, kind="stable")[:10].tolist()
    assert all(
        a.probability >= b.probability for a, b in zip(choices[:-1], choices[1:], strict=True)
    )
    assert 0 < sum(c.probability for c in choices) <= 1
    assert top_choices(np.array([1.0, 3.0, 3.0]), n=2)[0].token == 1  # ties: the lower id


def test_greedy_steps_write_greedy_decodings_tokens(model):
    prompt = encode("abcab")
    steps = greedy_steps(model, prompt, 12)
    assert [step[0].token for step in steps] == greedy_decode(model, prompt, 12).tokens
    assert all(len(step) == 3 for step in steps)  # one forward per token, top 3 each


def test_greedy_steps_refuse_what_greedy_decode_refuses(model):
    n_ctx = model.config.n_ctx
    fits = encode("ab" * n_ctx)[: n_ctx - 3]
    assert [s[0].token for s in greedy_steps(model, fits, 3)] == greedy_decode(
        model, fits, 3
    ).tokens
    too_long = fits + [97]  # one token more: prompt + 3 new tokens no longer fit
    with pytest.raises(ValueError, match="context window"):
        greedy_decode(model, too_long, 3)
    with pytest.raises(
        ValueError,
        match=f"context window of {n_ctx} tokens: ask for at most 2 "
        f"new tokens, or shorten the prompt to at most {n_ctx - 3} tokens",
    ):
        greedy_steps(model, too_long, 3)
    # far too many new tokens: no prompt is short enough ("at most -998976 tokens" was said)
    with pytest.raises(ValueError, match=f"tokens: ask for at most {n_ctx - 5} new tokens$"):
        greedy_steps(model, encode("abcab"), 10**6)
    with pytest.raises(TypeError, match="n_new must be an integer"):
        greedy_steps(model, fits, 2.5)


@pytest.mark.parametrize("n_prompt,n_new", [(1, 1), (20, 5), (300, 128)])
def test_positions_computed_counted_forward_by_forward(n_prompt, n_new):
    with_cache = n_prompt + sum(1 for _ in range(n_new - 1))  # prefill, then one per token
    without = sum(n_prompt + i for i in range(n_new))  # each forward sees all text so far
    assert positions_computed(n_prompt, n_new, cached=True) == with_cache
    assert positions_computed(n_prompt, n_new, cached=False) == without
    with pytest.raises(ValueError):
        positions_computed(0, 3, cached=True)


def test_the_labels_lesson_03b_explains_are_the_labels_it_draws():
    """Lesson 03b's widget labels bars \\xc3 and \\n; the lesson now says what they mean: the
    names it gives must be the ones shown_token draws."""
    import json

    from speclab.paths import repo_root
    from speclab.render import shown_token

    cells = json.loads(
        (repo_root() / "notebooks" / "03b_what_a_language_model_does.ipynb").read_text("utf-8")
    )["cells"]
    prose = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    for byte, name in [(32, "is a space"), (10, "a line break"), (9, "a tab")]:
        assert f"`{shown_token(byte)}` {name}" in prose, name
    assert all(shown_token(b).startswith("\\x") for b in "中é".encode())
    assert "`\\xNN` any other byte" in prose


def test_logits_a_student_may_pass_by_mistake_are_named(model):
    """All positions' logits (forward(...) without [-1]) had ended in "all keys need to be the
    same shape"; n=2.5 in "slice indices must be integers"; n=-1 gave 255 choices; NaN logits
    gave NaN probabilities, and empty ones numpy's "zero-size array"."""
    logits = forward(model.params, model.config, encode("abc"))  # [3, n_vocab]
    with pytest.raises(ValueError, match=r"one row \[n_vocab\], got shape \(3, 256\).*\[-1\]"):
        top_choices(logits)
    for n, error in ((2.5, TypeError), ("5", TypeError), (0, ValueError), (-1, ValueError)):
        with pytest.raises(error, match="n must be"):
            top_choices(logits[-1], n=n)
    assert len(top_choices(logits[-1], n=300)) == 256  # more than there are: all of them
    for bad in ([1.0, np.nan, 2.0], [1.0, np.inf, 2.0], [-np.inf, -np.inf]):
        with pytest.raises(ValueError, match="finite numbers"):
            probabilities(bad)
    for bad in ([], None, 3.0):
        with pytest.raises(ValueError, match="one value per token"):
            probabilities(bad)
    np.testing.assert_allclose(probabilities([0.0, -np.inf]), [1.0, 0.0])  # a ruled-out token
    with pytest.raises(TypeError, match="must be a model"):
        next_token_logits(model.params, encode("ab"))
    with pytest.raises(TypeError, match="must be a model"):
        greedy_steps(model.params, encode("ab"), 2)


def test_positions_computed_takes_whole_counts_and_a_yes_or_no():
    """positions_computed(2.5, 5, True) had given 6.5 positions and cached="no" counted as
    True; the formula itself is checked against a forward-by-forward count above."""
    with pytest.raises(TypeError, match="n_prompt must be an integer"):
        positions_computed(2.5, 5, True)
    with pytest.raises(TypeError, match="cached must be True or False"):
        positions_computed(2, 5, "no")
    assert positions_computed(np.int64(2), 5, np.bool_(False)) == positions_computed(2, 5, False)
