"""Lesson 07's figures and widget, headless: what is drawn and shown equals what is computed."""

import numpy as np
import pytest
from matplotlib.figure import Figure

from speclab.figures import (
    sampling_convergence_figure,
    sampling_rule_figure,
    sampling_speed_figure,
    temperature_acceptance_figure,
)
from speclab.sampling import SIGNIFICANCE, chi_square_test, p_value_text
from speclab.widgets import SamplingRuleExplorer

P = np.array([0.4, 0.3, 0.2, 0.1])
Q = np.array([0.1, 0.5, 0.2, 0.2])


def bar_heights(ax) -> list[float]:
    return [patch.get_height() for patch in ax.patches]


def test_rule_figure_draws_acceptance_and_leftover():
    fig = sampling_rule_figure(P, Q, "ABCD")
    left, middle, right = fig.axes
    assert np.allclose(bar_heights(middle), [1.0, 0.6, 1.0, 0.5])  # min(1, p/q) by hand
    assert np.allclose(bar_heights(right), [1.0, 0.0, 0.0, 0.0])  # max(0, p - q) = A only
    assert "0.70" in left.get_title(loc="left") and "0.30" in right.get_title(loc="left")
    never = sampling_rule_figure([0.25] * 4, [0.0, 0.5, 0.5, 0.0], "ABCD").axes[1]
    assert np.allclose(bar_heights(never), [0.0, 0.5, 0.5, 0.0])
    assert sum("never" in text.get_text() for text in never.texts) == 2
    same = sampling_rule_figure(P, P, "ABCD").axes[2]
    assert np.allclose(bar_heights(same), 0.0)  # nothing to draw after a rejection
    assert any("nothing is ever rejected" in text.get_text() for text in same.texts)


def test_convergence_figure_shows_shares_and_distance():
    tokens = np.array([0, 0, 1, 2, 0, 3, 1, 0])
    fig = sampling_convergence_figure(P, {"exact rule": tokens}, "ABCD")
    left, right = fig.axes
    share = np.bincount(tokens, minlength=4) / tokens.size
    assert np.allclose(bar_heights(left), share)
    distance = right.lines[0].get_ydata()
    assert distance.size == tokens.size
    assert distance[-1] == pytest.approx(0.5 * np.abs(share - P).sum())


def test_temperature_and_speed_figures():
    fig = temperature_acceptance_figure([0, 0.5, 1], [0.4, 0.5, 0.6], [0.4, 0.3, 0.2], {1.0: 0.55})
    assert isinstance(fig, Figure)
    assert np.allclose(fig.axes[0].lines[0].get_ydata(), [0.4, 0.5, 0.6])
    assert np.allclose(fig.axes[0].lines[2].get_ydata(), [0.55])
    rows = [
        {"method": "plain sampling", "median": 1.0, "q25": 1.0, "q75": 1.0},
        {"method": "exact rule", "median": 1.3, "q25": 1.2, "q75": 1.4, "predicted": 1.25},
    ]
    ax = sampling_speed_figure(rows).axes[0]
    assert np.allclose([patch.get_width() for patch in ax.patches], [1.0, 1.3])


@pytest.fixture(scope="module")
def explorer():
    return SamplingRuleExplorer(steps=1000)


def test_explorer_default_shows_the_rule_and_catches_the_biased_one(explorer):
    assert "0.700" in explorer.text.value and "0.250" in explorer.text.value
    assert set(explorer.samples) == {"exact rule", "biased resample (b)"}
    exact = chi_square_test(np.bincount(explorer.samples["exact rule"], minlength=4), P)
    biased = chi_square_test(np.bincount(explorer.samples["biased resample (b)"], minlength=4), P)
    assert exact.p_value > SIGNIFICANCE and biased.p_value < SIGNIFICANCE
    assert f"p-value <b>{p_value_text(exact.p_value)}</b>" in explorer.text.value
    assert explorer.picture.value and explorer.rule_picture.value
    assert len(explorer.samples["exact rule"]) == 1000


