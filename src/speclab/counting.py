"""Forward arithmetic: how many target forwards speculative decoding spends, and what it buys.

Lesson 03 uses it. One round: the drafter proposes k tokens, the target checks all k in
ONE forward, and the output advances by accepted + 1 (the accepted drafts plus the
target's own token at the first mismatch, or the bonus token when all k are accepted).
Plain greedy decoding spends one target forward per token.

The general law follows Leviathan, Kalman, Matias (2023), "Fast Inference from
Transformers via Speculative Decoding": with each draft accepted independently with
probability alpha, Eq. 1 gives the expected tokens per round

    E[tokens] = (1 - alpha^(k+1)) / (1 - alpha)          (k + 1 at alpha = 1)

and Theorem 3.8 the expected wall-time improvement when one draft step costs c target
steps:  (1 - alpha^(k+1)) / ((1 - alpha) (k c + 1)).  Leviathan writes gamma for k.

Saving forwards is not saving time: lesson 04 measures what a forward over k + 1 positions
costs, lesson 06 the speedup. The last section takes those measured costs as inputs
(`speedup_with_verify_cost`, `break_even_alpha`); nothing here measures anything.
Left out: acceptance that varies from draft to draft or with the position in a round (alpha
is one number here, as in Leviathan's Eq. 1), and a k chosen round by round
(`speclab.adaptive`).
"""

import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def as_count(value, name: str, minimum: int = 0) -> int:
    """`value` as a Python int >= minimum; numpy ints are fine, floats and bools are not."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer (a whole number), got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return int(value)


K_MOST = 10_000  # drafts per round these formulas take: k = 10**9 had asked for gigabytes
DRAWS_MOST = 10**8  # random draws simulate_rounds makes at once (n_rounds * k), 800 MB


def _as_k(k) -> int:
    """k, drafts per round, as an int in 0 .. K_MOST (a real round drafts a handful)."""
    k = as_count(k, "k")
    if k > K_MOST:
        raise ValueError(f"k must be at most {K_MOST:,} drafts per round here, got {k:,}")
    return k


def _as_probability(alpha, name: str = "alpha") -> np.ndarray:
    """alpha as a float64 array with every value in [0, 1]."""
    if isinstance(alpha, bool | np.bool_):
        raise TypeError(f"{name} must be a number in [0, 1], got {alpha!r}")
    values = np.asarray(alpha, dtype=np.float64)
    if not np.all(np.isfinite(values)) or np.any((values < 0) | (values > 1)):
        raise ValueError(f"{name} must lie in [0, 1], got {alpha!r}")
    return values


@dataclass(frozen=True)
class RoundCount:
    """One round of k drafts, counted in target forwards."""

    accepted: int  # drafts the target kept
    target_forwards: int  # speculative: always 1 (all drafts checked at once)
    tokens: int  # accepted + 1
    greedy_forwards: int  # plain greedy needs one forward per token
    saved: int  # greedy_forwards - target_forwards


def count_round(accepted: int, k: int | None = None) -> RoundCount:
    """Forwards and tokens for one round in which `accepted` drafts were kept."""
    accepted = as_count(accepted, "accepted")
    if k is not None and accepted > as_count(k, "k"):
        raise ValueError(f"accepted={accepted} is more than the k={k} drafts of a round")
    tokens = accepted + 1
    return RoundCount(accepted, 1, tokens, tokens, tokens - 1)


def total_forwards(
    accepted_per_round: Sequence[int] | np.ndarray, rounds: int | None = None, k: int | None = None
) -> tuple[int, int]:
    """(target forwards, tokens produced) over the first `rounds` rounds (all if None).

    accepted_per_round: [n_rounds] drafts accepted in each round; with `k`, each must be <= k.
    total_forwards([0, 2, 4]) == (3, 9): greedy would need 9 forwards for those 9 tokens.
    """
    if isinstance(accepted_per_round, np.ndarray) and accepted_per_round.ndim != 1:
        raise ValueError(f"accepted_per_round must be 1-D, got shape {accepted_per_round.shape}")
    counts = list(accepted_per_round)
    if rounds is not None:
        rounds = as_count(rounds, "rounds")
        if rounds > len(counts):
            raise ValueError(f"rounds={rounds} but only {len(counts)} rounds are listed")
        counts = counts[:rounds]
    per_round = [count_round(accepted, k) for accepted in counts]
    return sum(r.target_forwards for r in per_round), sum(r.tokens for r in per_round)


def expected_tokens_per_round(alpha, k: int):
    """Leviathan 2023 Eq. 1: expected tokens per round, (1 - alpha^(k+1)) / (1 - alpha).

    alpha: a float or an array of them in [0, 1]; k: drafts per round (>= 0).
    Computed as the geometric sum 1 + alpha + ... + alpha^k, which equals Eq. 1, is exact
    at alpha = 1 (k + 1), and has no 0/0 near it. Returns a float for a scalar alpha.
    """
    k = _as_k(k)
    alphas = _as_probability(alpha)
    powers = np.arange(k + 1, dtype=np.float64)  # [k + 1]
    tokens = np.sum(alphas[..., np.newaxis] ** powers, axis=-1)  # alpha's shape
    return float(tokens) if tokens.ndim == 0 else tokens


def expected_speedup(alpha, k: int, c: float):
    """Expected wall-time speedup (1 - alpha^(k+1)) / ((1 - alpha)(k c + 1)).

    c: the cost of one draft step as a fraction of one target forward (>= 0). Assumes,
    as Leviathan does, that verifying k + 1 positions costs one plain target step.
    """
    costs = _as_cost(c, "c")
    k = _as_k(k)
    speedup = expected_tokens_per_round(alpha, k) / (k * costs + 1.0)
    return float(speedup) if np.ndim(speedup) == 0 else speedup


def simulate_rounds(alpha: float, k: int, n_rounds: int, rng: np.random.Generator) -> np.ndarray:
    """Monte-Carlo rounds under Eq. 1's model: each draft kept with probability alpha.

    Drafts are checked left to right and the first rejection ends the round.
    Returns accepted drafts per round, [n_rounds] int64 in 0..k; tokens per round are
    accepted + 1, whose mean estimates expected_tokens_per_round(alpha, k).
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator, e.g. np.random.default_rng(0)")
    k = _as_k(k)
    n_rounds = as_count(n_rounds, "n_rounds", minimum=1)
    if n_rounds * k > DRAWS_MOST:
        raise ValueError(f"n_rounds * k = {n_rounds * k:,} draws at once is too many "
                         f"(at most {DRAWS_MOST:,}): simulate fewer rounds")  # fmt: skip
    alphas = _as_probability(alpha)
    if alphas.ndim != 0:
        raise ValueError(f"alpha must be a single number here, got shape {alphas.shape}")
    alpha = float(alphas)
    kept = rng.random((n_rounds, k)) < alpha  # [n_rounds, k] each draft's own coin
    still_going = np.cumprod(kept, axis=1)  # [n_rounds, k] 0 from the first rejection on
    return still_going.sum(axis=1).astype(np.int64)  # [n_rounds]


