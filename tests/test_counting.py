"""Tests for speclab.counting: the 0/2/4 arithmetic, Eq. 1, the speedup and the simulation."""

import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from speclab.counting import (
    RoundCount,
    break_even_alpha,
    count_round,
    expected_speedup,
    expected_tokens_per_round,
    simulate_rounds,
    speedup_with_verify_cost,
    total_forwards,
)


def test_total_forwards_worked_example():
    assert total_forwards([0, 2, 4]) == (3, 9)


def test_total_forwards_rounds_prefix():
    assert total_forwards([0, 2, 4], rounds=2) == (2, 4)
    assert total_forwards([0, 2, 4], rounds=0) == (0, 0)
    assert total_forwards([]) == (0, 0)


@pytest.mark.parametrize(
    ("accepted", "greedy"),
    [(0, 1), (2, 3), (4, 5)],
)
def test_per_case_counts(accepted, greedy):
    # the lesson's three cases: 1 vs 1, 1 vs 3, 1 vs 5
    assert count_round(accepted, k=4) == RoundCount(accepted, 1, greedy, greedy, greedy - 1)


def test_numpy_inputs():
    assert total_forwards(np.array([0, 2, 4])) == (3, 9)
    assert total_forwards([np.int32(0), np.int64(2), np.uint8(4)], rounds=np.int64(3)) == (3, 9)
    assert expected_tokens_per_round(0.5, np.int64(2)) == pytest.approx(1.75)


@pytest.mark.parametrize("bad", [2.0, True, "2", None])
def test_integer_arguments_reject_non_integers(bad):
    with pytest.raises(TypeError, match="whole number"):
        total_forwards([0, bad])
    with pytest.raises(TypeError, match="whole number"):
        expected_tokens_per_round(0.5, bad)


def test_clear_errors():
    with pytest.raises(ValueError, match="at least 0"):
        total_forwards([0, -1])
    with pytest.raises(ValueError, match="only 3 rounds"):
        total_forwards([0, 2, 4], rounds=4)
    with pytest.raises(ValueError, match="more than the k=4"):
        total_forwards([5], k=4)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        expected_tokens_per_round(1.5, 4)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        expected_tokens_per_round(float("nan"), 4)
    with pytest.raises(ValueError, match=">= 0"):
        expected_speedup(0.5, 4, -0.1)
    with pytest.raises(TypeError, match="Generator"):
        simulate_rounds(0.5, 4, 10, rng=0)


@given(st.lists(st.integers(0, 10), max_size=20))
def test_total_forwards_oracle(accepted_per_round):
    forwards, tokens = total_forwards(accepted_per_round)
    assert forwards == len(accepted_per_round)
    assert tokens == sum(m + 1 for m in accepted_per_round)
    assert tokens - forwards == sum(accepted_per_round)  # forwards saved against greedy


def eq1(alpha, k):
    """Eq. 1 as printed in Leviathan et al. 2023 (undefined at alpha = 1)."""
    return (1 - alpha ** (k + 1)) / (1 - alpha)


@given(st.floats(0.0, 0.99), st.integers(0, 12))
def test_eq1_matches_the_printed_formula(alpha, k):
    assert expected_tokens_per_round(alpha, k) == pytest.approx(eq1(alpha, k), rel=1e-12)


@pytest.mark.parametrize("k", [0, 1, 4, 10])
def test_eq1_limit_at_alpha_one(k):
    assert expected_tokens_per_round(1.0, k) == k + 1
    assert expected_tokens_per_round(1 - 1e-12, k) == pytest.approx(k + 1, rel=1e-9)


def test_eq1_edges():
    assert expected_tokens_per_round(0.0, 4) == 1.0  # only the target's own token
    assert expected_tokens_per_round(0.7, 0) == 1.0  # k = 0 is plain decoding


def test_eq1_vectorised():
    alphas = np.array([0.0, 0.5, 0.8, 1.0])
    tokens = expected_tokens_per_round(alphas, 4)
    assert tokens.shape == (4,)
    assert tokens[-1] == 5.0
    assert tokens[2] == pytest.approx(eq1(0.8, 4))


