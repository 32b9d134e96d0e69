"""Speculative sampling: the accept/resample rule that keeps the target's distribution (lesson 07).

Greedy speculation keeps a draft when it equals the target's argmax (lesson 02's `accept`).
With sampling there is no single "right" token, so equality is the wrong test: it would
change what the target says. The exact rule is Leviathan et al. 2023 (Algorithm 1,
Theorem 1) and Chen et al. 2023 (Algorithm 2, "modified rejection sampling").

Letters: this module follows **Leviathan et al.**: p is the target's distribution and q the
draft's (Chen et al. swap the two letters). In code the names say the role: `p_target`,
`p_draft`. Shapes: a round with k drafts has p_target [k + 1, n_vocab] (the target after
the last accepted token and after each draft), p_draft [k, n_vocab], draft_tokens [k].

One round (`speculative_step`): for i = 1..k, the draft x_i was drawn from q_i;
accept it with probability min(1, p_i(x_i) / q_i(x_i)); at the first rejection emit a token
drawn from the leftover distribution norm(max(0, p_i - q_i)) and stop; if all k are
accepted, emit a bonus token drawn from p_{k+1}. Why the output is exactly p: a token x
comes out either as an accepted draft, with probability q(x) min(1, p(x)/q(x)) = min(p, q)(x),
or from the leftover after a rejection, with probability (1 - sum min(p, q)) times
max(0, p - q)(x) / sum max(0, p - q); both sums equal 1 - beta, so the total is
min(p, q)(x) + max(0, p(x) - q(x)) = p(x).

Edge cases, handled so that no probability goes negative or sums away from 1:
- q(x) = 0 for a proposed x: sampling from q never does that, so the drafter is broken
  (it proposed one token and reported the distribution of another); every rule raises
  ValueError naming the draft instead of guessing. `acceptance_probability` still reports
  the limit of min(1, p/q) as q -> 0 (1 where p > 0) for lesson 07's tables.
- p = q (identical distributions): every draft is accepted (u * q < q for u < 1), and the
  leftover max(0, p - q) is all zeros. A leftover of mass below LEFTOVER_EPS is round-off
  between equal distributions; rejection then has probability below that mass, and we
  draw from p instead of dividing by (almost) zero.
- a tiny temperature (down to the smallest float, 5e-324): logits are shifted by their
  maximum before the division, so the largest becomes exactly 0 and no logit / t can
  overflow to inf - inf = NaN; the distribution tends to one-hot on the argmax (exact ties
  share it), as the t -> 0 limit should.
- round-off: inputs are checked (finite, no entry below -1e-9, rows summing to 1 within
  1e-6), clipped at zero and renormalised before use.
A deterministic drafter (prompt lookup) is the one-hot draft distribution on its proposal
(`one_hot`): the draft is then accepted with probability p(x) and the leftover is p with x
removed, renormalised.

Also here: sampling settings (temperature, top-k, top-p; `SamplingSettings`,
`sampling_distribution`), applied identically to target and draft; the two tempting
alternatives (`draw_and_match_step`, exact but slower; `biased_resample_step`, WRONG);
and the chi-square test the lesson and the tests use to tell them apart (no scipy: the
chi-square survival function is the regularised upper incomplete gamma function,
computed here). All randomness comes from an explicit `np.random.Generator`.

Left out: tree drafts (SpecInfer), lossy "typical acceptance" (Medusa), batching.
"""

import math
import numbers
import random
from dataclasses import dataclass

import numpy as np

from speclab.counting import as_count

LEFTOVER_EPS = 1e-12  # a leftover with less mass than this is round-off: draw from p_target
SIGNIFICANCE = 0.001  # the level at which the tests and lesson 07 call a chi-square test failed


# --- sampling settings --------------------------------------------------------------------


