"""speclab.guesses_report: the printed report of the CSV exercise and `speclab check-guesses`.

The tables below are laid out by hand from the module's rules (each column as wide as its
widest shown cell or its header, the path's columns as wide as the path, two spaces between
columns, trailing spaces cut), not copied from the code's output.
"""

import io
import sys

import pytest

from speclab import guesses_report
from speclab.cli import main
from speclab.exercises import Score, check_guesses
from speclab.guesses_report import _display_width, format_report, format_summary

HEADER = "prefix,guess,expected_output\n"


def checked(tmp_path, rows: str, **options):
    path = tmp_path / "g.csv"
    path.write_text(HEADER + rows, encoding="utf-8")
    return check_guesses(path, **options)


def run_cli(capsys, *arguments) -> tuple[int, str, str]:
    status = main(["check-guesses", *map(str, arguments)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_the_report_is_the_table_a_learner_would_draw_by_hand(tmp_path):
    """Path ABCDEFG. Widths: row 3 ("row"), prefix 7 ("(empty)"), guess 5 ("guess"),
    accepted 8 (the header; the path is 7), added 10 ("none (end)"), output 7 (the path),
    expected 9 (ABCDEFGAB). An empty accepted part reads "none", an empty added one
    "none (end)", a row with no expectation "-"."""
    frame = checked(tmp_path, ",ABX,ABC\n,XBC,\nABCD,EFG,ABCDEFG\nAB,CX,ABCDEFGAB\n")
    assert format_report(frame, "g.csv").splitlines() == [
        "== g.csv ==",
        "row  prefix   guess  accepted  added       output   expected   result",
        "2    (empty)  ABX    AB        C           ABC      ABC        right",
        "3    (empty)  XBC    none      A           A                   -",
        "4    ABCD     EFG    EFG       none (end)  ABCDEFG  ABCDEFG    right",
        "5    AB       CX     C         D           ABCD     ABCDEFGAB  wrong",
        "score: 2 of 3 expected outputs right; 4 rows checked, no problems",
    ]


def test_a_four_digit_row_number_widens_the_first_column(tmp_path):
    """997 blank rows are skipped but still counted, as a spreadsheet numbers them."""
    frame = checked(tmp_path, ",ABX,\n" + ",,\n" * 997 + ",ABC,\n")
    lines = format_report(frame, "g.csv").splitlines()
    assert lines[1].startswith("row   prefix ")
    assert lines[2].startswith("2     (empty) ")
    assert lines[3].startswith("1000  (empty) ")


def test_a_path_longer_than_a_shown_cell_gives_columns_as_wide_as_a_cut_cell(tmp_path):
    """Cells are cut to SHOWN_CELL_CHARS (20) characters, so the accepted and output columns
    need no more than 20 even where the path has 26 letters."""
    path = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    frame = checked(tmp_path, ",ABCDEFGHIJKLMNOPQRSTUVWXY,\n", path_symbols=path)
    cut = "ABCDEFGHIJKLMNOPQ..."  # 20 characters
    widths = [3, 7, 20, 20, 10, 20, 8, 6]
    header = ["row", "prefix", "guess", "accepted", "added", "output", "expected", "result"]
    row = ["2", "(empty)", cut, cut, "Z", cut, "", "-"]
    lines = format_report(frame, "g.csv", path_symbols=path).splitlines()
    for line, cells in zip(lines[1:3], (header, row), strict=True):
        assert line == "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()


def test_the_title_is_shown_with_its_invisible_characters_escaped(tmp_path):
    frame = checked(tmp_path, ",ABX,ABC\n")
    title = format_report(frame, "a\x1b[2Jb\u202e.csv").splitlines()[0]
    assert title == "== a\\x1b[2Jb\\u202e.csv =="


BAD_ROW = ",abx,\n"  # lower case: a problem on its row


@pytest.mark.parametrize(
    ("bad_rows", "last_lines"),
    [
        (1, []),
        (200, []),
        (201, ["... and 1 row more with a problem, not listed: fix the rows above first"]),
        (202, ["... and 2 rows more with a problem, not listed: fix the rows above first"]),
    ],
    ids=["1", "200", "201", "202"],
)
def test_problems_are_listed_up_to_200_and_the_rest_counted_in_the_right_number(
    tmp_path, bad_rows, last_lines
):
    frame = checked(tmp_path, BAD_ROW * bad_rows)
    lines = format_report(frame, "g.csv").splitlines()
    listed = [line for line in lines if line.startswith("row ") and ": " in line]
    assert len(listed) == min(bad_rows, 200)
    assert listed[0].startswith("row 2: ") and listed[-1].startswith(f"row {len(listed) + 1}: ")
    between = lines[lines.index(listed[-1]) + 1 : -1]
    assert between == last_lines and lines[-1].startswith("score: ")


@pytest.mark.parametrize(
    ("rows", "score"),
    [
        (",ABC,\n", "score: no expected_output filled in; 1 row checked, no problems"),
        (",ABX,ABC\n", "score: 1 of 1 expected outputs right; 1 row checked, no problems"),
        # the bad row might have held an expectation: none "filled in" would be a guess
        (
            ",abx,\n,ABC,\n",
            "score: no expected_output checked; 2 rows checked, 1 row with a problem",
        ),
        (
            ",abx,ABC\n",
            "score: 1 expected output not checked, as its row has a problem; "
            "1 row checked, 1 row with a problem",
        ),
        (
            ",ABX,ABC\n,abx,ABC\n,XBC,ABC\n",
            "score: 1 of 2 expected outputs right, 1 expected output not checked, as its row "
            "has a problem; 3 rows checked, 1 row with a problem",
        ),
        (
            ",ABX,ABC\n,abx,ABC\n,abc,AB\n",
            "score: 1 of 1 expected outputs right, 2 expected outputs not checked, as their "
            "rows have a problem; 3 rows checked, 2 rows with a problem",
        ),
    ],
    ids=["unfilled", "right", "bad-unfilled", "bad-filled", "one-each", "two-bad-filled"],
)
def test_the_score_line_counts_each_kind_of_row_in_the_right_number(tmp_path, rows, score):
    assert format_report(checked(tmp_path, rows), "g.csv").splitlines()[-1] == score


def test_the_summary_table_shows_each_kind_of_result():
    """Widths: student 7, rows 4, problems 10 ("file error"), expected right 14; "-" where
    nothing could be counted, or no expected output was filled in."""
    summary = [
        ("ana", Score(rows=2, problems=0, with_expectation=0, right=0)),
        ("bo", Score(rows=3, problems=1, with_expectation=2, right=1)),
        ("cy", None),
        ("dee", "no rows"),
    ]
    assert format_summary(summary).splitlines() == [
        "== summary ==",
        "student  rows  problems    expected right",
        "ana      2     0           -",
        "bo       3     1           1/2",
        "cy       -     file error  -",
        "dee      -     no rows     -",
    ]


def test_one_file_gets_no_summary_and_several_are_a_blank_line_apart(tmp_path, capsys):
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text(HEADER + ",ABX,ABC\n", encoding="utf-8")
    second.write_text(HEADER + ",ABC,\n", encoding="utf-8")
    status, out, _ = run_cli(capsys, first)
    assert status == 0 and "== summary ==" not in out
    status, out, _ = run_cli(capsys, first, second)
    lines = out.splitlines()
    second_title = lines.index(f"== {second} ==")
    assert lines[second_title - 2].startswith("score: ") and lines[second_title - 1] == ""
    assert "== summary ==" in lines[second_title:]


def test_summary_only_still_checks_every_row(tmp_path, capsys):
    path = tmp_path / "ana.csv"
    path.write_text(HEADER + ",ABX,ABC\n" + BAD_ROW + ",XBC,ABC\n", encoding="utf-8")
    status, out, _ = run_cli(capsys, "--summary", path)
    assert status == 1  # the bad row fails the file
    assert out.splitlines()[2].split() == ["ana", "3", "1", "1/2"]


def test_summary_only_of_a_folder_with_no_files_prints_no_empty_table(tmp_path, capsys):
    (tmp_path / "class").mkdir()
    status, out, err = run_cli(capsys, "--summary", tmp_path / "class")
    assert status == 1 and out == ""
    assert "class" in err


def test_a_valid_file_beside_a_name_that_is_not_there_still_fails(tmp_path, capsys):
    path = tmp_path / "ana.csv"
    path.write_text(HEADER + ",ABX,ABC\n", encoding="utf-8")
    status, _, err = run_cli(capsys, path, tmp_path / "gone.csv")
    assert status == 1 and "gone.csv" in err


@pytest.mark.parametrize(("extra", "long"), [(0, True), (1, False)])
def test_a_file_of_long_file_characters_or_more_gets_a_progress_bar(
    tmp_path, capsys, monkeypatch, extra, long
):
    """LONG_FILE is "a file this long": one of exactly that many characters gets the bar."""
    path = tmp_path / "g.csv"
    path.write_text(HEADER + ",ABX,ABC\n", encoding="utf-8")
    monkeypatch.setattr(guesses_report, "LONG_FILE", len(HEADER + ",ABX,ABC\n") + extra)
    seen = []

    def progress(rows, lines, what):
        seen.append(lines)
        return rows

    monkeypatch.setattr(guesses_report, "_progress", progress)
    assert run_cli(capsys, "--summary", path)[0] == 0
    assert seen and all((lines is not None) == long for lines in seen)


def test_a_letter_the_console_cannot_show_is_measured_as_its_printed_code(monkeypatch):
    """On an ASCII console speclab.cli writes 无 as \\u65e0 (six columns), not two."""
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))
    assert _display_width("无名") == 4
    ascii_console = io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors="backslashreplace")
    monkeypatch.setattr(sys, "stdout", ascii_console)
    assert _display_width("无名") == len("\\u65e0\\u540d") == 12
