"""Widgets of what things cost: one forward by width (lesson 04b), the break-even (lesson 06).

- `WidthExplorer` (lesson 04b): a width slider (128..768) that re-measures the cost of one
  forward over 1..16 new positions for a random model, to see how the cost of extra
  positions changes with width.
- `BoundaryExplorer` (lesson 06): sliders for k, the draft cost c and the verify cost per
  extra position; the break-even alpha, and which measured scenarios are predicted to pay.
"""

import html
import math
import numbers
from collections.abc import Mapping, Sequence

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from speclab.render import counted
from speclab.widgets.base import (
    Shown,
    checked_choice,
    checked_number,
    figure_png,
    float_slider,
    typed_text,
)


class WidthExplorer(Shown):
    """Lesson 04b: a width slider that re-measures the forward-cost curve of a random model.

    Moving the slider builds a random GPT-2-shaped model of that width (heads of 64, as in
    GPT-2; `n_layer` blocks) and times one cached forward over each n_new, interleaved
    (speclab.bench.forward_cost). Every width measured so far stays on the picture, so
    the curves can be compared. BLAS is limited to `blas_threads` while measuring.
    """

    def __init__(
        self,
        width: int = 128,
        n_layer: int = 1,
        n_past: int = 256,
        n_new_values: Sequence[int] = (1, 2, 3, 4, 5, 6, 8, 12, 16),
        repeats: int = 15,
        tolerance: float = 1.3,
        seed: int = 0,
        blas_threads: int | None = 1,
    ):
        checked_choice(width, range(128, 769, 128), "width")
        # bounds a measurement finishes within: repeats=10**6 had run for hours and an n_new of
        # 10**6 had asked for 977 MiB (GPT-2 small has 12 layers and 1,024 positions)
        checked_number(n_layer, 1, 12, "n_layer", whole=True)
        checked_number(n_past, 0, 1024, "n_past", whole=True)
        checked_number(repeats, 1, 200, "repeats", whole=True)
        if isinstance(n_new_values, str | Mapping) or not isinstance(
            n_new_values, Sequence | np.ndarray
        ):
            raise ValueError(f"n_new_values must be a list of whole numbers, got {n_new_values!r}")
        for n_new in n_new_values:
            checked_number(n_new, 1, 64, "each of n_new_values", whole=True)
        if not {1, 2, 5} <= set(n_new_values):  # the text reads both ratios
            raise ValueError("n_new_values must include 1, 2 and 5 (the ratios the lesson reads)")
        self.n_layer, self.n_past, self.repeats = n_layer, n_past, repeats
        self.n_new_values, self.tolerance = list(n_new_values), tolerance
        self.seed = checked_number(seed, 0, 2**32 - 1, "seed", whole=True)  # numpy named nothing
        if blas_threads is not None:  # None: the library's default
            checked_number(blas_threads, 1, 1024, "blas_threads", whole=True)
        self.blas_threads = blas_threads
        self.width = widgets.IntSlider(
            value=width, min=128, max=768, step=128, description="width",
            continuous_update=False,
        )  # fmt: skip
        self.text, self.status = widgets.HTML(), widgets.HTML()  # status: shown while measuring
        self.picture = widgets.Image(format="png")
        self.figure: Figure | None = None
        self.measured: dict = {}  # width -> speclab.timing.Timings, every width visited
        self.width.observe(self._on_change, names="value")
        self.box = widgets.VBox([self.width, self.status, self.text, self.picture])
        self.update()

    def measure(self, width: int):
        """The cost curve of a fresh random model of this width (seeded: same every time)."""
        from speclab.bench import forward_cost, width_model
        from speclab.timing import blas_threads

        rng = np.random.default_rng(self.seed)
        n_ctx = self.n_past + max(self.n_new_values)
        model = width_model(width, rng, n_layer=self.n_layer, n_ctx=n_ctx)
        with blas_threads(self.blas_threads):
            return forward_cost(model, rng, self.n_past, self.n_new_values, self.repeats)

    def update(self) -> None:
        from speclab.bench import matmul_params
        from speclab.figures import forward_cost_figure
        from speclab.gpt import GPTConfig

        step = self.width.step
        width = min(self.width.max, max(self.width.min, round(self.width.value / step) * step))
        if width != self.width.value:  # typed into the readout off the step: snap, which re-runs
            self.width.value = width
            return
        self.status.value = f"<p><i>Measuring width {width}: a few seconds\u2026</i></p>"
        self.width.disabled = True
        try:
            timings = self.measure(width)
        finally:
            self.status.value, self.width.disabled = "", False
        self.measured[width] = timings
        ratio, ratio_2 = timings.ratio(5, 1), timings.ratio(2, 1)
        n_head = max(2, width // 64)
        config = GPTConfig(self.n_layer, n_head, width, self.n_past + max(self.n_new_values))
        megabytes = matmul_params(config) * 8 / 1e6  # float64 weights read per forward
        one_token_ms = timings.median[timings.index(1)] * 1e3
        self.text.value = (
            "<p style='font-size:1.2em'>"
            f"width <b>{width}</b> ({n_head} heads, {counted(self.n_layer, 'block')}, random weights, "
            f"{megabytes:.1f} MB of weights per forward): 5 new positions cost "
            f"<b>{ratio['median']:.2f}\u00d7</b> one (interquartile {ratio['q25']:.2f}\u2013"
            f"{ratio['q75']:.2f}), 2 new positions {ratio_2['median']:.2f}\u00d7; "
            f"1-token forward: {one_token_ms:.2f} ms.</p>"
        )
        curves = {f"width {w}": self.measured[w] for w in sorted(self.measured)}
        self.figure = forward_cost_figure(curves, self.tolerance)
        self.picture.value = figure_png(self.figure)


class BoundaryExplorer(Shown):
    """Lesson 06: which scenarios pay? Sliders for k, c and the verify cost over alpha.

    scenario_alphas: {scenario: measured alpha} from a `speclab bench decode` report; each
    is judged against the break-even alpha of the curve with the verify cost.
    """

    def __init__(self, scenario_alphas: dict | None = None, k: int = 4, c: float = 0.02,
                 verify_per_position: float = 0.05):  # fmt: skip
        checked_number(k, 1, 8, "k", whole=True)
        checked_number(c, 0.0, 1.0, "c")
        checked_number(verify_per_position, 0.0, 0.5, "verify_per_position")
        if scenario_alphas is not None and not isinstance(scenario_alphas, Mapping):
            raise ValueError(f"scenario_alphas must be a dict {{scenario: alpha}}, got "
                             f"{scenario_alphas!r:.100}")  # fmt: skip
        for name, alpha in (scenario_alphas or {}).items():  # NaN: a scenario without drafts
            if alpha is not None and not (
                isinstance(alpha, numbers.Real) and (math.isnan(alpha) or 0 <= alpha <= 1)
            ):
                raise ValueError(f"the alpha of {name!r} is {alpha!r}: give a number from 0 to 1")
        # names as text that can be drawn: a hand-edited report may hold half a character
        self.scenario_alphas = {
            typed_text(str(name)): math.nan if alpha is None else alpha  # None: JSON's null
            for name, alpha in (scenario_alphas or {}).items()
        }
        self.k = widgets.IntSlider(value=k, min=1, max=8, description="k (drafts)")
        self.c = float_slider(value=c, min=0.0, max=1.0, step=0.01,
                              description="c (draft cost)")  # fmt: skip
        # steps of 0.005: the handout's r = 1.5 at k = 4 is v = 0.125
        self.verify = float_slider(value=verify_per_position, min=0.0, max=0.5, step=0.005,
                                   readout_format=".3f", description="v (verify)")  # fmt: skip
        self.text = widgets.HTML()
        self.picture = widgets.Image(format="png")
        self.figure: Figure | None = None
        for slider in (self.k, self.c, self.verify):
            slider.continuous_update = False  # a redraw per release: a drag queued 3 s of them
            slider.observe(self._on_change, names="value")
        self.box = widgets.VBox([self.k, self.c, self.verify, self.text, self.picture])
        self.update()

    def break_even(self) -> tuple[float, float]:
        """Break-even alpha: (Leviathan's formula, with the verify cost)."""
        from speclab.counting import break_even_alpha

        k, c = self.k.value, self.c.value
        return break_even_alpha(k, 1.0, c), break_even_alpha(k, 1.0 + self.verify.value * k, c)

    def never_pays(self) -> tuple[bool, bool]:
        """Whether a round costs more than the k + 1 tokens it can give, so that no alpha pays:
        (Leviathan's formula, with the verify cost). break_even() is 1.0 there."""
        k, c = self.k.value, self.c.value
        return k * c + 1.0 > k + 1, k * c + 1.0 + self.verify.value * k > k + 1

    def verdicts(self) -> dict[str, bool]:
        """{scenario: predicted to pay} with the verify cost counted, as the text says it: an
        alpha at the break-even point "breaks even" (bisection can land 1e-16 below it)."""
        _, threshold = self.break_even()
        never = self.never_pays()[1]
        return {name: not never and _verdict(alpha, threshold) == "pays"
                for name, alpha in self.scenario_alphas.items()}  # fmt: skip

    def update(self) -> None:
        leviathan, with_verify = self.break_even()
        never = self.never_pays()
        shown = [
            "none: no \u03b1 pays" if no_alpha else f"{alpha:.2f}"
            for alpha, no_alpha in zip((leviathan, with_verify), never, strict=True)
        ]
        verdicts = ", ".join(
            f"{name}: {'loses' if never[1] and np.isfinite(alpha) else _verdict(alpha, with_verify)}"
            for name, alpha in self.scenario_alphas.items()
        )
        r = 1.0 + self.verify.value * self.k.value  # the verify forward, in plain steps
        self.text.value = (
            f"<p>verify cost r = 1 + k\u00b7v = {r:.2f} plain steps (v: its extra cost per "
            "drafted position)</p><p style='font-size:1.2em'>break-even \u03b1: "
            f"<b>{shown[0]}</b> (Leviathan) &nbsp;|&nbsp; <b>{shown[1]}</b> "
            f"(with the verify cost)" + (f"<br>predicted: {html.escape(verdicts)}" if verdicts else "")
            + ("<br>a round costs more than the k + 1 tokens it can give" if never[1] else "")
            + "</p>"
        )  # fmt: skip
        from speclab.figures import boundary_figure

        self.figure = boundary_figure(self.k.value, self.c.value, self.verify.value,
                                      self.scenario_alphas)  # fmt: skip
        self.picture.value = figure_png(self.figure)


def _verdict(alpha: float, break_even: float) -> str:
    """What the prediction says of one scenario's alpha, in words."""
    if not np.isfinite(alpha):
        return "no data (no rounds drafted)"
    if np.isclose(alpha, break_even, rtol=0, atol=1e-9):
        return "breaks even"
    return "pays" if alpha > break_even else "loses"
