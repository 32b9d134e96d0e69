"""Pictures for the lessons, drawn with matplotlib and returned as figures (never shown here).

Lessons 01-03 use: `check_row_figure` (a guess checked against the target, for the quiz
and the ABCDEFG path), `draft_verify_figure` (Figure 1 of lesson 03: draft k, verify k in
one forward, accept m, cross at m + 1, roll back), `forwards_per_case_figure` (Figure 2:
target forwards per case with the greedy baseline drawn per case) and `eq1_figure`
(Leviathan et al. 2023 Eq. 1 and the speedup over alpha, with a Monte-Carlo check).

Conventions: the Okabe-Ito colour-blind-safe palette; colour is never the only cue (ticks,
crosses, hatching and words say the same thing); fonts sized for a classroom projector.
Styles are applied with `rc_context`, so importing or calling this module never changes
the caller's matplotlib settings. Every function closes its figure in pyplot and returns
it: a notebook shows it by evaluating it, `fig.savefig` writes it.
Lesson 05 adds `rounds_figure` (one bar per round of a real run: accepted drafts, the
target's token hatched by role, rejected drafts dashed; tokens against target forwards).
Lesson 04 adds `forward_cost_figure` (one forward against n_new, measured, in ms and as a
ratio), `cache_figure` (next token with and without the KV cache), `breakdown_figure`
(where one forward's time goes) and `roofline_figure` (a labelled model of a GPU forward).
Lesson 07 adds `sampling_rule_figure` (p, q, min(1, p/q) and the leftover on a small
vocabulary), `sampling_convergence_figure` (simulated steps per rule against p),
`temperature_acceptance_figure` and `sampling_speed_figure` (measured on the real models).
Lesson 06 draws a `speclab bench decode` report: `predicted_vs_measured_figure`,
`position_acceptance_figure`, `k_speedup_figure`, `time_per_token_figure` (where the time
goes and why speculation loses), `acceptance_measures_figure` (the three acceptance
figures side by side), `adaptive_trace_figure` and `boundary_figure` (speedup over alpha
with and without the verify cost).
Left out: decoding runs (lessons 05-07).
"""

from collections.abc import Sequence

import matplotlib
import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle

from speclab.acceptance import accept
from speclab.counting import count_round, expected_speedup, expected_tokens_per_round

# Okabe & Ito (2008), "Color Universal Design": distinguishable with every common colour deficiency.
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}
ROLE_COLOURS = {
    "accepted": OKABE_ITO["bluish_green"],  # with a tick
    "rejected": OKABE_ITO["vermillion"],  # with a cross
    "dropped": "#D9D9D9",  # with hatching and the word "dropped"
    "target": OKABE_ITO["blue"],  # the target's own symbol, labelled "target"
    "draft": OKABE_ITO["sky_blue"],
    "prefix": "#F2F2F2",
    "greedy": "#8C8C8C",  # the grey baseline, hatched
    "speculative": OKABE_ITO["blue"],
}
TICK, CROSS = "\u2713", "\u2717"  # check mark, ballot x (both in DejaVu Sans)
PROJECTOR = {
    "font.size": 16,
    "axes.titlesize": 18,
    "axes.labelsize": 16,
    "xtick.labelsize": 15,
    "ytick.labelsize": 15,
    "legend.fontsize": 14,
    "figure.dpi": 100,
    "savefig.bbox": "tight",
    "hatch.linewidth": 1.5,
}


def _cell(ax, x: float, y: float, text: str, face: str, hatch: str | None = None, **text_kw):
    """One unit box centred at (x, y) with its symbol; white text on dark faces."""
    ax.add_patch(
        Rectangle((x - 0.45, y - 0.4), 0.9, 0.8, facecolor=face, edgecolor="black", hatch=hatch)
    )
    dark = face in (ROLE_COLOURS["accepted"], ROLE_COLOURS["rejected"], ROLE_COLOURS["target"])
    colour = "white" if dark else "black"
    backing = (
        {"boxstyle": "round,pad=0.1", "facecolor": face, "edgecolor": "none"} if hatch else None
    )
    ax.text(
        x,
        y,
        text,
        ha="center",
        va="center",
        color=colour,
        fontweight="bold",
        bbox=backing,
        **text_kw,
    )


def _dropped_label(ax, first_x: float, last_x: float, y: float) -> None:
    """One word under a run of dropped cells (hatching says it too)."""
    ax.text((first_x + last_x) / 2, y, "dropped", ha="center", va="center", fontsize=14)


