"""Speculative sampling must give exactly the target's distribution; the tests can tell.

Oracles: (1) exact enumeration of every outcome of one round, driving the real step
functions with scripted uniforms, compared with p_target to 1e-12; (2) a chi-square test of
100,000 seeded rounds on the shipped models against the target's exact two-token
distribution, which must catch the biased rule (b); (3) the chi-square survival function
against printed table values and closed forms; (4) sampling settings against a plain
Python re-derivation; (5) decoders: temperature 0 is greedy, the same seed the same tokens.
"""

import copy
import itertools
import math
import re
from collections import defaultdict
from dataclasses import replace

import numpy as np
import pytest

from speclab import sampling
from speclab.decoding import greedy_decode, speculative_decode
from speclab.drafters import ModelDrafter, PromptLookupDrafter
from speclab.gpt import GPTConfig, forward
from speclab.kv_cache import KVCache
from speclab.sampling import (
    SIGNIFICANCE,
    SamplingSettings,
    acceptance_probability,
    biased_resample_step,
    chi_square_sf,
    chi_square_test,
    chi_square_two_sample,
    draw_and_match_step,
    expected_acceptance,
    expected_match_acceptance,
    first_tokens,
    leftover_distribution,
    one_hot,
    regularized_gamma_q,
    sample_rows,
    sample_token,
    sample_tokens,
    sampling_distribution,
    speculative_step,
)
from speclab.tokenizer import encode
from speclab.weights import Model, flatten, random_model

# --- exact enumeration ------------------------------------------------------------------


class NeedAnotherUniform(Exception):
    pass


class ScriptedUniforms:
    """Stands in for np.random.Generator: random() returns the scripted values in order."""

    def __init__(self, values):
        self.values, self.used = values, 0

    def random(self):
        if self.used == len(self.values):
            raise NeedAnotherUniform
        self.used += 1
        return self.values[self.used - 1]


def cells(breakpoints):
    """(midpoint, width) of the intervals between the sorted breakpoints in [0, 1]."""
    edges = np.unique(np.clip(np.concatenate([[0.0, 1.0], breakpoints]), 0.0, 1.0))
    return list(zip((edges[1:] + edges[:-1]) / 2, np.diff(edges), strict=True))


def enumerate_step(step, p_target, p_draft, tokens, breakpoints):
    """{(n_accepted, next_token): probability} over all uniforms the step can consume.

    Every decision of a step is "u below a threshold"; if the thresholds are among the
    breakpoints, the outcome is constant on each cell and the midpoint stands for it.
    """
    outcomes = defaultdict(float)
    grid = cells(breakpoints)

    def explore(prefix, weight):
        try:
            outcome = step(p_target, p_draft, tokens, ScriptedUniforms(prefix))
        except NeedAnotherUniform:
            for middle, width in grid:
                explore(prefix + [middle], weight * width)
            return
        outcomes[outcome] += weight

    explore([], 1.0)
    return outcomes


def thresholds(p_target, p_draft, tokens):
    """Every threshold the rules compare a uniform with, computed here independently."""
    points = [np.cumsum(row) for row in p_target]
    for i, x in enumerate(tokens):
        p, q = p_target[i], p_draft[i]
        points.append([p[x] / q[x] if q[x] > 0 else 1.0])
        leftover = np.maximum(p - q, 0)
        points.append(np.cumsum(leftover / leftover.sum() if leftover.sum() > 0 else p))
    return np.concatenate(points)


def markov_pair(rng, n_vocab, zeros=0.3):
    """A toy target and draft of order 1: P[a] = p(. | last token a), Q[a]; start rows too."""

    def rows(count):
        raw = rng.dirichlet(np.ones(n_vocab), size=count)
        raw[rng.random(raw.shape) < zeros] = 0.0  # zeros on both sides
        raw[np.arange(count), rng.integers(0, n_vocab, count)] += 0.1  # no empty row
        return raw / raw.sum(axis=1, keepdims=True)

    return rows(n_vocab + 1), rows(n_vocab + 1)  # row n_vocab: after the start


def sequence_distribution(step, target, draft, k, n_out):
    """Exact distribution of the first n_out tokens: one round of `step` with k drafts drawn
    from the draft, continued by plain sampling from the target if the round emits fewer."""
    n_vocab = target.shape[1]
    start = n_vocab
    joint = defaultdict(float)
    for drafts in itertools.product(range(n_vocab), repeat=k):
        context = (start,) + drafts
        weight = math.prod(draft[context[i], drafts[i]] for i in range(k))
        if weight == 0:
            continue
        p_target = target[list(context)]  # [k + 1, n_vocab]
        p_draft = draft[list(context[:-1])]  # [k, n_vocab]
        found = enumerate_step(
            step, p_target, p_draft, list(drafts), thresholds(p_target, p_draft, drafts)
        )
        for (n_accepted, token), probability in found.items():
            emitted = list(drafts[:n_accepted]) + [token]
            partial = {tuple(emitted[:n_out]): weight * probability}
            for _ in range(n_out - len(emitted)):  # plain sampling continues
                partial = {
                    seq + (b,): w * target[seq[-1], b]
                    for seq, w in partial.items()
                    for b in range(n_vocab)
                }
            for seq, w in partial.items():
                joint[seq] += w
    return joint


def target_sequence_distribution(target, n_out):
    n_vocab = target.shape[1]
    exact = {}
    for seq in itertools.product(range(n_vocab), repeat=n_out):
        context = (n_vocab,) + seq
        exact[seq] = math.prod(target[context[i], seq[i]] for i in range(n_out))
    return exact


def max_difference(a, b):
    return max(abs(a.get(key, 0.0) - b.get(key, 0.0)) for key in set(a) | set(b))


def first_token_distribution(step, p, q):
    """Enumerated distribution [n_vocab] of the first emitted token, k = 1, and P(accept)."""
    out, accepted = np.zeros_like(p), 0.0
    for x in np.flatnonzero(q):
        rows = np.stack([p, p])  # the bonus row does not matter for the first token
        found = enumerate_step(step, rows, q[None], [x], thresholds(rows, q[None], [x]))
        for (n_accepted, token), probability in found.items():
            out[x if n_accepted else token] += q[x] * probability
            accepted += q[x] * probability * n_accepted
    return out, accepted


