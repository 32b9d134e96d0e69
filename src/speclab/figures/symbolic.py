"""Figures of lessons 01-03: symbols checked against a path, rounds and forwards counted.

`check_row_figure` (a guess checked against the target, for the quiz and the ABCDEFG path),
`draft_verify_figure` (lesson 03's Figure 1: draft k, verify k in one forward, accept m,
cross at m + 1, roll back), `forwards_per_case_figure` (Figure 2: target forwards per case
with the greedy baseline drawn per case) and `eq1_figure` (Leviathan et al. 2023 Eq. 1 and
the speedup over alpha, with a Monte-Carlo check). Nothing here is measured.

Each takes `lang` ("en", "zh", "fa"; None: from the environment, see speclab.i18n): labels
come from the message catalogue, Chinese is drawn in Noto Sans CJK and Persian is shaped
and ordered (arabic-reshaper, python-bidi) in Noto Sans Arabic. Symbols, formulas and
digits stay Latin in every language.
"""

from collections.abc import Sequence

import matplotlib
import matplotlib.pyplot as plt
import matplotlib.ticker
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch

from speclab.acceptance import accept
from speclab.counting import count_round, expected_speedup, expected_tokens_per_round
from speclab.figures.style import (
    CROSS,
    OKABE_ITO,
    ROLE_COLOURS,
    TICK,
    FigureWords,
    blank_axes,
    cell,
    dropped_label,
    text_width,
)
from speclab.i18n import DIRECTION


def check_row_figure(
    draft: Sequence[str],
    target: Sequence[str],
    prefix: Sequence[str] = "",
    row_labels: Sequence[str] | None = None,
    title: str | None = None,
    added_label: str | None = None,
    lang: str | None = None,
) -> Figure:
    """A guess checked against the target: ticks, the first cross, the dropped rest.

    draft:  [k] symbols guessed after `prefix` (letters, or short quiz answers)
    target: [k] or [k + 1] symbols the target chooses at those positions
    The bottom row is the new output: prefix + accepted + the target's symbol at the
    first mismatch (or its next symbol when everything was accepted and one exists).
    row_labels, title and added_label, when given, are already in the figure's language.
    """
    _ = FigureWords(lang)
    if row_labels is None:
        row_labels = (_("target would choose"), _("guess"), _("new output"))
    else:
        row_labels = [_.shape(label) for label in row_labels]
    if added_label is None:
        added_label = _.tr.gettext("from the target")
    # The arrow points left, at the added cell: before a left-to-right label, after a
    # right-to-left one, whose line starts at the right ("← label" put it at the far right).
    rtl = DIRECTION[_.lang] == "rtl"
    added_note = _.shape(f"{added_label} \u2190" if rtl else f"\u2190 {added_label}")
    draft, target, prefix = list(draft), list(target), list(prefix)
    m = accept(draft, target)
    added = target[m : m + 1]
    n_prefix, k = len(prefix), len(draft)
    width = n_prefix + max(k, len(target)) + 1
    longest = max(map(len, draft + target + prefix), default=1)
    cell_font = 20 if longest <= 2 else 15 if longest <= 4 else 11  # a quiz answer of 6 fits
    label_room = 0.32 * max(map(text_width, row_labels)) + 0.3
    with matplotlib.rc_context(_.style):
        fig, ax = plt.subplots(figsize=(0.75 * (width + label_room + 2.5), 4.2))
        blank_axes(ax, -label_room, width + 2.5, 3.1)
        fig.subplots_adjust(left=0.01, right=0.99, bottom=0.02, top=0.9)
        label_x = -0.7
        for y, label in zip((2.6, 1.3, 0.0), row_labels, strict=True):
            ax.text(label_x, y, label, ha="right", va="center")
        for i, symbol in enumerate(target):
            cell(ax, n_prefix + i, 2.6, symbol, "white", fontsize=cell_font)
        for i, symbol in enumerate(draft):
            x = n_prefix + i
            if i < m:
                role, mark = "accepted", TICK
            elif i == m:
                role, mark = "rejected", CROSS
            else:
                role, mark = "dropped", ""
            hatch = "//" if role == "dropped" else None
            cell(ax, x, 1.3, symbol, ROLE_COLOURS[role], hatch=hatch, fontsize=cell_font)
            ax.text(x, 0.65, mark, ha="center", va="center", fontsize=22)
        if m + 1 < k:
            dropped_label(ax, n_prefix + m + 1, n_prefix + k - 1, 0.65, _("dropped"))
        output = [(s, "prefix") for s in prefix] + [(s, "accepted") for s in draft[:m]]
        output += [(s, "target") for s in added]
        for x, (symbol, role) in enumerate(output):
            cell(ax, x, 0.0, symbol, ROLE_COLOURS[role], fontsize=cell_font)
        note = added_note if added else _("end: nothing added")
        ax.text(len(output) - 0.3, -0.05, note, ha="left", va="center")
        for i in range(n_prefix):
            cell(ax, i, 1.3, prefix[i], ROLE_COLOURS["prefix"], fontsize=cell_font)
        accepted_text = _(
            "{m} accepted, output grows by {grown}", m=m, grown=len(output) - n_prefix
        )
        ax.set_title(_.shape(title) if title else accepted_text, loc="left")
        plt.close(fig)
    return fig