def _blank_axes(ax, left: float, width: float, height: float) -> None:
    """An axes in cell units, from x = left (room for row labels) to width."""
    ax.set_xlim(left, width)
    ax.set_ylim(-0.5, height)
    ax.set_aspect("equal")
    ax.axis("off")


def check_row_figure(
    draft: Sequence[str],
    target: Sequence[str],
    prefix: Sequence[str] = "",
    row_labels: Sequence[str] = ("target would choose", "guess", "new output"),
    title: str | None = None,
    added_label: str = "from the target",
) -> Figure:
    """A guess checked against the target: ticks, the first cross, the dropped rest.

    draft:  [k] symbols guessed after `prefix` (letters, or short quiz answers)
    target: [k] or [k + 1] symbols the target chooses at those positions
    The bottom row is the new output: prefix + accepted + the target's symbol at the
    first mismatch (or its next symbol when everything was accepted and one exists).
    """
    draft, target, prefix = list(draft), list(target), list(prefix)
    m = accept(draft, target)
    added = target[m : m + 1]
    n_prefix, k = len(prefix), len(draft)
    width = n_prefix + max(k, len(target)) + 1
    cell_font = 20 if max(map(len, draft + target + prefix), default=1) <= 2 else 15
    label_room = 0.32 * max(map(len, row_labels)) + 0.3
    with matplotlib.rc_context(PROJECTOR):
        fig, ax = plt.subplots(figsize=(0.75 * (width + label_room + 2.5), 4.2))
        _blank_axes(ax, -label_room, width + 2.5, 3.1)
        fig.subplots_adjust(left=0.01, right=0.99, bottom=0.02, top=0.9)
        label_x = -0.7
        for y, label in zip((2.6, 1.3, 0.0), row_labels, strict=True):
            ax.text(label_x, y, label, ha="right", va="center")
        for i, symbol in enumerate(target):
            _cell(ax, n_prefix + i, 2.6, symbol, "white", fontsize=cell_font)
        for i, symbol in enumerate(draft):
            x = n_prefix + i
            if i < m:
                role, mark = "accepted", TICK
            elif i == m:
                role, mark = "rejected", CROSS
            else:
                role, mark = "dropped", ""
            hatch = "//" if role == "dropped" else None
            _cell(ax, x, 1.3, symbol, ROLE_COLOURS[role], hatch=hatch, fontsize=cell_font)
            ax.text(x, 0.65, mark, ha="center", va="center", fontsize=22)
        if m + 1 < k:
            _dropped_label(ax, n_prefix + m + 1, n_prefix + k - 1, 0.65)
        output = [(s, "prefix") for s in prefix] + [(s, "accepted") for s in draft[:m]]
        output += [(s, "target") for s in added]
        for x, (symbol, role) in enumerate(output):
            _cell(ax, x, 0.0, symbol, ROLE_COLOURS[role], fontsize=cell_font)
        note = f"\u2190 {added_label}" if added else "end: nothing added"
        ax.text(len(output) - 0.3, -0.05, note, ha="left", va="center")
        for i in range(n_prefix):
            _cell(ax, i, 1.3, prefix[i], ROLE_COLOURS["prefix"], fontsize=cell_font)
        accepted_text = f"{m} accepted, output grows by {len(output) - n_prefix}"
        ax.set_title(title or accepted_text, loc="left")
        plt.close(fig)
    return fig


