"""Tests for speclab.figures: what each picture shows, in words and shapes, not only colour."""

import matplotlib
import numpy as np
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from speclab.counting import expected_speedup, expected_tokens_per_round
from speclab.figures import (
    CROSS,
    OKABE_ITO,
    ROLE_COLOURS,
    TICK,
    check_row_figure,
    draft_verify_figure,
    eq1_figure,
    forwards_per_case_figure,
)


def texts(fig: Figure) -> list[str]:
    found = [t.get_text() for t in fig.findobj(matplotlib.text.Text)]
    return [t for t in found if t]


def cell_faces(fig: Figure) -> list[str]:
    ax = fig.axes[0]
    return [to_hex(p.get_facecolor()).upper() for p in ax.patches if isinstance(p, Rectangle)]


def test_palette_is_okabe_ito():
    assert OKABE_ITO["bluish_green"] == "#009E73"
    assert OKABE_ITO["vermillion"] == "#D55E00"
    palette = set(OKABE_ITO.values())
    for role in ("accepted", "rejected", "target", "draft", "speculative"):
        assert ROLE_COLOURS[role] in palette


def test_check_row_marks_in_symbols_not_only_colour():
    fig = check_row_figure("ABX", "ABCD")
    shown = texts(fig)
    assert shown.count(TICK) == 2
    assert shown.count(CROSS) == 1
    assert any("from the target" in t for t in shown)
    faces = cell_faces(fig)
    assert faces.count(ROLE_COLOURS["accepted"].upper()) == 4  # 2 in the guess, 2 in the output
    assert faces.count(ROLE_COLOURS["target"].upper()) == 1  # C, added by the target


def test_check_row_dropped_rest_is_hatched_and_named():
    fig = check_row_figure("AXCD", "ABCDE")
    shown = texts(fig)
    assert shown.count("dropped") == 1  # one word under the dropped run
    hatched = [p for p in fig.axes[0].patches if isinstance(p, Rectangle) and p.get_hatch()]
    assert len(hatched) == 2


def test_check_row_end_of_path():
    fig = check_row_figure("EFG", "EFG", prefix="ABCD")
    shown = texts(fig)
    assert shown.count(TICK) == 3
    assert CROSS not in shown
    assert any("nothing added" in t for t in shown)


def test_figure_one():
    fig = draft_verify_figure(k=4, accepted=2)
    shown = texts(fig)
    assert shown.count(TICK) == 2 and shown.count(CROSS) == 1 and shown.count("dropped") == 1
    assert any("roll back" in t for t in shown)
    assert any("ONE forward" in t for t in shown)
    assert any("3 tokens" in t for t in shown)
    assert any(isinstance(p, matplotlib.patches.FancyArrowPatch) for p in fig.axes[0].patches)


def test_figure_one_all_accepted_has_no_rollback():
    shown = texts(draft_verify_figure(k=4, accepted=4))
    assert shown.count(TICK) == 4 and CROSS not in shown
    assert not any("roll back" in t for t in shown)
    assert any("5 tokens" in t for t in shown)


def bar_lengths(fig: Figure) -> list[tuple[float, str]]:
    """(total width, face colour) per drawn bar row, top to bottom."""
    rows: dict[float, list] = {}
    for patch in fig.axes[0].patches:
        y = round(patch.get_y(), 3)
        rows.setdefault(y, []).append(patch)
    ordered = sorted(rows.items(), key=lambda item: -item[0])
    return [
        (sum(p.get_width() for p in patches), to_hex(patches[0].get_facecolor()).upper())
        for _, patches in ordered
    ]


def test_figure_two_greedy_drawn_per_case():
    fig = forwards_per_case_figure((0, 2, 4))
    greedy = ROLE_COLOURS["greedy"].upper()
    bars = bar_lengths(fig)
    assert [width for width, _ in bars] == [1, 1, 1, 3, 1, 5]  # 1 vs 1, 1 vs 3, 1 vs 5
    assert [face == greedy for _, face in bars] == [False, True] * 3
    shown = " ".join(texts(fig))
    assert "break even" in shown and "saves 2" in shown and "saves 4" in shown
    assert "matches none of them" in shown
    assert "target forwards" in shown
    hatched = [p for p in fig.axes[0].patches if p.get_hatch()]
    assert len(hatched) == 1 + 3 + 5  # greedy cells are hatched, not only grey