DRAWN_DRAFTS_MOST = 10  # cells a row of draft_verify_figure can show legibly


def draft_verify_figure(k: int = 4, accepted: int = 2, lang: str | None = None) -> Figure:
    """Lesson 03, Figure 1: draft k, verify all k in one forward, accept m, roll back.

    Ticks on drafts 1..m, a cross on m + 1, the rest hatched and dropped; the target's
    own token t(m+1) is appended and an arrow shows where the next round starts.
    """
    _ = FigureWords(lang)
    round_count = count_round(accepted, k)
    m = round_count.accepted
    if k > DRAWN_DRAFTS_MOST:  # k = 10**6 drew for minutes a figure nobody could read
        raise ValueError(f"the figure draws at most {DRAWN_DRAFTS_MOST} drafts, got k = {k}: "
                         f"set k to {DRAWN_DRAFTS_MOST} or fewer to draw it")  # fmt: skip
    with matplotlib.rc_context(_.style):
        fig, ax = plt.subplots(figsize=(13, 5.8))
        blank_axes(ax, -3.6, k + 8.5, 5.0)
        fig.subplots_adjust(left=0.01, right=0.99, bottom=0.01, top=0.93)
        rows = {"draft": 4.2, "verify": 2.4, "accept": 0.6}
        steps = (
            ("draft", _("1. draft {k}\n(drafter, cheap)", k=k)),
            ("verify", _("2. verify {k}\n(target)", k=k)),
            ("accept", _("3. accept m = {m}", m=m)),
        )
        for row, label in steps:
            ax.text(-0.7, rows[row], label, ha="right", va="center")
        for i in range(k):
            cell(ax, i, rows["draft"], f"d{i + 1}", ROLE_COLOURS["draft"], fontsize=18)
        for i in range(k + 1):
            cell(ax, i, rows["verify"], f"t{i + 1}", "white", fontsize=18)
        ax.annotate(
            "",
            xy=(k + 0.5, rows["verify"] + 0.55),
            xytext=(-0.5, rows["verify"] + 0.55),
            arrowprops={"arrowstyle": "-", "lw": 2},
        )
        ax.text(
            k + 0.7,
            rows["verify"],
            _("ONE forward checks all {k}\n(t{bonus}: the bonus if all pass)", k=k, bonus=k + 1),
            va="center",
        )
        for i in range(k):
            if i < m:
                face, mark, hatch = ROLE_COLOURS["accepted"], TICK, None
            elif i == m:
                face, mark, hatch = ROLE_COLOURS["rejected"], CROSS, None
            else:
                face, mark, hatch = ROLE_COLOURS["dropped"], "", "//"
            cell(ax, i, rows["accept"], f"d{i + 1}", face, hatch=hatch, fontsize=18)
            ax.text(
                i,
                rows["accept"] - 0.68,
                mark,
                ha="center",
                va="center",
                fontsize=22,
            )
        if m + 1 < k:
            dropped_label(ax, m + 1, k - 1, rows["accept"] - 0.68, _("dropped"))
        new_x = k + 1.3
        ax.text(
            new_x - 0.5, rows["accept"] + 0.75, _("output += "), ha="left", va="center", fontsize=15
        )
        for j in range(m):
            cell(ax, new_x + j, rows["accept"], f"d{j + 1}", ROLE_COLOURS["accepted"], fontsize=18)
        cell(ax, new_x + m, rows["accept"], f"t{m + 1}", ROLE_COLOURS["target"], fontsize=18)
        ax.text(
            new_x + m + 0.6,
            rows["accept"],
            _("{tokens} tokens\nfor 1 forward", tokens=round_count.tokens),
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
                _("roll back: next round continues after t{next}", next=m + 1),
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
        ax.set_title(_("One round: draft {k}, verify {k}, accept m = {m}", k=k, m=m), loc="left")
        plt.close(fig)
    return fig


def forwards_per_case_figure(
    cases: Sequence[int] = (0, 2, 4), k: int = 4, lang: str | None = None
) -> Figure:
    """Lesson 03, Figure 2: target forwards per case, with its own greedy bar beside it.

    For m accepted drafts a speculative round costs 1 target forward and yields m + 1
    tokens; greedy needs m + 1 forwards for the same tokens. Bars are split into cells,
    one cell per forward, so the counts can be read without colour.
    """
    _ = FigureWords(lang)
    if isinstance(cases, int):  # one case: `cases=2` in a handout's figure address
        cases = (cases,)
    rounds = [count_round(m, k) for m in cases]
    role_names = {"speculative": _("speculative"), "greedy": _("greedy")}
    with matplotlib.rc_context(_.style):
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
                ax.text(forwards + 0.1, bar_y, f"{role_names[role]}: {forwards}", va="center")
                ticks.append(bar_y)
            tokens = _.plural("{count} token", "{count} tokens", counted.tokens)
            labels += [_("accept {m}:\n{tokens}", m=counted.accepted, tokens=tokens), ""]
            ax.text(
                6.6,
                y,
                _("saves {saved}", saved=counted.saved) if counted.saved else _("break even"),
                va="center",
                fontweight="bold",
            )
        ax.set_yticks(ticks[::2], labels[::2])
        ax.set_xlim(0, 8.2)
        ax.set_xticks(range(0, 7))
        ax.spines[["top", "right"]].set_visible(False)
        ax.set_title(_("Same tokens, fewer target forwards"), loc="left")
        greedy_counts = ", ".join(str(r.greedy_forwards) for r in rounds)
        ax.set_xlabel(
            _(
                "target forwards\n\nGreedy is drawn per case ({counts} forwards). "
                "A single 4-cell greedy bar\nfor every case, a tempting shortcut, matches none of them.",
                counts=greedy_counts,
            ),
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
    lang: str | None = None,
) -> Figure:
    """Eq. 1 (expected tokens per round) and the speedup over alpha, at one (k, c).

    The chosen alpha is marked on both curves; a Monte-Carlo mean (with +-2 standard
    errors) can be drawn beside the formula on the left. The right panel hatches the
    region where speculation is slower than greedy (speedup < 1).
    """
    alphas = np.linspace(0.0, 1.0, 101)  # [101]
    tokens = expected_tokens_per_round(alphas, k)  # [101]
    speedups = expected_speedup(alphas, k, c)  # [101]
    expected_tokens_per_round(alpha, k)  # checks alpha: a probability
    if simulated_mean is not None and not 1 <= simulated_mean <= k + 1:  # NaN fails too
        raise ValueError(f"simulated_mean must lie between 1 and k + 1 = {k + 1} tokens per "
                         f"round, got {simulated_mean!r}")  # fmt: skip
    if simulated_standard_error is not None and not simulated_standard_error >= 0:
        raise ValueError(f"simulated_standard_error must be >= 0, got {simulated_standard_error!r}")
    _ = FigureWords(lang)
    with matplotlib.rc_context(_.style):
        fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5), layout="constrained")
        left.plot(alphas, tokens, color=OKABE_ITO["blue"], lw=3, label=_("Eq. 1"))
        left.plot(  # a ring, so that the simulated mean drawn at the same alpha shows inside it
            [alpha],
            [expected_tokens_per_round(alpha, k)],
            "o",
            ms=18,
            mfc="none",
            mew=3,
            color=OKABE_ITO["blue"],
            label=_("formula at \u03b1"),
        )
        if simulated_mean is not None:
            error = 2 * (simulated_standard_error or 0.0)
            left.errorbar(  # at alpha itself: it was drawn 0.02 to the right, at 1.02 for alpha 1
                [alpha],
                [simulated_mean],
                yerr=[error],
                fmt="X",
                ms=12,
                color=OKABE_ITO["orange"],
                mec="black",
                capsize=6,
                label=_("simulated (\u00b12 s.e.)"),
            )
        left.set_xlabel(_("acceptance rate \u03b1"))
        left.set_ylabel(_("tokens per round"))
        left.set_ylim(0.8, k + 1.3)
        left.set_title(_("Eq. 1 with k = {k}: 1 to {most} tokens", k=k, most=k + 1), loc="left")
        left.legend(loc="upper left")
        right.fill_between(
            alphas,
            0,
            1,
            facecolor="none",
            edgecolor="#BBBBBB",
            hatch="//",
            lw=0,
            label=_("slower than greedy"),
        )
        right.axhline(1, color="black", ls="--", lw=1.5)
        right.plot(alphas, speedups, color=OKABE_ITO["vermillion"], lw=3, label=_("speedup"))
        right.plot(
            [alpha],
            [expected_speedup(alpha, k, c)],
            "s",
            ms=12,
            color=OKABE_ITO["vermillion"],
            mec="black",
            label=_("at \u03b1"),
        )
        right.set_xlabel(_("acceptance rate \u03b1"))
        right.set_ylabel(_("expected speedup"))
        right.set_ylim(0, max(2.0, float(speedups.max()) * 1.15))
        right.set_title(_("predicted speedup, c = {c:.2f}", c=c), loc="left")
        right.legend(loc="upper left")
        for ax in (left, right):
            ax.set_xlim(0, 1.05)
            ax.grid(alpha=0.3)
            ax.spines[["top", "right"]].set_visible(False)
        plt.close(fig)
    return fig
