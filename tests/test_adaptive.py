"""Drafting policies: their decisions on synthetic acceptance sequences and timings."""

import numpy as np
import pytest

from speclab.adaptive import (
    AdaptiveK,
    CostModel,
    FixedK,
    PlusTwoMinusOne,
    best_k,
    estimate_alpha,
    predicted_speedup,
)
from speclab.counting import expected_speedup


def closed_form_tokens(alpha, k):
    """Leviathan Eq. 1 written out, an oracle independent of speclab.counting."""
    return k + 1 if alpha == 1 else (1 - alpha ** (k + 1)) / (1 - alpha)


def drive(policy, outcomes):
    """Feed (drafted, accepted) outcomes, each capped by the k asked for; returns the ks asked."""
    asked = []
    for drafted, accepted in outcomes:
        k = policy.next_k()
        asked.append(k)
        drafted = min(drafted, k)
        policy.update(drafted, min(accepted, drafted))
    return asked


def test_fixed_k_never_changes():
    policy = FixedK(4)
    assert drive(policy, [(4, 0), (4, 4), (0, 0)]) == [4, 4, 4]


def test_plus_two_minus_one():
    policy = PlusTwoMinusOne(6)
    # starts at k_max; a full accept raises by 2 (capped), a partial one lowers by 1
    outcomes = [(9, 1), (9, 0), (9, 9), (9, 2), (0, 0), (9, 9), (9, 9)]
    assert drive(policy, outcomes) == [6, 5, 4, 6, 5, 5, 6]
    assert policy.next_k() == 6
    low = PlusTwoMinusOne(3)
    assert drive(low, [(9, 0)] * 5) == [3, 2, 1, 1, 1]  # never below 1, never off


def test_round_cost_and_leviathan_special_case():
    cost = CostModel(verify_per_position=0.1, draft_per_token=0.2, draft_per_round=0.05)
    assert cost.round_cost(0) == 1.0
    assert cost.round_cost(3) == pytest.approx(1 + 0.3 * 3 + 0.05)
    for alpha in (0.0, 0.3, 0.8, 1.0):
        for k in (1, 4, 8):
            leviathan = CostModel(verify_per_position=0.0, draft_per_token=0.25)
            assert predicted_speedup(alpha, k, leviathan) == pytest.approx(
                expected_speedup(alpha, k, 0.25)
            )
            assert predicted_speedup(alpha, k, leviathan) == pytest.approx(
                closed_form_tokens(alpha, k) / (1 + 0.25 * k)
            )


@pytest.mark.parametrize("alpha", [0.0, 0.2, 0.5, 0.8, 0.95, 1.0])
@pytest.mark.parametrize("per_position", [0.0, 0.02, 0.3])
def test_best_k_matches_brute_force(alpha, per_position):
    cost = CostModel(verify_per_position=per_position)
    predictions = {k: closed_form_tokens(alpha, k) / (1 + per_position * k) for k in range(1, 9)}
    best = max(predictions.values())
    k, speedup = best_k(alpha, 8, cost)
    assert speedup == pytest.approx(best)
    assert k == min(k for k, s in predictions.items() if s == pytest.approx(best))


def test_best_k_extremes():
    assert best_k(1.0, 8, CostModel(verify_per_position=0.02))[0] == 8  # all accepted: draft most
    k, speedup = best_k(0.0, 8, CostModel(verify_per_position=0.02))
    assert k == 1 and speedup < 1  # nothing accepted: every draft only costs


def test_alpha_estimate_is_the_mle_with_prior():
    assert np.isnan(estimate_alpha(0, 0))
    assert estimate_alpha(8, 2) == pytest.approx(0.8)
    assert AdaptiveK(4).alpha == 0.5  # the prior: one accepted draft, one rejection
    policy = AdaptiveK(4, cost=CostModel(), decay=1.0)
    asked = drive(policy, [(1, 1), (1, 1), (1, 0), (1, 1)])
    assert min(asked) >= 1
    # accepted 3 with 1 rejection, plus the prior's 1 and 1
    assert policy.alpha == pytest.approx((3 + 1) / (3 + 1 + 2))


def test_all_accepted_climbs_to_k_max_and_stays():
    policy = AdaptiveK(8, cost=CostModel(verify_per_position=0.02))
    asked = drive(policy, [(99, 99)] * 30)
    assert asked[0] >= 1 and asked[-10:] == [8] * 10
    assert all(d.mode == "draft" for d in policy.decisions)