SMALL_CASES = {
    "random": (np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.4, 0.3, 0.2, 0.1])),
    "draft zeros": (np.array([0.25, 0.25, 0.25, 0.25]), np.array([0.0, 0.5, 0.5, 0.0])),
    "target zeros": (np.array([0.0, 0.6, 0.0, 0.4]), np.array([0.3, 0.2, 0.3, 0.2])),
    "identical": (np.array([0.1, 0.6, 0.1, 0.2]), np.array([0.1, 0.6, 0.1, 0.2])),
    "one-hot draft (lookup)": (np.array([0.5, 0.2, 0.2, 0.1]), np.array([0.0, 0.0, 1.0, 0.0])),
    "disjoint": (np.array([0.5, 0.5, 0.0, 0.0]), np.array([0.0, 0.0, 0.7, 0.3])),
    "round-off": (np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.1, 0.2, 0.3, 0.4]) * (1 - 1e-16)),
    # a leftover of 0.004: tiny, but real mass the rule must draw from (not round-off)
    "nearly identical": (np.array([0.1, 0.6, 0.1, 0.2]), np.array([0.1, 0.596, 0.104, 0.2])),
}


@pytest.mark.parametrize("case", SMALL_CASES)
def test_exact_rule_reproduces_the_target_by_enumeration(case):
    p, q = SMALL_CASES[case]
    out, accepted = first_token_distribution(speculative_step, p, q)
    assert np.abs(out - p).max() < 1e-12
    assert accepted == pytest.approx(np.minimum(p, q).sum(), abs=1e-12)
    assert accepted == pytest.approx(expected_acceptance(p, q), abs=1e-12)


@pytest.mark.parametrize("case", SMALL_CASES)
def test_draw_and_match_is_exact_but_accepts_sum_p_times_q(case):
    p, q = SMALL_CASES[case]
    out, accepted = first_token_distribution(draw_and_match_step, p, q)
    assert np.abs(out - p).max() < 1e-12
    assert accepted == pytest.approx(float(p @ q), abs=1e-12)
    assert accepted == pytest.approx(expected_match_acceptance(p, q), abs=1e-12)
    assert accepted <= np.minimum(p, q).sum() + 1e-15  # sum p q <= sum min(p, q), always


@pytest.mark.parametrize("case", SMALL_CASES)
def test_biased_rule_gives_min_plus_rejected_times_p(case):
    p, q = SMALL_CASES[case]
    out, _ = first_token_distribution(biased_resample_step, p, q)
    beta = np.minimum(p, q).sum()
    assert np.abs(out - (np.minimum(p, q) + (1 - beta) * p)).max() < 1e-12
    if case in ("random", "draft zeros", "target zeros", "one-hot draft (lookup)"):
        assert np.abs(out - p).max() > 0.01  # biased whenever p != q and some q > p...
    if case in ("identical", "round-off", "disjoint"):
        assert np.abs(out - p).max() < 1e-12  # ...but not when nothing is ever rejected


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_rule_two_drafts_three_tokens_by_enumeration(seed):
    target, draft = markov_pair(np.random.default_rng(seed), n_vocab=3)
    exact = target_sequence_distribution(target, 3)
    for step in (speculative_step, draw_and_match_step):
        found = sequence_distribution(step, target, draft, k=2, n_out=3)
        assert max_difference(found, exact) < 1e-12, step.__name__
    biased = sequence_distribution(biased_resample_step, target, draft, k=2, n_out=3)
    assert max_difference(biased, exact) > 1e-3


def test_identical_distributions_never_reject():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(16), size=4)  # [4, 16]
    for _ in range(500):
        drafts = [int(sample_token(row, rng)) for row in p[:3]]
        n_accepted, token = speculative_step(p, p[:3], drafts, rng)
        assert n_accepted == 3 and p[3, token] > 0
    assert np.allclose(leftover_distribution(p[0], p[0]), p[0])  # no division by zero
    assert np.isfinite(leftover_distribution(p[0], p[0] * (1 - 1e-16))).all()


def test_a_draft_the_drafter_gave_no_mass_is_a_broken_drafter():
    rng = np.random.default_rng(1)
    p = np.array([[0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3], [0.2, 0.3, 0.5]])
    q = np.array([[0.0, 0.0, 1.0], [0.5, 0.5, 0.0]])  # proposals 0 or 1 first have q = 0
    for step in (speculative_step, draw_and_match_step, biased_resample_step):
        with pytest.raises(ValueError, match="broken: it proposed token 0 as draft 1"):
            step(p[:2], q[:1], [0], rng)
        with pytest.raises(ValueError, match="token 2 as draft 2"):  # any position
            step(p, q, [2, 2], rng)
    # sampled drafts always have mass: the rule runs as before
    assert speculative_step(p[:2], q[:1], [2], rng)[0] == 0  # p = 0 there: never accepted
    # the table of lesson 07 still says what min(1, p / q) tends to where q = 0
    assert acceptance_probability(p[0], q[0]).tolist() == [1.0, 1.0, 0.0]


class BrokenDrafter:
    """Proposes token 7 but reports the draft distribution of token 3."""

    name = "broken-on-purpose"

    def propose(self, tokens, k):
        return [7] * k

    def propose_with_probs(self, tokens, k, settings, rng):
        return [7] * k, one_hot([3] * k, 256)


class MisshapenDrafter(BrokenDrafter):
    name = "misshapen"

    def propose_with_probs(self, tokens, k, settings, rng):
        return [7] * k, np.full((k, 255), 1 / 255)


def test_the_decoder_names_a_broken_drafter(tiny_pair):
    target, _ = tiny_pair
    cases = {
        "drafter broken-on-purpose is broken": BrokenDrafter(),
        "drafter misshapen: p_draft has shape": MisshapenDrafter(),
    }
    for message, drafter in cases.items():
        with pytest.raises(ValueError, match=message):
            speculative_decode(
                target, drafter, encode("abc"), 8, 2, temperature=1.0, rng=np.random.default_rng(0)
            )


def test_round_off_inputs_are_cleaned_and_bad_inputs_named():
    rng = np.random.default_rng(2)
    p = np.array([[0.7 + 1e-12, 0.3 - 2e-12, -1e-13], [0.2, 0.8, 0.0]])
    q = np.array([[0.1, 0.9, 0.0]])
    for _ in range(100):
        n_accepted, token = speculative_step(p, q, [1], rng)
        assert token in (0, 1)
    with pytest.raises(ValueError, match="shape"):
        speculative_step(p, q, [1, 0], rng)
    with pytest.raises(ValueError, match="row 0 of p_target sums to 2, not 1"):
        speculative_step(p * 2, q, [1], rng)
    with pytest.raises(ValueError, match=r"^p_draft sums to 0\.5, not 1"):
        speculative_step(p, q / 2, [1], rng)
    with pytest.raises(ValueError, match="negative"):
        speculative_step(p, np.array([[1.1, -0.1, 0.0]]), [1], rng)
    with pytest.raises(ValueError, match="vocabulary"):
        speculative_step(p, q, [3], rng)
    assert speculative_step(p[:1], np.zeros((0, 3)), [], rng)[0] == 0  # k = 0: a plain draw


