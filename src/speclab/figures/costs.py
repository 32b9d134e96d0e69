"""Figures of what things cost in time: one forward (lesson 04), speculation (lesson 06).

Lessons 04 and 04b (measured by speclab.bench): `forward_cost_figure` (one forward against
n_new, in ms and as a ratio), `cache_figure` (next token with and without the KV cache),
then 04b's `breakdown_figure` (where one forward's time goes) and `roofline_figure` (a
labelled model of a GPU forward). Lesson 06 (a `speclab bench decode` report):
`predicted_vs_measured_figure`, `k_speedup_figure`, `time_per_token_figure` (where the time
goes and why speculation loses) and `boundary_figure` (speedup over alpha with and without
the verify cost).
"""

from collections.abc import Sequence

import matplotlib
import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
from matplotlib.figure import Figure

from speclab.counting import expected_speedup, speedup_with_verify_cost
from speclab.figures.style import (
    DRAFTER_STYLES,
    OKABE_ITO,
    PROJECTOR,
    SCENARIO_MARKERS,
    report_row,
    report_rows,
    scenario_names,
    tidy,
)

# One look per curve: colour, marker and line style differ together, so no curve is told
# apart by colour alone.
CURVE_STYLES = (
    {"color": OKABE_ITO["blue"], "marker": "o", "linestyle": "-"},
    {"color": OKABE_ITO["vermillion"], "marker": "s", "linestyle": "--"},
    {"color": OKABE_ITO["bluish_green"], "marker": "^", "linestyle": "-."},
    {"color": OKABE_ITO["reddish_purple"], "marker": "D", "linestyle": ":"},
    {"color": OKABE_ITO["orange"], "marker": "v", "linestyle": "-"},
    {"color": OKABE_ITO["black"], "marker": "X", "linestyle": "--"},
)


BREAKDOWN_HATCHES = ("", "//", "..", "xx")


def forward_cost_figure(curves: dict, tolerance: float = 1.3, title: str | None = None) -> Figure:
    """Lesson 04: one cached forward over n_new new positions, for one or more models.

    curves: {label: speclab.timing.Timings over n_new (must include n_new = 1)}.
    Left: median milliseconds with the interquartile range. Right: cost relative to a
    1-token forward (paired per round), beside the line "n_new separate 1-token steps"
    and the hatched band up to `tolerance` where extra positions count as nearly free.
    """
    with matplotlib.rc_context(PROJECTOR):
        fig, (left, right) = plt.subplots(1, 2, figsize=(14, 5.6), layout="constrained")
        top = 1.0
        for (label, timings), style in zip(curves.items(), CURVE_STYLES, strict=False):
            n_new = timings.values
            left.errorbar(
                n_new,
                timings.median * 1e3,
                yerr=[(timings.median - timings.q25) * 1e3, (timings.q75 - timings.median) * 1e3],
                capsize=4, lw=2.5, ms=9, label=label, **style,
            )  # fmt: skip
            ratios = timings.ratios(1)  # [n_settings, repeats]
            middle = np.median(ratios, axis=1)
            low, high = np.quantile(ratios, [0.25, 0.75], axis=1)
            right.errorbar(n_new, middle, yerr=[middle - low, high - middle],
                           capsize=4, lw=2.5, ms=9, label=label, **style)  # fmt: skip
            top = max(top, float(high.max()))
        n_max = max(int(t.values.max()) for t in curves.values())
        steps = np.arange(1, n_max + 1)
        right.plot(steps, steps, color="#8C8C8C", lw=2, ls=(0, (1, 1)),
                   label="n_new separate 1-token steps")  # fmt: skip
        right.fill_between([0.5, n_max + 0.5], 0, tolerance, facecolor="none",
                           edgecolor="#BBBBBB", hatch="//", lw=0,
                           label=f"\u2264 {tolerance:g}\u00d7: nearly free")  # fmt: skip
        right.set_ylim(0, max(2.0, min(top * 1.15, n_max + 1)))
        medians = np.concatenate([t.median for t in curves.values()])
        if medians.max() > 20 * medians.min():  # curves far apart: a log scale shows each
            left.set_yscale("log")
        else:
            left.set_ylim(bottom=0)
        left.set_ylabel("milliseconds per forward")
        left.set_title("time of one forward (median, IQR)", loc="left")
        right.set_ylabel("\u00d7 a 1-token forward")
        right.set_title("cost relative to 1 new token", loc="left")
        for ax in (left, right):
            ax.set_xlabel("new positions in one forward (n_new)")
            ax.set_xlim(0.5, n_max + 0.5)
            ax.grid(alpha=0.3)
            ax.spines[["top", "right"]].set_visible(False)
        # One legend below both plots: on either, a legend of many curves covers some of them.
        handles, labels = left.get_legend_handles_labels()
        for handle, label in zip(*right.get_legend_handles_labels(), strict=True):
            if label not in labels:  # the reference line and the band
                handles.append(handle)
                labels.append(label)
        fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 4))
        if title:
            fig.suptitle(title, x=0.01, ha="left", fontsize=18)
        plt.close(fig)
    return fig


