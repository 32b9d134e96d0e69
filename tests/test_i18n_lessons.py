"""The Chinese and Persian handouts and answer keys of lessons 01-03 against the English ones.

The English keys' `check` tables are recomputed from the code by tests/test_lessons.py;
here every translated key must hold the same tables, cell by cell once its words are read
back into English (WORDS), and the same numbers in its prose and tables (Persian digits
read as Latin ones). A translated handout has the English handout's exercises and blank
tables, and gives no answers away. A Persian page writes Persian digits in its prose and
Latin digits in what is typed or printed as data (README, "Digits"). The pages are built
with `lang` and `dir`.
"""

import re
from pathlib import Path

import pytest
from lesson_tables import checked_tables

from speclab.answer_check import answer_leaks
from speclab.handouts import build_page
from speclab.paths import repo_root

LESSONS = repo_root() / "lessons"
NAMES = ["01_quiz_game.md", "02_symbolic_acceptance.md", "03_forward_arithmetic.md"]
LANGS = ["zh", "fa"]
# The words of the keys' table cells, back to the English keys' words.
WORDS = {
    "zh": {
        "（空）": "(empty)",
        "无": "none",
        "无（到头）": "none (end)",
        "猜测太长": "guess too long",
        "前缀不在路径上": "prefix not on the path",
        "不是大写字母": "not a capital letter",
        "前缀已是整条路径": "prefix is the whole path",
        "猜测为空": "empty guess",
        "合法": "valid",
    },
    "fa": {
        "خالی": "(empty)",
        "هیچ": "none",
        "هیچ؛ پایان": "none (end)",
        "حدس بیش از اندازه بلند": "guess too long",
        "پیشوند بیرون از مسیر": "prefix not on the path",
        "حرف بزرگ نیست": "not a capital letter",
        "پیشوند همان کل مسیر است": "prefix is the whole path",
        "حدس خالی": "empty guess",
        "مجاز": "valid",
    },
}
PERSIAN_NUMBERS = str.maketrans("۰۱۲۳۴۵۶۷۸۹٫", "0123456789.")
# What keeps Latin digits on a Persian page: code blocks and spans, table rows (the keys'
# are compared with the English cells), comments (`<!-- check: eq1 -->`), link targets,
# formulas set apart in <bdi>, Markdown's list numbers, and a board as it is typed into
# the notebook (**8, 56, 5, 90**). All the rest is prose: Persian digits, ٫ for decimals.
KEPT_LATIN = re.compile(
    r"^```.*?^```|^\|[^\n]*|<!--.*?-->|`[^`]*`|\]\([^)]*\)|<bdi>.*?</bdi>|^\d+\. "
    r"|\*\*\d+(?:, \d+)+\*\*",
    re.M | re.S,
)


def numbers(text: str) -> list[float]:
    """Every number of a page, Persian digits and decimal separator read as Latin ones."""
    text = re.sub(r"\([^()]*\.ipynb\)|`[^`]*`", " ", text.translate(PERSIAN_NUMBERS))
    return sorted(float(n) for n in re.findall(r"\d+(?:\.\d+)?", text))


def digit_slips(text: str) -> list[str]:
    """The prose lines of a Persian page with a Latin or Arabic digit or a Latin decimal
    point, then the pieces kept in Latin digits (KEPT_LATIN) that hold a Persian one."""
    prose = KEPT_LATIN.sub(" ", text).splitlines()
    slips = [line for line in prose if re.search(r"[0-9٠-٩]|[۰-۹]\.[۰-۹]", line)]
    return slips + [kept for kept in KEPT_LATIN.findall(text) if re.search("[۰-۹٫٠-٩]", kept)]


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", NAMES)
def test_translated_keys_have_the_english_keys_tables(lang, name):
    english = checked_tables((LESSONS / "answers" / name).read_text("utf-8"), marker="check")
    text = (LESSONS / lang / "answers" / name).read_text("utf-8")
    translated = checked_tables(text, marker="check")
    assert translated.keys() == english.keys()
    for table, rows in translated.items():
        back = [[WORDS[lang].get(cell, cell) for cell in row] for row in rows]
        assert back == english[table], (lang, name, table)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("folder", ["", "answers"])
@pytest.mark.parametrize("name", NAMES)
def test_translated_pages_have_the_english_pages_numbers(lang, folder, name):
    english = (LESSONS / folder / name).read_text("utf-8")
    translated = (LESSONS / lang / folder / name).read_text("utf-8")
    assert numbers(translated) == numbers(english), (lang, folder, name)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", NAMES)
def test_translated_handouts_have_the_same_exercises_and_hide_the_answers(lang, name):
    english = (LESSONS / name).read_text("utf-8")
    handout = (LESSONS / lang / name).read_text("utf-8")
    key = (LESSONS / lang / "answers" / name).read_text("utf-8")
    assert len(re.findall(r"^## ", handout, re.M)) == len(re.findall(r"^## ", english, re.M))
    assert handout.count("______") == english.count("______")
    assert answer_leaks(handout, key) == []
    assert f"notebooks/{lang}/" in handout


