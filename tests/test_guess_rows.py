"""speclab.guess_rows: a guesses file's text as data rows (the checks of the cells are
tests/test_exercises.py's, through check_guesses)."""

from pathlib import Path

import pytest

from speclab.guess_rows import data_rows
from speclab.student_files import GuessFileError

PATH = Path("student.csv")


def rows(text: str) -> list[dict]:
    return [{**row, "error": str(row["error"])} for row in data_rows(text, PATH)]


def test_rows_are_numbered_as_a_spreadsheet_shows_them_and_blank_ones_skipped():
    text = "prefix,guess,expected_output\n,ABX,ABC\n\n,,\nABCD,EFG,ABCDEFG\n"
    assert rows(text) == [
        {"row": 2, "prefix": "", "guess": "ABX", "expected_output": "ABC", "error": ""},
        {"row": 5, "prefix": "ABCD", "guess": "EFG", "expected_output": "ABCDEFG", "error": ""},
    ]


def test_a_header_in_chinese_or_persian_names_the_same_columns():
    english = rows("guess,prefix\nABX,\n")
    assert rows("猜测,前缀\nABX,\n") == english
    assert rows("حدس,پیشوند\nABX,\n") == english
    assert english[0]["guess"] == "ABX" and english[0]["expected_output"] == ""


def test_rows_that_cannot_be_read_as_one_are_named_and_the_rest_read():
    text = "prefix,guess\n,ABX\n;ABC\nprefix,guess\n,XBC\n"
    found = rows(text)
    assert [row["row"] for row in found] == [2, 3, 4, 5]
    assert "separated by ';' but the header's by ','" in found[1]["error"]
    assert found[2]["error"] == "this row repeats the header (row 1); delete it"
    assert found[3]["guess"] == "XBC" and found[3]["error"] == ""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "has no header row"),
        ("prefix,guess\n", "has a header but no rows to check"),
        ("prefix,prefix,guess\n,A,B\n", "names the column 'prefix' twice"),
        ("prefix،guess\n", "separated by the Persian '،'"),
    ],
)
def test_a_header_that_cannot_be_used_is_one_error(text, message):
    with pytest.raises(GuessFileError) as refused:
        list(data_rows(text, PATH))
    assert message in refused.value.message.text(None)


@pytest.mark.parametrize(
    ("lang", "said"),
    [(None, "is a line of a Markdown table, its cells between '|'"), ("zh", "Markdown 表格的一行"),
     ("fa", "یک سطر از جدول Markdown است")],
)  # fmt: skip
def test_a_lesson_table_copied_as_markdown_is_named_so(lang, said):
    """A student copying lesson 02's table got "missing columns 'prefix' and 'guess' ...
    found '| prefix | guess | ...'", which did not say what was wrong."""
    from speclab.i18n import translator

    text = "| prefix | guess | expected_output |\n|---|---|---|\n| | ABX | ABC |\n"
    with pytest.raises(GuessFileError) as refused:
        list(data_rows(text, PATH))
    shown = refused.value.message.text(translator(lang) if lang else None)
    assert said in shown and "missing column" not in shown


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("prefix,prefix,guess", "row 3 names the column 'prefix' twice"),
        ("prefx,guess", "the header (row 3) must name prefix"),
        ("prefix；guess", "the header (row 3) is separated by the full-width '；'"),
        ("| prefix | guess |", "the header (row 3) is a line of a Markdown table"),
        ("prefix,guess,expected", "the header (row 3) names a column 'expected'"),
        ('prefix,"guess', "in the header (row 3)"),
    ],
)
def test_a_header_below_blank_lines_is_named_by_its_own_row(header, message):
    """Every message about the header gives the row a spreadsheet shows it on: after two blank
    lines, row 3 (an off-by-one in any of them had passed, as every other test's header is
    on row 1)."""
    with pytest.raises(GuessFileError) as refused:
        list(data_rows(f"\n\n{header}\n,ABX,ABC\n", PATH))
    assert message in refused.value.message.text(None)


def test_a_header_shows_at_most_eight_cells_and_a_mark_in_a_note_column_is_read():
    """A header missing a column lists what it found, eight cells and "..." after; a 、 in
    the name of a column the checker does not read refuses nothing."""
    with pytest.raises(GuessFileError) as refused:
        list(data_rows("prefix,a,b,c,d,e,f,g\n,A,B\n", PATH))
    assert refused.value.message.text(None).endswith(
        "found 'prefix', 'a', 'b', 'c', 'd', 'e', 'f', 'g'"
    )
    with pytest.raises(GuessFileError) as refused:
        list(data_rows("prefix,a,b,c,d,e,f,g,h\n,A,B\n", PATH))
    assert refused.value.message.text(None).endswith("'g', ...")
    read = rows("prefix,guess,expected_output,备注、说明\n,ABX,ABC,\n")
    assert read[0]["guess"] == "ABX" and read[0]["error"] == ""
