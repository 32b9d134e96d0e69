"""Widgets of speculative sampling (lesson 07).

- `SamplingRuleExplorer`: sliders for a target and a draft distribution over four tokens;
  min(1, p/q), the leftover, and simulated steps of the exact and biased rules.
"""

import html
from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from speclab.widgets.base import Shown, checked_choice, checked_number, figure_png, float_slider

SAMPLING_LABELS = ("A", "B", "C", "D")  # lesson 07's four-token vocabulary


def _weights(values, name: str) -> list[float]:
    """Weights for sliders of 0 to 1: only proportions matter, so weights above 1 (counts, or
    percentages) are scaled down together; a slider clamped each to 1 on its own, and
    p = (4, 3, 2, 1) became (0.25, 0.25, 0.25, 0.25). ValueError for NaN or a negative."""
    weights = np.asarray(values, dtype=np.float64)
    if weights.ndim != 1 or not np.isfinite(weights).all() or (weights < 0).any():
        raise ValueError(f"{name} needs one weight of 0 or more per token, got {list(values)}")
    most = weights.max(initial=0.0)
    return (weights / most if most > 1 else weights).tolist()


STEPS = [100, 300, 1000, 3000, 10000]  # the steps slider's choices


MAX_LABEL_CHARS = 16  # a token's name in the slider labels and sentences ("<eos>", "the")