def draft_verify_figure(k: int = 4, accepted: int = 2) -> Figure:
    """Lesson 03, Figure 1: draft k, verify all k in one forward, accept m, roll back.

    Ticks on drafts 1..m, a cross on m + 1, the rest hatched and dropped; the target's
    own token t(m+1) is appended and an arrow shows where the next round starts.
    """
    round_count = count_round(accepted, k)
    m = round_count.accepted
    with matplotlib.rc_context(PROJECTOR):
        fig, ax = plt.subplots(figsize=(13, 5.8))
        _blank_axes(ax, -3.6, k + 8.5, 5.0)
        fig.subplots_adjust(left=0.01, right=0.99, bottom=0.01, top=0.93)
        rows = {"draft": 4.2, "verify": 2.4, "accept": 0.6}
        ax.text(-0.7, rows["draft"], f"1. draft {k}\n(drafter, cheap)", ha="right", va="center")
        ax.text(-0.7, rows["verify"], f"2. verify {k}\n(target)", ha="right", va="center")
        ax.text(-0.7, rows["accept"], f"3. accept m = {m}", ha="right", va="center")
        for i in range(k):
            _cell(ax, i, rows["draft"], f"d{i + 1}", ROLE_COLOURS["draft"], fontsize=18)
        for i in range(k + 1):
            _cell(ax, i, rows["verify"], f"t{i + 1}", "white", fontsize=18)
        ax.annotate(
            "",
            xy=(k + 0.5, rows["verify"] + 0.55),
            xytext=(-0.5, rows["verify"] + 0.55),
            arrowprops={"arrowstyle": "-", "lw": 2},
        )
        ax.text(
            k + 0.7,
            rows["verify"],
            f"ONE forward checks all {k}\n(t{k + 1}: the bonus if all pass)",
            va="center",
        )
        for i in range(k):
            if i < m:
                face, mark, hatch = ROLE_COLOURS["accepted"], TICK, None
            elif i == m:
                face, mark, hatch = ROLE_COLOURS["rejected"], CROSS, None
            else:
                face, mark, hatch = ROLE_COLOURS["dropped"], "", "//"
            _cell(ax, i, rows["accept"], f"d{i + 1}", face, hatch=hatch, fontsize=18)
            ax.text(
                i,
                rows["accept"] - 0.68,
                mark,
                ha="center",
                va="center",
                fontsize=22,
            )
        if m + 1 < k:
            _dropped_label(ax, m + 1, k - 1, rows["accept"] - 0.68)
        new_x = k + 1.3
        ax.text(
            new_x - 0.5, rows["accept"] + 0.75, "output += ", ha="left", va="center", fontsize=15
        )
        for j in range(m):
            _cell(ax, new_x + j, rows["accept"], f"d{j + 1}", ROLE_COLOURS["accepted"], fontsize=18)
        _cell(ax, new_x + m, rows["accept"], f"t{m + 1}", ROLE_COLOURS["target"], fontsize=18)
        ax.text(
            new_x + m + 0.6,
            rows["accept"],
            f"{round_count.tokens} tokens\nfor 1 forward",
            va="center",
            fontsize=15,
        )
        if m < k:
            rollback = FancyArrowPatch(
                (k - 1 + 0.3, rows["accept"] - 1.05),
                (m - 0.3, rows["accept"] - 1.05),
                connectionstyle="arc3,rad=-0.5",
                arrowstyle="-|>",
                mutation_scale=25,
                lw=2.5,
                color=OKABE_ITO["black"],
            )
            ax.add_patch(rollback)
            ax.text(
                (m + k - 1) / 2,
                rows["accept"] - 1.85,
                f"roll back: next round continues after t{m + 1}",
                ha="center",
                va="center",
                fontsize=15,
            )
        for top, bottom in (("draft", "verify"), ("verify", "accept")):
            ax.annotate(
                "",
                xy=(k / 2 - 0.5, rows[bottom] + 0.45),
                xytext=(k / 2 - 0.5, rows[top] - 0.45),
                arrowprops={"arrowstyle": "-|>", "lw": 2, "mutation_scale": 20},
            )
        ax.set_ylim(-2.2, 5.0)
        ax.set_title(f"One round: draft {k}, verify {k}, accept m = {m}", loc="left")
        plt.close(fig)
    return fig


def forwards_per_case_figure(cases: Sequence[int] = (0, 2, 4), k: int = 4) -> Figure:
    """Lesson 03, Figure 2: target forwards per case, with its own greedy bar beside it.

    For m accepted drafts a speculative round costs 1 target forward and yields m + 1
    tokens; greedy needs m + 1 forwards for the same tokens. Bars are split into cells,
    one cell per forward, so the counts can be read without colour.
    """
    rounds = [count_round(m, k) for m in cases]
    with matplotlib.rc_context(PROJECTOR):
        fig, ax = plt.subplots(figsize=(11, 2.2 + 1.6 * len(rounds)), layout="constrained")
        ticks, labels = [], []
        for row, counted in enumerate(rounds):
            y = -row * 1.6
            bars = (
                ("speculative", counted.target_forwards, y + 0.35, None),
                ("greedy", counted.greedy_forwards, y - 0.35, "//"),
            )
            for role, forwards, bar_y, hatch in bars:
                ax.barh(
                    bar_y,
                    [1] * forwards,
                    left=np.arange(forwards),
                    height=0.6,
                    color=ROLE_COLOURS[role],
                    edgecolor="black",
                    hatch=hatch,
                )
                ax.text(forwards + 0.1, bar_y, f"{role}: {forwards}", va="center")
                ticks.append(bar_y)
            tokens = f"{counted.tokens} token" + ("" if counted.tokens == 1 else "s")
            labels += [f"accept {counted.accepted}:\n{tokens}", ""]
            ax.text(
                6.6,
                y,
                f"saves {counted.saved}" if counted.saved else "break even",
                va="center",
                fontweight="bold",
            )
        ax.set_yticks(ticks[::2], labels[::2])
        ax.set_xlim(0, 8.2)
        ax.set_xticks(range(0, 7))
        ax.spines[["top", "right"]].set_visible(False)
        ax.set_title("Same tokens, fewer target forwards", loc="left")
        greedy_counts = ", ".join(str(r.greedy_forwards) for r in rounds)
        ax.set_xlabel(
            f"target forwards\n\nGreedy is drawn per case ({greedy_counts} forwards). "
            "A single 4-cell greedy bar,\nas one source draws it, matches none of the cases.",
            fontsize=14,
            loc="left",
        )
        plt.close(fig)
    return fig


