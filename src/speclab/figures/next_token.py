"""The bars of one forward: a model's most likely next tokens (lesson 03b).

`next_token_figure` draws speclab.next_token's choices as horizontal bars, the most likely
on top; the token greedy decoding takes is hatched and labelled "greedy" (colour is never
the only cue). Spaces show as ␣ and newlines as \\n, as in lesson 05's tables.
"""

from collections.abc import Sequence

import matplotlib
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from speclab.figures.style import OKABE_ITO, PROJECTOR, drawable, tidy


def next_token_figure(choices: Sequence, title: str | None = None) -> Figure:
    """choices: speclab.next_token.Choice records, most likely first (top_choices)."""
    from speclab.render import shown_probability, shown_token

    labels = [shown_token(c.token) for c in choices]
    values = [c.probability for c in choices]
    with matplotlib.rc_context(PROJECTOR):
        fig, ax = plt.subplots(figsize=(8, 0.45 * len(choices) + 1.6))
        rows = range(len(choices))[::-1]  # the most likely on top
        colours = [OKABE_ITO["blue"]] + [OKABE_ITO["sky_blue"]] * (len(choices) - 1)
        bars = ax.barh(list(rows), values, color=colours, edgecolor="black")
        if len(bars):
            bars[0].set_hatch("//")
        for row, value, index in zip(rows, values, range(len(values)), strict=True):
            note = shown_probability(value) + ("  greedy" if index == 0 else "")
            if value > 0.6:  # inside its bar: beyond it the label ran off the picture at 100 %
                ax.text(value, row, note + " ", va="center", ha="right", fontsize=13,
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})  # fmt: skip
            else:
                ax.text(value, row, " " + note, va="center", fontsize=13)
        ax.set_yticks(list(rows), [drawable(label) for label in labels])
        ax.set_xlim(0, min(1.0, max(values, default=0.1) * 1.35 + 0.05))
        ax.set_xlabel("probability of being the next token")
        ax.set_title(drawable(title or "one forward: the model's most likely next tokens"))
        tidy(ax)
        plt.close(fig)
    return fig
