"""Tests for speclab.student_files: reading a student's file as hostile input."""

import csv
import io
import os

import pytest

from speclab import student_files
from speclab.student_files import (
    MAX_FILE_BYTES,
    MOST_LINES_PER_RECORD,
    GuessFileError,
    class_files,
    cut,
    read_text,
    records,
    separator,
    shown,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ABC", "ABC"),
        ("حدس 🙂", "حدس 🙂"),  # printable in any script: shown as is
        ("a\nb\tc\r", "a\\nb\\tc\\r"),
        ("x\u202ey", "x\\u202ey"),  # right-to-left override
        ("\x85\x9b", "\\x85\\x9b"),  # C1 controls: NEL, CSI
        ("\u200b\ufeff\u2066\u00a0", "\\u200b\\ufeff\\u2066\\xa0"),
        ("\u2028\u2029", "\\u2028\\u2029"),
        ("caf\udce9", "caf\\xe9"),  # a file-name byte that is not UTF-8: the byte
        ("\ud800", "\\ud800"),  # a surrogate no file name holds
    ],
)
def test_shown_escapes_what_a_terminal_would_hide_or_obey(text, expected):
    assert shown(text) == expected
    assert shown(text).isprintable()


def test_cut_keeps_short_cells_and_marks_long_ones():
    assert cut("ABC", 20) == "ABC"
    assert cut("A" * 20, 20) == "A" * 20
    assert cut("A" * 21, 20) == "A" * 17 + "..."
    assert cut("A" * 100_000, 20) == "A" * 17 + "..."
    assert cut("\u202e" * 4, 20) == "\\u202e\\u202e\\u202..."  # escapes count in the width
    assert len(cut("\x85" * 10_000, 12)) == 12


def every_record(text: str, delimiter: str = ",") -> list[tuple]:
    return list(records(text, delimiter))


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_records_follow_the_csv_module_on_valid_text(ending):
    text = ending.join(["a,b", '"x\ny",z', "", '"q\u2028\r\n",""""', "last"]) + ending
    expected = list(csv.reader(io.StringIO(text, newline=""), strict=True))  # the oracle
    assert every_record(text) == [(n, cells, "") for n, cells in enumerate(expected, start=1)]


def test_a_broken_record_spoils_itself_only():
    text = 'a,b\n"open,1\n2,3\n"x"y,4\n5,6'
    assert every_record(text) == [
        (1, ["a", "b"], ""),
        (2, None, 'broken quoting: a " opens a cell and never closes (or text follows it)'),
        (3, ["2", "3"], ""),
        (4, None, 'broken quoting: a " opens a cell and never closes (or text follows it)'),
        (5, ["5", "6"], ""),
    ]


def test_a_quoted_cell_may_span_more_lines_than_the_limit_until_a_quote_runs_to_the_end():
    most = MOST_LINES_PER_RECORD
    long_cell = 'a,"' + "x\n" * most + 'y"\n'  # one record on most + 1 lines
    rows = every_record(long_cell + "2,3\n")
    assert rows == [(1, ["a", "x\n" * most + "y"], ""), (2, ["2", "3"], "")]
    # each of these rows opens a quote that runs on to the end, through the rows after it
    stray = 'AB,CDX","\n'
    rows = every_record(stray * 3 + "2,3\n")
    assert [row[1] for row in rows] == [None, None, None, ["2", "3"]]
    assert all("broken quoting" in row[2] for row in rows[:3])


def test_a_record_may_take_exactly_the_most_lines_and_not_one_more():
    """Once a quote has run on to the end, each later record is read at most `most_lines`
    lines at a time: a record on exactly that many lines is whole, one more line is refused."""
    most = 3
    lines = student_files._Lines(io.StringIO("x\n" * (most + 1), newline=""), most)
    assert [next(lines) for _ in range(most)] == ["x\n"] * most
    with pytest.raises(csv.Error, match=f"more than {most} lines"):
        next(lines)
    quoted = student_files._Lines(io.StringIO('a,"x\nx\ny"\n', newline=""), most)
    assert list(csv.reader(quoted, strict=True)) == [["a", "x\nx\ny"]]
    quoted = student_files._Lines(io.StringIO('a,"x\nx\nx\ny"\n', newline=""), most)
    with pytest.raises(csv.Error, match=f"more than {most} lines"):
        list(csv.reader(quoted, strict=True))