def eq1_figure(
    alpha: float,
    k: int,
    c: float,
    simulated_mean: float | None = None,
    simulated_standard_error: float | None = None,
) -> Figure:
    """Eq. 1 (expected tokens per round) and the speedup over alpha, at one (k, c).

    The chosen alpha is marked on both curves; a Monte-Carlo mean (with +-2 standard
    errors) can be drawn beside the formula on the left. The right panel hatches the
    region where speculation is slower than greedy (speedup < 1).
    """
    alphas = np.linspace(0.0, 1.0, 101)  # [101]
    tokens = expected_tokens_per_round(alphas, k)  # [101]
    speedups = expected_speedup(alphas, k, c)  # [101]
    with matplotlib.rc_context(PROJECTOR):
        fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5), layout="constrained")
        left.plot(alphas, tokens, color=OKABE_ITO["blue"], lw=3, label="Eq. 1")
        left.plot(
            [alpha],
            [expected_tokens_per_round(alpha, k)],
            "o",
            ms=12,
            color=OKABE_ITO["blue"],
            label="formula at \u03b1",
        )
        if simulated_mean is not None:
            error = 2 * (simulated_standard_error or 0.0)
            left.errorbar(
                [alpha + 0.02],
                [simulated_mean],
                yerr=[error],
                fmt="X",
                ms=12,
                color=OKABE_ITO["orange"],
                mec="black",
                capsize=6,
                label="simulated (\u00b12 s.e.)",
            )
        left.set_xlabel("acceptance rate \u03b1")
        left.set_ylabel("tokens per round")
        left.set_ylim(0.8, k + 1.3)
        left.set_title(f"Eq. 1 with k = {k}: 1 to {k + 1} tokens", loc="left")
        left.legend(loc="upper left")
        right.fill_between(
            alphas,
            0,
            1,
            facecolor="none",
            edgecolor="#BBBBBB",
            hatch="//",
            lw=0,
            label="slower than greedy",
        )
        right.axhline(1, color="black", ls="--", lw=1.5)
        right.plot(alphas, speedups, color=OKABE_ITO["vermillion"], lw=3, label="speedup")
        right.plot(
            [alpha],
            [expected_speedup(alpha, k, c)],
            "s",
            ms=12,
            color=OKABE_ITO["vermillion"],
            mec="black",
            label="at \u03b1",
        )
        right.set_xlabel("acceptance rate \u03b1")
        right.set_ylabel("expected speedup")
        right.set_ylim(0, max(2.0, float(speedups.max()) * 1.15))
        right.set_title(f"predicted speedup, c = {c:.2f}", loc="left")
        right.legend(loc="upper left")
        for ax in (left, right):
            ax.set_xlim(0, 1.05)
            ax.grid(alpha=0.3)
            ax.spines[["top", "right"]].set_visible(False)
        plt.close(fig)
    return fig


# --- lesson 04: what one forward costs (measured by speclab.bench) -------------------------

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

    curves: {label: speclab.bench.Timings over n_new (must include n_new = 1)}.
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
        left.legend(loc="best")  # many curves: let matplotlib find the emptiest corner
        right.legend(loc="best")
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
        ax.set_xlabel("sequence length n_seq (positions so far)")
        ax.set_ylabel("milliseconds for the next token")
        ax.set_title("one cached step vs recomputing every position", loc="left")
        ax.grid(alpha=0.3, which="both")
        ax.spines[["top", "right"]].set_visible(False)
        ax.legend(loc="upper left")
        plt.close(fig)
    return fig


