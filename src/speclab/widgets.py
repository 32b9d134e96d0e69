"""Interactive widgets for lessons 01-04, built from ipywidgets (imported only here).

- `QuizGame` (lesson 01): type 4 answers; the host checks all four at once and you see
  the ticks, the first cross, the dropped rest and the squares advanced (accepted + 1).
- `PathExplorer` (lesson 02): pick a prefix and a guess on the path ABCDEFG and see the
  verdict, or the error message of an invalid case.
- `SpeedupExplorer` (lesson 03): sliders for alpha, k and c over Leviathan et al. (2023)
  Eq. 1 and the speedup, with a seeded Monte-Carlo check beside the formula.
- `WidthExplorer` (lesson 04): a width slider (128..768) that re-measures the cost of one
  forward over 1..16 new positions for a random model, to see where extra positions stop
  being free.
- `SpeculativeExplorer` (lesson 05): pick a prompt, a drafter and k; a real speculative run
  on the shipped model, coloured by token role, with its rounds table and the byte-for-byte
  check against greedy decoding.

Each widget is a small class whose callback is a plain method (`update`), so pytest can
set a value and read what is shown (`.text.value`, `.figure`, `.picture.value`) without
a browser. Figures are drawn by `speclab.figures` and shown as PNG in an Image widget.
A notebook shows a widget by evaluating it (it has `_repr_mimebundle_`).
- `SamplingRuleExplorer` (lesson 07): sliders for a target and a draft distribution over
  four tokens; min(1, p/q), the leftover, and simulated steps of the exact and biased rules.
- `BoundaryExplorer` (lesson 06): sliders for k, the draft cost c and the verify cost per
  extra position; the break-even alpha, and which measured scenarios are predicted to pay.
Left out: decoding runs on the shipped models other than lesson 05's explorer.
"""

import html
import io
from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from speclab.acceptance import DEFAULT_PATH, InvalidGuess, accept, verify_on_path
from speclab.counting import expected_speedup, expected_tokens_per_round, simulate_rounds
from speclab.figures import CROSS, TICK, check_row_figure, eq1_figure

# Lesson 01's quiz: number answers, so no language or spelling decides right and wrong.
QUIZ_QUESTIONS = (
    "How many legs does a spider have?",
    "7 \u00d7 8 = ?",
    "How many sides does a hexagon have?",
    "How many degrees are in a right angle?",
    "(the free square) How many minutes are in two hours?",
)
QUIZ_KEY = ("8", "56", "6", "90", "120")


