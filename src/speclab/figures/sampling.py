"""Figures of speculative sampling (lesson 07): distributions, not single tokens.

`sampling_rule_figure` (p, q, min(1, p/q) and the leftover on a small vocabulary),
`sampling_convergence_figure` (simulated steps per rule against p), and, measured on the
real models, `temperature_acceptance_figure` and `sampling_speed_figure`.
"""

from collections.abc import Sequence

import matplotlib
import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from speclab.figures.style import (
    OKABE_ITO,
    PROJECTOR,
    ROLE_COLOURS,
    drawable,
)

# p is the target's distribution, q the draft's (Leviathan et al.'s letters; see speclab.sampling)
RULE_STYLES = {  # rule name -> (colour, hatch, marker)
    "target p": (OKABE_ITO["blue"], "", "o"),
    "exact rule": (OKABE_ITO["bluish_green"], "", "s"),
    "draw and match (a)": (OKABE_ITO["sky_blue"], "..", "^"),
    "biased resample (b)": (OKABE_ITO["vermillion"], "xx", "X"),
}


def sampling_rule_figure(p_target, p_draft, labels: Sequence[str]) -> Figure:
    """Lesson 07: one step of the rule on a small vocabulary, from p and q alone.

    Left: p (target) and q (draft) side by side, the part both share, min(p, q), outlined:
    its total beta is the chance a draft is kept. Middle: the chance to keep each token
    when it is drafted, min(1, p/q) (tokens the drafter never proposes are marked so).
    Right: the leftover norm(max(0, p - q)) a rejection draws from.
    """
    from speclab.sampling import acceptance_probability, expected_acceptance, leftover_distribution

    p, q = np.asarray(p_target, float), np.asarray(p_draft, float)  # [n_vocab] each
    x = np.arange(p.size)
    keep = np.where(q > 0, acceptance_probability(p, q), 0.0)  # [n_vocab], 0: never drafted
    mass = float(np.maximum(p - q, 0).sum())  # the chance of a rejection, 1 - beta
    leftover = leftover_distribution(p, q) if mass > 1e-12 else np.zeros_like(p)  # [n_vocab]
    beta = expected_acceptance(p, q)
    with matplotlib.rc_context(PROJECTOR):
        fig, (left, middle, right) = plt.subplots(1, 3, figsize=(15, 4.8), layout="constrained")
        left.bar(x - 0.2, p, 0.4, color=RULE_STYLES["target p"][0], edgecolor="black",
                 label="target p")  # fmt: skip
        left.bar(x + 0.2, q, 0.4, color=ROLE_COLOURS["draft"], edgecolor="black", hatch="//",
                 label="draft q")  # fmt: skip
        left.bar(x, np.minimum(p, q), 0.8, facecolor="none", edgecolor="black", lw=2.5,
                 ls="--", label="min(p, q)")  # fmt: skip
        left.set_title(f"kept mass \u03b2 = \u03a3 min(p, q) = {beta:.2f}", loc="left")
        left.set_ylabel("probability")
        left.set_ylim(0, max(p.max(), q.max()) * 1.35)
        left.legend(loc="upper left", ncols=3, fontsize=11, handlelength=1.5)
        middle.bar(x, keep, 0.6, color=ROLE_COLOURS["accepted"], edgecolor="black")
        for i in x:
            text = "never\ndrafted" if q[i] == 0 else f"{keep[i]:.2f}"
            middle.text(i, keep[i] + 0.03, text, ha="center", va="bottom", fontsize=13)
        middle.set_ylim(0, 1.3)
        middle.set_title("keep a drafted token: min(1, p/q)", loc="left")
        right.bar(x, leftover, 0.6, color=ROLE_COLOURS["rejected"], edgecolor="black", hatch="xx")
        right.set_title(f"after a rejection: the leftover\nnorm(max(0, p \u2212 q)), mass {mass:.2f}",
                        loc="left")  # fmt: skip
        if mass <= 1e-12:
            right.text(0.5, 0.6, "p = q: nothing is ever rejected", transform=right.transAxes,
                       ha="center", fontsize=14)  # fmt: skip
        for ax in (left, middle, right):
            ax.set_xticks(x, [drawable(label) for label in labels])
            ax.spines[["top", "right"]].set_visible(False)
            ax.grid(alpha=0.3, axis="y")
        right.set_ylim(0, 1.1)
        plt.close(fig)
    return fig