def breakdown_figure(breakdowns: Sequence) -> Figure:
    """Lesson 04: where one forward's time goes, per part, for each n_new measured.

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
    """Lesson 04: the roofline MODEL of one GPU forward against n_new (assumed numbers).

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


# --- lesson 05: the rounds of a real speculative run ---------------------------------------
# one colour and one hatch per token role (speclab.render names the roles)
ROUND_ROLE_STYLES = {
    "accepted": (OKABE_ITO["bluish_green"], ""),
    "correction": (OKABE_ITO["vermillion"], "xx"),
    "bonus": (OKABE_ITO["blue"], ".."),
    "plain": ("#BBBBBB", "//"),
}


def rounds_figure(result, title: str | None = None) -> Figure:
    """Lesson 05: what every round of a speculative run drafted, kept and appended.

    Left: one bar per round (= one target forward), accepted drafts at the bottom, the
    target's own token on top (hatched by its role), rejected drafts as dashed outlines.
    Right: tokens produced against target forwards, beside greedy's one token per forward.
    """
    from speclab.render import round_role

    rounds = result.rounds
    x = np.arange(1, len(rounds) + 1)  # [n_rounds]
    accepted = np.array([r.accepted for r in rounds])  # [n_rounds]
    rejected = np.array([len(r.drafted) - r.accepted for r in rounds])  # [n_rounds]
    roles = [round_role(r.drafted, r.accepted) for r in rounds]
    with matplotlib.rc_context(PROJECTOR):
        fig, (left, right) = plt.subplots(
            1, 2, figsize=(14, 5.2), width_ratios=(1.6, 1), layout="constrained"
        )
        left.bar(x, accepted, width=0.8, color=ROUND_ROLE_STYLES["accepted"][0],
                 edgecolor="black", label="accepted drafts")  # fmt: skip
        for role, (colour, hatch) in ROUND_ROLE_STYLES.items():
            if role == "accepted":
                continue
            mine = np.array([r == role for r in roles], dtype=bool)
            if mine.any():
                left.bar(x[mine], 1, bottom=accepted[mine], width=0.8, color=colour,
                         hatch=hatch, edgecolor="black", label=f"target's token: {role}")  # fmt: skip
        if rejected.any():
            left.bar(x, rejected, bottom=accepted + 1, width=0.8, facecolor="none",
                     edgecolor="black", linestyle="--", label="rejected drafts (dropped)")  # fmt: skip
        left.set_xlabel("round (one target forward each)")
        left.set_ylabel("tokens")
        left.set_ylim(0, max(2, int((accepted + 1 + rejected).max(initial=1))) + 1.5)
        left.set_xlim(0.3, len(rounds) + 0.7)
        left.legend(loc="upper left", ncols=2, fontsize=12)
        left.set_title(title or f"{len(rounds)} rounds, {len(result.tokens)} tokens", loc="left")
        produced = np.minimum(np.cumsum(accepted + 1), len(result.tokens))  # [n_rounds]
        right.plot(np.r_[0, x], np.r_[0, produced], color=OKABE_ITO["blue"], lw=3,
                   marker="o", ms=5, label="speculative")  # fmt: skip
        greedy = np.arange(0, len(result.tokens) + 1)
        right.plot(greedy, greedy, color=ROLE_COLOURS["greedy"], lw=2.5, ls="--",
                   label="greedy: 1 token per forward")  # fmt: skip
        saved = len(result.tokens) - result.target_forwards
        right.annotate(
            f"same {len(result.tokens)} tokens:\n{saved} forwards saved",
            xy=(result.target_forwards, len(result.tokens)),
            xytext=(0.35, 0.12), textcoords="axes fraction",
            arrowprops={"arrowstyle": "-|>", "lw": 1.5},
        )  # fmt: skip
        right.set_xlabel("target forwards")
        right.set_ylabel("tokens produced")
        right.set_title(f"{result.tokens_per_target_forward:.2f} tokens per forward", loc="left")
        right.legend(loc="upper left")
        for ax in (left, right):
            ax.spines[["top", "right"]].set_visible(False)
            ax.grid(alpha=0.3, axis="y")
        plt.close(fig)
    return fig


