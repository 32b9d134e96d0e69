"""Widgets of lessons 01-03: the quiz, the ABCDEFG path, the speedup sliders.

- `QuizGame` (lesson 01): type 4 answers; the host checks all four at once and you see
  the ticks, the first cross, the dropped rest and the squares moved (accepted + 1).
- `PathExplorer` (lesson 02): pick a prefix and a guess on the path ABCDEFG and see the
  verdict, or the error message of an invalid case.
- `SpeedupExplorer` (lesson 03): sliders for alpha, k and c over Leviathan et al. (2023)
  Eq. 1 and the speedup, with a seeded Monte-Carlo check beside the formula.

Each takes `lang` ("en", "zh", "fa"; None: from the environment): every label and sentence
comes from speclab.i18n's catalogue, and a Persian widget is laid out right to left.
Numbers, letters and formulas stay Latin (the digit convention of speclab.i18n).
"""

import html
from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from speclab.acceptance import DEFAULT_PATH, InvalidGuess, accept, verify_on_path
from speclab.counting import expected_speedup, expected_tokens_per_round, simulate_rounds
from speclab.exercises import explain_invalid
from speclab.figures import CROSS, TICK, check_row_figure, eq1_figure
from speclab.i18n import N_, resolve, translator
from speclab.student_files import cut
from speclab.widgets.base import (
    Shown,
    checked_number,
    figure_png,
    float_slider,
    in_language,
    normalise,
    paragraph,
    visible_text,
)

# Lesson 01's quiz: number answers, so no language or spelling decides right and wrong.
QUIZ_QUESTIONS = (
    N_("How many legs does a spider have?"),
    N_("7 \u00d7 8 = ?"),  # translated only to be isolated as left to right in Persian
    N_("How many sides does a hexagon have?"),
    N_("How many degrees are in a right angle?"),
    N_("(the free square) How many minutes are in two hours?"),
)


QUIZ_KEY = ("8", "56", "6", "90", "120")


def quiz_board(answers: Sequence, answer_key: Sequence[str] = QUIZ_KEY,
               lang: str | None = None) -> list[str]:  # fmt: skip
    """A board of answers as the host reads it, as QuizGame does: one per question but the
    last (the free square is the host's), each `normalise`d, so "８", "۸", "8.0" and "8 " are
    8 (lesson 01 judged them wrong, where its widget judged them right). Numbers may be
    written as numbers. ValueError naming the problem, in lang, for a board of another size
    or an answer that is not text or a whole number."""
    _ = translator(resolve(lang)).gettext
    wanted = len(answer_key) - 1
    if isinstance(answers, str) or not isinstance(answers, Sequence):
        raise ValueError(_("write the board as a list of {n} answers, e.g. {example}").format(
            n=wanted, example=", ".join(f'"{a}"' for a in answer_key[:wanted])))  # fmt: skip
    if len(answers) != wanted:
        raise ValueError(_("write {n} answers, one per question 1 to {n} (the free square is "
                           "the host's): this board has {have}").format(n=wanted, have=len(answers)))  # fmt: skip
    board = []
    for number, answer in enumerate(answers, start=1):
        if isinstance(answer, float) and answer.is_integer():
            answer = int(answer)  # 8.0 written as a number: 8, as the text "8.0" is
        if isinstance(answer, bool) or not isinstance(answer, str | int):
            raise ValueError(_("answer {number} is {value!r}: write text or a whole number")
                             .format(number=number, value=answer))  # fmt: skip
        board.append(normalise(str(answer)))
    return board