def test_same_seed_same_round():
    rng = np.random.default_rng(3)
    p, q = rng.dirichlet(np.ones(50), size=5), rng.dirichlet(np.ones(50), size=4)
    drafts = [int(sample_token(row, rng)) for row in q]
    runs = [
        [speculative_step(p, q, drafts, np.random.default_rng(s)) for s in range(50)]
        for _ in range(2)
    ]
    assert runs[0] == runs[1] and len(set(runs[0])) > 1


# --- drawing tokens ---------------------------------------------------------------------


def test_samplers_follow_p_and_never_pick_a_zero():
    rng = np.random.default_rng(4)
    p = np.array([0.0, 0.5, 0.0, 0.2, 0.3, 0.0])
    counts = np.bincount(sample_tokens(p, 60_000, rng), minlength=6)
    assert counts[[0, 2, 5]].sum() == 0
    assert chi_square_test(counts, p).p_value > SIGNIFICANCE
    rows = np.stack([p, p[::-1]])
    picks = sample_rows(np.tile(rows, (30_000, 1)), rng).reshape(30_000, 2)
    for column, row in zip(picks.T, rows, strict=True):
        assert chi_square_test(np.bincount(column, minlength=6), row).p_value > SIGNIFICANCE
    one_at_a_time = np.bincount([sample_token(p, rng) for _ in range(20_000)], minlength=6)
    assert one_at_a_time[[0, 2, 5]].sum() == 0
    assert chi_square_test(one_at_a_time, p).p_value > SIGNIFICANCE


def test_sample_token_inverts_the_cumulative_sum():
    p = np.array([0.25, 0.0, 0.5, 0.25, 0.0])
    for u, want in [(0.0, 0), (0.2499, 0), (0.25, 2), (0.7499, 2), (0.75, 3), (1 - 1e-16, 3)]:
        assert sample_token(p, ScriptedUniforms([u])) == want


class ScriptedBatches(ScriptedUniforms):
    """ScriptedUniforms for the vectorised samplers: random(size) returns `size` of them."""

    def random(self, size=None):
        if size is None:
            return super().random()
        return np.array([ScriptedUniforms.random(self) for _ in range(size)])


def test_the_vectorised_samplers_invert_the_cumulative_sum_as_sample_token_does():
    """The same u gives the same token in all three samplers, at the boundaries too: at
    u = 0 a token of p 0 at the start must not come out (cdf <= u, not cdf < u)."""
    p = np.array([0.0, 0.25, 0.0, 0.5, 0.25, 0.0])
    us = [0.0, 0.2499, 0.25, 0.7499, 0.75, 1 - 1e-16]
    want = [1, 1, 3, 3, 4, 4]
    assert [sample_token(p, ScriptedUniforms([u])) for u in us] == want
    assert sample_rows(np.tile(p, (len(us), 1)), ScriptedBatches(us)).tolist() == want
    assert sample_tokens(p, len(us), ScriptedBatches(us)).tolist() == want


# --- sampling settings ------------------------------------------------------------------


def settings_by_hand(logits, temperature, top_k, top_p):
    """Plain Python: scale, softmax, keep the top_k, then the nucleus, renormalise."""
    n = len(logits)
    if temperature == 0:
        best = max(range(n), key=lambda i: (logits[i], -i))
        return [1.0 if i == best else 0.0 for i in range(n)]
    weights = [math.exp((x - max(logits)) / temperature) for x in logits]
    probs = [w / sum(weights) for w in weights]
    order = sorted(range(n), key=lambda i: (-logits[i], i))
    kept = set(order[: top_k or n])
    probs = [probs[i] if i in kept else 0.0 for i in range(n)]
    probs = [x / sum(probs) for x in probs]
    if top_p is not None:
        order = sorted(range(n), key=lambda i: (-probs[i], i))
        nucleus, mass = set(), 0.0
        for i in order:
            if mass >= top_p:
                break
            nucleus.add(i)
            mass += probs[i]
        probs = [probs[i] if i in nucleus else 0.0 for i in range(n)]
        probs = [x / sum(probs) for x in probs]
    return probs


@pytest.mark.parametrize(
    "temperature, top_k, top_p",
    [(1.0, None, None), (0.7, None, None), (2.5, 3, None), (1.0, None, 0.6), (0.5, 5, 0.9),
     (0.0, None, None), (0.0, 2, 0.5), (1.0, 1, None), (1.3, None, 1.0), (1.0, 40, None)],
)  # fmt: skip
def test_sampling_distribution_matches_a_hand_derivation(temperature, top_k, top_p):
    rng = np.random.default_rng(5)
    logits = rng.normal(0, 2, size=(3, 12))
    logits[0, 4] = logits[0, 7] = logits[0].max() + 1  # a tie at the top
    settings = SamplingSettings(temperature, top_k, top_p)
    got = sampling_distribution(logits, settings)  # [3, 12]
    assert got.shape == (3, 12)
    for row, logit_row in zip(got, logits, strict=True):
        assert np.allclose(row, settings_by_hand(list(logit_row), temperature, top_k, top_p))
        assert row.sum() == pytest.approx(1.0) and (row >= 0).all()


def test_greedy_settings_are_one_hot_on_the_argmax_and_bad_settings_fail():
    logits = np.array([[0.1, 3.0, 3.0, -1.0]])
    assert sampling_distribution(logits, SamplingSettings(0.0)).tolist() == [[0, 1, 0, 0]]
    assert SamplingSettings(0.0).greedy and not SamplingSettings(0.1).greedy
    assert np.array_equal(one_hot([2, 0], 3), [[0, 0, 1], [1, 0, 0]])
    for bad in ({"temperature": -1}, {"temperature": math.nan}, {"top_k": 0},
                {"top_k": 2.5}, {"top_p": 0.0}, {"top_p": 1.5}):  # fmt: skip
        with pytest.raises(ValueError):
            SamplingSettings(**bad)
    with pytest.raises(TypeError):
        SamplingSettings("hot")


@pytest.mark.parametrize("temperature", [5e-324, 1e-310, 1e-300, 1e-30])
def test_a_tiny_temperature_is_greedy_never_nan(temperature):
    logits = np.array([[1.0, 3.0, 2.0, -1.0], [40.0, -40.0, 39.0, 0.0], [0.0, 0.0, 0.0, 0.5]])
    probs = sampling_distribution(logits, SamplingSettings(temperature))
    assert np.array_equal(probs, one_hot([1, 0, 3], 4))
    big = np.array([1e300, -1e300, 0.0])  # the largest logits a float64 holds
    assert np.array_equal(sampling_distribution(big, SamplingSettings(1e-10)), [1.0, 0.0, 0.0])