# --- lesson 07: speculative sampling -------------------------------------------------------
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
            ax.set_xticks(x, labels)
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
        left.set_xticks(x, labels)
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
                edgecolor="black", capsize=6, label="measured (median, quartiles)")  # fmt: skip
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
        fig.legend(loc="outside lower center", ncols=2, fontsize=12, markerscale=0.5)
        ax.spines[["top", "right"]].set_visible(False)
        ax.grid(alpha=0.3, axis="x")
        plt.close(fig)
    return fig


# --- lesson 06: the benefit boundary (a `speclab bench decode` report) ---------------------
# Read from the report's dicts, so a quick run in the notebook and a saved full run draw
# alike. Scenarios get one marker each; drafters one colour and one line style each.
SCENARIO_MARKERS = ("o", "s", "^", "D", "v", "X")
DRAFTER_STYLES = {
    "lookup": {"color": OKABE_ITO["blue"], "linestyle": "-", "hatch": ""},
    "model": {"color": OKABE_ITO["vermillion"], "linestyle": "--", "hatch": "//"},
}


def _scenario_names(report: dict) -> list[str]:
    return [s["name"] for s in report["prompts"]["scenarios"]]


def _rows(report: dict, scenario: str, drafter: str | None = None) -> list[dict]:
    return [
        r for r in report["results"]
        if r["scenario"] == scenario and (drafter is None or r["drafter"] == drafter)
    ]  # fmt: skip


def _row(report: dict, scenario: str, method: str) -> dict | None:
    return next((r for r in _rows(report, scenario) if r["method"] == method), None)


def _tidy(ax) -> None:
    ax.spines[["top", "right"]].set_visible(False)
    ax.grid(alpha=0.3)


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
            for marker, scenario in zip(SCENARIO_MARKERS, _scenario_names(report), strict=False):
                for drafter, style in DRAFTER_STYLES.items():
                    rows = [r for r in _rows(report, scenario, drafter) if np.isfinite(r[key])]
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
            _tidy(ax)
        axes[0].set_ylabel("measured speedup (median)")
        handles = [
            matplotlib.lines.Line2D([], [], ls="", marker=m, ms=11, color="#BBBBBB",
                                    markeredgecolor="black", label=name)
            for m, name in zip(SCENARIO_MARKERS, _scenario_names(report), strict=False)
        ] + [
            matplotlib.lines.Line2D([], [], ls="", marker="o", ms=11, color=s["color"],
                                    label=f"{d} drafter")
            for d, s in DRAFTER_STYLES.items()
        ]  # fmt: skip
        axes[1].legend(handles=handles, loc="upper left", fontsize=12)
        axes[0].legend(loc="upper left", fontsize=12)
        plt.close(fig)
    return fig


def position_acceptance_figure(report: dict, method: str = "lookup k=8") -> Figure:
    """Lesson 06: acceptance at each draft position, one panel per scenario.

    Bar i: of the rounds whose i-th draft was reached (drafted, and every earlier draft
    accepted), the share in which it was accepted too; under Leviathan's model every bar
    has the same height alpha. The number of rounds that reached the position is written
    above each bar.
    """
    names = _scenario_names(report)
    with matplotlib.rc_context(PROJECTOR):
        fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 4.8),
                                 layout="constrained", sharey=True, squeeze=False)  # fmt: skip
        for ax, name in zip(axes[0], names, strict=True):
            row = _row(report, name, method)
            if row is None:
                ax.set_axis_off()
                continue
            reached = np.array(row["position_reached"], dtype=np.float64)  # [k_max]
            kept = np.array(row["position_accepted"], dtype=np.float64)  # [k_max]
            positions = np.arange(1, reached.size + 1)
            shares = np.divide(kept, reached, out=np.zeros_like(kept), where=reached > 0)
            style = DRAFTER_STYLES.get(row["drafter"], DRAFTER_STYLES["lookup"])
            ax.bar(positions, shares, color=style["color"], hatch=style["hatch"],
                   edgecolor="black")  # fmt: skip
            for x, share, count in zip(positions, shares, reached, strict=True):
                ax.text(x, share + 0.02, f"{count:.0f}", ha="center", fontsize=11)
            alpha = row["alpha_leviathan"]
            if np.isfinite(alpha):
                ax.axhline(alpha, color="black", ls="--", lw=1.5, label=f"\u03b1 = {alpha:.2f}")
                ax.legend(loc="lower left", fontsize=12)
            ax.set_title(name, loc="left")
            ax.set_xlabel("draft position")
            ax.set_xticks(positions)
            ax.set_ylim(0, 1.15)
            _tidy(ax)
        axes[0][0].set_ylabel(f"accepted when reached\n({method})")
        plt.close(fig)
    return fig