class SamplingRuleExplorer(Shown):
    """Lesson 07: two small distributions under sliders, one step of the rule, many steps.

    Sliders set the weights of the target p and the draft q over four tokens (each set is
    normalised, so only proportions matter). Shown: min(1, p/q) and the leftover
    norm(max(0, p - q)) (`.rule_figure`, `.rule_picture`), then `steps` simulated rounds
    with k = 1 of the exact rule and of the biased rule (b), each a call of the real step
    function of speclab.sampling with a seeded generator, against p with a chi-square test
    (`.text`, `.figure`, `.picture`). `.samples` holds the emitted tokens per rule.
    """

    RULES = ("exact rule", "biased resample (b)")

    def __init__(
        self,
        p_target: Sequence[float] = (0.4, 0.3, 0.2, 0.1),
        p_draft: Sequence[float] = (0.1, 0.5, 0.2, 0.2),
        steps: int = 3000,
        seed: int = 7,
        labels: Sequence[str] = SAMPLING_LABELS,
    ):
        if not len(p_target) == len(p_draft) == len(labels):
            raise ValueError("p_target, p_draft and labels need one entry per token")
        if not all(isinstance(t, str) and 0 < len(t) <= MAX_LABEL_CHARS for t in labels):
            # a 100,000-character label took a minute to draw; a number, a TypeError
            raise ValueError(f"labels {list(labels)!r:.80}: give each token a name in quotes, "
                             f"1 to {MAX_LABEL_CHARS} characters")  # fmt: skip
        p_target, p_draft = _weights(p_target, "p_target"), _weights(p_draft, "p_draft")
        self.labels = tuple(labels)
        self.seed = checked_number(seed, 0, 2**32 - 1, "seed", whole=True)  # numpy named nothing

        def slider(value, name):
            # three decimals: a weight given as 1 in 1,000 is shown, not rounded to 0.00
            return float_slider(value=value, min=0.0, max=1.0, step=0.05, readout_format=".3f",
                                description=name, continuous_update=False)  # fmt: skip

        self.target_sliders = [slider(v, f"p({t})") for v, t in zip(p_target, labels, strict=True)]
        self.draft_sliders = [slider(v, f"q({t})") for v, t in zip(p_draft, labels, strict=True)]
        self.steps = widgets.SelectionSlider(
            options=STEPS, value=checked_choice(steps, STEPS, "steps"), description="steps",
            continuous_update=False,
        )  # fmt: skip
        self.text = widgets.HTML()
        self.rule_picture = widgets.Image(format="png")
        self.picture = widgets.Image(format="png")
        self.rule_figure: Figure | None = None
        self.figure: Figure | None = None
        self.samples: dict = {}
        for control in (*self.target_sliders, *self.draft_sliders, self.steps):
            control.observe(self._on_change, names="value")
        columns = widgets.HBox(
            [widgets.VBox([widgets.HTML("<b>target p</b>"), *self.target_sliders]),
             widgets.VBox([widgets.HTML("<b>draft q</b>"), *self.draft_sliders])]
        )  # fmt: skip
        self.box = widgets.VBox([columns, self.steps, self.text, self.rule_picture, self.picture])
        self.update()

    def set_weights(self, p_target=None, p_draft=None) -> None:
        """Move several sliders at once and redraw once (for notebooks and tests)."""
        moves = []  # both checked before any slider moves: a bad p_draft had left p moved
        for sliders, values, name in ((self.target_sliders, p_target, "p_target"),
                                      (self.draft_sliders, p_draft, "p_draft")):  # fmt: skip
            if values is None:
                continue
            values = _weights(values, name)
            if len(values) != len(sliders):  # zip had cut a long list, half-applied a short one
                raise ValueError(f"{name} needs {len(sliders)} weights, one per token, "
                                 f"got {len(values)}")  # fmt: skip
            moves += zip(sliders, values, strict=True)
        self._paused = True
        try:
            for slider, value in moves:
                slider.value = value  # settled as a hand on the slider is (_on_change)
        finally:
            self._paused = False
        self.update()

    def _on_change(self, change) -> None:
        if getattr(self, "_paused", False):  # set_weights: settled now, redrawn once after
            self._settle(change)
        else:
            super()._on_change(change)

    def distributions(self):
        """(p, q), each [n_vocab] and normalised; None if a side has no weight at all."""
        p = np.array([s.value for s in self.target_sliders], dtype=np.float64)
        q = np.array([s.value for s in self.draft_sliders], dtype=np.float64)
        if p.sum() <= 0 or q.sum() <= 0:
            return None
        return p / p.sum(), q / q.sum()

    def simulate(self, p, q) -> dict:
        """Emitted first tokens [steps] per rule, one real step call per simulated round."""
        from speclab.sampling import biased_resample_step, first_tokens, speculative_step

        rules = dict(zip(self.RULES, (speculative_step, biased_resample_step), strict=True))
        return {
            name: first_tokens(step, p, q, self.steps.value, np.random.default_rng(self.seed))[0]
            for name, step in rules.items()
        }

    def _untestable(self, p) -> str:
        """Why a chi-square test of the output against p has nothing to compare."""
        if (p > 0).sum() == 1:
            only = html.escape(self.labels[int(np.argmax(p))])  # "<eos>" is a name, not a tag
            return (f"every output was {only}, the one token p allows: there is nothing for "
                    "a test to tell apart")  # fmt: skip
        return ("too few steps for a test: every token but one is expected fewer than 5 "
                "times (raise the steps)")  # fmt: skip

    def update(self) -> None:
        from speclab.figures import sampling_convergence_figure, sampling_rule_figure
        from speclab.sampling import (
            LEFTOVER_EPS,
            SIGNIFICANCE,
            chi_square_test,
            expected_acceptance,
            expected_match_acceptance,
            leftover_distribution,
            p_value_text,
        )

        found = self.distributions()
        if found is None:
            self.text.value = (
                "<p style='font-size:1.2em'>Give both the target and the draft some "
                "probability: a distribution's weights cannot all be 0.</p>"
            )
            self.samples, self.figure, self.rule_figure = {}, None, None
            self.rule_picture.value = self.picture.value = b""  # not the last setting's pictures
            return
        p, q = found
        self.samples = self.simulate(p, q)
        lines = []
        for name, tokens in self.samples.items():
            test = chi_square_test(np.bincount(tokens, minlength=p.size), p)
            if test.df == 0:  # a test on 0 degrees of freedom tells nothing: say why
                lines.append(f"{name}: {self._untestable(p)}")
                continue
            verdict = "rejects" if test.rejects() else "does not reject"
            lines.append(
                f"{name}: chi-square {test.statistic:.1f} on {test.df} df, p-value "
                f"<b>{p_value_text(test.p_value)}</b> (at the {SIGNIFICANCE:g} level the test "
                f"{verdict} 'the output is p')"
            )
        if np.maximum(0.0, p - q).sum() > LEFTOVER_EPS:
            leftover = leftover_distribution(p, q)
            shown = ", ".join(
                f"{html.escape(t)} {v:.2f}" for t, v in zip(self.labels, leftover, strict=True)
            )
        else:  # p <= q everywhere means p = q: nothing is ever rejected, nothing left to draw
            shown = "none (p = q: no draft is ever rejected)"
        kept, match = expected_acceptance(p, q), expected_match_acceptance(p, q)
        kept, match = round(kept, 3), round(match, 3)  # compared as they are printed
        self.text.value = (
            "<p style='font-size:1.2em'>"
            f"p = [{', '.join(f'{v:.2f}' for v in p)}], q = [{', '.join(f'{v:.2f}' for v in q)}]"
            f"<br>a draft is kept with probability \u03a3 min(p, q) = "
            f"<b>{kept:.3f}</b> (rule (a) would keep {'only ' * (match < kept)}\u03a3 p\u00b7q = "
            f"{match:.3f}); leftover: {shown}"
            f"<br>{self.steps.value:,} simulated steps per rule:<br>" + "<br>".join(lines) + "</p>"
        )
        self.rule_figure = sampling_rule_figure(p, q, self.labels)
        self.rule_picture.value = figure_png(self.rule_figure)
        self.figure = sampling_convergence_figure(p, self.samples, self.labels)
        self.picture.value = figure_png(self.figure)