def figure_png(fig: Figure, dpi: int = 72) -> bytes:
    """The figure as PNG bytes, cropped to its content."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return buffer.getvalue()


class _Shown:
    """A widget holder that notebooks display by evaluating it."""

    box: widgets.Widget

    def _repr_mimebundle_(self, **kwargs):
        return self.box._repr_mimebundle_(**kwargs)

    def _on_change(self, change) -> None:
        self.update()

    def update(self) -> None:  # pragma: no cover - every subclass defines it
        raise NotImplementedError


def _normalise(answer: str) -> str:
    return answer.strip().casefold()


def _squares(count: int) -> str:
    return f"{count} square" if count == 1 else f"{count} squares"


class QuizGame(_Shown):
    """Lesson 01: four answers on the board, checked by the host all at once."""

    def __init__(
        self,
        answers: Sequence[str] = ("8", "56", "5", "90"),
        questions: Sequence[str] = QUIZ_QUESTIONS,
        answer_key: Sequence[str] = QUIZ_KEY,
    ):
        if len(answer_key) != len(answers) + 1 or len(questions) != len(answer_key):
            raise ValueError("the host needs one more answer (the free square) than you write")
        self.answer_key = [_normalise(answer) for answer in answer_key]
        self.questions = list(questions)
        self.answers = [
            widgets.Text(value=answer, description=f"Q{i + 1}", placeholder=question)
            for i, (answer, question) in enumerate(zip(answers, questions, strict=False))
        ]
        self.text = widgets.HTML()
        self.picture = widgets.Image(format="png")
        self.figure: Figure | None = None
        for box in self.answers:
            box.observe(self._on_change, names="value")
        questions_html = "".join(f"<li>{html.escape(q)}</li>" for q in self.questions)
        self.box = widgets.VBox(
            [widgets.HTML(f"<ol>{questions_html}</ol>"), *self.answers, self.text, self.picture]
        )
        self.update()

    @property
    def accepted(self) -> int:
        typed = [_normalise(box.value) for box in self.answers]
        return accept(typed, self.answer_key)

    def update(self) -> None:
        typed = [box.value.strip() for box in self.answers]
        m = self.accepted
        marks = []
        for i, answer in enumerate(typed):
            shown = html.escape(answer) or "(blank)"
            if i < m:
                marks.append(f"{TICK} Q{i + 1} {shown}")
            elif i == m:
                marks.append(f"{CROSS} Q{i + 1} {shown} (host: {self.answer_key[i]})")
            else:
                marks.append(f"dropped: Q{i + 1} {shown}")
        free = self.answer_key[m]
        why = "the host's answer to the one you missed" if m < len(typed) else "the bonus question"
        self.text.value = (
            "<p style='font-size:1.3em'>" + " &nbsp; ".join(marks) + "</p>"
            f"<p style='font-size:1.3em'><b>You advance {_squares(m + 1)}</b>: "
            f"{m} right + 1 free ({why}: {free}).</p>"
        )
        self.figure = check_row_figure(
            [_normalise(answer) or "?" for answer in typed],
            self.answer_key,
            row_labels=("host's answers", "your answers", "squares advanced"),
            title=f"{m} right, {_squares(m + 1)}",
            added_label="free: the host's answer",
        )
        self.picture.value = figure_png(self.figure)


class PathExplorer(_Shown):
    """Lesson 02: a prefix and a guess on the path, its verdict or its error."""

    def __init__(self, prefix: str = "", guess: str = "ABX", path: str = DEFAULT_PATH):
        self.path = path
        self.prefix = widgets.Text(value=prefix, description="prefix", placeholder="(empty)")
        self.guess = widgets.Text(value=guess, description="guess")
        self.text = widgets.HTML()
        self.picture = widgets.Image(format="png")
        self.figure: Figure | None = None
        self.prefix.observe(self._on_change, names="value")
        self.guess.observe(self._on_change, names="value")
        self.box = widgets.VBox(
            [
                widgets.HTML(f"target path: <b>{html.escape(path)}</b>"),
                self.prefix,
                self.guess,
                self.text,
                self.picture,
            ]
        )
        self.update()

    def update(self) -> None:
        prefix, guess = self.prefix.value, self.guess.value
        try:
            verdict = verify_on_path(prefix, guess, self.path)
        except InvalidGuess as error:
            self.text.value = (
                f"<p style='font-size:1.3em'>{CROSS} <b>invalid</b>: {html.escape(str(error))}</p>"
            )
            self.figure = None
            self.picture.value = b""
            return
        added = verdict.added or "nothing (end of the path)"
        self.text.value = (
            "<p style='font-size:1.3em'>"
            f"accepted: <b>{verdict.accepted or 'none'}</b> &nbsp; "
            f"added by the target: <b>{added}</b> &nbsp; "
            f"new output: <b>{verdict.output}</b></p>"
        )
        target = self.path[len(prefix) : len(prefix) + len(guess) + 1]
        self.figure = check_row_figure(
            guess, target, prefix=prefix, title=f"output: {verdict.output}"
        )
        self.picture.value = figure_png(self.figure)


class SpeedupExplorer(_Shown):
    """Lesson 03: Eq. 1 and the speedup under sliders, with a Monte-Carlo check."""

    def __init__(
        self,
        alpha: float = 0.8,
        k: int = 4,
        c: float = 0.05,
        n_rounds: int = 20_000,
        seed: int = 2023,
    ):
        self.n_rounds = n_rounds
        self.seed = seed
        self.alpha = widgets.FloatSlider(
            value=alpha, min=0.0, max=1.0, step=0.05, description="\u03b1 (accept)"
        )
        self.k = widgets.IntSlider(value=k, min=1, max=10, description="k (drafts)")
        self.c = widgets.FloatSlider(
            value=c, min=0.0, max=0.5, step=0.01, description="c (draft cost)"
        )
        self.text = widgets.HTML()
        self.picture = widgets.Image(format="png")
        self.figure: Figure | None = None
        for slider in (self.alpha, self.k, self.c):
            slider.observe(self._on_change, names="value")
        self.box = widgets.VBox([self.alpha, self.k, self.c, self.text, self.picture])
        self.update()

    def simulate(self) -> tuple[float, float]:
        """Mean tokens per round over n_rounds simulated rounds, and its standard error."""
        rng = np.random.default_rng(self.seed)
        tokens = simulate_rounds(self.alpha.value, self.k.value, self.n_rounds, rng) + 1
        return float(tokens.mean()), float(tokens.std(ddof=1) / np.sqrt(tokens.size))

    def update(self) -> None:
        alpha, k, c = self.alpha.value, self.k.value, self.c.value
        formula = expected_tokens_per_round(alpha, k)
        speedup = expected_speedup(alpha, k, c)
        mean, standard_error = self.simulate()
        if np.isclose(speedup, 1.0):
            verdict = "break even with greedy"
        else:
            verdict = "faster than greedy" if speedup > 1 else "slower than greedy"
        self.text.value = (
            "<p style='font-size:1.2em'>"
            f"Eq. 1: <b>{formula:.3f}</b> tokens per round &nbsp; | &nbsp; "
            f"simulated ({self.n_rounds:,} rounds): <b>{mean:.3f} \u00b1 {standard_error:.3f}</b>"
            f"<br>predicted speedup: <b>{speedup:.2f}\u00d7</b> ({verdict}), if verifying "
            f"{k + 1} positions costs one plain step and a draft step costs c = {c:.2f}.</p>"
        )
        self.figure = eq1_figure(alpha, k, c, mean, standard_error)
        self.picture.value = figure_png(self.figure)


class WidthExplorer(_Shown):
    """Lesson 04: a width slider that re-measures the forward-cost curve of a random model.

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
        repeats: int = 5,
        tolerance: float = 1.3,
        seed: int = 0,
        blas_threads: int | None = 1,
    ):
        if 1 not in n_new_values or 5 not in n_new_values:
            raise ValueError("n_new_values must include 1 and 5 (the ratio the lesson reads)")
        self.n_layer, self.n_past, self.repeats = n_layer, n_past, repeats
        self.n_new_values, self.tolerance = list(n_new_values), tolerance
        self.seed, self.blas_threads = seed, blas_threads
        self.width = widgets.IntSlider(
            value=width, min=128, max=768, step=128, description="width",
            continuous_update=False,
        )  # fmt: skip
        self.text = widgets.HTML()
        self.picture = widgets.Image(format="png")
        self.figure: Figure | None = None
        self.measured: dict = {}  # width -> speclab.timing.Timings, every width visited
        self.width.observe(self._on_change, names="value")
        self.box = widgets.VBox([self.width, self.text, self.picture])
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
        from speclab.bench import free_positions, matmul_params
        from speclab.figures import forward_cost_figure
        from speclab.gpt import GPTConfig

        step = self.width.step
        width = min(self.width.max, max(self.width.min, round(self.width.value / step) * step))
        if width != self.width.value:  # typed into the readout off the step: snap, which re-runs
            self.width.value = width
            return
        timings = self.measure(width)
        self.measured[width] = timings
        ratio = timings.ratio(5, 1)
        free = free_positions(timings, self.tolerance)
        n_head = max(2, width // 64)
        config = GPTConfig(self.n_layer, n_head, width, self.n_past + max(self.n_new_values))
        megabytes = matmul_params(config) * 8 / 1e6  # float64 weights read per forward
        one_token_ms = timings.median[timings.index(1)] * 1e3
        self.text.value = (
            "<p style='font-size:1.2em'>"
            f"width <b>{width}</b> ({n_head} heads, {self.n_layer} block(s), random weights, "
            f"{megabytes:.1f} MB of weights per forward): 5 new positions cost "
            f"<b>{ratio['median']:.2f}\u00d7</b> one (interquartile {ratio['q25']:.2f}\u2013"
            f"{ratio['q75']:.2f}); extra positions stay within {self.tolerance:g}\u00d7 up to "
            f"<b>n_new = {free}</b>. 1-token forward: {one_token_ms:.2f} ms.</p>"
        )
        curves = {f"width {w}": self.measured[w] for w in sorted(self.measured)}
        self.figure = forward_cost_figure(curves, self.tolerance)
        self.picture.value = figure_png(self.figure)


class SpeculativeExplorer(_Shown):
    """Lesson 05: pick a prompt, a drafter and k; watch the rounds of a real run.

    target: the target model; drafters: {name: a function making a fresh drafter};
    prompts: {name: text}. Each change decodes the prompt greedily and speculatively and
    shows the continuation coloured by token role with its legend (`.text`), the round
    statistics and the byte-for-byte check (`.stats`), the per-round table (`.table`) and
    `speclab.figures.rounds_figure` (`.picture`). The latest runs are `.result` and
    `.greedy`; `.matches` says whether they are the same bytes.
    """

    def __init__(
        self,
        target,
        drafters: dict,
        prompts: dict,
        prompt: str | None = None,
        drafter: str | None = None,
        k: int = 4,
        max_new_tokens: int = 80,
        adaptive: bool = False,
    ):
        self.target, self.drafters, self.prompts = target, dict(drafters), dict(prompts)
        self._greedy_runs: dict = {}  # (prompt name, max_new_tokens) -> greedy DecodeResult
        self.prompt = widgets.Dropdown(
            options=list(self.prompts), value=prompt or next(iter(self.prompts)),
            description="prompt",
        )  # fmt: skip
        self.drafter = widgets.Dropdown(
            options=list(self.drafters), value=drafter or next(iter(self.drafters)),
            description="drafter",
        )  # fmt: skip
        self.k = widgets.IntSlider(value=k, min=1, max=8, description="k (drafts)",
                                   continuous_update=False)  # fmt: skip
        self.max_new_tokens = widgets.IntSlider(
            value=max_new_tokens, min=10, max=200, step=10, description="new tokens",
            continuous_update=False,
        )  # fmt: skip
        self.adaptive = widgets.Checkbox(value=adaptive, description="adaptive k (at most k)")
        self.text, self.stats, self.table = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.picture = widgets.Image(format="png")
        self.figure: Figure | None = None
        controls = (self.prompt, self.drafter, self.k, self.max_new_tokens, self.adaptive)
        for control in controls:
            control.observe(self._on_change, names="value")
        self.box = widgets.VBox(
            [widgets.HBox(controls[:2]), widgets.HBox(controls[2:]), self.text, self.stats,
             self.picture, self.table]
        )  # fmt: skip
        self.update()

    def greedy(self):
        """Plain greedy decoding of the chosen prompt (kept per prompt and length)."""
        from speclab.decoding import greedy_decode
        from speclab.tokenizer import encode

        key = (self.prompt.value, self.max_new_tokens.value)
        if key not in self._greedy_runs:
            prompt = encode(self.prompts[self.prompt.value])
            self._greedy_runs[key] = greedy_decode(self.target, prompt, key[1])
        return self._greedy_runs[key]

    def update(self) -> None:
        import pandas as pd

        from speclab.decoding import speculative_decode
        from speclab.demo import match_line, statistics_lines
        from speclab.figures import rounds_figure
        from speclab.render import render_html, round_rows
        from speclab.tokenizer import encode

        prompt = self.prompts[self.prompt.value]
        self.result = speculative_decode(
            self.target, self.drafters[self.drafter.value](), encode(prompt),
            self.max_new_tokens.value, self.k.value, adaptive=self.adaptive.value,
        )  # fmt: skip
        greedy = self.greedy()
        self.matches, verdict = match_line(self.result, greedy)
        self.text.value = render_html(self.result, prompt=prompt)
        policy = "adaptive, at most" if self.adaptive.value else "exactly"
        settings = (
            f"{self.prompt.value}: {self.drafter.value} drafter, {policy} k = {self.k.value} "
            f"drafts per round, {self.max_new_tokens.value} new tokens"
        )
        lines = [settings] + statistics_lines(self.result, greedy)[:2]
        self.stats.value = "<br>".join([*map(html.escape, lines), f"<b>{html.escape(verdict)}</b>"])
        self.table.value = pd.DataFrame(round_rows(self.result)).to_html(
            index=False, float_format="{:.2f}".format
        )
        self.figure = rounds_figure(self.result)
        self.picture.value = figure_png(self.figure)


SAMPLING_LABELS = ("A", "B", "C", "D")  # lesson 07's four-token vocabulary


class SamplingRuleExplorer(_Shown):
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
        self.labels, self.seed = tuple(labels), seed

        def slider(value, name):
            return widgets.FloatSlider(value=value, min=0.0, max=1.0, step=0.05,
                                       description=name, continuous_update=False)  # fmt: skip

        self.target_sliders = [slider(v, f"p({t})") for v, t in zip(p_target, labels, strict=True)]
        self.draft_sliders = [slider(v, f"q({t})") for v, t in zip(p_draft, labels, strict=True)]
        self.steps = widgets.SelectionSlider(
            options=[100, 300, 1000, 3000, 10000], value=steps, description="steps",
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
        self._paused = True
        try:
            for sliders, values in ((self.target_sliders, p_target), (self.draft_sliders, p_draft)):
                for slider, value in zip(sliders, values or [], strict=False):
                    slider.value = value
        finally:
            self._paused = False
        self.update()

    def _on_change(self, change) -> None:
        if not getattr(self, "_paused", False):
            self.update()

    def distributions(self):
        """(p, q), each [n_vocab] and normalised; None if a side has no weight at all."""
        p = np.array([s.value for s in self.target_sliders], dtype=np.float64)
        q = np.array([s.value for s in self.draft_sliders], dtype=np.float64)
        if p.sum() <= 0 or q.sum() <= 0:
            return None
        return p / p.sum(), q / q.sum()

    def simulate(self, p, q) -> dict:
        """Emitted first tokens [steps] per rule, one real step call per simulated round."""
        from speclab.sampling import biased_resample_step, sample_tokens, speculative_step

        rules = dict(zip(self.RULES, (speculative_step, biased_resample_step), strict=True))
        rows, q_rows = np.stack([p, p]), q[None, :]  # [2, n_vocab], [1, n_vocab]
        samples = {}
        for name, step in rules.items():
            rng = np.random.default_rng(self.seed)
            tokens = []
            for x in sample_tokens(q, self.steps.value, rng).tolist():
                n_accepted, token = step(rows, q_rows, [x], rng)
                tokens.append(x if n_accepted else token)
            samples[name] = np.array(tokens, dtype=np.int64)
        return samples

    def update(self) -> None:
        from speclab.figures import sampling_convergence_figure, sampling_rule_figure
        from speclab.sampling import (
            chi_square_test,
            expected_acceptance,
            expected_match_acceptance,
            leftover_distribution,
        )

        found = self.distributions()
        if found is None:
            self.text.value = (
                "<p style='font-size:1.2em'>Give both the target and the draft some "
                "probability: a distribution's weights cannot all be 0.</p>"
            )
            return
        p, q = found
        self.samples = self.simulate(p, q)
        lines = []
        for name, tokens in self.samples.items():
            test = chi_square_test(np.bincount(tokens, minlength=p.size), p)
            verdict = "rejects" if test.rejects() else "does not reject"
            lines.append(
                f"{name}: chi-square {test.statistic:.1f} on {test.df} df, p-value "
                f"<b>{test.p_value:.3g}</b> (the test {verdict} 'the output is p')"
            )
        leftover = leftover_distribution(p, q)
        shown = ", ".join(f"{t} {v:.2f}" for t, v in zip(self.labels, leftover, strict=True))
        self.text.value = (
            "<p style='font-size:1.2em'>"
            f"p = [{', '.join(f'{v:.2f}' for v in p)}], q = [{', '.join(f'{v:.2f}' for v in q)}]"
            f"<br>a draft is kept with probability \u03a3 min(p, q) = "
            f"<b>{expected_acceptance(p, q):.3f}</b> (rule (a) would keep only \u03a3 p\u00b7q = "
            f"{expected_match_acceptance(p, q):.3f}); leftover: {shown}"
            f"<br>{self.steps.value:,} simulated steps per rule:<br>" + "<br>".join(lines) + "</p>"
        )
        self.rule_figure = sampling_rule_figure(p, q, self.labels)
        self.rule_picture.value = figure_png(self.rule_figure)
        self.figure = sampling_convergence_figure(p, self.samples, self.labels)
        self.picture.value = figure_png(self.figure)


class BoundaryExplorer(_Shown):
    """Lesson 06: which scenarios pay? Sliders for k, c and the verify cost over alpha.

    scenario_alphas: {scenario: measured alpha} from a `speclab bench decode` report; each
    is judged against the break-even alpha of the curve with the verify cost.
    """

    def __init__(self, scenario_alphas: dict | None = None, k: int = 4, c: float = 0.02,
                 verify_per_position: float = 0.05):  # fmt: skip
        self.scenario_alphas = dict(scenario_alphas or {})
        self.k = widgets.IntSlider(value=k, min=1, max=8, description="k (drafts)")
        self.c = widgets.FloatSlider(value=c, min=0.0, max=1.0, step=0.01,
                                     description="c (draft cost)")  # fmt: skip
        self.verify = widgets.FloatSlider(value=verify_per_position, min=0.0, max=0.5, step=0.01,
                                          description="verify/extra")  # fmt: skip
        self.text = widgets.HTML()
        self.picture = widgets.Image(format="png")
        self.figure: Figure | None = None
        for slider in (self.k, self.c, self.verify):
            slider.observe(self._on_change, names="value")
        self.box = widgets.VBox([self.k, self.c, self.verify, self.text, self.picture])
        self.update()

    def break_even(self) -> tuple[float, float]:
        """Break-even alpha: (Leviathan's formula, with the verify cost)."""
        from speclab.counting import break_even_alpha

        k, c = self.k.value, self.c.value
        return break_even_alpha(k, 1.0, c), break_even_alpha(k, 1.0 + self.verify.value * k, c)

    def verdicts(self) -> dict[str, bool]:
        """{scenario: predicted to pay} with the verify cost counted."""
        _, threshold = self.break_even()
        return {name: bool(alpha > threshold) for name, alpha in self.scenario_alphas.items()}

    def update(self) -> None:
        leviathan, with_verify = self.break_even()
        verdicts = ", ".join(
            f"{name}: {'pays' if pays else 'loses'}" for name, pays in self.verdicts().items()
        )
        self.text.value = (
            "<p style='font-size:1.2em'>break-even \u03b1: "
            f"<b>{leviathan:.2f}</b> (Leviathan) &nbsp;|&nbsp; <b>{with_verify:.2f}</b> "
            f"(with the verify cost)" + (f"<br>predicted: {html.escape(verdicts)}" if verdicts else "")
            + "</p>"
        )  # fmt: skip
        from speclab.figures import boundary_figure

        self.figure = boundary_figure(self.k.value, self.c.value, self.verify.value,
                                      self.scenario_alphas)  # fmt: skip
        self.picture.value = figure_png(self.figure)