def k_speedup_figure(report: dict) -> Figure:
    """Lesson 06: measured speedup against k, per scenario, for both drafters.

    Lines: fixed k (median, interquartile bars); a star at the right edge: the adaptive
    policy with k as its most. The dotted line at 1 is plain greedy decoding.
    """
    names = _scenario_names(report)
    with matplotlib.rc_context(PROJECTOR):
        fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 5.0),
                                 layout="constrained", sharey=True, squeeze=False)  # fmt: skip
        top = 1.5
        for ax, name in zip(axes[0], names, strict=True):
            for drafter, style in DRAFTER_STYLES.items():
                rows = [r for r in _rows(report, name, drafter) if not r["adaptive"]]
                if not rows:
                    continue
                k = np.array([r["k"] for r in rows])
                mid = np.array([r["speedup"] for r in rows])
                low = mid - np.array([r["speedup_q25"] for r in rows])
                high = np.array([r["speedup_q75"] for r in rows]) - mid
                ax.errorbar(k, mid, yerr=[low, high], color=style["color"], ls=style["linestyle"],
                            marker="o", ms=8, lw=2.5, capsize=4, label=drafter)  # fmt: skip
                top = max(top, float((mid + high).max()))
                adaptive = next((r for r in _rows(report, name, drafter) if r["adaptive"]), None)
                if adaptive is not None:
                    ax.plot(k.max() + 1.2, adaptive["speedup"], marker="*", ms=20,
                            color=style["color"], markeredgecolor="black",
                            label=f"{drafter} adaptive")  # fmt: skip
                    top = max(top, adaptive["speedup"])
            ax.axhline(1.0, color="#8C8C8C", ls=":", lw=2)
            ax.set_xscale("log", base=2)
            ks = sorted({r["k"] for r in _rows(report, name) if r["drafter"] != "none"})
            ax.set_xticks(ks, [str(k) for k in ks])
            ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
            ax.set_xlabel("k (drafts per round)")
            ax.set_title(name, loc="left")
            _tidy(ax)
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
    names = _scenario_names(report)
    with matplotlib.rc_context(PROJECTOR):
        fig, ax = plt.subplots(figsize=(14, 5.8), layout="constrained")
        width = 0.8 / len(methods)
        ticks, labels = [], []
        for i, name in enumerate(names):
            for j, method in enumerate(methods):
                row = _row(report, name, method)
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
        _tidy(ax)
        plt.close(fig)
    return fig


def acceptance_measures_figure(report: dict, method: str = "lookup k=8") -> Figure:
    """Lesson 06: the three acceptance figures of one run side by side, per scenario.

    Left: Leviathan's alpha and accepted / drafted (both per draft, 0..1). Right: the mean
    accepted length (tokens per round), beside Eq. 1's prediction from alpha and k:
    (1 - alpha^(k+1)) / (1 - alpha). They agree when every round drafts k tokens.
    """
    names = _scenario_names(report)
    rows = [_row(report, name, method) for name in names]
    x = np.arange(len(names))
    with matplotlib.rc_context(PROJECTOR):
        fig, (left, right) = plt.subplots(1, 2, figsize=(14, 5.4), layout="constrained")
        alpha = np.array([r["alpha_leviathan"] if r else np.nan for r in rows])
        ratio = np.array([r["accepted_over_drafted"] if r else np.nan for r in rows])
        left.bar(x - 0.2, alpha, 0.4, color=OKABE_ITO["blue"], edgecolor="black",
                 label="Leviathan \u03b1")  # fmt: skip
        left.bar(x + 0.2, ratio, 0.4, color=OKABE_ITO["orange"], hatch="//", edgecolor="black",
                 label="accepted / drafted")  # fmt: skip
        left.set_ylim(0, 1.15)
        left.set_ylabel("per draft")
        mean_length = np.array([r["mean_accepted_length"] if r else np.nan for r in rows])
        k = rows[0]["k"] if rows and rows[0] else 1
        eq1 = np.array(
            [expected_tokens_per_round(a, k) if np.isfinite(a) else np.nan for a in alpha]
        )
        right.bar(x - 0.2, mean_length, 0.4, color=OKABE_ITO["bluish_green"], edgecolor="black",
                  label="mean accepted length (measured)")  # fmt: skip
        right.bar(x + 0.2, eq1, 0.4, color="white", hatch="..", edgecolor="black",
                  label=f"Eq. 1 from \u03b1, k = {k}")  # fmt: skip
        right.set_ylabel("tokens per round")
        right.set_ylim(0, float(np.nanmax(np.r_[mean_length, eq1, 1.0])) * 1.35)  # legend room
        for ax in (left, right):
            ax.set_xticks(x, names)
            ax.legend(loc="upper right", fontsize=12)
            _tidy(ax)
        left.set_title(f"{method}: two rates", loc="left")
        right.set_title("tokens per round", loc="left")
        plt.close(fig)
    return fig