def test_a_tiny_temperature_splits_exact_ties_evenly():
    # the t -> 0 limit of the softmax gives exact ties equal shares (t = 0 picks the lower id)
    probs = sampling_distribution([2.0, 5.0, 5.0], SamplingSettings(1e-320))
    assert probs.tolist() == [0.0, 0.5, 0.5]


def test_a_tiny_temperature_decodes_like_greedy(tiny_pair):
    target, draft = tiny_pair
    prompt, tiny = encode("abcab"), {"temperature": 1e-320, "rng": np.random.default_rng(0)}
    greedy = greedy_decode(target, prompt, 12)
    assert greedy_decode(target, prompt, 12, **tiny).tokens == greedy.tokens
    spec = speculative_decode(target, ModelDrafter(draft), prompt, 12, 3, **tiny)
    assert spec.tokens == greedy.tokens


# --- the chi-square test ----------------------------------------------------------------

# (statistic, df, upper-tail probability) from printed chi-square tables
CHI_SQUARE_TABLE = [
    (3.841, 1, 0.05), (6.635, 1, 0.01), (10.828, 1, 0.001), (5.991, 2, 0.05),
    (7.815, 3, 0.05), (11.070, 5, 0.05), (18.307, 10, 0.05), (23.209, 10, 0.01),
    (29.588, 10, 0.001), (31.410, 20, 0.05), (43.773, 30, 0.05), (67.505, 50, 0.05),
    (124.342, 100, 0.05), (135.807, 100, 0.01), (0.004, 1, 0.95), (77.929, 100, 0.95),
]  # fmt: skip


@pytest.mark.parametrize("statistic, df, tail", CHI_SQUARE_TABLE)
def test_chi_square_sf_matches_table_values(statistic, df, tail):
    # tables round the statistic to 3 decimals: allow what that rounding moves
    assert chi_square_sf(statistic, df) == pytest.approx(tail, rel=2e-3, abs=2e-4)


def test_chi_square_sf_closed_forms():
    for x in [0.01, 0.5, 1.0, 3.0, 10.0, 50.0, 200.0]:
        assert chi_square_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)
        assert chi_square_sf(x, 1) == pytest.approx(math.erfc(math.sqrt(x / 2)), rel=1e-10)
        # df = 4: Q(2, x/2) = e^(-x/2) (1 + x/2)
        assert chi_square_sf(x, 4) == pytest.approx(math.exp(-x / 2) * (1 + x / 2), rel=1e-12)
    assert chi_square_sf(0.0, 7) == 1.0 and chi_square_sf(math.inf, 7) == 0.0
    assert regularized_gamma_q(3.0, 1e4) == 0.0
    values = [chi_square_sf(x, 255) for x in np.linspace(150, 400, 26)]
    assert all(a > b for a, b in zip(values, values[1:], strict=False))


def test_chi_square_test_by_hand_and_pooling():
    # 60 rolls of a die: statistic = sum (o - 10)^2 / 10 = (4 + 1 + 0 + 9 + 1 + 1) / 10
    result = chi_square_test([12, 9, 10, 7, 11, 11], np.full(6, 1 / 6))
    assert result.statistic == pytest.approx(1.6) and result.df == 5
    assert result.p_value == pytest.approx(chi_square_sf(1.6, 5))
    pooled = chi_square_test([50, 40, 5, 2, 3], [0.5, 0.4, 0.04, 0.03, 0.03])  # 4 + 3 + 3
    assert pooled.bins == 3 and pooled.df == 2  # the rare ones share one bin of 10 expected
    assert pooled.statistic == pytest.approx(0.0)
    joined = chi_square_test([50, 45, 3, 2], [0.5, 0.46, 0.02, 0.02])  # 2 + 2: still rare
    assert joined.bins == 2 and joined.statistic == pytest.approx((50 - 50) ** 2 / 50)
    impossible = chi_square_test([10, 1], [1.0, 0.0])
    assert impossible.p_value == 0.0 and impossible.rejects()
    same = chi_square_two_sample([30, 20, 50], [60, 40, 100])
    assert same.statistic == pytest.approx(0.0, abs=1e-12) and same.df == 2
    # 2 x 2 by hand: 15 expected in each cell, each off by 5: 4 * 25 / 15
    swapped = chi_square_two_sample([10, 20], [20, 10])
    assert swapped.statistic == pytest.approx(20 / 3) and swapped.df == 1
    assert swapped.p_value == pytest.approx(chi_square_sf(20 / 3, 1))
    assert chi_square_two_sample([100, 0, 50], [0, 100, 50]).rejects()
    # pooling's boundaries: a bin of exactly 5 expected stands alone (45 + 45 + 5 + (2.5 + 2.5))
    edge = chi_square_test([45, 45, 5, 3, 2], [0.45, 0.45, 0.05, 0.025, 0.025])
    assert (edge.bins, edge.df) == (4, 3)
    # two samples: a bin is rare by the smaller sample (104: 2 + 2 expected there), not by
    # the larger one (1,040: 20 + 20); pooled, the two rare bins still expect only 4, under
    # 5, so they join the smallest common bin: 2 bins in all
    uneven = chi_square_two_sample([50, 50, 2, 2], [500, 500, 20, 20])
    assert (uneven.bins, uneven.df) == (2, 1)


# --- decoders with sampling ------------------------------------------------------------

TINY = GPTConfig(n_layer=1, n_head=2, n_embd=16, n_ctx=48)
TINY_DRAFT = GPTConfig(n_layer=1, n_head=1, n_embd=8, n_ctx=48)


@pytest.fixture(scope="module")
def tiny_pair():
    return random_model(TINY, np.random.default_rng(20)), random_model(
        TINY_DRAFT, np.random.default_rng(21)
    )


def test_temperature_zero_is_exactly_greedy(tiny_pair):
    target, draft = tiny_pair
    prompt = encode("abcabcab")
    reference = greedy_decode(target, prompt, 20).tokens
    assert greedy_decode(target, prompt, 20, temperature=0.0, top_k=3).tokens == reference
    for drafter in (ModelDrafter(draft), PromptLookupDrafter()):
        result = speculative_decode(target, drafter, prompt, 20, 4, temperature=0.0)
        assert result.tokens == reference and result.method == "speculative"