def test_many_unclosed_quotes_are_read_in_linear_time(monkeypatch):
    """Each stray quote used to send the reader on to the end of the file, and then back to
    the next line: n such rows read about n * n / 2 lines. Now at most the limit each."""
    read = []

    class CountingLines(student_files._Lines):
        def __next__(self):
            line = super().__next__()
            read.append(line)
            return line

    monkeypatch.setattr(student_files, "_Lines", CountingLines)
    n = 2_000
    rows = every_record("prefix,guess\n" + 'AB,CDX","\n' * n)
    assert [row[1] for row in rows] == [["prefix", "guess"]] + [None] * n
    assert len(read) <= 1 + n * (MOST_LINES_PER_RECORD + 1)


def test_a_cell_over_the_field_limit_is_too_long():
    limit = csv.field_size_limit()
    rows = every_record("a,b\n1," + "x" * (limit + 1) + "\n2,3\n")
    assert rows[1][0] == 2 and rows[1][1] is None and "too long" in rows[1][2]
    assert rows[2] == (3, ["2", "3"], "")


@pytest.mark.parametrize(
    ("header", "expected"),
    [("prefix,guess", ","), ("prefix;guess", ";"), ("prefix\tguess", "\t"), ("prefix", ",")],
)
def test_separator_comes_from_the_first_non_blank_line(header, expected):
    assert separator(f"\n  \n{header}\n,A;B\tC\n") == expected


def test_read_text_refuses_what_is_not_a_small_regular_file(tmp_path):
    os.mkfifo(tmp_path / "pipe.csv")
    with pytest.raises(GuessFileError, match="not a regular file"):
        read_text(tmp_path / "pipe.csv")  # returns at once: opened without waiting
    with pytest.raises(GuessFileError, match="is a folder"):
        read_text(tmp_path)
    (tmp_path / "link.csv").symlink_to(tmp_path / "gone.csv")
    with pytest.raises(GuessFileError, match="is a broken link"):
        read_text(tmp_path / "link.csv")
    big = tmp_path / "big.csv"
    big.write_bytes(b"prefix,guess\n")
    os.truncate(big, MAX_FILE_BYTES + 1)
    with pytest.raises(GuessFileError, match=r"too big \(20,000,001 bytes\).* 20 MB"):
        read_text(big)
    exact = tmp_path / "exact.csv"
    exact.write_bytes(b"prefix,guess\n,ABC\n".ljust(MAX_FILE_BYTES, b" "))
    assert read_text(exact).startswith("prefix,guess")


def test_class_files_keeps_every_csv_entry_so_each_problem_is_named(tmp_path):
    (tmp_path / "a.csv").write_text("prefix,guess\n")
    (tmp_path / "B.CSV").write_text("prefix,guess\n")
    (tmp_path / "notes.txt").write_text("not a csv")
    (tmp_path / "ghost.csv").symlink_to(tmp_path / "gone.csv")
    (tmp_path / "sub.csv").mkdir()
    (tmp_path / "up.csv").symlink_to("..")  # a link to a folder is a folder too
    files, errors, notes = class_files([str(tmp_path), str(tmp_path / "nope.csv")])
    assert [path.name for path in files] == ["B.CSV", "a.csv", "ghost.csv", "nope.csv"]
    assert errors == []  # the folders named *.csv are said, not dropped in silence
    assert [str(note) for note in notes] == [
        f"{tmp_path / name}: skipped, a folder, not a student's .csv file"
        for name in ("sub.csv", "up.csv")
    ]