ADAPTIVE_MODE_STYLES = {  # mode -> (colour, hatch)
    "warm-up": ("#BBBBBB", ".."),
    "time plain step": ("#8C8C8C", "xx"),
    "draft": (OKABE_ITO["blue"], ""),
    "probe": (OKABE_ITO["orange"], "//"),
    "off": ("#EEEEEE", ""),
}


def adaptive_trace_figure(trace: Sequence[dict], title: str = "") -> Figure:
    """Lesson 06: what the adaptive policy asked for in each round of one run.

    trace: dicts with "mode", "k", "drafted" and "accepted" (speclab.adaptive.Decision).
    Bar height: the k asked for (outlined), filled up to the drafts accepted; "off" rounds
    are plain steps (a short grey bar), probes are hatched.
    """
    with matplotlib.rc_context(PROJECTOR):
        fig, ax = plt.subplots(figsize=(14, 4.4), layout="constrained")
        x = np.arange(1, len(trace) + 1)
        for mode, (colour, hatch) in ADAPTIVE_MODE_STYLES.items():
            mine = [i for i, d in enumerate(trace) if d["mode"] == mode]
            if not mine:
                continue
            asked = np.array([max(trace[i]["k"], 0.15) for i in mine])
            ax.bar(x[mine], asked, 0.8, facecolor="none", edgecolor="black", lw=1)
            kept = np.array([max(trace[i]["accepted"], 0) for i in mine], dtype=np.float64)
            kept = np.where(asked < 0.5, 0.15, kept)  # plain steps: a visible sliver
            ax.bar(x[mine], kept, 0.8, color=colour, hatch=hatch, edgecolor="black",
                   label=f"{mode} ({len(mine)})")  # fmt: skip
        ax.set_xlabel("round")
        ax.set_ylabel("k asked (outline), accepted (filled)")
        ax.legend(loc="upper right", ncols=3, fontsize=12)
        if title:
            ax.set_title(title, loc="left")
        _tidy(ax)
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
    tokens = expected_tokens_per_round(grid, k)  # [201]
    leviathan = tokens / (k * c + 1)
    with_verify = tokens / (k * c + 1 + verify_per_position * k)
    with matplotlib.rc_context(PROJECTOR):
        fig, ax = plt.subplots(figsize=(12, 5.6), layout="constrained")
        ax.plot(grid, leviathan, color=OKABE_ITO["blue"], lw=3, label="Leviathan: verify = 1 step")
        ax.plot(grid, with_verify, color=OKABE_ITO["vermillion"], lw=3, ls="--",
                label=f"verify = 1 + {verify_per_position:.2f}\u00b7k steps")  # fmt: skip
        ax.axhline(1.0, color="black", ls=":", lw=2, label="greedy")
        ax.fill_between(grid, 0, np.minimum(with_verify, 1.0), where=with_verify < 1,
                        color="#EEEEEE", hatch="//", edgecolor="#BBBBBB", label="loses time")  # fmt: skip
        for i, (name, alpha) in enumerate((alphas or {}).items()):
            if np.isfinite(alpha):
                ax.axvline(alpha, color="#555555", lw=1.5)
                ax.text(alpha, 0.98 - 0.07 * (i % 4), f" {name}", transform=ax.get_xaxis_transform(),
                        va="top", fontsize=12)  # fmt: skip
        ax.set_xlim(0, 1)
        ax.set_ylim(0, max(2.0, float(leviathan.max()) * 1.05))
        ax.set_xlabel("\u03b1 (each draft accepted with this probability)")
        ax.set_ylabel("predicted speedup")
        ax.set_title(f"k = {k}, draft cost c = {c:.2f} of a plain step", loc="left")
        ax.legend(loc="upper left", fontsize=12)
        _tidy(ax)
        plt.close(fig)
    return fig