def test_same_seed_same_tokens_and_seeds_differ(tiny_pair):
    target, draft = tiny_pair
    prompt = encode("abcabcab")
    for settings in ({"temperature": 1.0}, {"temperature": 0.8, "top_k": 20, "top_p": 0.9}):
        outputs = []
        for seed in (7, 7, 8):
            plain = greedy_decode(target, prompt, 25, rng=np.random.default_rng(seed), **settings)
            spec = [  # a fixed k: an adaptive k that times rounds would draw differently
                speculative_decode(
                    target,
                    make(),
                    prompt,
                    25,
                    3,
                    adaptive=False,
                    rng=np.random.default_rng(seed),
                    **settings,
                )  # fmt: skip
                for make in (lambda: ModelDrafter(draft), PromptLookupDrafter)
            ]
            assert plain.method == "sampling" and len(plain.tokens) == 25
            assert all(r.method == "speculative sampling" and len(r.tokens) == 25 for r in spec)
            outputs.append([plain.tokens] + [r.tokens for r in spec])
        assert outputs[0] == outputs[1] and outputs[0] != outputs[2]
    with pytest.raises(TypeError, match="rng"):
        greedy_decode(target, prompt, 5, temperature=1.0)


def test_model_drafter_samples_from_its_own_distribution(tiny_pair):
    _, draft = tiny_pair
    drafter = ModelDrafter(draft)
    settings = SamplingSettings(0.9, top_k=50)
    rng = np.random.default_rng(9)
    for tokens in (encode("hello wor"), encode("hello"), encode("help me"), encode("help me!!")):
        drafts, p_draft = drafter.propose_with_probs(tokens, 4, settings, rng)
        assert len(drafts) == 4 and p_draft.shape == (4, 256)
        for i, token in enumerate(drafts):  # uncached oracle: the whole text through forward
            logits = forward(draft.params, draft.config, tokens + drafts[:i])[-1]
            assert np.allclose(p_draft[i], sampling_distribution(logits, settings), atol=1e-12)
            assert p_draft[i, token] > 0
    assert drafter.propose_with_probs(tokens, 0, settings, rng)[1].shape == (0, 256)


def peaked(model, factor=30.0):
    """A random model with its final layer norm's gain times `factor`: its logits spread
    about 2 units instead of 0.08, so its distributions are far from uniform and a test of
    sampling can tell a wrong one (a random model's own are within 2 % of uniform)."""
    params = copy.deepcopy(model.params)
    params["ln_f"]["g"] = params["ln_f"]["g"] * factor
    return Model(model.config, params, {}, name=f"peaked {model.name}")


@pytest.fixture(scope="module")
def peaked_pair(tiny_pair):
    return tuple(peaked(model) for model in tiny_pair)


def uniform_over(p):
    return (p > 0) / np.count_nonzero(p)


def test_model_drafter_draws_its_drafts_from_p_draft(peaked_pair):
    """Speculative sampling is exact only if each draft is a draw from the p_draft returned
    beside it: 4,000 first drafts from one context against p_draft[0]."""
    _, draft = peaked_pair
    settings = SamplingSettings(0.9, top_k=50)
    rng = np.random.default_rng(11)
    counts, tokens = np.zeros(256), encode("hello wor")
    for _ in range(4000):
        drafts, p_draft = ModelDrafter(draft).propose_with_probs(tokens, 1, settings, rng)
        counts[drafts[0]] += 1
    q = p_draft[0]
    assert chi_square_test(counts, q).p_value > SIGNIFICANCE
    # The test can tell: q is far from uniform over its support, and the same counts reject
    # that uniform and the model's distribution at another temperature.
    assert 0.5 * np.abs(q - uniform_over(q)).sum() > 0.2
    logits = forward(draft.params, draft.config, tokens)[-1]
    hotter = sampling_distribution(logits, SamplingSettings(1.3, top_k=50))
    assert chi_square_test(counts, uniform_over(q)).rejects()
    assert chi_square_test(counts, hotter).rejects()


def near_draft(target, scale=0.02, seed=1):
    """The target with its weights nudged: a draft that agrees with it only in part."""
    params = copy.deepcopy(target.params)
    rng = np.random.default_rng(seed)
    for value in flatten(params).values():
        value += rng.standard_normal(value.shape) * scale
    return Model(target.config, params, {}, name="near draft")


@pytest.mark.parametrize(
    "settings",
    [SamplingSettings(1.0, top_k=3), SamplingSettings(0.6, top_k=4, top_p=0.9)],
    ids=["T=1 top_k=3", "T=0.6 top_k=4 top_p=0.9"],
)
def test_decoders_sample_the_target_distribution(peaked_pair, settings):
    """The decoders wire the rule and the settings correctly: their first two tokens follow
    the target's distribution under those settings; the same harness catches the biased
    rule and a decoder that samples uniformly or at another temperature, so it can fail."""
    target, _ = peaked_pair
    draft = near_draft(target)
    prompt = encode("ab")  # a few tokens per position (top_k, top_p): a small table
    options = {"temperature": settings.temperature, "top_k": settings.top_k,
               "top_p": settings.top_p}  # fmt: skip
    p0 = sampling_distribution(forward(target.params, target.config, prompt)[-1], settings)
    q0 = sampling_distribution(forward(draft.params, draft.config, prompt)[-1], settings)
    assert 0.2 < np.minimum(p0, q0).sum() < 0.9  # drafts are accepted and rejected: both paths
    exact = two_token_table(target, prompt, settings)
    rng = np.random.default_rng(10)
    counts = {name: np.zeros(256 * 256) for name in ("plain", "exact", "biased")}
    for _ in range(1500):
        plain = greedy_decode(target, prompt, 2, rng=rng, **options).tokens
        counts["plain"][plain[0] * 256 + plain[1]] += 1
        # "exact": the default rule, as a learner would call it
        for name, rule in (("exact", {}), ("biased", {"rule": biased_resample_step})):
            spec = speculative_decode(target, ModelDrafter(draft), prompt, 2, 1, rng=rng,
                                      **options, **rule).tokens  # fmt: skip
            counts[name][spec[0] * 256 + spec[1]] += 1
    for name in ("plain", "exact"):
        assert chi_square_test(counts[name], exact.ravel()).p_value > SIGNIFICANCE, name
    if settings.top_p is None:  # with top_p, 2 first tokens of 86 % overlap: too little bias
        assert chi_square_test(counts["biased"], exact.ravel()).rejects()  # to see in 1,500
    # The counts tell the target's table from a uniform one over the same pairs, and from
    # the table at another temperature (a decoder that ignored `temperature`).
    assert chi_square_test(counts["exact"], uniform_over(exact.ravel())).rejects()
    hotter = replace(settings, temperature=settings.temperature * 1.6)  # one that ignored T
    assert chi_square_test(
        counts["exact"], two_token_table(target, prompt, hotter).ravel()
    ).rejects()


def two_token_table(target, prompt, settings):
    """P(first = a, second = b) [256, 256] of `target` sampling two tokens after `prompt`."""
    cache = KVCache(target.config)
    p0 = sampling_distribution(forward(target.params, target.config, prompt, cache)[-1], settings)
    table = np.zeros((256, 256))
    for a in np.flatnonzero(p0):
        logits = forward(target.params, target.config, [int(a)], cache)[-1]
        table[a] = p0[a] * sampling_distribution(logits, settings)
        cache.truncate(len(prompt))
    return table