def test_the_numbers_check_can_fail():
    assert numbers("a 3 b ۴٫۵") == [3.0, 4.5]
    assert numbers("Q1 (8)") != numbers("پرسش ۱ (۹)")


@pytest.mark.parametrize("folder", ["", "answers"])
@pytest.mark.parametrize("name", NAMES)
def test_persian_pages_write_persian_digits_in_prose_only(folder, name):
    assert digit_slips((LESSONS / "fa" / folder / name).read_text("utf-8")) == []


def test_the_digit_check_can_fail():
    assert digit_slips("پرسش 1 و ۰.۹۷ و ٤\n<bdi>k + ۱</bdi>") == [
        "پرسش 1 و ۰.۹۷ و ٤",
        "<bdi>k + ۱</bdi>",
    ]
    kept = "| 8, 56 | 0.5 |\n1. پرسش ۴، ۰٫۹۷ و `k = 4` [a](b1.md)\n<bdi>m + 1</bdi> **8, 56, 5**"
    assert digit_slips(kept + "\n<!-- check: eq1 -->\n```\nx = 1\n```") == []


@pytest.mark.parametrize(("lang", "direction"), [("zh", "ltr"), ("fa", "rtl")])
def test_translated_pages_carry_language_direction_and_fonts(tmp_path, lang, direction):
    source = LESSONS / lang / "answers" / NAMES[1]
    built = build_page(source, tmp_path, tmp_path / "figures", pdf=False, answers=True, lang=lang)
    page = built.html.read_text("utf-8")
    assert f'<html lang="{lang}" dir="{direction}">' in page
    assert ("Noto Sans CJK SC" if lang == "zh" else "Noto Naskh Arabic") in page
    assert "Answer key" not in page and ("答案" if lang == "zh" else "پاسخ‌نامه") in page
    # the footer: page numbers in Persian digits, and no · (beside Persian it reads as ۰)
    persian = "counter(page, persian)" in page and "\\00B7" not in page
    assert persian == (lang == "fa")


def test_make_handouts_builds_the_translations(tmp_path):
    from speclab.handouts import build_all

    built = build_all(LESSONS, tmp_path / "out", pdf=False)
    pages = {page.html.relative_to(tmp_path / "out").as_posix() for page in built}
    for lang in LANGS:
        for name in NAMES:
            stem = Path(name).stem
            assert f"{lang}/{stem}.html" in pages and f"{lang}/answers/{stem}.html" in pages
    index = (tmp_path / "out" / "index.html").read_text("utf-8")
    assert 'href="fa/answers/02_symbolic_acceptance.html"' in index


@pytest.mark.parametrize("lang", ["zh", "fa"])
def test_lesson_03s_counted_rounds_wear_the_handouts_headers(lang):
    """zh and fa lesson 03 showed the counted rounds under the code's English names
    (accepted, target_forwards, ...) beside the handout's table in the learner's language."""
    import ast
    import json

    from speclab.paths import repo_root

    root = repo_root()
    cells = json.loads(
        (root / "notebooks" / lang / "03_forward_arithmetic.ipynb").read_text("utf-8")
    )
    code = next(
        "".join(c["source"]) for c in cells["cells"] if "per_case.set_axis" in "".join(c["source"])
    )
    assigned = next(node for node in ast.parse(code).body
                    if isinstance(node, ast.Assign) and node.targets[0].id == "headers")  # fmt: skip
    handout = (root / "lessons" / lang / "03_forward_arithmetic.md").read_text("utf-8")
    first_table = next(line for line in handout.splitlines() if line.startswith("|"))
    assert ast.literal_eval(assigned.value) == [
        cell.strip() for cell in first_table.strip("|").split("|")
    ]


@pytest.mark.parametrize("lang", ["zh", "fa"])
def test_lesson_03s_formula_tables_wear_the_answer_keys_headers(lang):
    """zh and fa lesson 03 showed Eq. 1 and the speedup under the code's English names
    (alpha, expected_tokens_per_round), where the key heads them α, 每轮期望词元数..."""
    import ast
    import json

    from speclab.paths import repo_root

    root = repo_root()
    notebook = json.loads(
        (root / "notebooks" / lang / "03_forward_arithmetic.ipynb").read_text("utf-8")
    )
    code = "\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code")
    keys = {node.value for node in ast.walk(ast.parse(code))
            if isinstance(node, ast.Dict) for node in node.keys if isinstance(node, ast.Constant)}  # fmt: skip
    key = (root / "lessons" / lang / "answers" / "03_forward_arithmetic.md").read_text("utf-8")
    headers = {}
    for check in ("eq1",):
        table = key.split(f"<!-- check: {check} -->", 1)[1].strip().splitlines()[0]
        headers[check] = [cell.strip() for cell in table.strip("|").split("|")]
    assert {"α", headers["eq1"][-1]} <= keys  # the speedups' pivot shows α, not "speedup"
    assert not {"alpha", "expected_tokens_per_round"} & keys