def test_expected_speedup():
    assert expected_speedup(0.8, 4, 0.0) == pytest.approx(eq1(0.8, 4))
    assert expected_speedup(0.8, 4, 0.05) == pytest.approx(eq1(0.8, 4) / 1.2)
    assert expected_speedup(1.0, 4, 0.25) == pytest.approx(5 / 2)
    # alpha = 0: one token per round and the drafts were paid for: a slowdown
    assert expected_speedup(0.0, 4, 0.1) == pytest.approx(1 / 1.4)
    assert expected_speedup(np.array([0.0, 1.0]), 4, 0.0).tolist() == [1.0, 5.0]


def exact_distribution(alpha, k):
    """P(accepted = j), j = 0..k, for i.i.d. acceptance: a truncated geometric law."""
    probabilities = [alpha**j * (1 - alpha) for j in range(k)] + [alpha**k]
    return np.array(probabilities)


@pytest.mark.parametrize(("alpha", "k"), [(0.0, 4), (0.3, 4), (0.8, 4), (0.95, 7), (1.0, 3)])
def test_simulation_agrees_with_eq1(alpha, k):
    n_rounds = 40_000
    accepted = simulate_rounds(alpha, k, n_rounds, np.random.default_rng(2023))
    assert accepted.shape == (n_rounds,)
    assert accepted.dtype == np.int64
    assert accepted.min() >= 0 and accepted.max() <= k
    tokens = accepted + 1
    # the exact law is an independent oracle for both the mean and its spread
    p = exact_distribution(alpha, k)
    values = np.arange(k + 1) + 1
    mean = float(p @ values)
    assert mean == pytest.approx(expected_tokens_per_round(alpha, k))
    standard_error = math.sqrt(float(p @ (values - mean) ** 2) / n_rounds)
    # a fixed seed makes this deterministic; 5 standard errors would fail by chance
    # about once in 1.7 million seeds, so a failure means a wrong simulation
    assert abs(tokens.mean() - mean) <= 5 * standard_error + 1e-12


def test_simulation_distribution_shape():
    accepted = simulate_rounds(0.6, 4, 50_000, np.random.default_rng(7))
    observed = np.bincount(accepted, minlength=5) / accepted.size
    expected = exact_distribution(0.6, 4)
    standard_errors = np.sqrt(expected * (1 - expected) / accepted.size)
    assert np.all(np.abs(observed - expected) <= 5 * standard_errors)


def test_simulation_is_seeded():
    first = simulate_rounds(0.7, 4, 100, np.random.default_rng(1))
    again = simulate_rounds(0.7, 4, 100, np.random.default_rng(1))
    assert np.array_equal(first, again)


def test_simulation_feeds_total_forwards():
    accepted = simulate_rounds(0.7, 4, 1000, np.random.default_rng(3))
    forwards, tokens = total_forwards(accepted, k=4)
    assert forwards == 1000
    assert tokens == int(accepted.sum()) + 1000


def test_break_even_alpha_solves_the_speedup_equation():
    for k, ratio, c in [(4, 1.3, 0.0), (4, 2.0, 0.05), (2, 1.1, 0.1)]:
        alpha = break_even_alpha(k, ratio, c)
        assert 0 < alpha < 1
        assert expected_tokens_per_round(alpha, k) == pytest.approx(k * c + ratio, rel=1e-9)
        assert speedup_with_verify_cost(alpha, k, ratio, c) == pytest.approx(1.0)
    assert break_even_alpha(4, 1.0) == 0.0  # Leviathan's assumption: never loses
    assert break_even_alpha(4, 5.0) == 1.0  # a round costs as much as 5 plain steps
    for k in range(1, 12):  # a round costing exactly k + 1 steps never wins: 1, not 1 - 2e-16
        assert break_even_alpha(k, k + 1.0) == 1.0
        assert break_even_alpha(k, 1.0, 1.0) == 1.0  # k drafts of one step each, and the verify


def test_speedup_with_verify_cost_reduces_to_leviathan():
    from speclab.counting import expected_speedup

    for alpha in (0.0, 0.5, 0.9):
        assert speedup_with_verify_cost(alpha, 4, 1.0, 0.1) == pytest.approx(
            expected_speedup(alpha, 4, 0.1)
        )


