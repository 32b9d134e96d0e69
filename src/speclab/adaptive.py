"""Choosing how many tokens to draft each round, and when not to draft at all (lessons 05, 06).

`speculative_decode` asks a policy for k before each round (`next_k()`, where 0 means "take
a plain greedy step") and tells it what happened after (`update(drafted, accepted)`).

- `FixedK`: always k_max (`adaptive=False`).
- `PlusTwoMinusOne`: the heuristic Hugging Face transformers uses for assistant models:
  after a round whose drafts were all accepted draft 2 more, otherwise 1 fewer (1..k_max).
  It never stops drafting, so where drafts are useless it keeps paying for them.
- `AdaptiveK` (the default, `adaptive=True`): picks the k that maximises the predicted
  speedup (Leviathan et al. 2023, Eq. 1 over the round's cost)

      speedup(k) = (1 - alpha^(k+1)) / (1 - alpha)  /  round_cost(k)

  from an estimate of alpha (the acceptance seen so far, recent rounds weighing more) and a
  cost model in plain target steps, counting only the drafts the drafter actually offered
  in recent rounds (a lookup offers none where it finds no match). Where even the best k is
  predicted to lose (speedup below 1), it switches drafting off and probes again now and
  then, waiting twice as long after each probe that does not pay. The cost model is either
  given (`CostModel`, measured beforehand) or learned while decoding from the policy's own
  clock: it times a plain step early on (and every 32 rounds) and every drafting round, and
  fits a round's extra cost as a part per round plus a part per draft, so it learns what
  drafting costs with this drafter on this machine. The first round drafts without being
  timed: a drafter's first call reads the whole prompt. It drafts until it has timed 3
  drafting rounds: fewer cannot tell one slow round (the machine busy elsewhere) from a cost,
  nor one round whose drafts were all rejected from a low acceptance rate.

alpha is estimated as Leviathan's per-draft acceptance rate: under their model (each draft
accepted independently with probability alpha, checked left to right until the first
rejection) the maximum-likelihood estimate is accepted / (accepted + rejections), where a
round with accepted < drafted holds exactly one rejection.

Left out: tree drafts, per-position acceptance models, and policies that look at the text.
"""

import math
import time
from collections import deque
from dataclasses import dataclass

from speclab.counting import as_count, expected_tokens_per_round


class FixedK:
    """Always draft k_max tokens."""

    def __init__(self, k_max: int):
        self.k_max = k_max

    def next_k(self) -> int:
        return self.k_max

    def update(self, drafted: int, accepted: int) -> None:
        pass


class PlusTwoMinusOne:
    """+2 after a fully accepted round, -1 otherwise, within 1..k_max (Hugging Face's rule)."""

    def __init__(self, k_max: int):
        self.k_max = k_max
        self.k = k_max

    def next_k(self) -> int:
        return self.k

    def update(self, drafted: int, accepted: int) -> None:
        if drafted == 0:
            return  # the drafter had nothing to offer: no evidence about k
        if accepted == drafted:
            self.k = min(self.k_max, self.k + 2)
        else:
            self.k = max(1, self.k - 1)


PRIOR_PER_DRAFT = 0.05  # before any timing only; the policy then learns the real cost
MIN_TIMED_ROUNDS = 3  # the fewest timed drafting rounds whose median can outvote one spike


@dataclass(frozen=True)
class CostModel:
    """What one round costs, in plain target steps (one greedy step costs 1).

    round_cost(k) = 1 + (verify_per_position + draft_per_token) * k + draft_per_round,
    for k >= 1 drafts: the forward over k + 1 positions costs 1 + verify_per_position * k,
    and drafting costs draft_per_token per draft (Leviathan's c) plus draft_per_round per
    call. Leviathan's formula is the special case verify_per_position = draft_per_round = 0.
    """

    verify_per_position: float = PRIOR_PER_DRAFT
    draft_per_token: float = 0.0  # c
    draft_per_round: float = 0.0  # e.g. a lookup drafter's one dictionary look-up

    def round_cost(self, k: int) -> float:
        if k == 0:
            return 1.0
        per_draft = self.verify_per_position + self.draft_per_token
        return 1.0 + per_draft * k + self.draft_per_round


