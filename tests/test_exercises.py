"""Tests for speclab.exercises: the CSV exercise, its spreadsheet habits and its errors."""

import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from speclab.cli import main
from speclab.exercises import GuessFileError, check_guesses, format_report, score
from speclab.paths import data_dir

GOOD = "prefix,guess,expected_output\n,ABX,ABC\n,ABC,ABCD\n,XBC,A\nABCD,EFG,ABCDEFG\n"


def write(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    if isinstance(content, str):
        path.write_bytes(content.encode("utf-8"))
    else:
        path.write_bytes(content)
    return path


def run_cli(capsys, *arguments: str) -> tuple[int, str, str]:
    status = main(["check-guesses", *map(str, arguments)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def assert_good_table(frame: pd.DataFrame) -> None:
    assert frame["row"].tolist() == [2, 3, 4, 5]
    assert frame["accepted"].tolist() == ["AB", "ABC", "", "EFG"]
    assert frame["added"].tolist() == ["C", "D", "A", ""]
    assert frame["output"].tolist() == ["ABC", "ABCD", "A", "ABCDEFG"]
    assert frame["matches"].tolist() == [True] * 4
    assert (frame["error"] == "").all()


def test_worked_file():
    frame = check_guesses(data_dir() / "guesses.csv")
    assert list(frame.columns[:8]) == [
        "row",
        "prefix",
        "guess",
        "expected_output",
        "accepted",
        "added",
        "output",
        "matches",
    ]
    assert_good_table(frame.iloc[:4].reset_index(drop=True))
    assert (frame["error"] == "").all()  # the shipped file checks clean: exit status 0
    result = score(frame)
    assert result.rows == len(frame)
    assert result.with_expectation == 5
    assert result.right == 4  # row 6 is the deliberate slip
    assert frame.loc[frame["row"] == 6, "output"].item() == "AB"


def test_worked_file_command(capsys):
    status, out, err = run_cli(capsys, data_dir() / "guesses.csv")
    assert status == 0
    assert err == ""
    assert "row  prefix" in out
    assert "score: 4 of 5 expected outputs right" in out
    assert "none (end)" in out


def test_template_has_the_columns_and_no_rows():
    template = data_dir() / "guesses_template.csv"
    header = template.read_text(encoding="utf-8").splitlines()
    assert header == ["prefix,guess,expected_output"]
    with pytest.raises(GuessFileError, match="no rows"):
        check_guesses(template)


@pytest.mark.parametrize(
    "variant",
    [
        pytest.param(GOOD.encode("utf-8-sig"), id="utf8-bom"),
        pytest.param(GOOD.replace("\n", "\r\n").encode(), id="crlf"),
        pytest.param(GOOD.replace(",", ";").encode(), id="semicolons"),
        pytest.param(GOOD.replace(",", "\t").encode("utf-16"), id="utf16-tabs"),
        pytest.param(
            b"\xef\xbb\xbf Prefix , Guess , Expected Output \n , ABX , ABC \n\t,ABC,ABCD\n"
            b',"XBC", A\nABCD , EFG ,ABCDEFG  \n',
            id="bom-and-stray-spaces",
        ),
        pytest.param(
            (GOOD.replace(",", ";").replace("\n", ";;\n")).encode("utf-8-sig"),
            id="trailing-empty-cells",
        ),
    ],
)
def test_spreadsheet_habits_are_tolerated(tmp_path, variant):
    assert_good_table(check_guesses(write(tmp_path, "g.csv", variant)))


def test_extra_columns_and_column_order(tmp_path):
    content = "name,guess,note,prefix\nAli,ABX,first,\nAli,EFG,,ABCD\n"
    frame = check_guesses(write(tmp_path, "g.csv", content))
    assert frame["output"].tolist() == ["ABC", "ABCDEFG"]
    assert frame["matches"].isna().all()  # no expected_output column: nothing scored


BAD_ROWS = (
    "prefix,guess,expected_output\n"
    ",ABX,ABC\n"  # row 2 fine
    ",abx,ABC\n"  # row 3 lower-case
    ",,A\n"  # row 4 blank guess
    "\n"  # row 5 blank: skipped, but numbering goes on
    ",A1C,\n"  # row 6 invalid symbol
    "ABD,E,\n"  # row 7 prefix off the path
    "ABCDEFG,A,\n"  # row 8 prefix is the whole path
    "ABCD,EFGH,\n"  # row 9 too long
    '",ABC,ABCD\n'  # row 10 broken quoting
    "(empty),ABC,ABCD\n"  # row 11 copied the table's (empty)
    ",ABC,abcd\n"  # row 12 lower-case expectation
    ",ABC,ABCD,extra\n"  # row 13 one cell too many
    ",XBC,ABC\n"  # row 14 fine, but a wrong expectation
)

EXPECTED_PROBLEMS = {
    3: "use capitals",
    4: "empty",
    6: "'1'",
    7: "not a prefix",
    8: "whole path",
    9: "only 3 remain",
    10: "broken quoting",
    11: "leave the prefix cell blank",
    12: "use capitals",
    13: "4 cells but the header names 3 columns",
}


def test_each_bad_row_is_named_and_good_rows_still_checked(tmp_path):
    frame = check_guesses(write(tmp_path, "g.csv", BAD_ROWS))
    problems = {
        row: error for row, error in zip(frame["row"], frame["error"], strict=True) if error
    }
    assert set(problems) == set(EXPECTED_PROBLEMS)
    for row, phrase in EXPECTED_PROBLEMS.items():
        assert phrase in problems[row], (row, problems[row])
    good = frame[frame["error"] == ""]
    assert good["row"].tolist() == [2, 14]
    assert good["output"].tolist() == ["ABC", "A"]
    assert good["matches"].tolist() == [True, False]
    assert score(frame).problems == len(EXPECTED_PROBLEMS)


def test_bad_rows_in_the_report_and_exit_status(tmp_path, capsys):
    path = write(tmp_path, "g.csv", BAD_ROWS)
    status, out, err = run_cli(capsys, path)
    assert status == 1
    for row, phrase in EXPECTED_PROBLEMS.items():
        assert any(line.startswith(f"row {row}: ") and phrase in line for line in out.splitlines())
    assert "Traceback" not in out + err


def test_wrong_expectation_is_not_an_error(tmp_path, capsys):
    path = write(tmp_path, "g.csv", "prefix,guess,expected_output\n,XBC,ABC\n")
    status, out, _ = run_cli(capsys, path)
    assert status == 0
    assert "wrong" in out
    assert "0 of 1 expected outputs right" in out


FILE_ERRORS = [
    ("empty.csv", b"", "is empty"),
    ("blank.csv", b"  \n\n \r\n", "is empty"),
    ("header_only.csv", b"prefix,guess\n", "no rows"),
    ("picture.csv", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
    ("book.csv", b"PK\x03\x04\x14\x00\x06\x00", "workbook"),
    ("latin.csv", "prefix,guess\n,ABÇ\n".encode("latin-1"), "not UTF-8"),
    ("control.csv", b"prefix,guess\n,AB\x07C\n", "control characters"),
    ("columns.csv", b"prefx,guess\n,ABC\n", "missing column 'prefix'"),
    ("noheader.csv", b",ABX,ABC\n,ABC,ABCD\n", "missing column 'prefix' and 'guess'"),
    ("twice.csv", b"prefix,guess,guess\n,A,B\n", "twice"),
    ("quote.csv", b'"prefix,guess\n,A\n', "broken quoting in the header"),
]


@pytest.mark.parametrize(("name", "content", "phrase"), FILE_ERRORS)
def test_file_errors_are_one_clear_line(tmp_path, capsys, name, content, phrase):
    path = write(tmp_path, name, content)
    with pytest.raises(GuessFileError, match=phrase):
        check_guesses(path)
    status, out, err = run_cli(capsys, path)
    assert status == 1
    assert out == ""
    assert err.count("\n") == 1 and phrase in err and name in err
    assert "Traceback" not in err


def test_missing_file_and_folder(tmp_path, capsys):
    with pytest.raises(GuessFileError, match="no such file"):
        check_guesses(tmp_path / "nope.csv")
    with pytest.raises(GuessFileError, match="is a folder"):
        check_guesses(tmp_path)
    status, _, err = run_cli(capsys, tmp_path / "nope.csv")
    assert status == 1 and "no such file" in err
    status, _, err = run_cli(capsys, tmp_path)  # an empty folder
    assert status == 1 and "no .csv files" in err


def test_student_files_are_never_modified(tmp_path, capsys):
    contents = [GOOD.encode("utf-8-sig"), BAD_ROWS.encode(), b"\x89PNG\x00", b""]
    paths = [write(tmp_path, f"s{i}.csv", content) for i, content in enumerate(contents)]
    before = [(p.read_bytes(), p.stat().st_mtime_ns) for p in paths]
    for path in paths:
        try:
            check_guesses(path)
        except GuessFileError:
            pass
    run_cli(capsys, tmp_path)
    assert [(p.read_bytes(), p.stat().st_mtime_ns) for p in paths] == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)


def test_a_class_folder_gives_one_summary_per_student(tmp_path, capsys):
    write(tmp_path, "ana.csv", GOOD)
    write(tmp_path, "bo.csv", "prefix;guess;expected_output\n;ABX;ABCD\n;abc;\n")
    write(tmp_path, "cy.csv", b"")
    write(tmp_path, "notes.txt", "not a csv: ignored")
    status, out, err = run_cli(capsys, tmp_path)
    assert status == 1
    assert out.count("== ") == 3  # ana, bo, summary (cy is a file error)
    summary = out.split("== summary ==")[1].splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in summary[2:] if line.strip()}
    assert rows == {
        "ana": ["4", "0", "4/4"],
        "bo": ["2", "1", "0/1"],
        "cy": ["-", "file", "error", "-"],
    }
    assert "cy.csv" in err


def test_several_files_and_summary_only(tmp_path, capsys):
    first = write(tmp_path, "a.csv", GOOD)
    second = write(tmp_path, "b.csv", GOOD)
    status, out, _ = run_cli(capsys, first, second, "--summary")
    assert status == 0
    assert "row  prefix" not in out
    assert out.startswith("== summary ==")


def test_format_report_is_plain_text():
    frame = check_guesses(data_dir() / "guesses.csv")
    report = format_report(frame, "guesses.csv")
    assert report.splitlines()[0] == "== guesses.csv =="
    assert report.isascii()


def test_real_command_line():
    # the installed entry point, as a student types it, from another folder
    result = subprocess.run(
        [sys.executable, "-m", "speclab", "check-guesses", str(data_dir() / "guesses.csv")],
        capture_output=True,
        text=True,
        cwd=tempfile.gettempdir(),
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "ABCDEFG" in result.stdout


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    st.one_of(
        st.binary(max_size=60),
        st.text(alphabet='AaBX,;" \n\t\ufeff-', max_size=60).map(
            lambda body: ("prefix,guess,expected_output\n" + body).encode()
        ),
    )
)
def test_any_input_gives_a_table_or_a_file_error(content):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.csv"
        path.write_bytes(content)
        try:
            frame = check_guesses(path)
        except GuessFileError as error:
            assert "\n" not in str(error)
        else:
            assert len(frame) > 0
            valid = frame["error"] == ""
            assert all("ABCDEFG".startswith(out) for out in frame.loc[valid, "output"])
        assert path.read_bytes() == content