@pytest.mark.parametrize(
    ("verify_ratio", "draft_cost", "message"),
    [(0, 0.0, "verify_ratio must be a finite number > 0"),  # had been a ZeroDivisionError
     (-1, 0.0, "verify_ratio must be a finite number > 0"),  # had given a speedup of -3.36
     (float("nan"), 0.0, "verify_ratio must be a finite number > 0"),
     ("1.2", 0.0, "verify_ratio must be a number > 0"),
     (1.2, -0.1, "draft_cost must be a finite number >= 0")],
)  # fmt: skip
def test_a_round_cost_that_cannot_be_is_refused(verify_ratio, draft_cost, message):
    from speclab.counting import break_even_alpha, speedup_with_verify_cost

    for call in (lambda: speedup_with_verify_cost(0.8, 4, verify_ratio, draft_cost),
                 lambda: break_even_alpha(4, verify_ratio, draft_cost)):  # fmt: skip
        with pytest.raises((ValueError, TypeError), match=re.escape(message)):
            call()


def test_expected_speedup_checks_c_as_the_round_cost_checks_its_parts():
    """One check for every cost: expected_speedup took c = "0.1" (numpy read the text as a
    number) where speedup_with_verify_cost refused a text."""
    from speclab.counting import expected_speedup

    with pytest.raises(TypeError, match=re.escape("c must be a number >= 0, got '0.1'")):
        expected_speedup(0.8, 4, "0.1")
    with pytest.raises(ValueError, match=re.escape("c must be a finite number >= 0, got -0.1")):
        expected_speedup(0.8, 4, -0.1)


def test_a_huge_k_is_refused_before_memory_is_asked_for():
    """expected_tokens_per_round(0.8, 10**9) had asked numpy for 7.45 GiB (and a machine with
    that much would have tried); simulate_rounds' draws are bounded the same way."""
    from speclab.counting import DRAWS_MOST, K_MOST

    for call in (
        lambda k: expected_tokens_per_round(0.8, k),
        lambda k: expected_speedup(0.8, k, 0.1),
        lambda k: speedup_with_verify_cost(0.8, k, 1.2),
        lambda k: break_even_alpha(k, 1.2),
        lambda k: simulate_rounds(0.8, k, 10, np.random.default_rng(0)),
    ):
        with pytest.raises(ValueError, match=f"k must be at most {K_MOST:,}"):
            call(10**9)
        call(K_MOST)  # the largest k allowed still runs
    with pytest.raises(ValueError, match="simulate fewer rounds"):
        simulate_rounds(0.8, 4, DRAWS_MOST // 4 + 1, np.random.default_rng(0))
    # the bound is no approximation: at k = K_MOST, Eq. 1 in closed form agrees
    assert expected_tokens_per_round(0.999, K_MOST) == pytest.approx(
        (1 - 0.999 ** (K_MOST + 1)) / (1 - 0.999), rel=1e-12
    )


# --- edges a mutation audit found untested -----------------------------------------------


def test_counting_refuses_what_it_cannot_count_and_takes_its_documented_limit(monkeypatch):
    """alpha below 0, zero rounds, several alphas at once and a 2-D array are named; exactly
    DRAWS_MOST draws are allowed, one round more is not."""
    from speclab import counting

    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        counting.expected_tokens_per_round(-0.5, 4)
    with pytest.raises(ValueError, match="at least 1"):
        counting.simulate_rounds(0.5, 4, 0, rng)
    with pytest.raises(ValueError, match="single number"):
        counting.simulate_rounds(np.array([0.5, 0.6]), 4, 10, rng)
    with pytest.raises(ValueError, match="1-D"):
        counting.total_forwards(np.zeros((2, 2), dtype=np.int64))
    monkeypatch.setattr(counting, "DRAWS_MOST", 40)
    assert counting.simulate_rounds(0.5, 4, 10, rng).shape == (10,)
    with pytest.raises(ValueError, match="simulate fewer rounds"):
        counting.simulate_rounds(0.5, 4, 11, rng)
