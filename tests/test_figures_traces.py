"""Lesson 05's figure: one bar per round, and tokens against target forwards."""

import matplotlib.text
import numpy as np
from matplotlib.figure import Figure

from speclab.decoding import DecodeResult, Round
from speclab.figures import rounds_figure
from speclab.figures.traces import ROUND_ROLE_STYLES


def texts(fig) -> list[str]:
    return [t.get_text() for t in fig.findobj(matplotlib.text.Text) if t.get_text()]


def result_of(rounds: list[Round]) -> DecodeResult:
    tokens = [t for r in rounds for t in r.new_tokens]
    return DecodeResult([1], tokens, rounds, target_forwards=len(rounds))


def test_bars_stack_accepted_target_token_and_rejected_drafts():
    rounds = [Round([1, 2, 3, 4], 4, 5), Round([1, 2, 3, 4], 1, 9), Round([], 0, 7)]
    fig = rounds_figure(result_of(rounds))
    assert isinstance(fig, Figure)
    left, right = fig.axes
    bars = [p for p in left.patches if p.get_height() > 0]
    heights = sorted(round(p.get_height(), 6) for p in bars)
    # accepted 4 and 1; three target tokens of height 1; 3 rejected drafts in round 2
    assert heights == [1, 1, 1, 1, 3, 4]
    hatches = {p.get_hatch() for p in bars}
    assert {ROUND_ROLE_STYLES[r][1] for r in ("correction", "bonus", "plain")} <= hatches
    labels = texts(fig)
    assert "3 rounds, 8 tokens" in labels
    assert "2.67 tokens per forward" in labels
    assert any("5 forwards saved" in t for t in labels)


def test_cumulative_line_ends_at_the_token_count():
    rounds = [Round([1, 2], 2, 3)] * 4
    fig = rounds_figure(result_of(rounds), title="custom")
    speculative = fig.axes[1].get_lines()[0]
    assert np.array_equal(speculative.get_xdata(), [0, 1, 2, 3, 4])
    assert np.array_equal(speculative.get_ydata(), [0, 3, 6, 9, 12])
    assert "custom" in texts(fig)


def test_the_legends_cover_no_bar_and_no_point_of_the_curve():
    """At k = 8 the bars reach the top of the axes: the legends inside covered them."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    rounds = [Round(list(range(8)), 8, 9), Round(list(range(8)), 2, 9)] * 7
    fig = rounds_figure(result_of(rounds))
    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)
    left, right = fig.axes
    for legend, ax in ((left.get_legend(), left), (right.get_legend(), right)):
        box = legend.get_window_extent(renderer)
        for patch in ax.patches:
            assert not box.overlaps(patch.get_window_extent(renderer))
        for line in ax.get_lines():
            for x, y in ax.transData.transform(line.get_xydata()):
                assert not box.contains(x, y)


def test_one_round_and_one_token_are_singular():
    assert "1 round, 1 token" in texts(rounds_figure(result_of([Round([], 0, 7)])))