def cache_figure(result: dict) -> Figure:
    """Lesson 04: the next token at each sequence length, with and without the KV cache.

    result: {"with cache": Timings, "without cache": Timings} over n_seq (speclab.bench
    .cache_vs_recompute). Log-log axes; the ratio at the longest sequence is written out.
    """
    with matplotlib.rc_context(PROJECTOR):
        fig, ax = plt.subplots(figsize=(11, 5.6), layout="constrained")
        for (label, timings), style in zip(result.items(), CURVE_STYLES, strict=False):
            ax.errorbar(
                timings.values,
                timings.median * 1e3,
                yerr=[(timings.median - timings.q25) * 1e3, (timings.q75 - timings.median) * 1e3],
                capsize=4, lw=2.5, ms=9, label=label, **style,
            )  # fmt: skip
        with_cache, without = result["with cache"], result["without cache"]
        longest = int(with_cache.values.max())
        factor = (
            without.median[without.index(longest)] / with_cache.median[with_cache.index(longest)]
        )
        ax.annotate(
            f"\u00d7{factor:.0f} at {longest} positions",
            xy=(longest, without.median[without.index(longest)] * 1e3),
            xytext=(-20, 0), textcoords="offset points", ha="right", va="center",
        )  # fmt: skip
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(with_cache.values, [str(v) for v in with_cache.values])
        ax.set_xlabel("sequence length n_seq (positions so far, log scale)")
        ax.set_ylabel("milliseconds for the next token (log scale)")
        ax.set_title("one cached step vs recomputing every position", loc="left")
        ax.grid(alpha=0.3, which="both")
        ax.spines[["top", "right"]].set_visible(False)
        ax.legend(loc="upper left")
        plt.close(fig)
    return fig


def breakdown_figure(breakdowns: Sequence) -> Figure:
    """Lesson 04b: where one forward's time goes, per part, for each n_new measured.

    breakdowns: speclab.bench.StepBreakdown records (same parts). Bars are grouped per
    part, one per n_new, told apart by hatching and a label as well as colour; each bar
    carries its microseconds. "Python overhead" is the plain forward minus the timed parts.
    """
    parts = breakdowns[0].parts
    height = 0.8 / len(breakdowns)
    with matplotlib.rc_context(PROJECTOR):
        fig, ax = plt.subplots(figsize=(13, 1.2 + 0.75 * len(parts)), layout="constrained")
        for j, (record, style) in enumerate(zip(breakdowns, CURVE_STYLES, strict=False)):
            y = np.arange(len(parts)) + (j - (len(breakdowns) - 1) / 2) * height
            micro = np.maximum(record.seconds, 0) * 1e6  # noise can make the overhead < 0
            total = record.forward_seconds * 1e6
            label = f"n_new = {record.n_new} (forward {total:.0f} \u00b5s)"
            ax.barh(y, micro, height=height * 0.95, color=style["color"], edgecolor="black",
                    hatch=BREAKDOWN_HATCHES[j % len(BREAKDOWN_HATCHES)], label=label)  # fmt: skip
            for yy, value in zip(y, micro, strict=True):
                ax.text(value, yy, f" {value:.0f} \u00b5s", va="center", fontsize=13)
        ax.set_yticks(np.arange(len(parts)), parts)
        ax.invert_yaxis()
        ax.set_xlabel("microseconds per forward (median)")
        ax.set_xlim(0, ax.get_xlim()[1] * 1.15)
        ax.set_title("where one forward's time goes", loc="left")
        ax.grid(alpha=0.3, axis="x")
        ax.spines[["top", "right"]].set_visible(False)
        ax.legend(loc="lower right")
        plt.close(fig)
    return fig