# --- the real models: 100,000 seeded rounds --------------------------------------------

PROMPT = "    def __init__(self, name, value=None):\n        self."
EMPIRICAL_SETTINGS = SamplingSettings(temperature=1.0)


@pytest.fixture(scope="module")
def real_distributions():
    """p0 = target after the prompt, q0 = draft after it, P[a] = target after prompt + a.

    Computed once (257 target forwards, 1 draft forward); every test samples from them.
    """
    weights = pytest.importorskip("speclab.weights")
    try:
        target, draft = weights.load_target(), weights.load_draft()
    except FileNotFoundError as missing:
        pytest.skip(f"shipped weights missing: {missing}")
    prompt = encode(PROMPT)
    cache = KVCache(target.config)
    logits = forward(target.params, target.config, prompt, cache)[-1]
    p0 = sampling_distribution(logits, EMPIRICAL_SETTINGS)  # [n_vocab]
    q0 = sampling_distribution(
        forward(draft.params, draft.config, prompt)[-1], EMPIRICAL_SETTINGS
    )  # [n_vocab]
    after = np.zeros((256, 256))  # [a, n_vocab]: the target after prompt + a
    for a in range(256):
        after[a] = sampling_distribution(
            forward(target.params, target.config, [a], cache)[-1], EMPIRICAL_SETTINGS
        )
        cache.truncate(len(prompt))
    return p0, q0, after


def run_rounds(step, p0, q0, after, n, seed):
    """n rounds with k = 1, continued by plain sampling: (first two tokens [n, 2], accepted [n])."""
    rng = np.random.default_rng(seed)
    drafts = sample_tokens(q0, n, rng)  # [n], vectorised: each distribution computed once
    rows = np.stack([np.broadcast_to(p0, after.shape), after], axis=1)  # [a, 2, n_vocab]
    q_rows = q0[None]  # [1, n_vocab]
    tokens = np.zeros((n, 2), dtype=np.int64)
    accepted = np.zeros(n, dtype=bool)
    for i, x in enumerate(drafts.tolist()):
        n_accepted, token = step(rows[x], q_rows, [x], rng)
        accepted[i] = n_accepted == 1
        tokens[i] = (x, token) if accepted[i] else (token, -1)
    missing = ~accepted  # one token emitted: the next round's first token, by plain sampling
    tokens[missing, 1] = sample_rows(after[tokens[missing, 0]], rng)
    return tokens, accepted


def plain_rounds(p0, after, n, seed):
    rng = np.random.default_rng(seed)
    first = sample_tokens(p0, n, rng)
    return np.stack([first, sample_rows(after[first], rng)], axis=1)


def pair_counts(tokens):
    return np.bincount(tokens[:, 0] * 256 + tokens[:, 1], minlength=256 * 256)


N_EMPIRICAL = 100_000


def test_real_models_exact_rule_passes_biased_rule_fails(real_distributions):
    p0, q0, after = real_distributions
    exact_pairs = (p0[:, None] * after).ravel()  # [256 * 256]: P(first = a, second = b)
    beta, match = expected_acceptance(p0, q0), expected_match_acceptance(p0, q0)
    assert 0.05 < beta < 0.99  # the draft differs from the target: a test with teeth

    plain = plain_rounds(p0, after, N_EMPIRICAL, seed=100)
    results = {"plain": chi_square_test(pair_counts(plain), exact_pairs)}
    accept_rates = {}
    for name, step in [("exact", speculative_step), ("match", draw_and_match_step),
                       ("biased", biased_resample_step)]:  # fmt: skip
        tokens, accepted = run_rounds(step, p0, q0, after, N_EMPIRICAL, seed=101)
        results[name] = chi_square_test(pair_counts(tokens), exact_pairs)
        # the first token alone as well: far fewer bins than the pairs, so far more power
        # against a small bias in the first token (a review of the tests estimated it)
        results[f"{name}, first token"] = chi_square_test(np.bincount(tokens[:, 0],
                                                                      minlength=256), p0)  # fmt: skip
        accept_rates[name] = accepted.mean()
        if name == "exact":
            results["exact vs plain"] = chi_square_two_sample(
                pair_counts(tokens), pair_counts(plain)
            )
    summary = {name: (round(r.statistic, 1), r.df, r.p_value) for name, r in results.items()}
    for name in ("plain", "exact", "match", "exact vs plain", "exact, first token",
                 "match, first token"):  # fmt: skip
        assert not results[name].rejects(SIGNIFICANCE), summary
    assert results["biased"].rejects(SIGNIFICANCE) and results["biased"].p_value < 1e-9, summary

    # acceptance: each rate where theory puts it, and (a) measurably below the exact rule
    se = math.sqrt(0.25 / N_EMPIRICAL)  # the largest binomial standard error
    assert abs(accept_rates["exact"] - beta) < 5 * se
    assert abs(accept_rates["biased"] - beta) < 5 * se  # same test, different resampling
    assert abs(accept_rates["match"] - match) < 5 * se
    assert accept_rates["exact"] - accept_rates["match"] > 10 * se


@pytest.mark.slow
def test_real_models_end_to_end_decoder_distribution():
    """speculative_decode itself (draft model, k = 3) over 4,000 seeds: first two tokens."""
    from speclab.weights import load_draft, load_target

    target, draft = load_target(), load_draft()
    prompt = encode(PROMPT)
    cache = KVCache(target.config)
    p0 = sampling_distribution(forward(target.params, target.config, prompt, cache)[-1])
    exact = np.zeros((256, 256))
    for a in range(256):
        exact[a] = p0[a] * sampling_distribution(
            forward(target.params, target.config, [a], cache)[-1]
        )
        cache.truncate(len(prompt))
    counts = np.zeros(256 * 256)
    drafter = ModelDrafter(draft)
    for seed in range(4000):
        tokens = speculative_decode(
            target, drafter, prompt, 2, 3, rng=np.random.default_rng(seed), temperature=1.0
        ).tokens
        counts[tokens[0] * 256 + tokens[1]] += 1
    assert chi_square_test(counts, exact.ravel()).p_value > SIGNIFICANCE


@pytest.mark.slow
@pytest.mark.parametrize("temperature", [0.5, 1.0, 1.5])
def test_real_models_one_million_rounds(temperature):
    """The fast test's check at 1,000,000 rounds and three temperatures (about a minute each)."""
    from speclab.weights import load_draft, load_target

    target, draft = load_target(), load_draft()
    settings = SamplingSettings(temperature)
    prompt = encode(PROMPT)
    p0 = sampling_distribution(forward(target.params, target.config, prompt)[-1], settings)
    q0 = sampling_distribution(forward(draft.params, draft.config, prompt)[-1], settings)
    rng = np.random.default_rng(200)
    n = 1_000_000
    for step, should_pass in [(speculative_step, True), (biased_resample_step, False)]:
        first, _ = first_tokens(step, p0, q0, n, rng)
        result = chi_square_test(np.bincount(first, minlength=256), p0)
        assert result.rejects() != should_pass, (temperature, step.__name__, result)