def test_eq1_figure_curves_are_the_formulas():
    fig = eq1_figure(0.8, 4, 0.05, simulated_mean=3.37, simulated_standard_error=0.01)
    left, right = fig.axes
    alphas, tokens = left.lines[0].get_data()
    assert np.allclose(tokens, expected_tokens_per_round(alphas, 4))
    speed_line = [line for line in right.lines if len(line.get_xdata()) > 2][0]
    alphas, speedups = speed_line.get_data()
    assert np.allclose(speedups, expected_speedup(alphas, 4, 0.05))
    shown = " ".join(texts(fig))
    assert "simulated" in shown and "slower than greedy" in shown
    # the simulated mean sits at the alpha it was simulated at (it was drawn at alpha + 0.02)
    simulated = [line for line in left.lines if line.get_marker() == "X"][0]
    assert simulated.get_xdata().tolist() == [0.8]


def test_figures_do_not_change_global_style_or_leave_open_figures():
    import matplotlib.pyplot as plt

    before = dict(matplotlib.rcParams)
    open_before = plt.get_fignums()
    for fig in (
        check_row_figure("ABX", "ABCD"),
        draft_verify_figure(),
        forwards_per_case_figure(),
        eq1_figure(0.5, 3, 0.1),
    ):
        assert isinstance(fig, Figure)
    assert plt.get_fignums() == open_before
    assert dict(matplotlib.rcParams) == before


def test_projector_font_sizes():
    fig = forwards_per_case_figure()
    sizes = [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_text()]
    assert min(sizes) >= 13


@pytest.mark.parametrize("accepted", [0, 1, 2, 3, 4])
def test_figure_one_every_case(accepted):
    shown = texts(draft_verify_figure(4, accepted))
    assert shown.count(TICK) == accepted


def test_characters_no_font_holds_are_drawn_as_escapes_not_empty_boxes():
    """A student's prompt in another script (lesson 03b's title), labels of lesson 07's rule
    or a guess in lesson 02: matplotlib drew empty boxes under a "Glyph missing" warning.
    The oracle is the font file itself: a character is kept only where the font holds it."""
    import io
    import warnings

    from matplotlib import font_manager, ft2font

    from speclab.figures import next_token_figure, sampling_rule_figure
    from speclab.next_token import Choice

    dejavu = ft2font.FT2Font(
        font_manager.findfont(font_manager.FontProperties(family=["DejaVu Sans"]))
    )
    assert not dejavu.get_char_index(ord("你")) and dejavu.get_char_index(ord("\u2713"))
    choices = [Choice(token=ord("a"), logit=1.0, probability=0.6), Choice(ord("b"), 0.5, 0.4)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the glyph warning included
        fig = next_token_figure(choices, title="after '你好 \u2713'")
        fig.savefig(io.BytesIO(), format="png")
        rule = sampling_rule_figure([0.5, 0.5], [0.5, 0.5], ["你", "b"])
        rule.savefig(io.BytesIO(), format="png")
    assert fig.axes[0].get_title() == "after '\\u4f60\\u597d \u2713'"  # the tick is DejaVu's
    assert "\\u4f60" in [t.get_text() for t in rule.axes[0].get_xticklabels()]


def test_draft_verify_figure_refuses_more_drafts_than_it_can_draw():
    """Lesson 03's cell draws draft_verify_figure(k=k, ...) for a k the learner sets: k = 10**6
    had drawn for minutes a figure nobody could read; 10 cells still read (checked by eye)."""
    from speclab.figures import draft_verify_figure
    from speclab.figures.symbolic import DRAWN_DRAFTS_MOST

    with pytest.raises(ValueError, match=f"at most {DRAWN_DRAFTS_MOST} drafts, got k = 11"):
        draft_verify_figure(k=DRAWN_DRAFTS_MOST + 1, accepted=2)
    import matplotlib.pyplot as plt

    plt.close(draft_verify_figure(k=DRAWN_DRAFTS_MOST, accepted=2))
