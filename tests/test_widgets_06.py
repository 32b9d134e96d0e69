"""Lesson 06's figures and widget, drawn headless from a tiny benchmark report."""

import re

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.figure import Figure

from speclab import figures
from speclab.bench_decode import Settings, decode_report
from speclab.counting import break_even_alpha
from speclab.gpt import GPTConfig
from speclab.scenarios import load_scenarios
from speclab.weights import random_model
from speclab.widgets import BoundaryExplorer

SCENARIO = """name = "{name}"
description = "test"
max_new_tokens = 12

[[prompts]]
id = "a"
source = "written for the project"
text = "{text}"

[[prompts]]
id = "b"
source = "written for the project"
text = "one two one two one two"
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("prompts")
    for i, (name, text) in enumerate([("copy-heavy", "abcabcabc"), ("free text", "hello")]):
        (folder / f"{i}.toml").write_text(SCENARIO.format(name=name, text=text), encoding="utf-8")
    target = random_model(GPTConfig(2, 2, 16, 48), np.random.default_rng(0))
    draft = random_model(GPTConfig(1, 2, 8, 48), np.random.default_rng(1))
    settings = Settings(repeats=1, k_values=(1, 2, 4, 8), k_max=8)
    return decode_report(target, draft, load_scenarios(folder), settings)


@pytest.mark.parametrize(
    "draw",
    [
        figures.predicted_vs_measured_figure,
        figures.position_acceptance_figure,
        figures.k_speedup_figure,
        figures.time_per_token_figure,
        figures.acceptance_measures_figure,
    ],
)
def test_report_figures_draw(report, draw):
    fig = draw(report)
    assert isinstance(fig, Figure) and fig.axes
    fig.canvas.draw()  # renders without error


def spread(report):
    """The report with quartiles apart from the median (one repeat makes them equal), so
    that a figure plotting a quartile for the median is caught."""
    rows = [r | {"speedup_q25": r["speedup"] - 0.1, "speedup_q75": r["speedup"] + 0.3}
            for r in report["results"]]  # fmt: skip
    return report | {"results": rows}


def drafting_rows(report, **match):
    return [r for r in report["results"] if r["drafter"] != "none"
            and all(r[key] == value for key, value in match.items())]  # fmt: skip


def test_predicted_vs_measured_points_are_the_report_rows(report):
    report = spread(report)
    fig = figures.predicted_vs_measured_figure(report)
    for ax, key in zip(fig.axes[:2], ("predicted_leviathan", "predicted_with_costs"), strict=True):
        drawn = sorted(tuple(point) for c in ax.collections[:-1] for point in c.get_offsets())
        rows = [r for r in drafting_rows(report) if np.isfinite(r[key])]
        expected = sorted((r[key], r["speedup"]) for r in rows)
        assert rows and np.allclose(drawn, expected)  # the last collection: the +-10 % band


def test_k_speedup_lines_are_the_measured_medians(report):
    report = spread(report)
    fig = figures.k_speedup_figure(report)
    for ax, name in zip(fig.axes, ("copy-heavy", "free text"), strict=True):
        drawn = {tuple(line.get_ydata()) for line in ax.lines}
        for drafter in ("lookup", "model"):
            fixed = drafting_rows(report, scenario=name, drafter=drafter, adaptive=False)
            adaptive = drafting_rows(report, scenario=name, drafter=drafter, adaptive=True)
            assert tuple(r["speedup"] for r in fixed) in drawn
            assert (adaptive[0]["speedup"],) in drawn  # the star


def test_acceptance_bars_are_the_rates_and_eq_1(report):
    fig = figures.acceptance_measures_figure(report, "lookup k=8")
    rows = [drafting_rows(report, scenario=name, method="lookup k=8")[0]
            for name in ("copy-heavy", "free text")]  # fmt: skip
    left, right = ([p.get_height() for p in ax.patches] for ax in fig.axes[:2])
    alpha = [r["alpha_leviathan"] for r in rows]
    assert left == pytest.approx(alpha + [r["accepted_over_drafted"] for r in rows], nan_ok=True)
    eq1 = [(1 - a**9) / (1 - a) for a in alpha]  # expected tokens per round at k = 8
    assert right == pytest.approx([r["mean_accepted_length"] for r in rows] + eq1, nan_ok=True)


def test_position_figure_has_one_panel_per_scenario_and_the_bars_are_the_shares(report):
    fig = figures.position_acceptance_figure(report, "lookup k=8")
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.axison]
    titles = [ax.get_title(loc="left") for ax in panels]
    assert [title.split(" (\u03b1 = ")[0] for title in titles] == ["copy-heavy", "free text"]
    row = next(
        r
        for r in report["results"]
        if r["scenario"] == "copy-heavy" and r["method"] == "lookup k=8"
    )
    assert titles[0] == f"copy-heavy (\u03b1 = {row['alpha_leviathan']:.2f})"  # the dashed line's
    reached = np.array(row["position_reached"])
    expected = np.divide(row["position_accepted"], reached, where=reached > 0,
                         out=np.zeros(reached.size))  # fmt: skip
    heights = [patch.get_height() for patch in panels[0].patches]
    assert heights == pytest.approx(expected.tolist())


def test_time_figure_bars_add_up_to_one_over_speedup(report):
    fig = figures.time_per_token_figure(report, methods=("lookup k=8",))
    ax = fig.axes[0]
    row = next(
        r
        for r in report["results"]
        if r["scenario"] == "copy-heavy" and r["method"] == "lookup k=8"
    )
    first_bar = [p for p in ax.patches if abs(p.get_x() + p.get_width() / 2) < 1e-9]
    top = max(p.get_y() + p.get_height() for p in first_bar)
    parts = row["time_drafting_per_token"] + row["time_verifying_per_token"]
    assert top == pytest.approx(max(1 / row["speedup"], parts))


def test_adaptive_trace_figure(report):
    trace = report["adaptive"]["free text"]["lookup"]["trace"]
    fig = figures.adaptive_trace_figure(trace, "free text")
    labels = [text.get_text() for text in fig.legends[0].get_texts()]  # above the bars
    modes = {d["mode"] for d in trace}
    assert labels[-1] == "drafted, not accepted"  # the white part of a bar, whatever the mode
    assert {label.split(" (")[0] for label in labels[:-1]} == modes
    fig.canvas.draw()
    # every round shows its mode's colour, a round that kept no draft too (a sliver): the
    # warm-up that accepted nothing was a white outline, read as "drafted, not accepted"
    none_kept = [{"mode": "warm-up", "k": 3, "drafted": 3, "accepted": 0}]
    fig = figures.adaptive_trace_figure(none_kept)
    filled = [p for p in fig.axes[0].patches if p.get_facecolor()[3] > 0]  # not the outline
    assert len(filled) == 1 and 0 < filled[0].get_height() < 0.5


def test_boundary_figure_crosses_one_at_break_even():
    fig = figures.boundary_figure(4, 0.1, 0.05, {"copy": 0.9, "free": float("nan")})
    leviathan, with_verify = fig.axes[0].lines[:2]
    alpha = break_even_alpha(4, 1.0 + 0.05 * 4, 0.1)
    x, y = with_verify.get_data()
    assert np.interp(alpha, x, y) == pytest.approx(1.0, abs=0.01)
    assert np.all(leviathan.get_data()[1] >= y)  # the verify cost only lowers the curve


def test_boundary_figure_names_stand_on_white_above_the_lines_near_them():
    """The shipped report's alphas (0.86-0.94) sit close: a scenario's name ran through the
    lines of its neighbours."""
    alphas = {"copy-heavy": 0.88, "structured": 0.90, "counting": 0.94, "free text": 0.86}
    fig = figures.boundary_figure(4, 0.1, 0.05, alphas)
    names = {t.get_text().strip(): t for t in fig.axes[0].texts}
    assert set(names) == set(alphas)
    for name, text in names.items():
        patch = text.get_bbox_patch()
        assert patch is not None and patch.get_facecolor()[:3] == (1.0, 1.0, 1.0), name
        assert text.get_zorder() > max(line.get_zorder() for line in fig.axes[0].lines)


def test_boundary_explorer_verdicts_follow_the_sliders():
    explorer = BoundaryExplorer({"copy-heavy": 0.9, "free text": 0.05}, k=4, c=0.0,
                                verify_per_position=0.0)  # fmt: skip
    assert explorer.break_even() == (0.0, 0.0)  # free drafts and free verification never lose
    assert explorer.verdicts() == {"copy-heavy": True, "free text": True}
    explorer.c.value = 0.3  # a heavy drafter: 4 drafts cost 1.2 plain steps
    low, high = explorer.break_even()
    assert low == pytest.approx(break_even_alpha(4, 1.0, 0.3))
    assert explorer.verdicts() == {"copy-heavy": True, "free text": False}
    assert "loses" in explorer.text.value and explorer.picture.value[:4] == b"\x89PNG"
    explorer.verify.value = 0.2
    assert explorer.break_even()[1] > high
    # the handout's exercises give the verify forward's whole cost r; the slider is v per
    # drafted position, so the text says what r they make: 1 + 4 * 0.2
    assert "verify cost r = 1 + k\u00b7v = 1.80 plain steps" in explorer.text.value


def test_boundary_explorer_words_no_data_and_break_even():
    explorer = BoundaryExplorer({"no drafts": float("nan"), "alpha 0": 0.0, "alpha 1": 1.0}, k=1,
                                c=0.0, verify_per_position=0.0)  # fmt: skip
    # free drafts and free verification: alpha 0 gains nothing and loses nothing
    assert "no drafts: no data" in explorer.text.value
    assert "alpha 0: breaks even" in explorer.text.value and "alpha 1: pays" in explorer.text.value


def test_boundary_explorer_where_no_alpha_pays():
    """k c + verify cost above k + 1: even alpha = 1 loses (1.0 + 2.4 + 2.0 = 5.4 steps a
    round for at most 5 tokens), so there is no break-even to show, and alpha 1 loses."""
    from speclab.counting import speedup_with_verify_cost

    explorer = BoundaryExplorer({"s": 1.0}, k=4, c=0.6, verify_per_position=0.5)
    assert speedup_with_verify_cost(1.0, 4, 1.0 + 0.5 * 4, 0.6) < 1  # the oracle: it loses
    assert explorer.never_pays() == (False, True)
    assert "<b>none: no \u03b1 pays</b> (with the verify cost)" in explorer.text.value
    assert "s: loses" in explorer.text.value and "breaks even" not in explorer.text.value
    assert explorer.verdicts() == {"s": False}
    # a scenario with no drafted rounds has no alpha to lose with: it said "loses" here
    nothing = BoundaryExplorer({"no drafts": float("nan")}, k=1, c=1.0, verify_per_position=0.5)
    assert "no drafts: no data" in nothing.text.value


def test_boundary_legend_gives_v_as_its_slider_does():
    """At v = 0.125 (the handout's case, r = 1.5 at k = 4) the legend said 1 + 0.12·k."""
    explorer = BoundaryExplorer({"copy-heavy": 0.88}, k=4, c=0.02, verify_per_position=0.125)
    labels = [t.get_text() for t in explorer.figure.axes[0].get_legend().get_texts()]
    assert (
        "verify = 1 + 0.125\u00b7k steps" in labels
        and "r = 1 + k\u00b7v = 1.50" in explorer.text.value
    )


def test_boundary_explorer_draws_a_name_holding_half_a_character():
    explorer = BoundaryExplorer({"x\ud800": 0.5})  # a hand-edited report
    assert explorer.picture.value[:4] == b"\x89PNG" and "x\ufffd: pays" in explorer.text.value


DOLLARS = "cost $\\x$ and $HOME"  # mathtext would fail on \x and italicise $HOME$


def test_a_scenario_name_with_dollar_signs_is_drawn_as_typed(report):
    """A student's scenario name is text, never a formula: matplotlib read '$...$' as
    mathtext, so '\\x' raised ValueError and '$HOME and $PATH' lost its spaces."""
    import io
    import json

    import matplotlib.text

    renamed = json.loads(json.dumps(report).replace('"free text"', json.dumps(DOLLARS)))
    drawn = [
        figures.predicted_vs_measured_figure(renamed),
        figures.k_speedup_figure(renamed),
        figures.time_per_token_figure(renamed),
        figures.position_acceptance_figure(renamed),
        figures.acceptance_measures_figure(renamed),
        BoundaryExplorer({DOLLARS: 0.5, "copy-heavy": 0.9}).figure,
    ]
    for fig in drawn:
        fig.savefig(io.BytesIO(), format="png")  # draws every text, ticks and legends too
        shown = [t.get_text() for t in fig.findobj(matplotlib.text.Text)]
        assert any(DOLLARS in text for text in shown), shown
        assert all(
            not t.get_parse_math() for t in fig.findobj(matplotlib.text.Text) if "$" in t.get_text()
        )


def test_the_boundary_legend_hides_no_scenario_name():
    """Low-alpha scenarios (a model drafter's, a student's) sat under the legend, and a long
    name at alpha 0.7 ran under it once it moved beside the axes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    long = "code edit with the model drafter"
    shown = {"free text": 0.08, "structured": 0.15, "copy-heavy": 0.9, long: 0.7}
    figure = BoundaryExplorer(shown).figure
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    ax = figure.axes[0]
    legend = ax.get_legend().get_window_extent(renderer)
    names = [t for t in ax.texts if t.get_text().strip() in shown]
    assert len(names) == 4
    inside = ax.get_window_extent(renderer)
    for name in names:
        box = name.get_window_extent(renderer)
        assert not legend.overlaps(box), name.get_text()
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1, name.get_text()  # off no edge


@pytest.mark.parametrize(
    ("given", "message"),
    [({"k": 9}, "k 9: choose a whole number from 1 to 8"),
     ({"c": -1}, "c -1: choose a number from 0 to 1"),  # had become 0.0 without a word
     ({"verify_per_position": 0.9}, "verify_per_position 0.9: choose a number from 0 to 0.5"),
     ({"scenario_alphas": {"x": "0.5"}}, "the alpha of 'x' is '0.5': give a number from 0 to 1"),
     ({"scenario_alphas": {"x": 1.5}}, "the alpha of 'x' is 1.5")],
)  # fmt: skip
def test_the_boundary_explorer_names_a_value_off_its_sliders(given, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        BoundaryExplorer(**given)


def test_a_scenario_without_alpha_in_json_is_no_data():
    explorer = BoundaryExplorer({"copy-heavy": 0.9, "empty": None})  # JSON's null
    assert "no data (no rounds drafted)" in explorer.text.value


def test_boundary_verdicts_say_what_the_text_says_at_break_even():
    """k = 1, c = 0, v = 0.5: a round costs 1.5 steps and gives 1 + alpha tokens, so alpha =
    0.5 breaks even. The text said "breaks even" while verdicts() said it pays (bisection
    put the threshold at 0.4999999999999999)."""
    from speclab.counting import speedup_with_verify_cost

    explorer = BoundaryExplorer({"even": 0.5, "above": 0.6}, k=1, c=0.0, verify_per_position=0.5)
    assert speedup_with_verify_cost(0.5, 1, 1.5, 0.0) == 1.0  # the oracle: exactly even
    assert "even: breaks even" in explorer.text.value
    assert explorer.verdicts() == {"even": False, "above": True}


def test_boundary_explorer_wants_names_for_its_alphas():
    """BoundaryExplorer([0.5, 0.8]) had ended in "'list' object has no attribute 'items'"."""
    with pytest.raises(ValueError, match=r"scenario_alphas must be a dict \{scenario: alpha\}"):
        BoundaryExplorer([0.5, 0.8])
    assert BoundaryExplorer(None).scenario_alphas == {}


def test_the_sliders_redraw_once_per_release():
    """Each redraw takes 0.2-0.7 s: redrawn per pixel, a drag across a slider queued seconds
    of them (lesson 03's explorer too). The browser test moves a slider with an arrow key,
    which a release-only slider still answers."""
    from speclab.widgets import BoundaryExplorer, SpeedupExplorer

    boundary, speedup = BoundaryExplorer(), SpeedupExplorer(n_rounds=100)
    for slider in (boundary.k, boundary.c, boundary.verify, speedup.alpha, speedup.k, speedup.c):
        assert slider.continuous_update is False, slider.description
