"""Headless tests of the lesson widgets: set a value, check what is shown changes with it.

ipywidgets swallows exceptions raised in callbacks when run in a notebook, so the
callbacks are tested here directly.
"""

import re

import pytest

from speclab.counting import expected_speedup, expected_tokens_per_round
from speclab.figures import CROSS, TICK
from speclab.widgets import QUIZ_KEY, PathExplorer, QuizGame, SpeedupExplorer
from speclab.widgets.base import normalise

PNG_MAGIC = b"\x89PNG"


def figure_texts(fig) -> list[str]:
    import matplotlib.text

    return [t.get_text() for t in fig.findobj(matplotlib.text.Text) if t.get_text()]


def test_quiz_default_round():
    game = QuizGame()
    assert game.accepted == 2
    assert "You move 3 squares" in game.text.value
    assert game.text.value.count(TICK) == 2 and game.text.value.count(CROSS) == 1
    assert "dropped: Q4" in game.text.value
    assert game.picture.value[:4] == PNG_MAGIC


def test_quiz_typing_changes_what_is_shown():
    game = QuizGame()
    before_text, before_png = game.text.value, game.picture.value
    game.answers[2].value = " 6 "  # stray spaces do not matter
    assert game.accepted == 4
    assert game.text.value != before_text
    assert "You move 5 squares" in game.text.value
    assert "bonus" in game.text.value and "120" in game.text.value
    assert game.picture.value != before_png
    assert figure_texts(game.figure).count(TICK) == 4


@pytest.mark.parametrize("six", ["۶", "٦", "６"])  # Persian, Arabic-Indic, full-width
def test_quiz_reads_digits_of_any_script(six):
    """A Persian or Chinese keyboard may type ۶ or ６: the host reads it as 6."""
    game = QuizGame(answers=("۸", "٥٦", six, "９０"), lang="fa")
    assert game.accepted == 4


def test_quiz_reads_a_whole_number_however_it_is_written():
    """'08' and '8.0' were marked wrong against 8; 8.5 and 'eight' still are."""
    assert QuizGame(answers=("08", "56.0", " 6 ", "۹۰٫۰")).accepted == 4  # ٫: Persian decimal
    assert QuizGame(answers=("8", "56", "6", "9e1")).accepted == 3  # not a way to write 90
    assert QuizGame(answers=("8.5", "56", "6", "90")).accepted == 0
    # a Chinese input method's full stop and full-width forms (八 was already read)
    assert QuizGame(answers=("8。", "５６．０", "六。", "九十。")).accepted == 4
    assert QuizGame(answers=("8", "5⁶", "6", "90")).accepted == 1  # 5 to the 6th is not 56
    assert QuizGame(answers=("eight", "56", "6", "90")).accepted == 0


def test_quiz_first_answer_wrong_still_advances_one():
    game = QuizGame()
    game.answers[0].value = "6"
    assert game.accepted == 0
    assert "You move 1 square<" in game.text.value
    assert "(host: 8)" in game.text.value


def test_quiz_later_right_answers_do_not_help():
    game = QuizGame(answers=("8", "50", "6", "90"))
    assert game.accepted == 1
    assert "dropped: Q3 6" in game.text.value and "dropped: Q4 90" in game.text.value


def test_quiz_escapes_what_is_typed():
    game = QuizGame()
    game.answers[0].value = "<b>8"
    assert "<b>8" not in game.text.value
    assert "&lt;b&gt;8" in game.text.value


def test_quiz_needs_a_free_square():
    with pytest.raises(ValueError, match="free square"):
        QuizGame(answers=("1", "2"), questions=("a", "b"), answer_key=("1", "2"))


def test_path_explorer_table_rows():
    explorer = PathExplorer()
    rows = [
        ("", "ABX", "AB", "C", "ABC"),
        ("", "ABC", "ABC", "D", "ABCD"),
        ("", "XBC", "none", "A", "A"),
        ("ABCD", "EFG", "EFG", "none (end)", "ABCDEFG"),
    ]
    for prefix, guess, accepted, added, output in rows:
        explorer.prefix.value = prefix
        explorer.guess.value = guess
        shown = explorer.text.value
        assert f"accepted: <b>{accepted}</b>" in shown
        assert f"added by the target: <b>{added}</b>" in shown
        assert f"new output: <b>{output}</b>" in shown
        assert explorer.figure is not None
        assert explorer.picture.value[:4] == PNG_MAGIC


