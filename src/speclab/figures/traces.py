"""Figures of real decoding runs: what was accepted, where, and how k moved (lessons 05, 06).

`rounds_figure` (lesson 05: one bar per round of a real run: accepted drafts, the target's
token hatched by role, rejected drafts dashed; tokens against target forwards). From a
`speclab bench decode` report (lesson 06): `position_acceptance_figure`,
`acceptance_measures_figure` (the three acceptance figures of the literature side by side)
and `adaptive_trace_figure` (the adaptive policy's k round by round).
"""

from collections.abc import Sequence

import matplotlib
import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from speclab.counting import expected_tokens_per_round
from speclab.figures.style import (
    DRAFTER_STYLES,
    OKABE_ITO,
    PROJECTOR,
    ROLE_COLOURS,
    report_row,
    scenario_names,
    tidy,
)
from speclab.render import counted

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
    from speclab.render import checked_result, round_role

    checked_result(result)
    rounds = result.rounds
    x = np.arange(1, len(rounds) + 1)  # [n_rounds]
    accepted = np.array([r.accepted for r in rounds])  # [n_rounds]
    rejected = np.array([len(r.drafted) - r.accepted for r in rounds])  # [n_rounds]
    roles = [round_role(r.drafted, r.accepted) for r in rounds]
    with matplotlib.rc_context(PROJECTOR):
        fig, (left, right) = plt.subplots(
            1, 2, figsize=(14, 6.2), width_ratios=(1.6, 1), layout="constrained"
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
        # legends below the axes: inside, they covered the tallest bars and the curve's end
        left.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncols=2, fontsize=12)
        left.set_title(
            title or f"{counted(len(rounds), 'round')}, {counted(len(result.tokens), 'token')}",
            loc="left",
        )
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
        right.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=12)
        for ax in (left, right):
            ax.spines[["top", "right"]].set_visible(False)
            ax.grid(alpha=0.3, axis="y")
        plt.close(fig)
    return fig


def position_acceptance_figure(report: dict, method: str = "lookup k=8") -> Figure:
    """Lesson 06: acceptance at each draft position, one panel per scenario.

    Bar i: of the rounds whose i-th draft was reached (drafted, and every earlier draft
    accepted), the share in which it was accepted too; under Leviathan's model every bar
    has the same height alpha. The number of rounds that reached the position is written
    above each bar.
    """
    names = scenario_names(report)
    with matplotlib.rc_context(PROJECTOR):
        fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 4.8),
                                 layout="constrained", sharey=True, squeeze=False)  # fmt: skip
        for ax, name in zip(axes[0], names, strict=True):
            row = report_row(report, name, method)
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
            alpha = row["alpha_leviathan"]
            if np.isfinite(alpha):
                ax.axhline(alpha, color="black", ls="--", lw=1.5, label="Leviathan \u03b1")
            for x, share, count in zip(positions, shares, reached, strict=True):
                ax.text(x, share + 0.02, f"{count:.0f}", ha="center", fontsize=11, zorder=3,
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})  # fmt: skip
            ax.set_title(name + (f" (\u03b1 = {alpha:.2f})" if np.isfinite(alpha) else ""),
                         loc="left")  # fmt: skip
            ax.set_xticks(positions)
            ax.set_ylim(0, 1.15)
            tidy(ax)
        axes[0][0].set_ylabel(f"accepted when reached\n({method})")
        fig.supxlabel("draft position (the number above a bar: the rounds that reached it)")
        lines = [line for ax in axes[0] for line in ax.get_lines()][:1]  # one key for all panels
        if lines:
            fig.legend(handles=lines, loc="outside upper right", fontsize=12)
        plt.close(fig)
    return fig


def acceptance_measures_figure(report: dict, method: str = "lookup k=8") -> Figure:
    """Lesson 06: the three acceptance figures of one run side by side, per scenario.

    Left: Leviathan's alpha and accepted / drafted (both per draft, 0..1). Right: the tokens
    per round (engines' "mean accepted length"), beside Eq. 1's prediction from alpha and k:
    (1 - alpha^(k+1)) / (1 - alpha). They agree when every round drafts k tokens.
    """
    names = scenario_names(report)
    rows = [report_row(report, name, method) for name in names]
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
                  label="tokens per round (measured)")  # fmt: skip
        right.bar(x + 0.2, eq1, 0.4, color="white", hatch="..", edgecolor="black",
                  label=f"Eq. 1 from \u03b1, k = {k}")  # fmt: skip
        right.set_ylabel("tokens per round")
        right.set_ylim(0, float(np.nanmax(np.r_[mean_length, eq1, 1.0])) * 1.35)  # legend room
        for ax in (left, right):
            ax.set_xticks(x, names)
            ax.legend(loc="upper right", fontsize=12)
            tidy(ax)
        left.set_title(f"{method}: two rates", loc="left")
        right.set_title("tokens per round", loc="left")
        plt.close(fig)
    return fig


ADAPTIVE_MODE_STYLES = {  # mode -> (colour, hatch)
    "warm-up": ("#BBBBBB", ".."),
    "time plain step": ("#8C8C8C", "xx"),
    "draft": (OKABE_ITO["blue"], ""),
    "probe": (OKABE_ITO["orange"], "//"),
    "off": ("#444444", ""),  # dark: unlike the white of drafts that were not accepted
}


def adaptive_trace_figure(trace: Sequence[dict], title: str = "") -> Figure:
    """Lesson 06: what the adaptive policy asked for in each round of one run.

    trace: dicts with "mode", "k", "drafted" and "accepted" (speclab.adaptive.Decision).
    Bar height: the k asked for (outlined), filled up to the drafts accepted, so the white
    part of a bar is drafts the target rejected, and a round that kept none shows its mode in
    a sliver at the bottom; "off" rounds are plain steps (a short dark bar), probes are hatched.
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
            # at least a sliver in the mode's colour: a plain step, or a round that kept none
            # of its drafts (a warm-up read as "drafted, not accepted" alone)
            kept = np.maximum(kept, 0.15)
            ax.bar(x[mine], kept, 0.8, color=colour, hatch=hatch, edgecolor="black",
                   label=f"{mode} ({len(mine)})")  # fmt: skip
        rejected = Patch(facecolor="white", edgecolor="black", label="drafted, not accepted")
        ax.set_xlabel("round")
        ax.set_ylabel("k asked (outline), accepted (filled)")
        ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))  # round 2.5: no
        handles = ax.get_legend_handles_labels()[0] + [rejected]
        # Above the plot, not on it: every round's bar may be as tall as the largest k.
        fig.legend(handles=handles, loc="outside upper right", ncols=len(handles), fontsize=12)
        if title:
            ax.set_title(title, loc="left")
        tidy(ax)
        plt.close(fig)
    return fig
