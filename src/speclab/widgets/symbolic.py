"""Widgets of lessons 01-03: the quiz, the ABCDEFG path, the speedup sliders.

- `QuizGame` (lesson 01): type 4 answers; the host checks all four at once and you see
  the ticks, the first cross, the dropped rest and the squares advanced (accepted + 1).
- `PathExplorer` (lesson 02): pick a prefix and a guess on the path ABCDEFG and see the
  verdict, or the error message of an invalid case.
- `SpeedupExplorer` (lesson 03): sliders for alpha, k and c over Leviathan et al. (2023)
  Eq. 1 and the speedup, with a seeded Monte-Carlo check beside the formula.
"""

import html
from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from speclab.acceptance import DEFAULT_PATH, InvalidGuess, accept, verify_on_path
from speclab.counting import expected_speedup, expected_tokens_per_round, simulate_rounds
from speclab.figures import CROSS, TICK, check_row_figure, eq1_figure
from speclab.widgets.base import Shown, figure_png, normalise, squares

# Lesson 01's quiz: number answers, so no language or spelling decides right and wrong.
QUIZ_QUESTIONS = (
    "How many legs does a spider have?",
    "7 \u00d7 8 = ?",
    "How many sides does a hexagon have?",
    "How many degrees are in a right angle?",
    "(the free square) How many minutes are in two hours?",
)


QUIZ_KEY = ("8", "56", "6", "90", "120")


class QuizGame(Shown):
    """Lesson 01: four answers on the board, checked by the host all at once."""

    def __init__(
        self,
        answers: Sequence[str] = ("8", "56", "5", "90"),
        questions: Sequence[str] = QUIZ_QUESTIONS,
        answer_key: Sequence[str] = QUIZ_KEY,
    ):
        if len(answer_key) != len(answers) + 1 or len(questions) != len(answer_key):
            raise ValueError("the host needs one more answer (the free square) than you write")
        self.answer_key = [normalise(answer) for answer in answer_key]
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
        typed = [normalise(box.value) for box in self.answers]
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
            f"<p style='font-size:1.3em'><b>You advance {squares(m + 1)}</b>: "
            f"{m} right + 1 free ({why}: {free}).</p>"
        )
        self.figure = check_row_figure(
            [normalise(answer) or "?" for answer in typed],
            self.answer_key,
            row_labels=("host's answers", "your answers", "squares advanced"),
            title=f"{m} right, {squares(m + 1)}",
            added_label="free: the host's answer",
        )
        self.picture.value = figure_png(self.figure)


class PathExplorer(Shown):
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


class SpeedupExplorer(Shown):
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