@dataclass(frozen=True)
class SamplingSettings:
    temperature: float = 1.0  # logits are divided by it; 0 means greedy (one-hot on the argmax)
    top_k: int | None = None  # keep only the k most likely tokens (None: all)
    top_p: float | None = None  # keep the fewest most likely tokens whose mass reaches top_p

    def __post_init__(self):
        t = self.temperature
        if isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating)):
            raise TypeError(f"temperature must be a number, got {t!r}")
        if not (math.isfinite(t) and t >= 0):
            raise ValueError(f"temperature must be finite and at least 0, got {t}")
        if self.top_k is not None and (
            isinstance(self.top_k, bool)
            or not isinstance(self.top_k, (int, np.integer))
            or self.top_k < 1
        ):
            raise ValueError(f"top_k must be a positive integer or None, got {self.top_k!r}")
        if self.top_p is not None and not (
            isinstance(self.top_p, (int, float, np.integer, np.floating))
            and not isinstance(self.top_p, bool)
            and 0 < self.top_p <= 1
        ):
            raise ValueError(f"top_p must be in (0, 1] or None, got {self.top_p!r}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


def _keep_only(probs, keep):  # [..., n_vocab], bool [..., n_vocab] -> renormalised [..., n_vocab]
    kept = np.where(keep, probs, 0.0)
    return kept / kept.sum(axis=-1, keepdims=True)


def sampling_distribution(logits, settings: SamplingSettings = SamplingSettings()):
    """Logits [..., n_vocab] -> the distribution a sampler draws from [..., n_vocab].

    Temperature first, then top-k, then top-p on what is left (Hugging Face's order).
    Ties are broken towards the lower token id, as np.argmax does. Temperature 0 gives
    the one-hot distribution on the argmax: greedy decoding as a special case.
    """
    if not isinstance(settings, SamplingSettings):  # sampling_distribution(logits, 0.7)
        raise TypeError(f"settings must be SamplingSettings, e.g. "
                        f"SamplingSettings(temperature=0.7), got {settings!r}")  # fmt: skip
    logits = np.asarray(logits, dtype=np.float64)  # [..., n_vocab]
    if logits.ndim == 0 or logits.shape[-1] == 0:
        raise ValueError(
            f"logits must hold one value per token, [..., n_vocab]; got {logits!r:.40}"
        )
    if (
        np.isnan(logits).any()
        or np.isposinf(logits).any()
        or np.isneginf(logits).all(axis=-1).any()
    ):
        raise ValueError("logits must be finite numbers (-inf only for tokens ruled out): "
                         "NaN or infinity here has no probabilities")  # fmt: skip
    if settings.greedy:
        return one_hot(np.argmax(logits, axis=-1), logits.shape[-1])
    # shift first: (logits - max) <= 0, so dividing by a tiny temperature gives -inf at
    # worst (exp -> 0), never the inf - inf = NaN of logits / t - max(logits / t)
    with np.errstate(over="ignore"):  # overflow to -inf is the intended limit
        scaled = (logits - logits.max(axis=-1, keepdims=True)) / settings.temperature
    probs = np.exp(scaled)  # the largest logit's entry is exactly 1
    probs /= probs.sum(axis=-1, keepdims=True)  # [..., n_vocab]
    if settings.top_k is not None and settings.top_k < logits.shape[-1]:
        ranked = np.argsort(-logits, axis=-1, kind="stable")[..., : settings.top_k]
        keep = np.zeros(probs.shape, dtype=bool)
        np.put_along_axis(keep, ranked, True, axis=-1)
        probs = _keep_only(probs, keep)
    if settings.top_p is not None and settings.top_p < 1:
        order = np.argsort(-probs, axis=-1, kind="stable")  # [..., n_vocab]
        ranked = np.take_along_axis(probs, order, axis=-1)
        mass_above = np.cumsum(ranked, axis=-1) - ranked  # mass of the more likely tokens
        keep = np.zeros(probs.shape, dtype=bool)
        np.put_along_axis(keep, order, mass_above < settings.top_p, axis=-1)
        probs = _keep_only(probs, keep)
    return probs


def one_hot(tokens, n_vocab: int):
    """Token ids [...] -> one-hot distributions [..., n_vocab]: a deterministic drafter's q."""
    tokens = np.asarray(tokens, dtype=np.int64)
    if tokens.size and not 0 <= tokens.min() <= tokens.max() < n_vocab:  # a row of zeros
        raise ValueError(
            f"token ids must be 0 to {n_vocab - 1}, got {tokens.min()} to {tokens.max()}"
        )
    return (tokens[..., None] == np.arange(n_vocab)).astype(np.float64)


# --- drawing tokens -----------------------------------------------------------------------


def _check_rng(rng) -> None:
    """A Generator, or the tests' scripted one; not a seed (random.Random's random() takes no
    size, and an int seed had ended in "'int' object has no attribute 'random'")."""
    if isinstance(rng, random.Random) or not callable(getattr(rng, "random", None)):
        raise TypeError(
            f"rng must be a numpy Generator, e.g. np.random.default_rng(0), got {rng!r}"
        )


def _check_draw(p, rng, rows: bool = False) -> None:
    """What every draw needs: a Generator (not a seed), and weights with mass to draw from."""
    _check_rng(rng)
    p = np.asarray(p)
    if p.ndim != (2 if rows else 1) or p.shape[-1] == 0:
        raise ValueError(f"p must be {'[n, n_vocab]' if rows else '[n_vocab]'} weights, "
                         f"got shape {list(p.shape)}")  # fmt: skip
    # -1e-9: round-off, as _as_distributions allows it
    if not (np.isfinite(p).all() and p.min(initial=0) >= -1e-9 and (p.sum(axis=-1) > 0).all()):
        raise ValueError("p must be weights that are finite, not negative, and not all 0")


def sample_token(p, rng: np.random.Generator) -> int:
    """One token drawn from p [n_vocab] by inverting its cumulative sum (one rng.random())."""
    _check_draw(p, rng)
    return _sample(p, rng)


def _sample(p, rng) -> int:  # sample_token for a distribution already checked
    cdf = np.cumsum(p)  # [n_vocab]
    index = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
    if index >= cdf.size:  # u * total rounded up to total: take the last token with mass
        index = int(np.flatnonzero(p)[-1])
    return index


def sample_tokens(p, n: int, rng: np.random.Generator):
    """n independent tokens drawn from p [n_vocab] -> int64 [n] (vectorised)."""
    _check_draw(p, rng)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be a whole number of tokens, got {n!r}")
    if n < 0:
        raise ValueError(f"n must be at least 0, got {n}")
    cdf = np.cumsum(p)  # [n_vocab]
    index = np.searchsorted(cdf, rng.random(n) * cdf[-1], side="right")
    return np.minimum(index, np.flatnonzero(p)[-1]).astype(np.int64)


def sample_rows(p, rng: np.random.Generator):
    """One token from each row of p [n, n_vocab] -> int64 [n] (vectorised)."""
    _check_draw(p, rng, rows=True)
    p = np.asarray(p)
    cdf = np.cumsum(p, axis=-1)  # [n, n_vocab]
    u = rng.random(p.shape[0]) * cdf[:, -1]  # [n]
    index = (cdf <= u[:, None]).sum(axis=-1)  # first position whose cdf exceeds u
    last_with_mass = p.shape[-1] - 1 - np.argmax(p[:, ::-1] > 0, axis=-1)
    return np.minimum(index, last_with_mass).astype(np.int64)


# --- the pieces of the rule ---------------------------------------------------------------


def acceptance_probability(p_target, p_draft):
    """min(1, p_target / p_draft) per token, [..., n_vocab]; 1 where q = 0 < p, 0 where p = 0."""
    p_target, p_draft = _same_shape_distributions(p_target, p_draft)
    ratio = np.divide(p_target, p_draft, out=np.ones_like(p_target), where=p_draft > 0)
    return np.where(p_target > 0, np.minimum(1.0, ratio), 0.0)


def leftover_distribution(p_target, p_draft):
    """norm(max(0, p_target - p_draft)) [n_vocab]: what to draw from after a rejection.

    When the leftover has (almost) no mass, the two distributions are equal up to
    round-off and rejection (almost) never happens: return p_target instead of dividing
    by zero.
    """
    p_target, p_draft = _two_distributions(p_target, p_draft)
    return _leftover(p_target, p_draft)


def _leftover(p_target, p_draft):  # leftover_distribution of two checked distributions
    leftover = np.maximum(0.0, p_target - p_draft)
    total = leftover.sum()
    return leftover / total if total > LEFTOVER_EPS else p_target


def expected_acceptance(p_target, p_draft) -> float:
    """beta = sum min(p, q): the chance the exact rule accepts a draft drawn from q.

    p_target and p_draft are distributions over the same tokens: weights that do not sum to 1
    are refused (lesson 07 with p = (40, 30, 20, 10) printed a "probability" of 25.00)."""
    p_target, p_draft = _two_distributions(p_target, p_draft)
    return float(np.minimum(p_target, p_draft).sum())


def expected_match_acceptance(p_target, p_draft) -> float:
    """sum p * q: the chance rule (a) accepts (an independent draw from p equals the draft)."""
    p_target, p_draft = _two_distributions(p_target, p_draft)
    return float(np.dot(p_target, p_draft))


def _two_distributions(p_target, p_draft):
    """p_target and p_draft [n_vocab], checked by _as_distributions as one row each."""
    p_target, p_draft = np.asarray(p_target, np.float64), np.asarray(p_draft, np.float64)
    if p_target.ndim != 1 or p_draft.ndim != 1:
        raise ValueError(f"p_target and p_draft must each be one distribution [n_vocab], got "
                         f"shapes {list(p_target.shape)} and {list(p_draft.shape)}")  # fmt: skip
    if p_draft.shape != p_target.shape:
        raise ValueError(f"p_target and p_draft must be distributions over the same tokens, "
                         f"got shapes {list(p_target.shape)} and {list(p_draft.shape)}")  # fmt: skip
    p_target = _as_distributions(p_target[None], "p_target", 1, None)
    p_draft = _as_distributions(p_draft[None], "p_draft", 1, p_target.shape[1])
    return p_target[0], p_draft[0]


def _same_shape_distributions(p_target, p_draft):
    """p_target and p_draft [..., n_vocab] of one shape, each row checked by _as_distributions."""
    p_target, p_draft = np.asarray(p_target, np.float64), np.asarray(p_draft, np.float64)
    if p_target.ndim == 0 or p_draft.shape != p_target.shape:
        raise ValueError(f"p_target and p_draft must be distributions over the same tokens, "
                         f"got shapes {list(p_target.shape)} and {list(p_draft.shape)}")  # fmt: skip
    rows = int(np.prod(p_target.shape[:-1]))
    flat = [_as_distributions(d.reshape(rows, p_target.shape[-1]), name, rows, None)
            for d, name in ((p_target, "p_target"), (p_draft, "p_draft"))]  # fmt: skip
    return flat[0].reshape(p_target.shape), flat[1].reshape(p_draft.shape)


def _as_distributions(probs, name: str, rows: int, n_vocab: int | None):
    """Check p [rows, n_vocab]: finite, no real negatives, rows summing to ~1; clip and renormalise."""
    probs = np.asarray(probs, dtype=np.float64)
    if probs.ndim != 2 or probs.shape[0] != rows or (n_vocab and probs.shape[1] != n_vocab):
        wanted = f"[{rows}, {n_vocab or 'n_vocab'}]"
        raise ValueError(f"{name} must have shape {wanted}, got {list(probs.shape)}")
    if rows == 0:
        return probs
    if probs.shape[1] == 0:  # [] had ended in numpy's "zero-size array to reduction operation"
        raise ValueError(f"{name} is empty: give one probability per token")
    sums = probs.sum(axis=-1)  # [rows]; NaN or inf anywhere shows here
    lowest = probs.min()
    if not (np.isfinite(sums).all() and lowest >= -1e-9):
        raise ValueError(f"{name} holds a NaN, an infinity or a negative probability")
    if np.abs(sums - 1.0).max() > 1e-6:
        row = int(np.flatnonzero(np.abs(sums - 1.0) > 1e-6)[0])  # the first bad row
        where = name if rows == 1 else f"row {row} of {name}"
        raise ValueError(f"{where} sums to {sums[row]:.9g}, not 1: probabilities must add up "
                         f"to 1 (divide its weights by their sum, {sums[row]:.9g})")  # fmt: skip
    if lowest < 0:  # round-off below zero: clip, then renormalise
        probs = np.maximum(probs, 0.0)
        sums = probs.sum(axis=-1)
    return probs / sums[:, None]


def _check_step(p_target, p_draft, draft_tokens, rng):
    _check_rng(rng)
    if isinstance(draft_tokens, str) or not all(
        isinstance(t, numbers.Integral) and not isinstance(t, bool | np.bool_) for t in draft_tokens
    ):  # 2.7 had been read as token 2
        raise TypeError(f"draft_tokens must be token ids (whole numbers), got {draft_tokens!r}")
    tokens = [int(t) for t in draft_tokens]
    k = len(tokens)
    p_target = _as_distributions(p_target, "p_target", k + 1, None)
    p_draft = _as_distributions(p_draft, "p_draft", k, p_target.shape[1])
    if tokens and not 0 <= min(tokens) <= max(tokens) < p_target.shape[1]:
        raise ValueError(f"draft_tokens {tokens} fall outside the vocabulary")
    check_draft_support(p_draft, tokens)
    return p_target, p_draft, tokens


def check_draft_support(p_draft, draft_tokens, drafter: str = "the drafter") -> None:
    """Raise ValueError if a draft has probability 0 under the distribution it came from.

    p_draft [k, n_vocab], draft_tokens [k]. A drafter draws draft i from p_draft[i], so
    this cannot happen unless it is broken (it proposes one token and reports another's
    distribution); accepting such drafts would silently change what the target says.
    """
    for i, token in enumerate(draft_tokens):
        if not p_draft[i, token] > 0:
            raise ValueError(
                f"{drafter} is broken: it proposed token {token} as draft {i + 1}, but its "
                "own distribution p_draft gives that token probability 0"
            )


# --- one round: the exact rule and the two tempting alternatives --------------------------


def speculative_step(p_target, p_draft, draft_tokens, rng: np.random.Generator):
    """One round of speculative sampling -> (n_accepted, next_token).

    p_target [k + 1, n_vocab], p_draft [k, n_vocab], draft_tokens [k] drawn from p_draft.
    The round emits draft_tokens[:n_accepted] + [next_token]; next_token comes from the
    leftover after a rejection, or from p_target[k] (the bonus) when all k are accepted.
    """
    p_target, p_draft, tokens = _check_step(p_target, p_draft, draft_tokens, rng)
    for i, x in enumerate(tokens):
        if not rng.random() * p_draft[i, x] < p_target[i, x]:  # accept w.p. min(1, p/q)
            return i, _sample(_leftover(p_target[i], p_draft[i]), rng)
    return len(tokens), _sample(p_target[-1], rng)


def draw_and_match_step(p_target, p_draft, draft_tokens, rng: np.random.Generator):
    """Alternative (a): draw y from p_target; keep the draft if y equals it, else emit y.

    Exact too (every emitted token is a fresh draw from p_target), but a draft is kept
    with probability sum p * q instead of sum min(p, q): fewer tokens per round.
    p_draft is only checked, never used: the rule ignores what the drafter believed.
    """
    p_target, p_draft, tokens = _check_step(p_target, p_draft, draft_tokens, rng)
    for i, x in enumerate(tokens):
        drawn = _sample(p_target[i], rng)
        if drawn != x:
            return i, drawn
    return len(tokens), _sample(p_target[-1], rng)


def biased_resample_step(p_target, p_draft, draft_tokens, rng: np.random.Generator):
    """Alternative (b), WRONG ON PURPOSE: the exact acceptance test, but on rejection a
    fresh draw from p_target instead of the leftover.

    Biased: tokens the drafter over-proposes come out too often, because the rejected
    mass is spread like p again instead of going only where p exceeds q. The output
    distribution is min(p, q) + (1 - sum min(p, q)) * p, not p. Kept for lesson 07 and the
    tests, which must detect it. Never use it to generate.
    """
    p_target, p_draft, tokens = _check_step(p_target, p_draft, draft_tokens, rng)
    for i, x in enumerate(tokens):
        if not rng.random() * p_draft[i, x] < p_target[i, x]:
            return i, _sample(p_target[i], rng)  # the mistake: p, not the leftover
    return len(tokens), _sample(p_target[-1], rng)


STEP_RULES = {
    "exact": speculative_step,
    "draw and match (a)": draw_and_match_step,
    "biased resample (b)": biased_resample_step,
}


FIRST_TOKENS_MOST = 10**6


def first_tokens(step, p, q, n: int, rng: np.random.Generator):
    """n rounds of one draft each with a rule of STEP_RULES: draw x from q, let the rule keep
    it or replace it. Returns (the n tokens it emits first [n], the share of drafts kept).

    The distribution of these tokens is what the chi-square test compares with p: the exact
    rule gives p whatever q is (lesson 07's toy and real-model checks, its sliders)."""
    if not callable(step):  # first_tokens("exact", ...)
        raise TypeError(f"step must be one of STEP_RULES' functions, e.g. "
                        f"STEP_RULES['exact'], got {step!r}")  # fmt: skip
    n = as_count(n, "n")
    if n > FIRST_TOKENS_MOST:  # about 25 microseconds a round: 10**7 took four minutes
        raise ValueError(f"n must be at most {FIRST_TOKENS_MOST:,} rounds (about 25 s), got {n:,}")
    rows, q_rows = np.stack([p, p]), np.asarray(q)[None, :]  # the bonus row plays no part
    tokens, n_kept = [], 0
    for x in sample_tokens(q, n, rng).tolist():
        n_accepted, token = step(rows, q_rows, [x], rng)
        tokens.append(x if n_accepted else token)
        n_kept += n_accepted
    return np.array(tokens, dtype=np.int64), n_kept / n if n else float("nan")


# --- the chi-square test, without scipy ---------------------------------------------------


def regularized_gamma_q(a: float, x: float) -> float:
    """Q(a, x) = Gamma(a, x) / Gamma(a), the regularised upper incomplete gamma function.

    A series for x < a + 1 and Lentz's continued fraction otherwise (Numerical Recipes,
    section 6.2), each to relative precision ~1e-15.
    """
    if a <= 0:
        raise ValueError(f"a must be positive, got {a}")
    if x <= 0:
        return 1.0
    log_prefactor = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1:  # P(a, x) = e^-x x^a / Gamma(a + 1) * sum x^n / ((a + 1)...(a + n))
        term = total = 1.0 / a
        n = 0
        while abs(term) > abs(total) * 1e-17 and n < 100_000:
            n += 1
            term *= x / (a + n)
            total += term
        return max(0.0, 1.0 - total * math.exp(log_prefactor))
    tiny = 1e-300  # continued fraction for Q(a, x), modified Lentz
    b = x + 1.0 - a
    c, d = 1.0 / tiny, 1.0 / b
    fraction = d
    for i in range(1, 100_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        fraction *= d * c
        if abs(d * c - 1.0) < 1e-16:
            break
    return math.exp(log_prefactor) * fraction


def chi_square_sf(statistic: float, df: int) -> float:
    """P(X >= statistic) for X ~ chi-square with df degrees of freedom: the p-value."""
    if df < 1:
        raise ValueError(f"df must be at least 1, got {df}")
    if math.isinf(statistic):
        return 0.0
    return regularized_gamma_q(df / 2.0, statistic / 2.0)


@dataclass(frozen=True)
class ChiSquareResult:
    statistic: float
    df: int  # degrees of freedom: bins - 1 (0 when a single outcome is possible)
    p_value: float
    bins: int  # categories after pooling the rare ones

    def rejects(self, significance: float = SIGNIFICANCE) -> bool:
        return self.p_value < significance


def p_value_text(p_value: float, significance: float = SIGNIFICANCE) -> str:
    """A p-value for a sentence: 2 significant digits, more where 2 would round it onto or
    across the test's level (0.000996 is "0.000996", not "0.001" beside "rejects"), or
    "below 1e-300" where a float underflows to 0 (a p-value is never 0)."""
    if not 0 <= p_value <= 1:  # NaN too, which had read "below 1e-300"
        raise ValueError(f"a p-value is between 0 and 1, got {p_value}")
    if not p_value > 1e-300:
        return "below 1e-300"
    for digits in (2, 3, 4, 6, 17):
        text = f"{p_value:.{digits}g}"
        shown = float(text)
        if (shown < significance) == (p_value < significance) and (
            shown != significance or p_value == significance
        ):
            break
    return text


def _pool_rare(expected, min_expected: float):
    """Bin index per category [n_cat]: categories expected < min_expected times share a bin."""
    rare = expected < min_expected
    common = np.flatnonzero(~rare)
    bins = np.empty(expected.size, dtype=np.int64)
    bins[common] = np.arange(common.size)
    if rare.any():
        if expected[rare].sum() >= min_expected or common.size == 0:
            bins[rare] = common.size  # one pooled bin of its own
        else:  # still too small alone: join the smallest common bin
            bins[rare] = bins[common[np.argmin(expected[common])]]
    return bins


def chi_square_test(counts, probabilities, min_expected: float = 5.0) -> ChiSquareResult:
    """Pearson's goodness-of-fit test of observed counts [n_cat] against probabilities [n_cat].

    Categories expected fewer than min_expected times are pooled into one bin (and that
    bin into the smallest other one if it is still too small). A count in a category of
    probability 0 is impossible under the hypothesis: statistic inf, p-value 0.
    """
    counts = np.asarray(counts, dtype=np.float64)
    probabilities = np.asarray(probabilities, dtype=np.float64)
    if counts.shape != probabilities.shape or counts.ndim != 1:
        raise ValueError("counts and probabilities must be 1-D arrays of the same length")
    if not (
        np.isfinite(probabilities).all()
        and probabilities.min(initial=0) >= 0
        and probabilities.sum() > 0
    ):  # fmt: skip  (a NaN had "passed" with p-value 1)
        raise ValueError("probabilities must be finite, not negative, and not all 0")
    if not (np.isfinite(counts).all() and counts.min(initial=0) >= 0):
        raise ValueError("counts must be finite and not negative")
    if counts.sum() == 0:  # no data had "passed" with p-value 1, read as "the output is p"
        raise ValueError("the counts are all 0: there is nothing to test yet")
    expected = counts.sum() * probabilities / probabilities.sum()
    if (counts[expected == 0] > 0).any():
        return ChiSquareResult(math.inf, max(1, int((expected > 0).sum()) - 1), 0.0, 0)
    possible = expected > 0
    bins = _pool_rare(expected[possible], min_expected)
    observed = np.bincount(bins, weights=counts[possible])
    wanted = np.bincount(bins, weights=expected[possible])
    if observed.size < 2:  # one possible outcome, and every count is in it: nothing to test
        return ChiSquareResult(0.0, 0, 1.0, 1)
    statistic = float(((observed - wanted) ** 2 / wanted).sum())
    df = observed.size - 1
    return ChiSquareResult(statistic, df, chi_square_sf(statistic, df), observed.size)


def chi_square_two_sample(counts_a, counts_b, min_expected: float = 5.0) -> ChiSquareResult:
    """Do two samples [n_cat] come from the same distribution? (chi-square homogeneity test)."""
    counts_a, counts_b = np.asarray(counts_a, float), np.asarray(counts_b, float)
    if counts_a.ndim != 1 or counts_a.shape != counts_b.shape:
        raise ValueError(f"two samples need counts over the same categories, got shapes "
                         f"{list(counts_a.shape)} and {list(counts_b.shape)}")  # fmt: skip
    counts = np.stack([counts_a, counts_b])  # [2, n_cat]
    if not (np.isfinite(counts).all() and counts.min(initial=0) >= 0):
        raise ValueError("counts must be finite and not negative")
    if not counts.sum(axis=1).all():  # an empty sample: NaN division, then "they agree"
        raise ValueError("each sample needs at least one count: there is nothing to compare")
    totals = counts.sum(axis=1, keepdims=True)  # [2, 1]
    pooled = counts.sum(axis=0) / counts.sum()  # [n_cat]
    seen = pooled > 0
    smaller = float(totals.min())
    bins = _pool_rare(smaller * pooled[seen], min_expected)
    observed = np.stack([np.bincount(bins, weights=row[seen]) for row in counts])  # [2, n_bins]
    wanted = totals * np.bincount(bins, weights=pooled[seen])[None, :]  # [2, n_bins]
    if observed.shape[1] < 2:  # both samples all in one bin: they agree
        return ChiSquareResult(0.0, 0, 1.0, 1)
    statistic = float(((observed - wanted) ** 2 / wanted).sum())
    df = observed.shape[1] - 1
    return ChiSquareResult(statistic, df, chi_square_sf(statistic, df), observed.shape[1])