class QuizGame(Shown):
    """Lesson 01: four answers on the board, checked by the host all at once."""

    def __init__(
        self,
        answers: Sequence[str] = ("8", "56", "5", "90"),
        questions: Sequence[str] | None = None,
        answer_key: Sequence[str] = QUIZ_KEY,
        lang: str | None = None,
    ):
        self.lang = resolve(lang)
        self.tr = translator(self.lang)
        _ = self.tr.gettext
        if questions is None:
            questions = [_(question) for question in QUIZ_QUESTIONS]
        if len(questions) != len(answer_key):
            raise ValueError("give as many questions as the host has answers")
        answers = quiz_board(answers, answer_key, self.lang)  # a clear error for a bad board
        self.answer_key = [normalise(answer) for answer in answer_key]
        self.questions = list(questions)
        self.answers = [
            widgets.Text(
                value=answer, description=_("Q{number}").format(number=i + 1), placeholder=question
            )
            for i, (answer, question) in enumerate(zip(answers, questions, strict=False))
        ]
        self.text = widgets.HTML()
        self.picture = widgets.Image(format="png")
        self.figure: Figure | None = None
        for box in self.answers:
            box.observe(self._on_change, names="value")
        questions_html = "".join(f"<li>{html.escape(q)}</li>" for q in self.questions)
        self.box = in_language(
            widgets.VBox(
                [
                    widgets.HTML(f"<ol lang='{self.lang}'>{questions_html}</ol>"),
                    *self.answers,
                    self.text,
                    self.picture,
                ]
            ),
            self.lang,
        )
        self.update()

    @property
    def accepted(self) -> int:
        typed = [normalise(box.value) for box in self.answers]
        return accept(typed, self.answer_key)

    def _squares(self, count: int) -> str:
        return self.tr.ngettext("{count} square", "{count} squares", count).format(count=count)

    def update(self) -> None:
        _ = self.tr.gettext
        typed = [visible_text(box.value).strip() for box in self.answers]
        m = self.accepted
        marks = []
        for i, answer in enumerate(typed):
            values = {"number": i + 1, "answer": html.escape(cut(answer, 40)) or _("(blank)")}
            if i < m:
                marks.append(f"{TICK} " + _("Q{number} {answer}").format(**values))
            elif i == m:
                host = _("Q{number} {answer} (host: {key})").format(
                    key=self.answer_key[i], **values
                )
                marks.append(f"{CROSS} {host}")
            else:
                marks.append(_("dropped: Q{number} {answer}").format(**values))
        free = self.answer_key[m]
        if m < len(typed):
            why = _("the host's answer to the one you missed")
        else:
            why = _("the bonus question")
        advance = _("You move {squares}").format(squares=self._squares(m + 1))
        sums = _("{m} right + 1 free ({why}: {free}).").format(m=m, why=why, free=free)
        self.text.value = paragraph(" &nbsp; ".join(marks), self.lang) + paragraph(
            _("{label}: {text}").format(label=f"<b>{advance}</b>", text=sums), self.lang
        )
        self.figure = check_row_figure(
            [cut(normalise(answer), 6) or "?" for answer in typed],
            self.answer_key,
            row_labels=(_("host's answers"), _("your answers"), _("squares moved")),
            title=_("{m} right, {squares}").format(m=m, squares=self._squares(m + 1)),
            added_label=_("free: the host's answer"),
            lang=self.lang,
        )
        self.picture.value = figure_png(self.figure)