def test_explorer_sliders_change_what_is_shown(explorer):
    explorer.set_weights(p_draft=[0.4, 0.3, 0.2, 0.1])  # q = p: even the biased rule is exact
    assert "= <b>1.000</b>" in explorer.text.value
    assert "leftover: none (p = q: no draft is ever rejected)" in explorer.text.value
    for tokens in explorer.samples.values():
        assert chi_square_test(np.bincount(tokens, minlength=4), P).p_value > SIGNIFICANCE
    explorer.steps.value = 100
    assert all(len(tokens) == 100 for tokens in explorer.samples.values())
    explorer.set_weights(p_target=[0.0] * 4)
    assert "cannot all be 0" in explorer.text.value  # a message, not an exception
    explorer.target_sliders[2].value = 1.0  # one slider moved: p is all on C
    assert [s.value for s in explorer.draft_sliders] == [0.4, 0.3, 0.2, 0.1]
    assert all(set(tokens.tolist()) == {2} for tokens in explorer.samples.values())


def test_explorer_checks_its_arguments():
    with pytest.raises(ValueError):
        SamplingRuleExplorer(p_target=(0.5, 0.5), p_draft=(0.2, 0.3, 0.5))


def test_weights_above_1_keep_their_proportions():
    """The sliders run from 0 to 1 and clamped each weight alone: p = (4, 3, 2, 1) was shown
    as (0.25, 0.25, 0.25, 0.25), "kept with probability 1.000"; only proportions matter."""
    explorer = SamplingRuleExplorer(p_target=(4, 3, 2, 1), p_draft=(10, 50, 20, 20), steps=100)
    p, q = explorer.distributions()
    assert np.allclose(p, P) and np.allclose(q, Q)
    explorer.set_weights(p_target=(40, 30, 20, 10))
    assert np.allclose(explorer.distributions()[0], P)
    for bad in ((0.4, float("nan"), 0.2, 0.1), (0.4, -0.3, 0.2, 0.1)):
        with pytest.raises(ValueError, match="one weight of 0 or more per token"):
            SamplingRuleExplorer(p_target=bad)


def test_the_expected_shares_refuse_weights_that_are_not_a_distribution():
    """Lesson 07 with p = (40, 30, 20, 10) printed "keeps a draft with probability 25.00"."""
    from speclab.sampling import expected_acceptance, expected_match_acceptance

    assert expected_acceptance(P, Q) == pytest.approx(np.minimum(P, Q).sum())
    for share in (expected_acceptance, expected_match_acceptance):
        with pytest.raises(ValueError, match="p_target sums to 100, not 1"):
            share(P * 100, Q)
        with pytest.raises(ValueError, match="p_draft sums to 1.1, not 1"):
            share(P, Q + [0.1, 0, 0, 0])
        with pytest.raises(ValueError, match="over the same tokens"):
            share(P, Q[:2])


def test_a_distribution_of_zeros_clears_the_pictures_too():
    shown = SamplingRuleExplorer(steps=100)
    assert shown.picture.value[:4] == b"\x89PNG"
    for slider in shown.target_sliders:
        slider.value = 0.0
    assert "cannot all be 0" in shown.text.value
    assert shown.picture.value == b"" and shown.rule_picture.value == b"" and not shown.samples


def test_explorer_names_the_level_and_never_prints_a_p_value_of_zero():
    shown = SamplingRuleExplorer(steps=10000)
    shown.set_weights(p_target=(0.25, 0.25, 0.25, 0.25), p_draft=(1, 0, 0, 0))
    assert "at the 0.001 level the test does not reject" in shown.text.value
    assert "p-value <b>below 1e-300</b> (at the 0.001 level the test rejects" in shown.text.value
    assert "p-value <b>0</b>" not in shown.text.value


@pytest.mark.parametrize(
    ("p_target", "p_draft", "kept"),
    [((1, 0, 0, 0), (1, 0, 0, 0), "1.000"), ((1, 0, 0, 0), (0, 1, 0, 0), "0.000")],
)
def test_explorer_says_only_where_rule_a_keeps_less(p_target, p_draft, kept):
    shown = SamplingRuleExplorer(steps=100, p_target=p_target, p_draft=p_draft)
    assert f"rule (a) would keep \u03a3 p\u00b7q = {kept}" in shown.text.value
    shown.set_weights(p_target=(0.4, 0.3, 0.2, 0.1), p_draft=(0.1, 0.5, 0.2, 0.2))
    assert "rule (a) would keep only \u03a3 p\u00b7q" in shown.text.value