def test_nothing_accepted_switches_off_and_probes_with_growing_gaps():
    policy = AdaptiveK(8, cost=CostModel(verify_per_position=0.05), probe_every=4, max_probe_gap=16)
    drive(policy, [(99, 0)] * 80)
    modes = [d.mode for d in policy.decisions]
    assert modes[0] == "draft"  # the prior (alpha 0.5) says drafting pays, until evidence says not
    first_off = modes.index("off")
    # a draft costs 0.05 here, so drafting pays until alpha falls to about 5 %: the prior
    # and the evidence fade by 0.85 a round, and that takes about 9 rounds
    assert 5 <= first_off <= 10
    probes = [i for i, mode in enumerate(modes) if mode == "probe"]
    gaps = np.diff([first_off - 1] + probes) - 1  # plain rounds before each probe
    assert list(gaps[:4]) == [4, 8, 16, 16]  # doubles after each probe that did not pay, capped
    assert sum(d.k > 0 for d in policy.decisions) == first_off + len(probes)  # only probes
    assert all(d.k == 0 for d in policy.decisions if d.mode == "off")


def test_turns_back_on_when_a_probe_pays():
    policy = AdaptiveK(8, cost=CostModel(verify_per_position=0.05), probe_every=4)
    drive(policy, [(99, 0)] * 12)
    assert policy.decisions[-1].mode in ("off", "probe")
    asked = drive(policy, [(99, 99)] * 30)  # the text becomes copyable
    assert asked[-1] == 8 and policy.decisions[-1].mode == "draft"


def test_lookup_misses_are_no_evidence():
    policy = AdaptiveK(4, cost=CostModel())
    drive(policy, [(4, 4), (4, 3)])
    before = policy.alpha
    drive(policy, [(0, 0)] * 5)
    assert policy.alpha == before


def test_lookup_misses_do_not_age_the_evidence_either():
    """A round with no drafts leaves the evidence as it was, not only alpha: decaying both
    counts alike would keep alpha and still let the next round outweigh the old ones. By
    hand, with decay 0.85 from the prior (1, 1): (1 kept of 1) gives (1.85, 0.85), (0 of 1)
    (0.85 * 1.85, 0.85 * 0.85 + 1), then (1 of 1) after the misses."""
    policy = AdaptiveK(4, cost=CostModel())
    drive(policy, [(1, 1), (1, 0)])
    before = (policy.accepted, policy.rejections)
    drive(policy, [(0, 0)] * 5)
    assert (policy.accepted, policy.rejections) == before
    drive(policy, [(1, 1)])
    accepted, rejections = 0.85 * 0.85 * 1.85 + 1, 0.85 * (0.85 * 0.85 + 1)
    assert policy.alpha == pytest.approx(accepted / (accepted + rejections))


def test_update_without_a_decision_is_ignored():
    policy = AdaptiveK(4, cost=CostModel())
    policy.update(0, 0)  # the decoder's last round, taken without asking
    assert policy.decisions == []
    asked = drive(policy, [(4, 4)])
    policy.update(0, 0)
    assert policy.decisions[-1].drafted == asked[0] > 0


class FakeClock:
    """Time that moves only when the test says: plain steps cost 1, drafts cost `per_draft`."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def drive_timed(policy, clock, accepted_fraction, per_draft, rounds, catch_up=5.0):
    """Each round: the policy decides, the clock advances by the round's cost, update()."""
    first_draft = True
    for _ in range(rounds):
        k = policy.next_k()
        cost = 1.0 + per_draft * k + (catch_up if k and first_draft else 0.0)
        first_draft = first_draft and not k
        clock.now += cost
        accepted = int(accepted_fraction * k)
        policy.update(k, accepted)


def test_learned_cost_warm_up_then_one_timed_plain_step():
    clock = FakeClock()
    policy = AdaptiveK(8, clock=clock)
    drive_timed(policy, clock, 1.0, 0.01, 3)
    assert [d.mode for d in policy.decisions] == ["warm-up", "time plain step", "draft"]
    assert policy.decisions[1].k == 0 and policy.decisions[1].seconds == pytest.approx(1.0)


def test_learned_cost_cheap_drafter_keeps_drafting():
    clock = FakeClock()
    policy = AdaptiveK(8, clock=clock)
    drive_timed(policy, clock, 0.5, 0.01, 60)
    cost = policy.current_cost()
    drafted = [d.drafted for d in policy.decisions if d.mode == "draft"]
    for d in set(drafted):  # the fitted cost reproduces what the clock showed
        assert cost.round_cost(d) == pytest.approx(1 + 0.01 * d, abs=0.01)
    assert sum(d.mode == "off" for d in policy.decisions) == 0