def test_a_folder_per_group_inside_a_class_folder_is_named_not_dropped(tmp_path, capsys):
    """A class folder holding group folders (p1/a.csv): their files are not read, and the run
    says so before 'no .csv files', with no empty summary table."""
    from speclab.cli import main

    (tmp_path / "p1").mkdir()
    (tmp_path / "p1" / "a.csv").write_text("prefix,guess\n,ABC\n")
    (tmp_path / "images").mkdir()  # a folder with no .csv file in it is not worth a note
    (tmp_path / "images" / "board.png").write_bytes(b"\x89PNG")
    for folder, name in [(".ipynb_checkpoints", "a-checkpoint.csv"), ("__MACOSX", "._a.csv"),
                         ("mac", "._a.csv")]:  # copies and helper files, not groups  # fmt: skip
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_text("prefix,guess\n,ABC\n")
    assert main(["check-guesses", "--lang", "en", "--summary", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f"note: {tmp_path / 'p1'}: a folder inside, not read; name it too to check its .csv files",
        f"error: {tmp_path}: folder has no .csv files",
    ]
    (tmp_path / "top.csv").write_text("prefix,guess\n,ABC\n")
    assert main(["check-guesses", "--lang", "en", "--summary", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "top" in captured.out and "a folder inside, not read" in captured.err
    # named too, in another spelling: read, and no note that says it was not
    inner = f"{tmp_path}{os.sep}.{os.sep}p1{os.sep}"
    assert main(["check-guesses", "--lang", "en", "--summary", str(tmp_path), inner]) == 0
    captured = capsys.readouterr()
    assert [line.split()[0] for line in captured.out.splitlines()[2:]] == ["top", "a"]
    assert "a folder inside" not in captured.err
    # the class folder named twice: its files and its note once each
    assert main(["check-guesses", "--lang", "en", "--summary", str(tmp_path), str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert [line.split()[0] for line in captured.out.splitlines()[2:]] == ["top"]
    assert captured.err.count("a folder inside") == 1


def test_helper_files_beside_a_spreadsheet_are_noted_and_skipped(tmp_path, capsys):
    """A class folder copied from a Mac, or with a file open in Excel: ._alice.csv (not
    text at all) and ~$bob.csv are not students; they used to count as "file error"."""
    from speclab.cli import main

    good = "prefix,guess\n,ABC\n"
    (tmp_path / "alice.csv").write_text(good)
    (tmp_path / "._alice.csv").write_bytes(b"\x00\x05\x16\x07Mac OS X")
    (tmp_path / "~$bob.csv").write_bytes(b"\x0bbob\x00")
    (tmp_path / "bob.csv").write_text(good)
    files, errors, notes = class_files([str(tmp_path), str(tmp_path / "~$bob.csv")])
    assert [path.name for path in files] == ["alice.csv", "bob.csv", "~$bob.csv"]  # named: checked
    assert errors == [] and len(notes) == 2
    assert main(["check-guesses", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert err.count("skipped, a helper file that macOS or Office leaves beside a spreadsheet") == 2
    only_helpers = tmp_path / "only"
    only_helpers.mkdir()
    (only_helpers / "._x.csv").write_bytes(b"\x00")
    assert main(["check-guesses", str(only_helpers)]) == 1
    assert "folder has no .csv files" in capsys.readouterr().err


def test_a_file_named_like_an_option_gets_a_hint(tmp_path, monkeypatch, capsys):
    from speclab.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "-alice.csv").write_text("prefix,guess\n,ABC\n")
    with pytest.raises(SystemExit) as exit_info:  # argparse reads it as an unknown option
        main(["check-guesses", "-alice.csv"])
    assert exit_info.value.code == 2
    assert "'-alice.csv' is read as an option: to name the file, write ./-alice.csv or put -- " in (
        capsys.readouterr().err
    )
    assert main(["check-guesses", "--", "-alice.csv"]) == 0  # the hint works
    with pytest.raises(SystemExit):  # no such file: argparse's own message, no hint
        main(["check-guesses", "-bob.csv"])
    assert "read as an option" not in capsys.readouterr().err
    (tmp_path / "-\x1b[2Jcarol.csv").write_text("prefix,guess\n,ABC\n")  # clears a screen
    with pytest.raises(SystemExit):
        main(["check-guesses", "-\x1b[2Jcarol.csv"])
    err = capsys.readouterr().err
    assert "\x1b" not in err and "write ./-\\x1b[2Jcarol.csv or put --" in err


def test_the_readme_states_the_limit_on_lines_per_row():
    from speclab.paths import repo_root

    readme = " ".join((repo_root() / "README.md").read_text(encoding="utf-8").split())
    assert f"a later row may span at most {MOST_LINES_PER_RECORD} lines" in readme


def test_a_persian_file_name_keeps_its_joiners_and_the_summary_lines_up(tmp_path, capsys):
    """دانش‌آموز.csv was listed as 'دانش\\u200cآموز', shifting the summary's columns; a
    character that reorders a line (U+202E) is still escaped."""
    from speclab.cli import main

    assert shown("دانش\u200cآموز") == "دانش\u200cآموز" and shown("a\u202eb") == "a\\u202eb"
    for name in ("دانش\u200cآموز.csv", "bob.csv"):
        (tmp_path / name).write_text("prefix,guess,expected_output\n,ABX,ABC\n", encoding="utf-8")
    assert main(["check-guesses", "--lang", "en", "--summary", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()[2:]
    assert sorted(line.split()[0] for line in lines) == ["bob", "دانش\u200cآموز"]
    from speclab.guesses_report import _display_width

    ends = {_display_width(line.rstrip()) for line in lines}  # rows of equal width line up
    assert len(ends) == 1, lines


def test_a_dash_for_standard_input_is_named(tmp_path, monkeypatch, capsys):
    """`speclab check-guesses -` said "-: no such file"; many commands read standard input
    from "-", so the reason is the one to give. A file really named "-" is still read."""
    from speclab.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["check-guesses", "-"]) == 1
    assert "-: the checker reads files, not standard input" in capsys.readouterr().err
    (tmp_path / "-").write_text("prefix,guess,expected_output\n,ABX,ABC\n", "utf-8")
    assert main(["check-guesses", "-"]) == 0


def test_a_summary_keeps_its_columns_where_a_console_writes_names_as_codes(tmp_path):
    """On a cp1252 console 无名 is written \\u65e0\\u540d, ten columns where the table had
    kept four: every column after it slid right."""
    import os
    import subprocess
    import sys

    for name in ("bob", "无名"):
        (tmp_path / f"{name}.csv").write_text("prefix,guess,expected_output\n,ABX,ABC\n", "utf-8")
    env = os.environ | {
        "PYTHONIOENCODING": "cp1252",
        "LANGUAGE": "",
        "LC_ALL": "",
        "LANG": "C.UTF-8",
    }
    result = subprocess.run(
        [sys.executable, "-m", "speclab", "check-guesses", "--summary", str(tmp_path)],
        capture_output=True, env=env, timeout=120,
    )  # fmt: skip
    lines = result.stdout.decode("cp1252").splitlines()
    header = next(line for line in lines if line.startswith("student"))
    rows = [line for line in lines if line.startswith(("bob", "\\u65e0"))]
    assert len(rows) == 2, lines
    assert {row.index(" 1 ") + 1 for row in rows} == {header.index("rows")}, lines


# --- files from real classrooms a mutation audit found untested ---------------------------


def test_excel_and_windows_files_are_read(tmp_path):
    """Excel's "CSV UTF-8" with a BOM and a sep=; line, and UTF-16 without a BOM holding a
    Chinese note, are guesses files like any other."""
    from speclab.exercises import check_guesses

    path = tmp_path / "excel.csv"
    path.write_bytes("sep=;\nprefix;guess;expected_output\n;ABX;ABC\n".encode("utf-8-sig"))
    frame = check_guesses(path)
    assert frame["row"].tolist() == [2] and frame["matches"].tolist() == [True]
    path = tmp_path / "utf16.csv"
    text = "prefix,guess,expected_output,note\n,ABX,ABC,前\n,ABC,ABCD,\n"
    path.write_bytes(text.encode("utf-16-le"))
    assert check_guesses(path)["matches"].tolist() == [True, True]


def test_a_file_named_twice_through_a_hard_link_is_read_once(tmp_path):
    from speclab import student_files

    first = tmp_path / "ana.csv"
    first.write_text("prefix,guess\n,A\n", encoding="utf-8")
    os.link(first, tmp_path / "ana2.csv")
    kept, notes = student_files.without_repeats([first, tmp_path / "ana2.csv"])
    assert kept == [first] and len(notes) == 1


def test_wide_letters_take_two_columns_and_a_joiner_none():
    from speclab import student_files

    assert student_files.columns("前缀") == 4 and student_files.columns("a\u200cb") == 2


def test_a_name_with_a_nul_in_it_is_named_not_a_traceback(tmp_path):
    """A path typed in a notebook can hold what a command line cannot: os.open raised
    ValueError("embedded null byte") out of the checker."""
    from speclab.exercises import check_guesses

    with pytest.raises(
        GuessFileError, match=r"a\\x00b.csv: cannot be read \((open: )?embedded null"
    ):
        check_guesses(tmp_path / "a\x00b.csv")