def test_a_test_with_nothing_to_compare_says_so_instead_of_a_p_value():
    """p on one token gave "chi-square 0.0 on 0 df, p-value 1 (... does not reject ...)" for
    both rules, a test reported as evidence where no test was possible."""
    one_hot = SamplingRuleExplorer(p_target=(1, 0, 0, 0), p_draft=(0, 1, 0, 0), steps=100)
    assert "0 df" not in one_hot.text.value
    assert one_hot.text.value.count("every output was A, the one token p allows") == 2
    assert all((tokens == 0).all() for tokens in one_hot.samples.values())  # as it says
    rare = SamplingRuleExplorer(p_target=(999, 1, 0, 0), p_draft=(0, 1, 0, 0), steps=100)
    assert rare.text.value.count("too few steps for a test") == 2 and "0 df" not in rare.text.value


def test_steps_off_the_slider_are_named():
    """steps=500 ended in traitlets' "Invalid selection: value not found"."""
    with pytest.raises(ValueError, match="steps 500: choose one of 100, 300, 1000, 3000, 10000"):
        SamplingRuleExplorer(steps=500)


def test_set_weights_wants_one_weight_per_slider():
    """A short list moved only the first sliders and a long one was cut, in silence."""
    explorer = SamplingRuleExplorer(steps=100)
    before = explorer.distributions()
    with pytest.raises(ValueError, match="p_draft needs 4 weights, one per token, got 2"):
        explorer.set_weights(p_target=[1, 0, 0, 0], p_draft=[0.5, 0.5])  # p must not move
    for wrong in ([0.5, 0.5], [0.2] * 5, []):
        with pytest.raises(
            ValueError, match=f"p_target needs 4 weights, one per token, got {len(wrong)}"
        ):
            explorer.set_weights(p_target=wrong)
    after = explorer.distributions()
    assert np.array_equal(before[0], after[0]) and np.array_equal(before[1], after[1])


def test_a_token_named_like_a_tag_is_shown_as_its_name():
    """Lesson 07 invites new labels; "<s>" had struck through the rest of the verdicts and
    "<eos>" vanished, read as HTML."""
    explorer = SamplingRuleExplorer(labels=["<s>", "B", "a&b", "D"])
    assert "leftover: &lt;s&gt; " in explorer.text.value and "<s>" not in explorer.text.value
    assert "a&amp;b" in explorer.text.value
    explorer.set_weights(p_target=(1, 0, 0, 0))  # the one token p allows is named in a sentence
    assert "every output was &lt;s&gt;, the one token p allows" in explorer.text.value


@pytest.mark.parametrize("labels", [["x" * 17, "B", "C", "D"], [1, 2, 3, 4], ["", "B", "C", "D"]])
def test_a_label_that_is_not_a_short_name_is_refused(labels):
    """A 100,000-character label took a minute to draw; numbers ended in a TypeError."""
    with pytest.raises(ValueError, match="give each token a name in quotes, 1 to 16 characters"):
        SamplingRuleExplorer(labels=labels)


def test_weights_set_from_code_are_those_the_readouts_show():
    """set_weights had skipped the readout rounding that the constructor and a hand on the
    slider apply: the same weights said 'every output was A' one way and 'too few steps'
    the other, and weights every readout showed as 0.000 were computed with."""
    built = SamplingRuleExplorer(p_target=(10000, 1, 0, 0))
    moved = SamplingRuleExplorer()
    moved.set_weights(p_target=(10000, 1, 0, 0))
    assert [s.value for s in moved.target_sliders] == [s.value for s in built.target_sliders]
    assert moved.text.value == built.text.value
    moved.set_weights(p_target=(0.0004, 0, 0, 0))
    assert "weights cannot all be 0" in moved.text.value
