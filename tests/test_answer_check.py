"""The answer-leak check: it passes a clean handout and finds each kind of leak."""

import pytest

from speclab.answer_check import answer_leaks, check_no_answers
from speclab.handout_folder import HandoutError

HANDOUT = """# Lesson 99 · handout

## Exercise 1 · Count

| accepted m | tokens |
|---|---|
| 0 | ______ |
| 2 | ______ |

Why? ________________________________________________
"""
KEY = """# Lesson 99 · answer key

## Exercise 1

| accepted m | tokens |
|---|---|
| 0 | 1 |
| 2 | 3 |

Every round adds the target's own token, so m accepted drafts give m + 1 tokens.
"""


def test_leak_checker_passes_a_clean_handout():
    assert answer_leaks(HANDOUT, KEY) == []


@pytest.mark.parametrize(
    "leaky, found",
    [
        (HANDOUT.replace("| 2 | ______ |", "| 2 | 3 |"), "table row '2 | 3'"),
        (HANDOUT + "\n" + KEY.split("\n", 1)[1], "answer-key sentence"),
        (HANDOUT + "\n## Answers\n\n1, 3\n", "answer heading 'Answers'"),
        (HANDOUT + "\n### Solution to exercise 1\n", "answer heading"),
    ],
    ids=["filled table", "key pasted", "answers heading", "solution heading"],
)
def test_leak_checker_finds_leaks(leaky, found):
    leaks = answer_leaks(leaky, KEY)
    assert any(found in leak for leak in leaks), leaks


def test_check_no_answers_names_the_handout_and_the_leak(tmp_path):
    (tmp_path / "answers").mkdir()
    (tmp_path / "answers" / "99_x.md").write_text(KEY, "utf-8")
    (tmp_path / "99_x.md").write_text(HANDOUT, "utf-8")
    check_no_answers(tmp_path)  # clean: no error
    (tmp_path / "99_x.md").write_text(HANDOUT + "\n## Answers\n", "utf-8")
    with pytest.raises(HandoutError, match=r"99_x\.md: answer heading 'Answers'"):
        check_no_answers(tmp_path)


def test_a_handout_without_a_key_is_not_checked(tmp_path):
    (tmp_path / "answers").mkdir()
    (tmp_path / "99_x.md").write_text(HANDOUT + "\n## Answers\n", "utf-8")
    check_no_answers(tmp_path)  # nothing to compare with: no error