def estimate_alpha(accepted: float, rejections: float) -> float:
    """accepted / (accepted + rejections): Leviathan's alpha by maximum likelihood (nan if no data)."""
    total = accepted + rejections
    return accepted / total if total else math.nan


def predicted_speedup(alpha: float, k: int, cost: CostModel) -> float:
    """Expected tokens per round (Eq. 1) over the round's cost; 1.0 for k = 0 (plain step)."""
    return expected_tokens_per_round(alpha, k) / cost.round_cost(k)


def best_k(alpha: float, k_max: int, cost: CostModel) -> tuple[int, float]:
    """(k in 1..k_max with the highest predicted speedup, that speedup); ties go to smaller k."""
    predictions = [(predicted_speedup(alpha, k, cost), -k) for k in range(1, k_max + 1)]
    speedup, negative_k = max(predictions)
    return -negative_k, speedup


@dataclass
class Decision:
    """One round as the policy saw it."""

    mode: str  # "warm-up", "time plain step", "draft", "probe" or "off"
    k: int  # drafts asked for (0: a plain step)
    alpha: float  # the estimate the choice was made with
    predicted: float  # predicted speedup of the chosen k (1.0 for a plain step)
    drafted: int = -1  # filled in by update(): drafts actually proposed
    accepted: int = -1
    seconds: float = math.nan  # the round's wall time by the policy's clock (if timing)