def roofline_figure(
    n_params: int, bytes_per_param: float, bandwidth: float, peak_flops: float, name: str
) -> Figure:
    """Lesson 04b: the roofline MODEL of one GPU forward against n_new (assumed numbers).

    Time = max(weights read once / bandwidth, 2 * n_params * n_new / peak). The assumed
    numbers are written on the figure, which is labelled as a model, not a measurement.
    """
    from speclab.bench import roofline_free_positions, roofline_time

    n_new = np.unique(np.geomspace(1, 2048, 200).round())  # [n_points]
    times = roofline_time(n_new, n_params, bytes_per_param, bandwidth, peak_flops) * 1e3
    memory = n_params * bytes_per_param / bandwidth * 1e3
    knee = roofline_free_positions(bytes_per_param, bandwidth, peak_flops)
    with matplotlib.rc_context(PROJECTOR):
        fig, ax = plt.subplots(figsize=(11, 5.6), layout="constrained")
        ax.plot(n_new, times, color=OKABE_ITO["sky_blue"], lw=9, alpha=0.7, zorder=1,
                label="model: the slower of the two")  # fmt: skip
        ax.axhline(memory, color=OKABE_ITO["vermillion"], ls="--", lw=2,
                   label="read every weight once")  # fmt: skip
        compute = 2.0 * n_params * n_new / peak_flops * 1e3
        ax.plot(n_new, compute, color=OKABE_ITO["bluish_green"], ls="-.", lw=2,
                label="arithmetic at peak")  # fmt: skip
        ax.axvline(knee, color="black", ls=":", lw=1.5)
        ax.text(knee * 1.08, memory * 0.5, f"knee \u2248 {knee:.0f} positions", va="center")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_ylim(memory / 8, times.max() * 1.5)
        ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.set_xlabel("new positions in one forward (n_new)")
        ax.set_ylabel("milliseconds per forward")
        ax.set_title(f"A MODEL, not a measurement: {name}", loc="left")
        assumed = (
            f"assumed: {n_params / 1e6:.0f}M weights \u00d7 {bytes_per_param:g} bytes,\n"
            f"{bandwidth / 1e12:g} TB/s memory, {peak_flops / 1e12:g} TFLOP/s peak"
        )
        ax.text(0.98, 0.04, assumed, transform=ax.transAxes, ha="right", va="bottom",
                bbox={"boxstyle": "round", "facecolor": "white", "edgecolor": "black"})  # fmt: skip
        ax.grid(alpha=0.3, which="both")
        ax.spines[["top", "right"]].set_visible(False)
        ax.legend(loc="upper left")
        plt.close(fig)
    return fig


def predicted_vs_measured_figure(report: dict) -> Figure:
    """Lesson 06: measured speedup against two predictions, one point per scenario and k.

    Left: Leviathan's formula alone (verification costs one plain step). Right: the same
    with the measured cost of the verify forward. Points on the diagonal: the prediction
    holds; the band is +-10 %. Marker: scenario; colour: drafter.
    """
    with matplotlib.rc_context(PROJECTOR):
        fig, axes = plt.subplots(1, 2, figsize=(14, 6.2), layout="constrained", sharey=True)
        keys = (("predicted_leviathan", "Leviathan's formula alone"),
                ("predicted_with_costs", "with the measured verify cost"))  # fmt: skip
        top = 1.5
        for ax, (key, title) in zip(axes, keys, strict=True):
            for marker, scenario in zip(SCENARIO_MARKERS, scenario_names(report), strict=False):
                for drafter, style in DRAFTER_STYLES.items():
                    rows = [
                        r for r in report_rows(report, scenario, drafter) if np.isfinite(r[key])
                    ]
                    if not rows:
                        continue
                    x = np.array([r[key] for r in rows])
                    y = np.array([r["speedup"] for r in rows])
                    ax.scatter(x, y, s=110, marker=marker, color=style["color"],
                               edgecolor="black", zorder=3)  # fmt: skip
                    top = max(top, float(np.nanmax(x)), float(np.nanmax(y)))
            top *= 1.1
            line = np.array([0, top])
            ax.plot(line, line, color="black", lw=1.5, label="measured = predicted")
            ax.fill_between(line, 0.9 * line, 1.1 * line, color="#DDDDDD", label="\u00b110 %")
            ax.axhline(1.0, color="#8C8C8C", ls=":", lw=1.5)
            ax.set_xlim(0, top)
            ax.set_ylim(0, top)
            ax.set_xlabel("predicted speedup")
            ax.set_title(title, loc="left")
            tidy(ax)
        axes[0].set_ylabel("measured speedup (median)")
        handles = [
            matplotlib.lines.Line2D([], [], ls="", marker=m, ms=11, color="#BBBBBB",
                                    markeredgecolor="black", label=name)
            for m, name in zip(SCENARIO_MARKERS, scenario_names(report), strict=False)
        ] + [
            matplotlib.lines.Line2D([], [], ls="", marker="o", ms=11, color=s["color"],
                                    label=f"{d} drafter")
            for d, s in DRAFTER_STYLES.items()
        ]  # fmt: skip
        axes[1].legend(handles=handles, loc="upper left", fontsize=12)
        axes[0].legend(loc="upper left", fontsize=12)
        plt.close(fig)
    return fig


