"""The paper-and-pencil material: answer keys recomputed with speclab, handouts without answers.

Each answer key in lessons/answers/ marks machine-checkable tables with
`<!-- check: NAME -->`; CHECKS below recomputes every row with the library. A handout may
show the same inputs, but its answer cells must be blank (spaces or underscores).
"""

import itertools
import math
import re
import string

import numpy as np
import pytest
from lesson_tables import cells, checked_tables  # a helper in tests/

from speclab.acceptance import InvalidGuess, accept, verify_on_path
from speclab.counting import (
    count_round,
    expected_speedup,
    expected_tokens_per_round,
    total_forwards,
)
from speclab.next_token import positions_computed, probabilities
from speclab.paths import repo_root
from speclab.widgets import QUIZ_KEY

LESSONS = repo_root() / "lessons"
HANDOUTS = sorted(LESSONS.glob("0*.md"))
BLANKS = {"(empty)": "", "none": "", "none (end)": ""}
BOARD_CHECK_COST = 2  # lesson 01, exercise 5: a whole board costs two single checks


def all_table_rows(text: str) -> list[list[str]]:
    return [cells(line) for line in text.splitlines() if line.startswith("|")]


def value(cell: str) -> str:
    return BLANKS.get(cell, cell)


def numbers(cell: str) -> list[int]:
    return [int(n) for n in re.split(r"\s*,\s*", cell)]


def close(shown: str, exact: float) -> bool:
    """A number shown with its decimals agrees with the exact value to that precision."""
    decimals = len(shown.split(".")[1]) if "." in shown else 0
    return abs(float(shown) - exact) <= 0.5 * 10**-decimals + 1e-12


def check_quiz(row):
    board, ticks, squares = row
    m = accept([answer.strip() for answer in board.split(",")], QUIZ_KEY)
    assert (int(ticks), int(squares)) == (m, m + 1)


def check_visits(row):
    right, squares, at_once, one_by_one = map(int, row)
    counted = count_round(right, k=4)
    assert (squares, at_once, one_by_one) == (
        counted.tokens,
        counted.target_forwards,
        counted.greedy_forwards,
    )


def check_slow_host(row):
    right, whole_board, one_by_one = map(int, row)
    assert whole_board == BOARD_CHECK_COST
    assert one_by_one == count_round(right).greedy_forwards


def check_eq1(row):
    alpha, k, tokens = row
    assert close(tokens, expected_tokens_per_round(float(alpha), int(k)))


def check_speedup(row):
    alpha, k, c, speedup = row
    assert close(speedup, expected_speedup(float(alpha), int(k), float(c)))


def check_path(row):
    prefix, guess, accepted, added, output = map(value, row)
    verdict = verify_on_path(prefix, guess)
    assert (verdict.accepted, verdict.added, verdict.output) == (accepted, added, output)


INVALID_NAMES = {
    "valid": {None},
    "empty guess": {"empty_guess"},
    "prefix not on the path": {"prefix_not_on_path"},
    "prefix is the whole path": {"prefix_complete"},
    "guess too long": {"guess_too_long"},
    "not a capital letter": {"lowercase", "not_capital"},
}


def check_invalid(row):
    prefix, guess, answer = map(value, row)
    try:
        verify_on_path(prefix, guess)
        reason = None
    except InvalidGuess as error:
        reason = error.reason
    assert reason in INVALID_NAMES[answer]


def all_guesses(length: int):
    return map("".join, itertools.product(string.ascii_uppercase, repeat=length))


def check_growth(row):
    prefix, length, most, example = map(value, row)
    growth = {
        g: len(verify_on_path(prefix, g).output) - len(prefix) for g in all_guesses(int(length))
    }
    assert int(most) == max(growth.values())
    assert growth[example] == int(most)


def check_count_guesses(row):
    prefix, length, output, how_many = map(value, row)
    found = sum(verify_on_path(prefix, g).output == output for g in all_guesses(int(length)))
    assert found == int(how_many)


def check_rounds(row):
    accepted, forwards, tokens, greedy, saved = row
    total = total_forwards(numbers(accepted))
    assert (int(forwards), int(tokens)) == total
    assert (int(greedy), int(saved)) == (total[1], total[1] - total[0])


def rounds_needed(tokens: int, accepted_each_round: int) -> int:
    n = 1
    while total_forwards([accepted_each_round] * n)[1] < tokens:
        n += 1
    return n