# --- with measured costs (lessons 06 and 07) -------------------------------------------


def speedup_with_verify_cost(alpha, k: int, verify_ratio: float, draft_cost: float = 0.0):
    """Leviathan et al. (2023) speedup when verifying k + 1 positions costs verify_ratio steps.

    Expected tokens per round (1 - alpha^(k+1)) / (1 - alpha) over the round's time in plain
    steps, k * draft_cost + verify_ratio. Their Eq. assumes verify_ratio = 1.
    """
    return expected_tokens_per_round(alpha, k) / _round_cost(k, verify_ratio, draft_cost)


def _round_cost(k, verify_ratio, draft_cost):
    """k * draft_cost + verify_ratio in plain steps, its parts checked: a verify ratio of 0
    had ended in ZeroDivisionError, and one of -1 gave a speedup of -3.36."""
    k = _as_k(k)
    return k * _as_cost(draft_cost, "draft_cost") + _as_cost(verify_ratio, "verify_ratio", above=0)


def _as_cost(value, name: str, above: float | None = None) -> np.ndarray:
    """A cost in plain target steps as a float64 array: finite, and >= 0 (or > above)."""
    least = ">= 0" if above is None else f"> {above:g}"
    if isinstance(value, bool | np.bool_ | str) or value is None:
        raise TypeError(f"{name} must be a number {least}, got {value!r}")
    costs = np.asarray(value, dtype=np.float64)
    low_ok = costs >= 0 if above is None else costs > above
    if not np.all(np.isfinite(costs)) or not np.all(low_ok):
        raise ValueError(f"{name} must be a finite number {least}, got {value!r}")
    return costs


def break_even_alpha(k: int, verify_ratio: float, draft_cost: float = 0.0) -> float:
    """The acceptance rate alpha at which speculation is exactly as fast as plain decoding.

    Bisection on alpha in [0, 1]; 0.0 if speculation never loses (round cost <= 1),
    1.0 if it never wins (round cost >= k + 1, more than the most tokens a round gives).
    """
    cost = _round_cost(k, verify_ratio, draft_cost)
    if cost <= 1.0:
        return 0.0
    if cost >= k + 1:
        return 1.0
    low, high = 0.0, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        if speedup_with_verify_cost(middle, k, verify_ratio, draft_cost) < 1.0:
            low = middle
        else:
            high = middle
    return (low + high) / 2