def test_learned_cost_expensive_drafter_switches_off():
    # each draft costs 0.6 plain steps and only half are accepted: every k loses
    clock = FakeClock()
    policy = AdaptiveK(8, clock=clock)
    drive_timed(policy, clock, 0.5, 0.6, 60)
    drafted = {d.drafted for d in policy.decisions[2:] if d.drafted > 0}
    for d in drafted:
        assert policy.current_cost().round_cost(d) == pytest.approx(1 + 0.6 * d, rel=0.1)
    modes = [d.mode for d in policy.decisions]
    assert modes.count("off") > 40
    # the same drafter with everything accepted is worth it
    clock2 = FakeClock()
    keen = AdaptiveK(8, clock=clock2)
    drive_timed(keen, clock2, 1.0, 0.6, 60)
    assert [d.mode for d in keen.decisions].count("off") == 0


def test_remeasures_the_plain_step_now_and_then():
    clock = FakeClock()
    policy = AdaptiveK(8, clock=clock, remeasure_every=10)
    drive_timed(policy, clock, 1.0, 0.01, 40)
    plain = [i for i, d in enumerate(policy.decisions) if d.mode == "time plain step"]
    assert plain[0] == 1 and len(plain) >= 3 and max(np.diff(plain)) <= 11


def test_bad_arguments():
    with pytest.raises(ValueError, match="k_max"):
        AdaptiveK(0)
    with pytest.raises(TypeError, match="k_max"):
        AdaptiveK(2.5)
    assert AdaptiveK(np.int64(4)).k_max == 4  # a k taken from an array was refused
    with pytest.raises(ValueError, match="decay"):
        AdaptiveK(4, decay=0.0)


def test_fit_line_recovers_a_line_and_leans_on_the_prior_only_when_it_must():
    from speclab.adaptive import _fit_line

    samples = [(d, 0.3 + 0.1 * d) for d in (1, 2, 4, 8) for _ in range(20)]
    a, b = _fit_line(samples, prior=(0.0, 0.05), weight=1e-9)
    assert (a, b) == (pytest.approx(0.3), pytest.approx(0.1))
    same_d = [(2, 0.5)] * 30  # one d only: the split comes from the prior
    a, b = _fit_line(same_d, prior=(0.0, 0.05))
    assert a + 2 * b == pytest.approx(0.5, abs=0.01)


def test_a_drafter_that_offers_one_draft_gets_asked_for_one():
    # a lookup drafter in a loop of one repeated byte offers a single draft each round
    policy = AdaptiveK(8, cost=CostModel(verify_per_position=0.02))
    for _ in range(10):
        k = policy.next_k()
        policy.update(min(k, 1), min(k, 1))
    k, speedup = policy.best(policy.alpha, policy.cost)
    assert k == 1  # asking for more gains nothing: every k predicts the same, the smallest wins
    assert speedup == pytest.approx(
        closed_form_tokens(policy.alpha, 1) / CostModel(verify_per_position=0.02).round_cost(1)
    )
    assert policy.predicted(8, policy.alpha, policy.cost) == pytest.approx(speedup)


def test_no_offer_rounds_cost_the_draft_call_only():
    policy = AdaptiveK(4, cost=CostModel(verify_per_position=0.02, draft_per_round=0.1))
    for _ in range(5):
        policy.next_k()
        policy.update(0, 0)  # the lookup found no match
    assert policy.predicted(4, 0.9, policy.cost) == pytest.approx(1 / 1.1)


def test_best_agrees_with_predicted_for_every_k():
    rng = np.random.default_rng(7)
    for _ in range(30):
        policy = AdaptiveK(8, cost=CostModel(verify_per_position=float(rng.uniform(0, 0.2)),
                                             draft_per_round=float(rng.uniform(0, 0.3))))  # fmt: skip
        for _ in range(int(rng.integers(0, 20))):
            k = policy.next_k()
            offered = int(rng.integers(0, 9))
            policy.update(min(k, offered), int(rng.integers(0, min(k, offered) + 1)))
        alpha = float(rng.uniform(0, 1))
        by_k = {k: policy.predicted(k, alpha, policy.cost) for k in range(1, 9)}
        k, speedup = policy.best(alpha, policy.cost)
        assert speedup == pytest.approx(max(by_k.values()))
        assert k == min(n for n, s in by_k.items() if s == pytest.approx(speedup, abs=1e-12))