def check_fewest_rounds(row):
    tokens, k, fewest, most = map(int, row)
    assert fewest == rounds_needed(tokens, k) == math.ceil(tokens / (k + 1))
    assert most == rounds_needed(tokens, 0)


def check_bars(row):
    names = ["mat", "floor", "sofa", "roof", "dog"]
    shown = [float(cell) for cell in row[:5]]
    greedy, top_two, rest = row[5], float(row[6]), float(row[7])
    assert greedy == names[max(range(5), key=lambda i: shown[i])]
    assert close(row[6], sum(sorted(shown)[-2:])) and top_two == shown[0] + shown[1]
    assert close(row[7], 1 - sum(shown)) and rest > 0


def check_softmax(row):
    z_a, z_b, z_c, temperature = map(float, row[:4])
    expected = probabilities(np.array([z_a, z_b, z_c]), temperature)
    assert all(close(shown, p) for shown, p in zip(row[4:], expected, strict=True))


def check_greedy_forwards(row):
    new_tokens, forwards = map(int, row)
    assert forwards == positions_computed(1, new_tokens, cached=True)  # one position per step
    assert forwards == new_tokens


def check_cache_positions(row):
    n_prompt, n_new, with_cache, without = map(int, row)
    assert with_cache == positions_computed(n_prompt, n_new, cached=True)
    assert without == positions_computed(n_prompt, n_new, cached=False)


CHECKS = {
    "quiz": (check_quiz, 1),  # checker, number of input columns
    "visits": (check_visits, 1),
    "slow_host": (check_slow_host, 1),
    "eq1": (check_eq1, 2),
    "speedup": (check_speedup, 3),
    "path": (check_path, 2),
    "invalid": (check_invalid, 2),
    "growth": (check_growth, 2),
    "count_guesses": (check_count_guesses, 3),
    "rounds": (check_rounds, 1),
    "fewest_rounds": (check_fewest_rounds, 2),
    "bars": (check_bars, 5),
    "softmax": (check_softmax, 4),
    "greedy_forwards": (check_greedy_forwards, 1),
    "cache_positions": (check_cache_positions, 2),
}


def answer_key(handout):
    return LESSONS / "answers" / handout.name


def test_there_are_handouts_for_lessons_01_to_03():
    names = [h.name for h in HANDOUTS]
    for expected in ("01_quiz_game.md", "02_symbolic_acceptance.md", "03_forward_arithmetic.md"):
        assert expected in names


@pytest.mark.parametrize("handout", HANDOUTS, ids=lambda path: path.name)
def test_answer_key_numbers_agree_with_the_code(handout):
    text = answer_key(handout).read_text(encoding="utf-8")
    tables = checked_tables(text, marker="check")
    if not tables and re.search(r"<!-- check\d\d: \w+ -->", text):
        pytest.skip("its tables are checked by its own tests/test_lessons_NN.py")
    assert tables, f"{answer_key(handout).name} has no checked table"
    for name, rows in tables.items():
        checker, _ = CHECKS[name]
        for row in rows:
            try:
                checker(row)
            except AssertionError as error:
                raise AssertionError(f"{handout.name} table {name!r} row {row}: {error}") from None


@pytest.mark.parametrize("handout", HANDOUTS, ids=lambda path: path.name)
def test_handout_does_not_contain_its_answers(handout):
    text = handout.read_text(encoding="utf-8")
    assert "<!-- check" not in text
    key = answer_key(handout).read_text(encoding="utf-8")
    if "<!-- check:" not in key and re.search(r"<!-- check\d\d: \w+ -->", key):
        pytest.skip("its blanks are checked by its own tests/test_lessons_NN.py")
    handout_rows = all_table_rows(text)
    tables = checked_tables(answer_key(handout).read_text(encoding="utf-8"), marker="check")
    matched = 0
    for name, rows in tables.items():
        _, n_inputs = CHECKS[name]
        for key_row in rows:
            inputs = [value(cell) for cell in key_row[:n_inputs]]
            for shown in handout_rows:
                if [value(cell) for cell in shown[:n_inputs]] != inputs:
                    continue
                if len(shown) != len(key_row):
                    continue  # another table that happens to share the first cells
                answers = shown[n_inputs:]
                matched += 1
                assert all(set(cell) <= {"_", " "} for cell in answers), (
                    f"{handout.name} shows an answer in row {shown}"
                )
    assert matched >= 3, f"{handout.name}: too few exercise rows matched the key"


