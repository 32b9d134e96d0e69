"""Tests for lesson 04's figures in speclab.figures: what is drawn, in words and shapes.

Built from synthetic Timings with known numbers, so the drawn data can be compared with
the numbers that went in (no timing is needed).
"""

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure

from speclab.bench import PARTS, StepBreakdown, roofline_free_positions
from speclab.figures import (
    breakdown_figure,
    cache_figure,
    forward_cost_figure,
    roofline_figure,
)
from speclab.timing import Timings


def texts(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.findobj(matplotlib.text.Text) if t.get_text()]


def curve(scale: float = 1.0) -> Timings:
    n_new = np.array([1, 2, 5, 16])
    base = np.array([1.0, 1.1, 1.2, 2.0]) * 1e-3 * scale  # seconds
    rounds = np.array([0.9, 1.0, 1.1])  # [3 rounds]
    return Timings("n_new", n_new, base[:, None] * rounds[None, :])


def test_forward_cost_figure_draws_medians_and_paired_ratios():
    fig = forward_cost_figure({"model A": curve(), "model B": curve(3.0)}, tolerance=1.3)
    left, right = fig.axes
    x, y = left.lines[0].get_data()
    assert np.allclose(x, [1, 2, 5, 16])
    assert np.allclose(y, [1.0, 1.1, 1.2, 2.0])  # milliseconds
    x, y = right.lines[0].get_data()
    assert np.allclose(y, [1.0, 1.1, 1.2, 2.0])  # ratios to n_new = 1
    separate = [line for line in right.lines if line.get_label().startswith("n_new separate")]
    assert np.allclose(separate[0].get_ydata(), separate[0].get_xdata())  # y = n_new
    shown = " ".join(texts(fig))
    assert "model A" in shown and "model B" in shown and "nearly free" in shown
    data_lines = [container.lines[0] for container in left.containers]
    assert len({line.get_marker() for line in data_lines}) == 2  # not told apart by colour only
    assert len({str(line.get_linestyle()) for line in data_lines}) == 2


def test_forward_cost_figure_uses_a_log_time_axis_for_curves_far_apart():
    assert forward_cost_figure({"a": curve()}).axes[0].get_yscale() == "linear"
    far_apart = forward_cost_figure({"narrow": curve(), "wide": curve(100.0)})
    assert far_apart.axes[0].get_yscale() == "log"


def test_cache_figure_names_the_factor():
    with_cache = Timings("n_seq", np.array([16, 256]), np.full((2, 3), 1e-3))
    without = Timings("n_seq", np.array([16, 256]), np.array([[2e-3] * 3, [50e-3] * 3]))
    fig = cache_figure({"with cache": with_cache, "without cache": without})
    shown = " ".join(texts(fig))
    assert "\u00d750 at 256 positions" in shown
    assert "with cache" in shown and "without cache" in shown
    assert fig.axes[0].get_xscale() == "log" and fig.axes[0].get_yscale() == "log"


def breakdown(n_new: int, scale: float, overhead: float | None = None) -> StepBreakdown:
    """Parts take 1, 2, ... 7 (x scale) microseconds; the overhead 8 unless given."""
    parts = np.arange(1, len(PARTS)) * 1e-6 * scale  # [n_parts - 1]
    extra = (len(PARTS) * 1e-6 * scale) if overhead is None else overhead
    part_times = np.tile(parts, (3, 1))  # [3 rounds, n_parts - 1]
    forward_times = np.full(3, parts.sum() + extra)
    calls = np.array([17, 8, 4, 9, 8, 9, 12, 0])
    return StepBreakdown(n_new, 256, PARTS, part_times, forward_times, calls)


def test_breakdown_figure_has_one_bar_per_part_and_n_new_with_values():
    fig = breakdown_figure([breakdown(1, 10.0), breakdown(5, 20.0)])
    ax = fig.axes[0]
    widths = sorted(round(p.get_width(), 6) for p in ax.patches)
    expected = sorted(
        [round(10.0 * i, 6) for i in range(1, 9)] + [round(20.0 * i, 6) for i in range(1, 9)]
    )
    assert widths == expected
    shown = texts(fig)
    for part in PARTS:
        assert part in shown
    assert any("n_new = 5" in t for t in shown) and " 160 \u00b5s" in shown
    assert len({p.get_hatch() for p in ax.patches}) == 2  # hatching tells the two apart


def test_breakdown_figure_draws_negative_noise_as_zero():
    fig = breakdown_figure([breakdown(1, 10.0, overhead=-5e-6)])
    assert min(p.get_width() for p in fig.axes[0].patches) == 0


def test_roofline_figure_is_labelled_a_model_with_its_numbers():
    fig = roofline_figure(124_000_000, 2, 2e12, 300e12, "GPT-2 small")
    shown = " ".join(texts(fig))
    assert "MODEL" in shown and "assumed" in shown
    assert "2 TB/s" in shown and "300 TFLOP/s" in shown and "124M" in shown
    knee = roofline_free_positions(2, 2e12, 300e12)
    assert f"{knee:.0f} positions" in shown
    x, y = fig.axes[0].lines[0].get_data()
    assert np.allclose(y[x <= 100], 124e6 * 2 / 2e12 * 1e3)  # flat: weights read once


def test_lesson_04_figures_leave_no_open_figures_and_no_style_change():
    before, open_before = dict(matplotlib.rcParams), plt.get_fignums()
    forward_cost_figure({"a": curve()})
    breakdown_figure([breakdown(1, 1.0)])
    assert plt.get_fignums() == open_before
    assert dict(matplotlib.rcParams) == before


@pytest.mark.parametrize("make", [lambda: forward_cost_figure({"a": curve()}),
                                  lambda: breakdown_figure([breakdown(1, 1.0)])])  # fmt: skip
def test_projector_font_sizes_04(make):
    sizes = [t.get_fontsize() for t in make().findobj(matplotlib.text.Text) if t.get_text()]
    assert min(sizes) >= 13