def sampling_convergence_figure(p_target, samples: dict, labels: Sequence[str]) -> Figure:
    """Lesson 07: many simulated steps per rule against the target distribution.

    samples: rule name -> emitted tokens [n]. Left: how often each token came out, per
    rule, with p as markers. Right: the total variation distance to p as the steps add up
    (log-log); sampling noise alone shrinks like 1/sqrt(n) (the dotted guide), a biased
    rule levels off at its bias.
    """
    p = np.asarray(p_target, float)  # [n_vocab]
    x = np.arange(p.size)
    width = 0.8 / max(1, len(samples))
    with matplotlib.rc_context(PROJECTOR):
        fig, (left, right) = plt.subplots(1, 2, figsize=(14, 4.8), layout="constrained")
        n_max = 1
        for index, (name, tokens) in enumerate(samples.items()):
            colour, hatch, marker = RULE_STYLES.get(name, ("#888888", "", "o"))
            tokens = np.asarray(tokens, dtype=np.int64)  # [n]
            n = tokens.size
            n_max = max(n_max, n)
            share = np.bincount(tokens, minlength=p.size) / max(n, 1)  # [n_vocab]
            offset = (index - (len(samples) - 1) / 2) * width
            left.bar(x + offset, share, width, color=colour, hatch=hatch, edgecolor="black",
                     label=f"{name} ({n:,} steps)")  # fmt: skip
            steps = np.arange(1, n + 1)  # [n]
            running = np.cumsum(tokens[:, None] == x[None, :], axis=0) / steps[:, None]
            distance = 0.5 * np.abs(running - p[None, :]).sum(axis=1)  # [n]
            right.loglog(steps, np.maximum(distance, 1e-4), color=colour, lw=2.5, label=name)
            right.plot(steps[-1], max(distance[-1], 1e-4), marker, color=colour, ms=10,
                       mec="black")  # fmt: skip
        left.hlines(p, x - 0.45, x + 0.45, colors="black", lw=3, label="target p")
        tallest = max([float(p.max())] + [patch.get_height() for patch in left.patches])
        left.set_ylim(0, tallest * 1.35)
        left.set_xticks(x, [drawable(label) for label in labels])
        left.set_ylabel("share of steps")
        left.set_title("which token came out", loc="left")
        left.legend(loc="upper right", fontsize=11)
        guide = np.geomspace(1, n_max, 50)
        right.loglog(guide, 0.5 / np.sqrt(guide), ":", color="black", lw=2,
                     label="noise level ~ 1/\u221an")  # fmt: skip
        right.set_xlabel("steps simulated")
        right.set_ylabel("distance to p (total variation)")
        right.set_title("the exact rule converges to p", loc="left")
        right.legend(loc="lower left", fontsize=12)
        for ax in (left, right):
            ax.spines[["top", "right"]].set_visible(False)
            ax.grid(alpha=0.3)
        plt.close(fig)
    return fig


def _check_values(name: str, values, low: float, high: float) -> None:
    """ValueError unless every value is a number in [low, high]: a chance of 2 or a
    temperature of -1 was drawn as if it could be."""
    numbers = np.asarray(values, dtype=np.float64).ravel()
    if not np.all((numbers >= low) & (numbers <= high)):  # NaN fails too
        span = f">= {low:g}" if high == np.inf else f"in [{low:g}, {high:g}]"
        raise ValueError(f"every value of {name} must be a number {span}, got {values!r}")