@pytest.mark.parametrize(
    ("prefix", "guess", "phrase"),
    [
        ("", "", "empty"),
        ("", "abx", "use capitals"),
        ("", "A1", "only capital letters"),
        ("ABD", "E", "not a prefix"),
        ("ABCDEFG", "A", "whole path"),
        ("ABCD", "EFGH", "has only 3 left"),
        ("", "ABCDEFGH", "only 7 are on the path ABCDEFG"),  # not "after prefix ''"
        ("(empty)", "ABC", "leave the prefix cell blank"),  # the placeholder, as the CSV says
    ],
)
def test_path_explorer_shows_each_error(prefix, guess, phrase):
    explorer = PathExplorer()
    explorer.prefix.value = prefix
    explorer.guess.value = guess
    assert "invalid" in explorer.text.value
    assert phrase in explorer.text.value
    assert explorer.figure is None and bytes(explorer.picture.value) == b""
    explorer.prefix.value, explorer.guess.value = "", "ABX"  # recovers
    assert "new output: <b>ABC</b>" in explorer.text.value


def numbers_in(text: str) -> list[float]:
    return [float(n) for n in re.findall(r"\d+\.\d+", text)]


def test_speedup_explorer_follows_its_sliders():
    explorer = SpeedupExplorer(alpha=0.8, k=4, c=0.05)
    assert f"{expected_tokens_per_round(0.8, 4):.3f}" in explorer.text.value
    assert f"{expected_speedup(0.8, 4, 0.05):.2f}" in explorer.text.value
    before_png = explorer.picture.value
    explorer.alpha.value = 0.3
    assert f"<b>{expected_tokens_per_round(0.3, 4):.3f}</b>" in explorer.text.value
    assert explorer.picture.value != before_png
    explorer.k.value = 7
    assert f"<b>{expected_tokens_per_round(0.3, 7):.3f}</b>" in explorer.text.value
    assert "k = 7" in " ".join(figure_texts(explorer.figure))
    explorer.c.value = 0.5
    assert f"{expected_speedup(0.3, 7, 0.5):.2f}" in explorer.text.value
    assert "slower than greedy" in explorer.text.value


def test_speedup_explorer_verdict_agrees_with_the_speedup_it_prints():
    """0.9965x is printed 1.00x: the verdict says break even, not slower."""
    speedup = expected_speedup(0.15, 3, 0.06)
    assert f"{speedup:.2f}" == "1.00" and speedup != 1.0
    explorer = SpeedupExplorer(alpha=0.15, k=3, c=0.06)
    assert "<b>1.00\u00d7</b> (break even with greedy)" in explorer.text.value
    explorer.c.value = 0.07  # now 0.97x
    assert f"{expected_speedup(0.15, 3, 0.07):.2f}" == "0.97"
    assert "(slower than greedy)" in explorer.text.value


def test_speedup_explorer_monte_carlo_agrees_with_formula():
    explorer = SpeedupExplorer()
    for alpha in (0.0, 0.35, 0.6, 0.9, 1.0):
        explorer.alpha.value = alpha
        mean, standard_error = explorer.simulate()
        formula = expected_tokens_per_round(alpha, explorer.k.value)
        assert abs(mean - formula) <= 5 * standard_error + 1e-12
        assert f"<b>{mean:.3f} \u00b1 {standard_error:.3f}</b>" in explorer.text.value


def test_speedup_explorer_is_seeded():
    first, second = SpeedupExplorer(alpha=0.7), SpeedupExplorer(alpha=0.7)
    assert first.text.value == second.text.value


def test_widgets_have_a_notebook_display():
    for holder in (QuizGame(), PathExplorer(), SpeedupExplorer()):
        bundle = holder._repr_mimebundle_()
        assert "application/vnd.jupyter.widget-view+json" in bundle