def k_speedup_figure(report: dict) -> Figure:
    """Lesson 06: measured speedup against k, per scenario, for both drafters.

    Lines: fixed k (median, interquartile bars); a star at the right edge: the adaptive
    policy with k as its most. The dotted line at 1 is plain greedy decoding.
    """
    names = scenario_names(report)
    with matplotlib.rc_context(PROJECTOR):
        fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 5.0),
                                 layout="constrained", sharey=True, squeeze=False)  # fmt: skip
        top = 1.5
        for ax, name in zip(axes[0], names, strict=True):
            for drafter, style in DRAFTER_STYLES.items():
                rows = [r for r in report_rows(report, name, drafter) if not r["adaptive"]]
                if not rows:
                    continue
                k = np.array([r["k"] for r in rows])
                mid = np.array([r["speedup"] for r in rows])
                low = mid - np.array([r["speedup_q25"] for r in rows])
                high = np.array([r["speedup_q75"] for r in rows]) - mid
                ax.errorbar(k, mid, yerr=[low, high], color=style["color"], ls=style["linestyle"],
                            marker="o", ms=8, lw=2.5, capsize=4, label=drafter)  # fmt: skip
                top = max(top, float((mid + high).max()))
                adaptive = next(
                    (r for r in report_rows(report, name, drafter) if r["adaptive"]), None
                )
                if adaptive is not None:
                    ax.plot(k.max() + 1.2, adaptive["speedup"], marker="*", ms=20,
                            color=style["color"], markeredgecolor="black",
                            label=f"{drafter} adaptive")  # fmt: skip
                    top = max(top, adaptive["speedup"])
            ax.axhline(1.0, color="#8C8C8C", ls=":", lw=2)
            ax.set_xscale("log", base=2)
            ks = sorted({r["k"] for r in report_rows(report, name) if r["drafter"] != "none"})
            ax.set_xticks(ks, [str(k) for k in ks])
            ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
            ax.set_xlabel("k (drafts per round)")
            ax.set_title(name, loc="left")
            tidy(ax)
        axes[0][0].set_ylim(0, top * 1.1)
        axes[0][0].set_ylabel("speedup over greedy")
        axes[0][0].legend(loc="upper left", fontsize=11)
        plt.close(fig)
    return fig


TIME_PARTS = (  # (row key, label, colour, hatch)
    ("time_drafting_per_token", "drafting", OKABE_ITO["orange"], "//"),
    ("time_verifying_per_token", "verifying (target forward)", OKABE_ITO["sky_blue"], ""),
    ("other", "outside the rounds", "#DDDDDD", ".."),
)