def test_a_spike_in_the_clock_is_not_taken_for_a_cost():
    clock = FakeClock()
    policy = AdaptiveK(8, clock=clock)
    drive_timed(policy, clock, 0.5, 0.6, 12)
    before = policy.current_cost()
    k = policy.next_k()
    clock.now += 40.0  # the process was descheduled for 40 plain steps
    policy.update(k, k // 2)
    after = policy.current_cost()
    for d in (1, 4, 8):
        assert after.round_cost(d) == pytest.approx(before.round_cost(d), rel=0.05)


@pytest.mark.parametrize("slow_rounds", [{2}, {3, 5}])
def test_slow_rounds_early_do_not_switch_drafting_off(slow_rounds):
    # a drafter that pays (drafts cost 0.05 of a plain step, 80 % accepted); early drafting
    # rounds take 5 times as long, as when the machine is busy elsewhere. {2}: the first
    # timed round (the old policy decided on it alone); {3, 5}: two of the first four timed
    # rounds, which the upper median of four took for the typical round
    clock = FakeClock()
    policy = AdaptiveK(8, clock=clock)
    for index in range(50):
        k = policy.next_k()
        clock.now += (1.0 + 0.05 * k) * (5.0 if index in slow_rounds else 1.0)
        policy.update(k, int(0.8 * k))
    assert all(policy.decisions[i].mode == "draft" for i in slow_rounds)
    assert [d.mode for d in policy.decisions].count("off") == 0


def test_a_drafter_that_loses_is_switched_off_after_three_timed_rounds():
    clock = FakeClock()
    policy = AdaptiveK(8, clock=clock)
    drive_timed(policy, clock, 0.0, 0.6, 12)  # nothing accepted, each draft 0.6 of a step
    modes = [d.mode for d in policy.decisions]
    assert modes[:5] == ["warm-up", "time plain step", "draft", "draft", "draft"]
    assert modes[5:9] == ["off"] * 4


def test_a_speedup_of_exactly_the_minimum_gain_drafts():
    """min_gain 1 means "draft unless it would be slower": at the prior alpha 0.5 and k = 1 a
    round gives 1.5 tokens and costs 1 + 0.5 steps, a predicted speedup of exactly 1."""
    policy = AdaptiveK(1, cost=CostModel(verify_per_position=0.5))
    assert policy.next_k() == 1
    assert policy.decisions[0].mode == "draft" and policy.decisions[0].predicted == 1.0


def test_rounds_timed_faster_than_a_plain_step_never_give_a_negative_cost():
    """Drafting rounds that took half a plain step (the machine's load dropped): the line
    fitted to them has negative costs, and no k may be priced below the plain step itself."""
    clock = FakeClock()
    policy = AdaptiveK(8, clock=clock)
    for _ in range(30):
        k = policy.next_k()
        clock.now += 1.0 if k == 0 else 0.5
        policy.update(k, k)
    cost = policy.current_cost()
    assert cost.verify_per_position >= 0 and cost.draft_per_round >= 0
    assert all(cost.round_cost(k) >= 1.0 for k in range(9))


def test_the_first_probe_comes_after_probe_every_rounds_off():
    """A policy that starts switched off (drafting too dear to pay) probes after probe_every
    rounds, then waits again."""
    policy = AdaptiveK(8, cost=CostModel(verify_per_position=2.0), probe_every=4)
    drive(policy, [(99, 0)] * 6)
    assert [d.mode for d in policy.decisions] == ["off"] * 4 + ["probe", "off"]


def test_drafting_again_resets_the_gap_between_probes():
    """Probes that fail double the gap; once drafting pays again the gap is probe_every, so a
    second switch-off probes as soon as the first did."""
    policy = AdaptiveK(8, cost=CostModel(verify_per_position=0.05), probe_every=4, max_probe_gap=16)
    drive(policy, [(99, 0)] * 60)
    assert policy.probe_gap > 4
    drive(policy, [(99, 99)] * 30)
    assert policy.decisions[-1].mode == "draft" and policy.probe_gap == 4
    start = len(policy.decisions)
    drive(policy, [(99, 0)] * 40)  # switched off again: the first probe after 4 rounds off
    modes = [d.mode for d in policy.decisions[start:]]
    first_off = modes.index("off")
    assert modes[first_off : first_off + 5] == ["off"] * 4 + ["probe"]