def test_quiz_takes_half_a_character_and_a_very_long_answer():
    """A browser can send a lone surrogate; a student can paste a page. Neither breaks the
    picture: the first is shown as �, the second cut with an ellipsis."""
    game = QuizGame()
    game.answers[0].value = "8\ud800"
    assert "8\ufffd" in game.text.value and game.accepted == 0
    game.answers[0].value = "8"
    game.answers[1].value = "9" * 5000
    assert game.accepted == 1
    assert "9" * 5000 not in game.text.value and "9999..." in game.text.value
    assert game.figure.get_size_inches()[0] < 20


def test_an_emoji_answer_draws_a_box_without_a_warning_in_the_cell(recwarn):
    game = QuizGame()
    game.answers[0].value = "8\U0001f577"  # a spider: no font here has it
    assert game.picture.value[:4] == b"\x89PNG"
    assert not [w for w in recwarn if "missing from" in str(w.message)]


def test_path_explorer_reads_cells_as_the_csv_checker_does():
    """A space typed after a guess was an error in the widget and stripped by the checker."""
    explorer = PathExplorer()
    explorer.prefix.value, explorer.guess.value = " A ", "BCX "
    assert "new output: <b>ABCD</b>" in explorer.text.value  # B, C kept; the target adds D


def test_a_long_quiz_answer_stays_inside_its_box():
    """Answers were cut at 12 characters in a box that holds about 4: 'eight legs' spilled
    over the row's label."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.patches import Rectangle

    answers = ("eight legs", "fifty-six", "6", "90")
    game = QuizGame(answers=answers)
    fig = game.figure
    renderer = FigureCanvasAgg(fig).get_renderer()
    ax = fig.axes[0]
    boxes = [p.get_window_extent(renderer) for p in ax.patches if isinstance(p, Rectangle)]
    in_a_box = []
    for text in ax.texts:
        shown = text.get_window_extent(renderer)
        centre = ((shown.x0 + shown.x1) / 2, (shown.y0 + shown.y1) / 2)
        # a text belongs to the box its centre is in (a text wider than its box on both
        # sides has neither corner in it), and stays within it
        for box in [b for b in boxes if b.contains(*centre)]:
            assert box.x0 <= shown.x0 and shown.x1 <= box.x1, text.get_text()
            in_a_box.append(text.get_text())
    for answer in answers:  # every answer is drawn in a box, shortened or whole
        assert any(answer.startswith(t.rstrip(".")) for t in in_a_box if t), (answer, in_a_box)


def test_lesson_01s_board_is_read_as_its_widget_reads_it():
    """Lesson 01's cells compared the board with `!=`: "８", "۸" and "8 " were crosses there
    and ticks in its widget; numbers, or five answers, ended in a TypeError or IndexError."""
    from speclab.acceptance import accept
    from speclab.widgets import quiz_board

    boards = (["８", "５６", "6", "９０"], ["۸", "۵۶", "۶", "۹۰"], ["8 ", "056", "6.0", 90.0],
              ["8\u200b", "\u200f56", "\ufeff6", "9\u200c0"],  # invisible marks, copied along
              ["八", "五十六", "六", "九十"])  # Chinese numerals: 八 had been a cross  # fmt: skip
    for board in boards:
        assert accept(quiz_board(board), QUIZ_KEY) == 4, board
        game = QuizGame(answers=board)
        assert accept([normalise(box.value) for box in game.answers], QUIZ_KEY) == 4
    with pytest.raises(ValueError, match="write 4 answers, one per question 1 to 4 .* has 5"):
        quiz_board(["8", "56", "6", "90", "120"])
    with pytest.raises(ValueError, match="this board has 3"):
        QuizGame(answers=["8", "56", "6"])
    with pytest.raises(ValueError, match=r"answer 2 is 56\.5: write text or a whole number"):
        quiz_board(["8", 56.5, "6", "90"])
    with pytest.raises(ValueError, match="as a list of 4 answers"):
        quiz_board("8, 56, 6, 90")
    with pytest.raises(ValueError, match="这块答题板上有 5 个"):
        quiz_board(["8", "56", "6", "90", "1"], lang="zh")


def test_a_slider_set_to_nan_from_code_goes_back_and_the_widget_stays_true():
    """A float slider takes nan from code (`explorer.c.value = float("nan")`): the boundary
    explorer then said every scenario pays, at a break-even alpha of 0.00."""
    import ipywidgets

    from speclab.widgets import BoundaryExplorer, SamplingRuleExplorer

    for explorer in (BoundaryExplorer({"a": 0.5, "b": 0.8}, k=4, c=0.1, verify_per_position=0.05),
                     SamplingRuleExplorer(p_target=(4, 3, 2, 1), p_draft=(1, 1, 1, 1), steps=100)):  # fmt: skip
        sliders = [w for w in vars(explorer).values() if isinstance(w, ipywidgets.FloatSlider)]
        sliders += [w for v in vars(explorer).values() if isinstance(v, list) for w in v
                    if isinstance(w, ipywidgets.FloatSlider)]  # fmt: skip
        assert sliders, explorer
        for slider in sliders[:3]:  # each set and set back updates the widget twice
            before, shown = slider.value, explorer.text.value
            slider.value = float("nan")
            assert slider.value == before and explorer.text.value == shown, slider.description


def test_the_path_explorer_reads_guesses_as_the_quiz_does_and_repeats_them_short():
    """A 5,000-letter paste was repeated whole (twice, for a lower-case one); 'a c' was told
    "use capitals, e.g. 'A C'", which is refused again; a direction mark a reader cannot see
    was reported at position 1, where the quiz drops it."""
    import html as html_module

    from speclab.acceptance import SHOWN_CHARS
    from speclab.widgets import PathExplorer

    def said(widget) -> str:
        return html_module.unescape(re.sub("<[^>]+>", "", widget.text.value))

    explorer = PathExplorer(prefix="A", guess="BCX")
    explorer.guess.value = "b" * 5000
    assert len(said(explorer)) < 3 * SHOWN_CHARS + 100
    assert "'" + "b" * (SHOWN_CHARS - 3) + "...' has the lower-case letter" in said(explorer)
    explorer.guess.value = "a c"  # capitals alone would not make it valid: the space is named
    assert "guess 'a c' has a space at position 2" in said(explorer)
    for guess, answer in [("\u200fBCX", "\u200f8"), ("\u2068BCX\u2069", "\u2068\u06f8\u2069"),
                          ("B\u200bCX\ufeff", "8\u200b\ufeff")]:  # fmt: skip
        explorer.guess.value = guess
        assert "new output: ABC" in said(explorer), guess
        game = QuizGame(answers=[answer, "56", "6", "90"])
        assert game.accepted == 4 and "\\u" not in said(game), answer


def test_a_value_typed_off_the_readout_is_the_value_the_readout_shows():
    """The front end keeps a typed value within min and max only: c = 0.004 was shown as 0.00
    while the speedup (0.96x, "slower than greedy") was computed with 0.004."""
    explorer = SpeedupExplorer(alpha=0.0, k=10, c=0.05)
    explorer.c.value = 0.004  # what typing 0.004 into the readout sends
    assert explorer.c.value == 0.0
    assert "<b>1.00\u00d7</b> (break even with greedy)" in explorer.text.value  # Eq. 1 at c = 0
    explorer.alpha.value = 0.999  # shown as 1.00: computed as 1.00
    assert explorer.alpha.value == 1.0 and "<b>11.000</b> tokens per round" in explorer.text.value


def test_a_value_given_off_the_readout_starts_at_the_value_the_readout_shows():
    """Only typed values were set to the readout: SpeedupExplorer(c=0.004) computed its
    speedup with 0.004 while the readout and the sentence beside it said c = 0.00."""
    from speclab.widgets.costs import BoundaryExplorer

    explorer = SpeedupExplorer(alpha=0.999, k=10, c=0.004)
    assert (explorer.alpha.value, explorer.c.value) == (1.0, 0.0)
    assert "<b>11.000</b> tokens per round" in explorer.text.value  # Eq. 1 at alpha = 1
    boundary = BoundaryExplorer({"copy-heavy": 0.9}, k=4, c=0.004, verify_per_position=0.1237)
    assert (boundary.c.value, boundary.verify.value) == (0.0, 0.124)


def test_a_slider_is_set_to_its_readout_only_where_the_readout_can_show_every_step():
    """Setting a slider to what its readout shows must not move it off its steps: a readout
    coarser than the step (0.001 steps, two decimals) or none at all is left alone; a half
    rounds up, as the browser's readout does (0.125 reads 0.13)."""
    import ipywidgets as widgets

    from speclab.widgets.base import Shown

    class Holder(Shown):
        def __init__(self, slider):
            self.updates = 0
            slider.observe(self._on_change, names="value")

        def update(self):
            self.updates += 1

    fine = widgets.FloatSlider(value=0.0, min=0.0, max=1.0, step=0.001, readout_format=".2f")
    hidden = widgets.FloatSlider(value=0.0, min=0.0, max=1.0, step=0.01, readout=False)
    usual = widgets.FloatSlider(value=0.0, min=0.0, max=1.0, step=0.01, readout_format=".2f")
    for slider in (fine, hidden, usual):
        Holder(slider)
    fine.value, hidden.value, usual.value = 0.004, 0.004, 0.125
    assert (fine.value, hidden.value, usual.value) == (0.004, 0.004, 0.13)