def time_per_token_figure(
    report: dict, methods=("lookup k=8", "model k=8", "lookup adaptive")
) -> Figure:
    """Lesson 06: where the time per token goes, against greedy's (the line at 1).

    Each bar is one method on one scenario: time per generated token as a multiple of
    greedy's, split into drafting, verifying and the rest (1 / speedup minus the two).
    A bar above the line loses time: a heavy drafter (tall drafting part), or few accepted
    tokens per round (the verify part alone near 1 or above).
    """
    names = scenario_names(report)
    with matplotlib.rc_context(PROJECTOR):
        fig, ax = plt.subplots(figsize=(14, 5.8), layout="constrained")
        width = 0.8 / len(methods)
        ticks, labels = [], []
        for i, name in enumerate(names):
            for j, method in enumerate(methods):
                row = report_row(report, name, method)
                if row is None:
                    continue
                x = i + (j - (len(methods) - 1) / 2) * width
                total = 1.0 / row["speedup"]
                parts = {key: row.get(key, 0.0) for key, *_ in TIME_PARTS[:2]}
                parts["other"] = max(0.0, total - sum(parts.values()))
                bottom = 0.0
                for key, label, colour, hatch in TIME_PARTS:
                    ax.bar(x, parts[key], width * 0.9, bottom=bottom, color=colour, hatch=hatch,
                           edgecolor="black", label=label if (i, j) == (0, 0) else None)  # fmt: skip
                    bottom += parts[key]
                ax.text(x, bottom + 0.03, f"{row['speedup']:.2f}\u00d7", ha="center", fontsize=11)
                ticks.append(x)
                labels.append(method.replace(" ", "\n", 1))
            ax.text(i, -0.2, name, ha="center", va="top", fontsize=15, weight="bold",
                    transform=ax.get_xaxis_transform())  # fmt: skip
        ax.axhline(1.0, color="black", ls="--", lw=2, label="greedy")
        ax.set_xticks(ticks, labels, fontsize=11)
        ax.set_ylim(0, ax.get_ylim()[1] * 1.3)  # room for the legend
        ax.set_ylabel("time per token (\u00d7 greedy's)")
        ax.legend(loc="upper left", ncols=4, fontsize=12)
        tidy(ax)
        plt.close(fig)
    return fig


def boundary_figure(
    k: int, c: float, verify_per_position: float, alphas: dict | None = None
) -> Figure:
    """Lesson 06: predicted speedup against alpha, with and without the verify cost.

    Leviathan's formula (1 - alpha^(k+1)) / ((1 - alpha)(k c + 1)) assumes verifying k + 1
    positions costs one plain step; the second curve divides by k c + 1 + verify_per_position
    * k instead. Where a curve crosses 1 is the break-even alpha. alphas: {scenario: measured
    alpha}, drawn as labelled vertical lines.
    """
    grid = np.linspace(0, 1, 201)
    leviathan = expected_speedup(grid, k, c)  # [201]; these check k and c
    if not (np.isfinite(verify_per_position) and verify_per_position >= 0):
        raise ValueError(f"verify_per_position must be a number >= 0, got {verify_per_position!r}")
    with_verify = speedup_with_verify_cost(grid, k, 1 + verify_per_position * k, c)  # [201]
    with matplotlib.rc_context(PROJECTOR):
        fig, ax = plt.subplots(figsize=(12, 5.6), layout="constrained")
        ax.plot(grid, leviathan, color=OKABE_ITO["blue"], lw=3, label="Leviathan: verify = 1 step")
        # v as lesson 06's slider shows it: 0.125, not 0.12 beside its r = 1.50
        ax.plot(grid, with_verify, color=OKABE_ITO["vermillion"], lw=3, ls="--",
                label=f"verify = 1 + {verify_per_position:g}\u00b7k steps")  # fmt: skip
        ax.axhline(1.0, color="black", ls=":", lw=2, label="greedy")
        ax.fill_between(grid, 0, np.minimum(with_verify, 1.0), where=with_verify < 1,
                        color="#EEEEEE", hatch="//", edgecolor="#BBBBBB", label="loses time")  # fmt: skip
        for i, (name, alpha) in enumerate((alphas or {}).items()):
            if np.isfinite(alpha):
                ax.axvline(alpha, color="#555555", lw=1.5)
                # a name runs toward the middle: off no edge, under no legend
                right = alpha > 0.5
                # on white: a neighbouring scenario's line, close by, would run through it
                ax.text(alpha, 0.98 - 0.07 * (i % 4), f"{name} " if right else f" {name}",
                        transform=ax.get_xaxis_transform(), va="top", fontsize=12,
                        ha="right" if right else "left", zorder=3,
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})  # fmt: skip
        ax.set_xlim(0, 1)
        ax.set_ylim(0, max(2.0, float(leviathan.max()) * 1.05))
        ax.set_xlabel("\u03b1 (each draft accepted with this probability)")
        ax.set_ylabel("predicted speedup")
        ax.set_title(f"k = {k}, draft cost c = {c:.2f} of a plain step", loc="left")
        # beside the axes: inside, it hid the names of the low-alpha scenarios, the ones that lose
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=12)
        tidy(ax)
        plt.close(fig)
    return fig