class PathExplorer(Shown):
    """Lesson 02: a prefix and a guess on the path, its verdict or its error."""

    def __init__(
        self,
        prefix: str = "",
        guess: str = "ABX",
        path: str = DEFAULT_PATH,
        lang: str | None = None,
    ):
        self.lang = resolve(lang)
        self.tr = translator(self.lang)
        _ = self.tr.gettext
        self.path = path
        for name, value in (("prefix", prefix), ("guess", guess), ("path", path)):
            if not isinstance(value, str):  # guess=5 had ended in traitlets' TraitError
                raise TypeError(_("{name} = {value!r}: write it as text in quotes, e.g. "
                                  "{name}=\"ABX\"").format(name=name, value=value))  # fmt: skip
        self.prefix = widgets.Text(value=prefix, description=_("prefix"), placeholder=_("(empty)"))
        self.guess = widgets.Text(value=guess, description=_("guess"))
        self.text = widgets.HTML()
        self.picture = widgets.Image(format="png")
        self.figure: Figure | None = None
        self.prefix.observe(self._on_change, names="value")
        self.guess.observe(self._on_change, names="value")
        path_line = _("target path: {path}").format(path=f"<b dir='ltr'>{html.escape(path)}</b>")
        self.box = in_language(
            widgets.VBox(
                [
                    widgets.HTML(paragraph(path_line, self.lang, "1em")),
                    self.prefix,
                    self.guess,
                    self.text,
                    self.picture,
                ]
            ),
            self.lang,
        )
        self.update()

    def update(self) -> None:
        _ = self.tr.gettext
        # as the CSV checker reads cells, and without the marks a reader cannot see
        prefix, guess = (
            visible_text(self.prefix.value).strip(),
            visible_text(self.guess.value).strip(),
        )
        try:
            verdict = verify_on_path(prefix, guess, self.path)
        except InvalidGuess:
            problem = explain_invalid(prefix, guess, self.path, self.lang)
            self.text.value = paragraph(
                _("{label}: {text}").format(
                    label=f"{CROSS} <b>{_('invalid')}</b>", text=html.escape(problem)
                ),
                self.lang,
            )
            self.figure = None
            self.picture.value = b""
            return
        added = verdict.added or _("none (end)")  # as the tables and keys say
        parts = (
            (_("accepted"), verdict.accepted or _("none")),
            (_("added by the target"), added),
            (_("new output"), verdict.output),
        )
        self.text.value = paragraph(
            " &nbsp; ".join(
                _("{label}: {text}").format(label=name, text=f"<b>{value}</b>")
                for name, value in parts
            ),
            self.lang,
        )
        target = self.path[len(prefix) : len(prefix) + len(guess) + 1]
        self.figure = check_row_figure(
            guess,
            target,
            prefix=prefix,
            title=_("output: {output}").format(output=verdict.output),
            lang=self.lang,
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
        lang: str | None = None,
    ):
        self.lang = resolve(lang)
        self.tr = translator(self.lang)
        _ = self.tr.gettext
        self.n_rounds = n_rounds
        self.seed = seed
        for name, value, low, high, whole in (("alpha", alpha, 0, 1, False), ("k", k, 1, 10, True),
                                              ("c", c, 0, 0.5, False),
                                              ("n_rounds", n_rounds, 100, 1_000_000, True),
                                              ("seed", seed, 0, 2**32 - 1, True)):  # fmt: skip
            try:  # a slider given a value outside it had kept its nearest end without a word
                checked_number(value, low, high, name, whole=whole)
            except ValueError:
                what = _("a whole number") if whole else _("a number")
                raise ValueError(_("{name} = {value!r}: choose {what} from {low} to {high}").format(
                    name=name, value=value, what=what, low=low, high=high)) from None  # fmt: skip
        self.alpha = float_slider(
            value=alpha, min=0.0, max=1.0, step=0.05, description=_("\u03b1 (accept)")
        )
        self.k = widgets.IntSlider(value=k, min=1, max=10, description=_("k (drafts)"))
        self.c = float_slider(value=c, min=0.0, max=0.5, step=0.01, description=_("c (draft cost)"))
        for slider in (self.alpha, self.k, self.c):
            slider.style.description_width = "initial"  # the whole label, in every language
            # one redraw per release, not per pixel: 0.2-0.4 s each, and a drag from 0 to 1
            # had queued about 5 s of them
            slider.continuous_update = False
        self.text = widgets.HTML()
        self.picture = widgets.Image(format="png")
        self.figure: Figure | None = None
        for slider in (self.alpha, self.k, self.c):
            slider.observe(self._on_change, names="value")
        self.box = in_language(
            widgets.VBox([self.alpha, self.k, self.c, self.text, self.picture]), self.lang
        )
        self.update()

    def simulate(self) -> tuple[float, float]:
        """Mean tokens per round over n_rounds simulated rounds, and its standard error."""
        rng = np.random.default_rng(self.seed)
        tokens = simulate_rounds(self.alpha.value, self.k.value, self.n_rounds, rng) + 1
        return float(tokens.mean()), float(tokens.std(ddof=1) / np.sqrt(tokens.size))

    def update(self) -> None:
        _ = self.tr.gettext
        alpha, k, c = self.alpha.value, self.k.value, self.c.value
        formula = expected_tokens_per_round(alpha, k)
        speedup = expected_speedup(alpha, k, c)
        mean, standard_error = self.simulate()
        shown = round(speedup, 2)  # the verdict goes with the speedup as it is printed
        if shown == 1.0:
            verdict = _("break even with greedy")
        else:
            verdict = _("faster than greedy") if shown > 1 else _("slower than greedy")
        eq1 = _("Eq. 1: {formula} tokens per round").format(formula=f"<b>{formula:.3f}</b>")
        simulated = _("simulated ({rounds} rounds): {mean}").format(
            rounds=f"{self.n_rounds:,}", mean=f"<b>{mean:.3f} \u00b1 {standard_error:.3f}</b>"
        )
        predicted = _(
            "predicted speedup: {speedup} ({verdict}), if verifying {positions} positions "
            "costs one plain step and a draft step costs c = {c}."
        ).format(
            speedup=f"<b>{speedup:.2f}\u00d7</b>", verdict=verdict, positions=k + 1, c=f"{c:.2f}"
        )
        self.text.value = paragraph(
            f"{eq1} &nbsp; | &nbsp; {simulated}<br>{predicted}", self.lang, "1.2em"
        )
        self.figure = eq1_figure(alpha, k, c, mean, standard_error, lang=self.lang)
        self.picture.value = figure_png(self.figure)