@pytest.mark.parametrize(
    ("lang", "given", "message"),
    [("en", {"alpha": 1.5}, "alpha = 1.5: choose a number from 0 to 1"),
     ("en", {"k": 0}, "k = 0: choose a whole number from 1 to 10"),
     ("zh", {"c": 0.9}, "c = 0.9：请选 0 到 0.5 之间的一个数"),
     ("fa", {"k": 2.5}, "k = 2.5: یک عدد صحیح از 1 تا 10 انتخاب کنید")],
)  # fmt: skip
def test_the_speedup_explorer_names_a_value_off_its_sliders(lang, given, message):
    """SpeedupExplorer(alpha=1.5) showed and computed alpha = 1.0 without a word."""
    with pytest.raises(ValueError, match=re.escape(message)):
        SpeedupExplorer(lang=lang, **given)


@pytest.mark.parametrize(
    ("typed", "number"),
    [("八", 8), ("十", 10), ("十五", 15), ("五十六", 56), ("九十", 90), ("一百零五", 105),
     ("两千零一十", 2010), ("零", 0), ("一百五", 150), ("三千五", 3500), ("三千零五", 3005),
     ("一百一十", 110)],  # the short form: 一百五 is 150, not 105
)  # fmt: skip
def test_chinese_numerals_read_as_the_number_they_write(typed, number):
    from speclab.widgets.base import chinese_number

    assert chinese_number(typed) == number and normalise(f" {typed} ") == str(number)


@pytest.mark.parametrize(
    "typed", ["五六", "一零", "十百", "百百", "八.5", "八个", "", "十零", "零十", "千百", "一百零"]
)
def test_other_chinese_text_is_left_as_text(typed):
    from speclab.widgets.base import chinese_number

    assert chinese_number(typed) is None


def test_seeds_and_round_counts_are_named_where_they_are_given():
    """SpeedupExplorer(seed=-1) ended in numpy's "expected non-negative integer", naming no
    argument; n_rounds=0 in a division by zero."""
    from speclab.widgets import SamplingRuleExplorer

    for make, message in (
        (lambda: SpeedupExplorer(seed=-1), "seed = -1: choose a whole number from 0 to 4294967295"),
        (lambda: SpeedupExplorer(n_rounds=0), "n_rounds = 0: choose a whole number from 100"),
        (lambda: SamplingRuleExplorer(seed=-1), "seed -1: choose a whole number from 0 to 4294967295"),
    ):  # fmt: skip
        with pytest.raises(ValueError, match=re.escape(message)):
            make()