def test_the_quiz_in_the_handout_is_the_widgets_quiz():
    text = (LESSONS / "01_quiz_game.md").read_text(encoding="utf-8")
    for answer in QUIZ_KEY:
        assert re.search(rf"\| {answer} \|", text), answer


@pytest.mark.parametrize("handout", HANDOUTS, ids=lambda path: path.name)
def test_handout_prints_cleanly(handout):
    text = handout.read_text(encoding="utf-8")
    assert text.startswith("# Lesson ")
    assert "Name: " in text
    assert len(re.findall(r"^## Exercise ", text, flags=re.M)) >= 4
    for line in text.splitlines():
        if not line.startswith("|"):
            assert len(line) <= 100, line
    assert "\t" not in text


def test_teacher_guide_has_a_plan_per_lesson():
    guide = (LESSONS / "teacher-guide.md").read_text(encoding="utf-8")
    sections = re.split(r"^## ", guide, flags=re.M)
    by_lesson = {s.split()[0]: s for s in sections if s[:2].isdigit()}
    assert sorted(by_lesson) == ["01", "02", "03", "03b", "04", "04b", "05", "06", "07"]
    for lesson, section in by_lesson.items():
        assert "(45 minutes)" in section and "Misconceptions to watch for" in section, lesson
        minutes = [int(m) for m in re.findall(r"^\| (\d+) min", section, flags=re.M)]
        assert sum(minutes) == 45, (lesson, minutes)


def test_the_90_minute_plan_for_01_to_03_adds_up_and_names_real_exercises():
    """Lessons 01-03 in one 90-minute class: the guide's variant fits 90 minutes, and every
    exercise it sets as homework is one the lesson's handout has."""
    guide = " ".join((LESSONS / "teacher-guide.md").read_text(encoding="utf-8").split())
    minutes = re.findall(r"\*(0[1-3]), (\d+) minutes:\*", guide)
    assert [lesson for lesson, _ in minutes] == ["01", "02", "03"]
    assert sum(int(m) for _, m in minutes) == 90
    homework = guide.split("Homework: 01 exercises", 1)[1].split(".", 1)[0]
    for lesson, numbers in re.findall(r"(0[1-3]) exercises ([\d, –]+)", "01 exercises" + homework):
        handout = next(LESSONS.glob(f"{lesson}_*.md")).read_text(encoding="utf-8")
        for n in re.findall(r"\d+", numbers):
            assert f"## Exercise {n} " in handout, (lesson, n)


GLOSSARY_TERMS = [
    "speculative decoding",
    "drafts per round",
    "plain step",
    "tokens per target forward",
    "β",
    "draft",
    "drafter",
    "target model",
    "verify",
    "verify cost",
    "correction",
    "accept",
    "reject",
    "rollback",
    "prefix",
    "forward pass",
    "KV cache",
    "token",
    "greedy decoding",
    "sampling",
    "acceptance rate",
    "speedup",
    "bonus token",
]


def test_glossary_in_three_languages():
    rows = all_table_rows((LESSONS / "glossary.md").read_text(encoding="utf-8"))
    entries = {row[0].strip("*"): row for row in rows[2:]}
    for term in GLOSSARY_TERMS:
        assert term in entries, term
        english, chinese, persian = entries[term][1:4]
        assert english
        assert re.search(r"[\u4e00-\u9fff]", chinese), term
        assert re.search(r"[\u0600-\u06ff]", persian), term


def test_key_01_lucky_guesses_pay_with_a_quick_host_and_lose_with_the_slow_one():
    text = " ".join((LESSONS / "answers" / "01_quiz_game.md").read_text(encoding="utf-8").split())
    per_board = expected_tokens_per_round(0.5, 4)  # 1 + 1/2 + ... + 1/16 squares a board
    assert per_board == 31 / 16 and f"31/16 ≈ {per_board:.2f} squares per board" in text
    slow = per_board / 2  # exercise 5's host: a board costs two single checks
    assert slow < 1 and f"31/32 ≈ {slow:.2f} squares per check" in text
    assert "almost twice" in text and per_board > 1.9