def test_decoder_takes_the_alternative_rules(tiny_pair):
    target, draft = tiny_pair
    prompt = encode("abcabcab")
    for rule in (draw_and_match_step, biased_resample_step):
        runs = [
            speculative_decode(
                target, ModelDrafter(draft), prompt, 20, 3, adaptive=False, temperature=1.0,
                rng=np.random.default_rng(4), rule=rule,
            ).tokens
            for _ in range(2)
        ]  # fmt: skip
        assert runs[0] == runs[1] and len(runs[0]) == 20


def test_chi_square_with_a_single_possible_outcome():
    assert chi_square_test([0, 40, 0], [0.0, 1.0, 0.0]).p_value == 1.0
    assert chi_square_test([1, 39, 0], [0.0, 1.0, 0.0]).p_value == 0.0
    assert chi_square_two_sample([0, 5], [0, 9]).p_value == 1.0


def test_default_adaptive_policy_reruns_identically_when_sampling(tiny_pair):
    """adaptive=True (the default) must not let the clock change the random draws."""
    target, draft = tiny_pair
    prompt = encode("abcabcab")
    runs = [
        speculative_decode(
            target,
            ModelDrafter(draft),
            prompt,
            30,
            4,
            temperature=1.0,
            rng=np.random.default_rng(3),
        )
        for _ in range(3)
    ]
    assert runs[0].tokens == runs[1].tokens == runs[2].tokens
    assert [r.drafted for r in runs[0].rounds] == [r.drafted for r in runs[2].rounds]


@pytest.mark.parametrize(
    ("p_value", "text"),
    [
        (0.613, "0.61"),
        (0.000996, "0.000996"),
        (0.00104, "0.00104"),
        (0.001, "0.001"),
        (0.0, "below 1e-300"),
        (1e-310, "below 1e-300"),
        (3.2e-26, "3.2e-26"),
    ],  # fmt: skip
)
def test_a_p_value_is_printed_on_the_side_of_the_level_it_lies(p_value, text):
    """Rounded to 2 digits, 0.000996 read '0.001' beside 'the test rejects' (level 0.001)."""
    from speclab.sampling import SIGNIFICANCE, p_value_text

    assert p_value_text(p_value) == text
    if p_value > 1e-300:
        assert (float(text) < SIGNIFICANCE) == (p_value < SIGNIFICANCE)


def test_first_tokens_follow_p_under_the_exact_rule_and_keep_the_expected_share():
    p, q = np.array([0.5, 0.3, 0.15, 0.05]), np.array([0.1, 0.2, 0.3, 0.4])
    n = 40_000
    tokens, kept = first_tokens(speculative_step, p, q, n, np.random.default_rng(5))
    assert (
        tokens.shape == (n,) and not chi_square_test(np.bincount(tokens, minlength=4), p).rejects()
    )
    expected = expected_acceptance(p, q)  # sum of min(p, q): 0.1 + 0.2 + 0.15 + 0.05
    assert abs(kept - expected) < 4 * np.sqrt(expected * (1 - expected) / n)
    biased, _ = first_tokens(biased_resample_step, p, q, n, np.random.default_rng(5))
    assert chi_square_test(np.bincount(biased, minlength=4), p).rejects()
    matched, kept_a = first_tokens(draw_and_match_step, p, q, n, np.random.default_rng(5))
    assert abs(kept_a - expected_match_acceptance(p, q)) < 0.02  # sum p q = 0.21


@pytest.mark.parametrize(
    ("call", "message"),
    [
        # lesson 07's slips: the temperature for the settings, a seed for the generator
        (
            lambda: sampling.sampling_distribution([1.0, 2.0], 0.7),
            "settings must be SamplingSettings",
        ),
        (lambda: sampling.sample_token([0.5, 0.5], 0), "rng must be a numpy Generator"),
        (
            lambda: sampling.first_tokens(sampling.speculative_step, [0.5, 0.5], [0.5, 0.5], 10, 0),
            "rng must be a numpy Generator",
        ),  # fmt: skip
        (lambda: sampling.sample_token([0, 0, 0], np.random.default_rng(0)), "not all 0"),
        (lambda: sampling.sample_token([], np.random.default_rng(0)), "got shape [0]"),
        (lambda: sampling.sample_token([np.nan, 1], np.random.default_rng(0)), "finite"),
        (lambda: sampling.sample_token([-0.5, 1.5], np.random.default_rng(0)), "not negative"),
        (
            lambda: sampling.sample_rows(np.array([0.5, 0.5]), np.random.default_rng(0)),
            "[n, n_vocab]",
        ),  # fmt: skip
        (lambda: sampling.sample_tokens([0.5, 0.5], -3, np.random.default_rng(0)), "at least 0"),
        # weights where distributions belong: expected_acceptance refused them, these did not
        (
            lambda: sampling.acceptance_probability([40, 30, 20, 10], [0.1, 0.5, 0.2, 0.2]),
            "p_target sums to 100",
        ),  # fmt: skip
        (
            lambda: sampling.leftover_distribution([0.4, 0.3, 0.2, 0.1], [10, 50, 20, 20]),
            "p_draft sums to 100",
        ),  # fmt: skip
        (lambda: sampling.acceptance_probability([np.nan, 1], [0.5, 0.5]), "NaN"),
        (lambda: sampling.acceptance_probability([0.5, 0.5], [1.0]), "over the same tokens"),
        (lambda: sampling.one_hot([5], 4), "token ids must be 0 to 3"),
        (lambda: sampling.chi_square_test([10, 20, 30, 40], [np.nan, 0.3, 0.3, 0.4]), "finite"),
        (lambda: sampling.chi_square_test([50, 50], [1.5, -0.5]), "not negative"),
        (lambda: sampling.chi_square_test([-1, 5], [0.5, 0.5]), "counts must be"),
        (lambda: sampling.chi_square_two_sample([1, 2, 3], [1, 2]), "over the same categories"),
        (lambda: sampling.p_value_text(float("nan")), "between 0 and 1"),
    ],
)
def test_a_students_slip_is_named_not_answered(call, message):
    """Each of these ended in a bare AttributeError or IndexError from numpy, or worse gave
    an answer: a NaN distribution "passed" its chi-square test with p-value 1."""
    with pytest.raises((ValueError, TypeError), match=re.escape(message)):
        call()