class AdaptiveK:
    """Choose k per round to maximise the predicted speedup; stop drafting where it loses.

    k_max: the most drafts per round. cost: a measured `CostModel`, or None to learn the
    cost from the policy's own clock (`clock`, seconds). decay: how much the acceptance
    evidence of earlier rounds keeps per drafting round (0.85: about the last 7 rounds
    count). probe_every: rounds to wait, when drafting is off, before trying once more;
    the wait doubles after each probe that does not pay, up to max_probe_gap.
    min_gain: the predicted speedup a round must reach to be worth drafting.
    """

    def __init__(
        self,
        k_max: int,
        cost: CostModel | None = None,
        clock=time.perf_counter,
        decay: float = 0.85,
        probe_every: int = 8,
        max_probe_gap: int = 64,
        min_gain: float = 1.0,
        remeasure_every: int = 32,
    ):
        k_max = as_count(k_max, "k_max", 1)  # numpy ints too (a k from an array)
        if not 0.0 < decay <= 1.0:
            raise ValueError(f"decay must lie in (0, 1], got {decay}")
        self.k_max, self.cost, self.clock, self.decay = k_max, cost, clock, decay
        self.probe_every, self.max_probe_gap = probe_every, max_probe_gap
        self.min_gain, self.remeasure_every = min_gain, remeasure_every
        # evidence, discounted as it ages; it starts as one accepted draft and one rejection
        # (alpha = 0.5), a prior that fades like any old evidence
        self.accepted, self.rejections = 1.0, 1.0
        self.decisions: list[Decision] = []
        self.probe_gap = probe_every
        self._rounds_off = 0
        self._plain_seconds: deque = deque(maxlen=7)  # recent plain steps (seconds)
        self._last_plain_round = -1
        self._draft_rounds: deque = deque(maxlen=15)  # recent (drafted, seconds), drafter asked
        self._offers: deque = deque(maxlen=15)  # most the drafter offered: drafted, or inf if full
        self._asked_before = False  # has the drafter been called with k > 0 yet
        self._started = 0.0
        self._pending = False  # a decision waiting for its update()
        self._cost_now = self._learned_cost()  # refreshed after every round
        self._cap_counts: dict = {math.inf: 1}  # cap -> rounds, from _offers

    @property
    def learns_cost(self) -> bool:
        return self.cost is None

    @property
    def alpha(self) -> float:
        return estimate_alpha(self.accepted, self.rejections)

    def current_cost(self) -> CostModel:
        """The given cost model, or the one learned so far (the prior until timings exist)."""
        return self._cost_now

    def _learned_cost(self) -> CostModel:
        """The cost model from the rounds timed so far (recomputed after every round).

        Learned: each round that asked the drafter gives (d drafts, extra = its time / a
        plain step's - 1); extra = per_round + per_draft * d is fitted by least squares,
        pulled gently toward the prior (per_round 0, per_draft 0.05) so that a few rounds
        with the same d still give an answer.
        """
        if self.cost is not None:
            return self.cost
        if not self._plain_seconds or not self._draft_rounds:
            return CostModel()
        # means, not medians: on a busy machine a longer round is more often interrupted, and
        # only means share that out fairly between short and long rounds; but a round that
        # took over 3x the typical one was stopped by something else and is left out
        plain = _mean_without_outliers(self._plain_seconds)
        # the lower median: of two rounds, a spike in one is then measured against the other
        typical = sorted(s for _, s in self._draft_rounds)[(len(self._draft_rounds) - 1) // 2]
        samples = [(d, s / plain - 1.0) for d, s in self._draft_rounds if s <= 3 * typical]
        per_round, per_draft = _fit_line(samples, prior=(0.0, PRIOR_PER_DRAFT))
        return CostModel(
            verify_per_position=max(0.0, per_draft), draft_per_round=max(0.0, per_round)
        )

    def predicted(self, k: int, alpha: float, cost: CostModel) -> float:
        """Predicted speedup of asking for k drafts, given what the drafter recently offered.

        A drafter may offer fewer than k (a lookup finds no match; the window ends): each round
        caps the drafts at what it offered, and Eq. 1 and the round cost use min(k, cap).
        Plain Python floats: this runs before every round, so it must cost microseconds.
        """
        gained = spent = 0.0
        for cap, count in self._cap_counts.items():
            drafts = min(k, cap)
            gained += count * _geometric_sum(alpha, drafts)
            spent += count * (cost.round_cost(drafts) if drafts else 1.0 + cost.draft_per_round)
        return gained / spent

    def best(self, alpha: float, cost: CostModel) -> tuple[int, float]:
        """(k in 1..k_max with the highest predicted speedup, that speedup); ties: smaller k.

        The same numbers as `predicted` for every k, computed in one pass (it runs before
        every round: a few microseconds, not a share of a forward).
        """
        tokens = [1.0] * (self.k_max + 1)  # tokens[j] = 1 + alpha + ... + alpha^j
        term = 1.0
        for j in range(1, self.k_max + 1):
            term *= alpha
            tokens[j] = tokens[j - 1] + term
        per_draft = cost.verify_per_position + cost.draft_per_token
        best_k, best_speedup = 1, -1.0
        for k in range(1, self.k_max + 1):
            gained = spent = 0.0
            for cap, count in self._cap_counts.items():
                drafts = k if k < cap else cap
                gained += count * tokens[drafts]
                spent += count * (1.0 + cost.draft_per_round + per_draft * drafts)
            if gained / spent > best_speedup + 1e-12:
                best_k, best_speedup = k, gained / spent
        return best_k, best_speedup

    def next_k(self) -> int:
        decision = self._decide(len(self.decisions))
        self.decisions.append(decision)
        self._pending = True
        self._started = self.clock() if self.learns_cost else 0.0
        return decision.k

    def _decide(self, round_index: int) -> Decision:
        alpha = self.alpha
        k, speedup = self.best(alpha, self.current_cost())
        if self.learns_cost:
            if round_index == 0:  # the drafter's first call catches up with the whole prompt
                return Decision("warm-up", k, alpha, speedup)
            if round_index - self._last_plain_round > self.remeasure_every or (
                self._last_plain_round < 0
            ):
                return Decision("time plain step", 0, alpha, 1.0)
        # fewer than MIN_TIMED_ROUNDS drafting rounds cannot tell a spike (the process
        # descheduled once) from what drafting costs, nor one unlucky round from alpha, so
        # they do not switch drafting off: one slow round kept it off for 24 of 50 rounds,
        # and one round with no draft kept switched the draft model off on free text
        undecided = self.learns_cost and len(self._draft_rounds) < MIN_TIMED_ROUNDS
        if speedup >= self.min_gain or undecided:
            self.probe_gap, self._rounds_off = self.probe_every, 0
            return Decision("draft", k, alpha, speedup)
        previous = self.decisions[-1].mode if self.decisions else ""
        if previous == "probe":  # the probe did not pay: wait longer next time
            self.probe_gap = min(self.max_probe_gap, 2 * self.probe_gap)
        if self._rounds_off >= self.probe_gap:
            self._rounds_off = 0
            return Decision("probe", k, alpha, speedup)
        self._rounds_off += 1
        return Decision("off", 0, alpha, 1.0)

    def update(self, drafted: int, accepted: int) -> None:
        if not self._pending:
            return  # a round the decoder ran without asking (its last token): nothing to learn
        self._pending = False
        decision = self.decisions[-1]
        decision.drafted, decision.accepted = drafted, accepted
        round_index = len(self.decisions) - 1
        if 0 < decision.k and drafted < decision.k:  # the drafter ran out: it offered this many
            self._offers.append(drafted)
        elif decision.k == self.k_max:  # it offered all it could be asked for
            self._offers.append(math.inf)
        if self.learns_cost:
            decision.seconds = self.clock() - self._started
            if decision.k == 0:
                self._plain_seconds.append(decision.seconds)
                self._last_plain_round = round_index
            elif self._asked_before:  # the first call catches up with the whole prompt
                self._draft_rounds.append((drafted, decision.seconds))
            self._asked_before = self._asked_before or decision.k > 0
        self._cost_now = self._learned_cost()
        self._cap_counts = {}
        for cap in self._offers or [math.inf]:
            self._cap_counts[cap] = self._cap_counts.get(cap, 0) + 1
        if drafted > 0:
            self.accepted = self.decay * self.accepted + accepted
            self.rejections = self.decay * self.rejections + (1.0 if accepted < drafted else 0.0)


def _mean_without_outliers(values, factor: float = 3.0) -> float:
    """The mean of the values at most `factor` times their median (a spike is not a cost)."""
    ordered = sorted(values)
    limit = factor * ordered[len(ordered) // 2]
    kept = [v for v in ordered if v <= limit]
    return sum(kept) / len(kept)


def _geometric_sum(alpha: float, k: int) -> float:
    """1 + alpha + ... + alpha^k: Eq. 1's expected tokens per round, in plain floats."""
    total, term = 1.0, 1.0
    for _ in range(k):
        term *= alpha
        total += term
    return total


def _fit_line(samples, prior: tuple[float, float], weight: float = 1.0) -> tuple[float, float]:
    """(a, b) minimising sum (y - a - b d)^2 + weight ((a - a0)^2 + (b - b0)^2) over (d, y).

    Least squares with a gentle pull toward the prior (a0, b0): with every d the same, the
    data alone cannot split a round's cost into a fixed part and a part per draft.
    """
    a0, b0 = prior
    n = len(samples)
    sum_d = sum_dd = sum_y = sum_dy = 0.0
    for d, y in samples:  # one pass, plain floats: this runs after every round
        sum_d += d
        sum_dd += d * d
        sum_y += y
        sum_dy += d * y
    m11, m12, m22 = n + weight, sum_d, sum_dd + weight  # the normal equations' 2 x 2 matrix
    r1, r2 = sum_y + weight * a0, sum_dy + weight * b0
    determinant = m11 * m22 - m12 * m12  # > 0: weight > 0 makes the matrix positive definite
    return (r1 * m22 - r2 * m12) / determinant, (m11 * r2 - m12 * r1) / determinant