def temperature_acceptance_figure(
    temperatures, exact, match, measured: dict | None = None, k: int | None = None
) -> Figure:
    """Lesson 07: the chance a draft is kept, as the temperature grows.

    exact [n_t]: mean sum min(p, q) over the positions of a text (the exact rule);
    match [n_t]: mean sum p * q (rule a). measured: temperature -> Leviathan's alpha (kept
    among the drafts that were checked) in real decoding runs, drawn as points.
    Temperature 0 is greedy: both are then the share of positions where the two models'
    argmax agree.
    """
    _check_values("temperatures", temperatures, 0, np.inf)
    for name, chances in (("exact", exact), ("match", match),
                          ("measured", list((measured or {}).values()))):  # fmt: skip
        _check_values(name, chances, 0, 1)  # chances
    _check_values("measured's temperatures", list(measured or {}), 0, np.inf)
    with matplotlib.rc_context(PROJECTOR):
        fig, ax = plt.subplots(figsize=(10, 5), layout="constrained")
        colour, _, marker = RULE_STYLES["exact rule"]
        ax.plot(temperatures, exact, color=colour, lw=3, marker=marker, ms=9,
                label="exact rule: \u03a3 min(p, q)")  # fmt: skip
        colour, _, marker = RULE_STYLES["draw and match (a)"]
        ax.plot(temperatures, match, color=colour, lw=3, ls="--", marker=marker, ms=9,
                label="draw and match (a): \u03a3 p\u00b7q")  # fmt: skip
        if measured:
            ts = sorted(measured)
            ax.plot(ts, [measured[t] for t in ts], "D", ms=12, color=OKABE_ITO["orange"],
                    mec="black", label="measured in decoding: \u03b1"
                    + (f" (k = {k})" if k else ""))  # fmt: skip
        ax.set_xlabel("temperature (0 = greedy)")
        ax.set_ylabel("chance a draft is kept")
        ax.set_ylim(0, 1.05)
        ax.set_title("acceptance against temperature", loc="left")
        ax.legend(loc="best", fontsize=12)
        ax.spines[["top", "right"]].set_visible(False)
        ax.grid(alpha=0.3)
        plt.close(fig)
    return fig


def sampling_speed_figure(rows: Sequence[dict]) -> Figure:
    """Lesson 07: time per token relative to plain sampling, measured (median, quartiles).

    rows: dicts with "method", "median", "q25", "q75" (paired ratios to plain sampling) and
    optionally "predicted" (the formula with measured costs). Left of 1: faster.
    """
    names = [row["method"] for row in rows]
    y = np.arange(len(rows))
    median = np.array([row["median"] for row in rows])
    low = median - np.array([row["q25"] for row in rows])
    high = np.array([row["q75"] for row in rows]) - median
    with matplotlib.rc_context(PROJECTOR):
        fig, ax = plt.subplots(figsize=(11, 1.8 + 0.9 * len(rows)), layout="constrained")
        colours = [RULE_STYLES.get(name, (OKABE_ITO["blue"], "", "o"))[0] for name in names]
        hatches = [RULE_STYLES.get(name, ("", "", ""))[1] for name in names]
        ax.barh(y, median, 0.6, xerr=[low, high], color=colours, hatch=hatches,
                edgecolor="black", capsize=6)  # fmt: skip
        measured = Patch(facecolor="#BBBBBB", edgecolor="black",  # every bar, whatever its colour
                         label="measured (median, quartiles)")  # fmt: skip
        predicted = [row.get("predicted") for row in rows]
        if any(v is not None for v in predicted):
            shown = [(i, v) for i, v in enumerate(predicted) if v is not None]
            ax.plot([v for _, v in shown], [i for i, _ in shown], "|", ms=34, mew=4,
                    color="black", label="predicted from measured \u03b1 and costs")  # fmt: skip
        ax.axvline(1.0, color="black", ls="--", lw=1.5)
        ax.set_yticks(y, names)
        ax.invert_yaxis()
        ax.set_xlabel("time per token / plain sampling's (below 1 is faster)")
        right_edge = max([1.6, float((median + high).max())] + [v for v in predicted if v])
        ax.set_xlim(0, right_edge * 1.1)
        handles = [measured] + ax.get_legend_handles_labels()[0]
        fig.legend(handles=handles, loc="outside lower center", ncols=2, fontsize=12,
                   markerscale=0.5)  # fmt: skip
        ax.spines[["top", "right"]].set_visible(False)
        ax.grid(alpha=0.3, axis="x")
        plt.close(fig)
    return fig