def test_the_checked_helpers_still_take_batches_and_round_off():
    p = np.array([[0.4, 0.3, 0.2, 0.1], [0.25, 0.25, 0.25, 0.25]])
    q = np.array([[0.1, 0.5, 0.2, 0.2], [0.25, 0.25, 0.25, 0.25]])
    keep = sampling.acceptance_probability(p, q)  # [2, 4]: an oracle, min(1, p / q) by hand
    assert np.allclose(keep, np.minimum(1, p / q))
    leftover = sampling.leftover_distribution(p[0] + 1e-12, q[0])  # round-off is no error
    assert np.allclose(leftover, [1, 0, 0, 0])  # max(0, p - q) = (0.3, 0, 0, 0), normalised


def test_the_draw_checks_leave_what_was_valid_alone():
    """Zero rows, a weight a hair below 0 from round-off: taken as before the checks; a
    stdlib random.Random, whose random() draws no arrays, named."""
    import random as stdlib_random

    rng = np.random.default_rng(0)
    assert sampling.sample_rows(np.zeros((0, 4)), rng).shape == (0,)
    assert sampling.acceptance_probability(np.zeros((0, 4)), np.zeros((0, 4))).shape == (0, 4)
    assert sampling.sample_token([0.5, 0.5 + 1e-17, -1e-17], rng) in (0, 1)
    with pytest.raises(TypeError, match="rng must be a numpy Generator"):
        sampling.sample_tokens([0.5, 0.5], 3, stdlib_random.Random(0))
    with pytest.raises(ValueError, match=re.escape("must each be one distribution [n_vocab]")):
        sampling.leftover_distribution(np.full((2, 4), 0.25), np.full((2, 4), 0.25))


def test_a_token_the_target_rules_out_is_never_kept_even_at_u_zero():
    """rng.random() lies in [0, 1): at u = 0 a draft the target gives probability 0 (one
    outside its top-k, say) must still be rejected, so the test is u * q < p, not <=."""
    p_target = np.array([[0.0, 1.0], [0.5, 0.5]])
    p_draft = np.array([[1.0, 0.0]])
    assert speculative_step(p_target, p_draft, [0], ScriptedUniforms([0.0, 0.3])) == (0, 1)


def test_a_seed_a_float_token_a_rule_by_name_or_nothing_are_named():
    """speculative_step(..., rng=0) had ended in "'int' object has no attribute 'random'";
    draft token 2.7 was read as 2; first_tokens("exact", ...) in "'str' object is not
    callable"; acceptance_probability([], []) in numpy's "zero-size array"."""
    p, q = np.array([[0.5, 0.5], [0.5, 0.5]]), np.array([[0.25, 0.75]])
    for rng in (0, None):
        with pytest.raises(TypeError, match=r"np.random.default_rng\(0\)"):
            sampling.speculative_step(p, q, [1], rng)
    with pytest.raises(TypeError, match="draft_tokens must be token ids"):
        sampling.speculative_step(p, q, [0.7], np.random.default_rng(0))
    with pytest.raises(TypeError, match="draft_tokens must be token ids"):
        sampling.draw_and_match_step(p, q, [True], np.random.default_rng(0))
    rng = np.random.default_rng(0)
    with pytest.raises(TypeError, match=r"STEP_RULES\['exact'\]"):
        sampling.first_tokens("exact", p[0], q[0], 10, rng)
    with pytest.raises(ValueError, match="at most 1,000,000 rounds"):
        sampling.first_tokens(sampling.speculative_step, p[0], q[0], 10**7, rng)
    for call in (
        sampling.acceptance_probability,
        sampling.leftover_distribution,
        sampling.expected_acceptance,
    ):
        with pytest.raises(ValueError, match="p_target is empty"):
            call([], [])


def test_no_counts_is_no_evidence_either_way():
    """chi_square_test([0, 0, 0, 0], p) had given p-value 1.0, which lesson 07 reads as "the
    output has the target's distribution" with no data at all."""
    p = np.array([0.4, 0.3, 0.2, 0.1])
    with pytest.raises(ValueError, match="nothing to test yet"):
        sampling.chi_square_test([0, 0, 0, 0], p)
    with pytest.raises(ValueError, match="nothing to compare"):
        sampling.chi_square_two_sample([0, 0, 0, 0], [4, 3, 2, 1])
    assert sampling.chi_square_test([40, 30, 20, 10], p).p_value > 0.99  # data that fits


def test_acceptance_is_zero_where_the_target_rules_a_token_out():
    """min(1, p/q) per token, with its two edges as the docstring gives them: 1 where q = 0 <
    p, and 0 where p = 0, also where q = 0 too (0/0)."""
    assert acceptance_probability([0.5, 0.5, 0.0], [0.0, 1.0, 0.0]).tolist() == [1.0, 0.5, 0.0]


def test_a_draft_distribution_over_another_vocabulary_is_named():
    with pytest.raises(ValueError, match=re.escape("p_draft must have shape [1, 3]")):
        speculative_step(
            np.full((2, 3), 1 / 3), np.full((1, 4), 0.25), [0], np.random.default_rng(0)
        )


def test_a_lookup_drafters_q_is_one_hot_on_its_drafts():
    """The decoder gives a deterministic drafter's drafts the distribution q = one-hot (the
    module docstring): a spy in place of the rule sees every q it is handed. (A wrong q keeps
    the output exact, so the distribution tests cannot see it; acceptance would be wrong.)"""
    target = random_model(TINY, np.random.default_rng(10))
    seen = []

    def spy(p_target, p_draft, drafts, rng):
        seen.append((np.array(p_draft), list(drafts)))
        return speculative_step(p_target, p_draft, drafts, rng)

    speculative_decode(
        target,
        PromptLookupDrafter(),
        list(b"abcabcabcabcabc"),
        20,
        4,
        adaptive=False,
        temperature=1.0,
        rng=np.random.default_rng(0),
        rule=spy,
    )
    assert any(drafts for _, drafts in seen)
    for p_draft, drafts in seen:
        assert np.array_equal(p_draft, np.eye(256)[drafts])


def test_top_p_keeps_the_smallest_set_that_reaches_p():
    """Holtzman et al.'s nucleus: the fewest most likely tokens whose mass reaches top_p. Two
    tokens of 0.5 each and top_p = 0.5: the first already reaches it, so it alone is kept."""
    nucleus = sampling_distribution([0.0, 0.0, -np.inf], SamplingSettings(1.0, top_p=0.5))
    assert nucleus.tolist() == [1.0, 0.0, 0.0]
    wider = sampling_distribution([0.0, 0.0, -np.inf], SamplingSettings(1.0, top_p=0.51))
    assert wider.tolist() == [0.5, 0.5, 0.0]
