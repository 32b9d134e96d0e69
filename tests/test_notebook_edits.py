"""The cells a student is told to edit, run with the edits students make.

Lesson 01 invites a board of one's own answers, lesson 02 a guesses file of one's own; the
notebooks run in `make test` only with the shipped values, so a board with every answer
right, or a file with the usual slips, is run here: the cells' sentences must still be true.
Each notebook's code cells run in one namespace, `display` captured after the first cell.
"""

import json

import pytest

from speclab.paths import repo_root

NOTEBOOKS = repo_root() / "notebooks"


def shown_markdown(notebook: str, cells: list[int], edits: dict[int, tuple[str, str]]) -> list[str]:
    """The Markdown text the given code cells display, each cell's `old` text replaced by `new`."""
    source = json.loads((NOTEBOOKS / notebook).read_text(encoding="utf-8"))["cells"]
    shown, namespace = [], {}
    for index in cells:
        code = "".join(source[index]["source"])
        if index in edits:
            old, new = edits[index]
            assert old in code, (notebook, index)
            code = code.replace(old, new)
        exec(compile(code, f"{notebook}, cell {index}", "exec"), namespace)  # noqa: S102
        namespace["display"] = lambda shown_object, *_, **__: shown.append(
            str(getattr(shown_object, "data", shown_object))
        )
    return shown


BOARD = 'board = ["8", "56", "5", "90"]'


@pytest.mark.parametrize("folder", ["", "zh/", "fa/"])
def test_lesson_01_with_every_answer_right(folder):
    (said,) = shown_markdown(
        f"{folder}01_quiz_game.ipynb", [1, 3, 5, 6], {3: (BOARD, 'board = ["8", "56", "6", "90"]')}
    )[-1:]
    expected = {
        "": ["You get **4 ticks** and no cross, and you move **5 squares**",
             "No right answer was dropped."],
        "zh/": ["没有题被划掉", "没有答对却作废的答案"],
        "fa/": ["هیچ پرسشی خط نمی‌خورد", "هیچ پاسخ درستی کنار گذاشته نشد"],
    }[folder]  # fmt: skip
    assert all(phrase in said for phrase in expected), said


@pytest.mark.parametrize("folder", ["", "zh/", "fa/"])
def test_lesson_01_with_the_first_answer_wrong(folder):
    (said,) = shown_markdown(
        f"{folder}01_quiz_game.ipynb", [1, 3, 5, 6], {3: (BOARD, 'board = ["7", "56", "6", "90"]')}
    )[-1:]
    expected = {
        "": ["You get **0 ticks**, a cross on question 1",
             "you move **1 square**: 0 right answers plus the free square",
             "Right but dropped: question 2, question 3, question 4. They were written"],
        "zh/": ["第 1 题被划掉", "答对了却作废的：第 2 题、第 3 题、第 4 题"],
        "fa/": ["پرسش ۱ خط می‌خورد", "درست اما کنار گذاشته: پرسش ۲، پرسش ۳، پرسش ۴"],
    }[folder]  # fmt: skip
    assert all(phrase in said for phrase in expected), said


SLIPS = "prefix,guess,expected_output\n,ABC,ABC\n,ABX,AB\nABCDE,FG,ABCDEF\n"


@pytest.mark.parametrize("folder", ["", "zh/", "fa/"])
def test_lesson_02_explains_each_usual_slip_truly(folder, tmp_path):
    """The key's usual slips: forgetting the target's added symbol after a guess accepted
    whole, forgetting it after a rejection, and adding one past the end of the path."""
    mine = tmp_path / "maria.csv"
    mine.write_text(SLIPS, encoding="utf-8")
    notebook = f"{folder}02_symbolic_acceptance.ipynb"
    cells = json.loads((NOTEBOOKS / notebook).read_text(encoding="utf-8"))["cells"]
    first = cells[19]["source"][0].rstrip("\n")  # guesses_file = ...  # your own file: ...
    assert first.startswith("guesses_file = "), first
    said = shown_markdown(notebook, [1, 19, 20], {19: (first, f"guesses_file = {str(mine)!r}")})
    slips = said[-3:]
    if not folder:
        assert slips == [
            "Row 2 expected ABC, but the output is ABCD: the whole guess ABC is accepted, and the "
            "target adds D.",
            "Row 3 expected AB, but the output is ABC: the guess ABX is rejected at symbol 3, so "
            "the rest of it is dropped, and the target adds C.",
            "Row 4 expected ABCDEF, but the output is ABCDEFG: the whole guess FG is accepted, and "
            "the path has ended: nothing is added.",
        ]
    elif folder == "zh/":
        assert "整个猜测 ABC 都被接受" in slips[0] and "目标再添上 D" in slips[0]
        assert "路径已到头" in slips[2]
    else:
        assert "کل حدس <bdi>ABC</bdi> پذیرفته می‌شود" in slips[0]
        assert "مسیر به پایان رسیده است" in slips[2]


FOUR = 'text = encode("for i in range(10):")'


@pytest.mark.parametrize("text", ["", "a", "abc"])
def test_lesson_03b_four_positions_with_a_text_too_short(text):
    """The cell reads the bars after a prompt and 3 more tokens: a shorter text is told so."""
    said = shown_markdown(
        "03b_what_a_language_model_does.ipynb", [1, 2, 16], {16: (FOUR, f"text = encode({text!r})")}
    )
    assert "needs at least 4 bytes" in said[-1], said


def test_lesson_03b_four_positions_with_a_text_of_its_own():
    said = shown_markdown(
        "03b_what_a_language_model_does.ipynb", [1, 2, 16], {16: (FOUR, 'text = encode("abcd")')}
    )
    assert "after 'a'" in said[-1] and "after 'abcd'" in said[-1], said
