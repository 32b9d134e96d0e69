"""The CSV exercise of lesson 02: check a student's guesses on the ABCDEFG path.

A student edits `data/guesses.csv` (columns `prefix`, `guess`, optionally
`expected_output`), predicts each new output on paper or in the file, then runs

    speclab check-guesses data/guesses.csv            (or check_guesses(path) in a notebook)

Every row is checked with `speclab.acceptance.verify_on_path`. Spreadsheet habits are
tolerated: a UTF-8 byte-order mark, spaces around cells, semicolon or tab separators,
UTF-16 "Unicode text" files, note cells that run over several lines. A bad row is
reported with its row number as a spreadsheet shows it (the header is row 1) and never
stops the good rows from being checked. Problems with the whole file (missing, not a
regular file, over 20 MB, empty, binary, no header, broken encoding) raise
`GuessFileError`, which the command prints as one line; reading the file safely is
`speclab.student_files`. The student's file is only ever read.

The command streams: each row is checked, printed and counted, so a file of a million
rows needs no more memory than its text. `check_guesses` returns the whole table as a
DataFrame, for a notebook. Cells are shown cut to a width and with invisible characters
escaped, so no cell can stretch, reorder or hide a line of the report.

Left out on purpose: silent fixes. A lower-case guess is an error with a hint, not
upper-cased behind the student's back.
"""

import argparse
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from speclab.acceptance import CAPITALS, DEFAULT_PATH, InvalidGuess, verify_on_path
from speclab.student_files import (
    GuessFileError,
    class_files,
    cut,
    read_text,
    records,
    separator,
    shown,
)

__all__ = ["GuessFileError", "Score", "check_guesses", "format_report", "score"]

REQUIRED_COLUMNS = ("prefix", "guess")
OPTIONAL_COLUMNS = ("expected_output",)
STUDENT_COLUMNS = ("prefix", "guess", "expected_output")
RESULT_COLUMNS = [
    "row",
    "prefix",
    "guess",
    "expected_output",
    "accepted",
    "added",
    "output",
    "matches",
    "error",
]
TABLE_HEADER = ["row", "prefix", "guess", "accepted", "added", "output", "expected", "result"]
# What students type when they copy "(empty)" from the lesson table instead of leaving it blank.
PREFIX_PLACEHOLDERS = {"(empty)", "empty", "(none)", "none", "-", "—", "''", '""'}
MAX_CELL_CHARS = 100  # a prefix, guess or expectation is a few letters; more is a paste gone wrong
SHOWN_CELL_CHARS = 20  # the widest a cell is shown in the table, so one cell cannot widen it all
MAX_PROBLEM_LINES = 200  # problems listed under a table; further ones are counted, not listed


@dataclass(frozen=True)
class Score:
    """The summary line of one checked file."""

    rows: int  # rows checked (blank rows are skipped)
    problems: int  # rows with an error
    with_expectation: int  # valid rows whose expected_output was filled in
    right: int  # ... and matched the real output

    @property
    def all_valid(self) -> bool:
        return self.problems == 0


class Tally:
    """Counts checked rows as they stream past, so a score needs no table in memory."""

    def __init__(self) -> None:
        self.counts = Counter()

    def add(self, row: dict) -> None:
        self.counts["rows"] += 1
        if row["error"]:
            self.counts["problems"] += 1
        elif not _missing(row["matches"]):
            self.counts["with_expectation"] += 1
            self.counts["right"] += bool(row["matches"])

    def score(self) -> Score:
        return Score(**{name: self.counts[name] for name in Score.__dataclass_fields__})


def _data_rows(text: str, path: Path) -> Iterator[dict]:
    """One dict per non-blank data record: row, the student's cells, and "error" from parsing.

    Raises GuessFileError for a header that cannot be used, and at the end for a file
    with no data rows.
    """
    rows = records(text, separator(text))
    header_row, header_cells = _header_record(rows, path)
    columns = _header(header_cells, path, header_row)
    found = False
    for row_number, cells, problem in rows:
        if problem:
            found = True
            yield {"row": row_number, **dict.fromkeys(STUDENT_COLUMNS), "error": problem}
            continue
        cells = [cell.strip() for cell in cells]
        if not any(cells):
            continue  # a blank spreadsheet row
        found = True
        yield _student_cells(row_number, cells, columns, len(header_cells))
    if not found:
        raise GuessFileError(
            f"{shown(str(path))}: has a header but no rows to check; add a row per guess"
        )


def _header_record(rows: Iterator[tuple], path: Path) -> tuple[int, list[str]]:
    """The first record with a non-blank cell: the header, as (row number, cells)."""
    for row_number, cells, problem in rows:
        if problem:
            what = problem.split(":")[0]  # "broken quoting", "a cell is too long"
            raise GuessFileError(f"{shown(str(path))}: {what} in the header (row {row_number})")
        if any(cell.strip() for cell in cells):
            return row_number, cells
    raise GuessFileError(
        f"{shown(str(path))}: has no header row; it needs: prefix,guess,expected_output"
    )


def _student_cells(row_number: int, cells: list[str], columns: dict, header_width: int) -> dict:
    row = {"row": row_number}
    row.update({name: cells[i] if i < len(cells) else "" for name, i in columns.items()})
    row.setdefault("expected_output", "")
    extra = [value for i, value in enumerate(cells) if i >= header_width and value]
    row["error"] = (
        f"{len(cells)} cells but the header names {header_width} columns "
        "(an extra separator, or a comma inside a cell?)"
        if extra
        else ""
    )
    return row


def _column_name(cell: str) -> str:
    return cell.replace("\ufeff", "").strip().lower().replace(" ", "_").replace("-", "_")


def _header(cells: list[str], path: Path, row_number: int) -> dict[str, int]:
    """Column name -> cell index, checking that the required columns are there once."""
    names = [_column_name(cell) for cell in cells]
    for name in set(names):
        if name and names.count(name) > 1:
            raise GuessFileError(
                f"{shown(str(path))}: row {row_number} names the column "
                f"'{cut(name, SHOWN_CELL_CHARS)}' twice"
            )
    missing = [name for name in REQUIRED_COLUMNS if name not in names]
    if missing:
        found = ", ".join(f"'{cut(cell.strip(), SHOWN_CELL_CHARS)}'" for cell in cells[:8])
        found += ", ..." if len(cells) > 8 else ""
        raise GuessFileError(
            f"{shown(str(path))}: missing column {' and '.join(map(repr, missing))}; the "
            f"header (row {row_number}) must name prefix, guess and optionally "
            f"expected_output, found {found or 'nothing'}"
        )
    return {
        name: names.index(name) for name in REQUIRED_COLUMNS + OPTIONAL_COLUMNS if name in names
    }


def _checked(row: dict, path_symbols: str) -> dict:
    """The row with its result columns; a row that could not be parsed keeps its error."""
    result = {**row, "accepted": None, "added": None, "output": None, "matches": None}
    if not row["error"]:
        cells = [row[name] for name in STUDENT_COLUMNS]
        result.update(_check_row(*cells, path_symbols))
    return result


def _cell_problem(name: str, value: str) -> str:
    """Why a cell cannot even be checked as letters ("" if it can)."""
    if len(value) > MAX_CELL_CHARS:
        return (
            f"{name} is too long: {len(value):,} characters ({cut(value, SHOWN_CELL_CHARS)}); "
            "it should be a few capital letters"
        )
    if "\n" in value or "\r" in value:
        return (
            f"{name} {value!r} holds a line break: the cell is quoted over several lines "
            '(is a " left open?)'
        )
    return ""


def _check_row(prefix: str, guess: str, expected: str, path_symbols: str) -> dict:
    """The result columns for one row's cleaned cells; problems go into 'error'."""
    result = {"accepted": None, "added": None, "output": None, "matches": None, "error": ""}
    for name, value in zip(STUDENT_COLUMNS, (prefix, guess, expected), strict=True):
        if problem := _cell_problem(name, value):
            result["error"] = problem
            return result
    if prefix.lower() in PREFIX_PLACEHOLDERS:
        result["error"] = (
            f"prefix {prefix!r}: leave the prefix cell blank to start at the beginning"
        )
        return result
    try:
        verdict = verify_on_path(prefix, guess, path_symbols)
    except InvalidGuess as error:
        result["error"] = str(error)
        return result
    result.update(accepted=verdict.accepted, added=verdict.added, output=verdict.output)
    if expected:
        bad = next((char for char in expected if char not in CAPITALS), None)
        if bad is None:
            result["matches"] = expected == verdict.output
        elif bad.upper() in CAPITALS:
            result["error"] = (
                f"expected_output {expected!r} has lower-case letters: "
                f"use capitals, e.g. {expected.upper()!r}"
            )
        else:
            result["error"] = (
                f"expected_output {expected!r} has {bad!r}: only capital letters A-Z are allowed"
            )
    return result


def check_guesses(path: str | Path, path_symbols: str = DEFAULT_PATH) -> pd.DataFrame:
    """Check every row of a guesses CSV; one result row per non-blank data row.

    Columns: row (as a spreadsheet numbers it, header = 1), prefix, guess,
    expected_output (the student's cells, stripped), accepted, added, output (from the
    target path; <NA> for a bad row), matches (expected_output == output; <NA> when
    not filled in or the row is bad) and error ("" for a valid row).
    Raises GuessFileError when the file as a whole cannot be checked.
    """
    path = Path(path)
    text = read_text(path)
    return _as_frame([_checked(row, path_symbols) for row in _data_rows(text, path)])


def _as_frame(records: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame.from_records(records, columns=RESULT_COLUMNS)
    frame["row"] = frame["row"].astype("int64")
    for column in ("prefix", "guess", "expected_output", "accepted", "added", "output", "error"):
        frame[column] = frame[column].astype("string")
    frame["matches"] = frame["matches"].astype("boolean")
    return frame


def score(frame: pd.DataFrame) -> Score:
    """Rows, problems, and expectations filled in / right, for one checked file."""
    valid = frame["error"] == ""
    filled = valid & frame["matches"].notna()
    return Score(
        rows=len(frame),
        problems=int((~valid).sum()),
        with_expectation=int(filled.sum()),
        right=int((filled & frame["matches"].fillna(False)).sum()),
    )


def _shown(value, blank: str) -> str:
    """A cell for the printed table: `blank` names an empty cell, <NA> (unread) shows nothing.

    Cut to SHOWN_CELL_CHARS, invisible characters escaped (a bidi control in a cell
    would otherwise reorder the rest of the line on the screen).
    """
    if _missing(value):
        return ""
    return blank if value == "" else cut(str(value), SHOWN_CELL_CHARS)


def _missing(value) -> bool:
    """An unset result: None while streaming, <NA> in a DataFrame's records (cheaper than pd.isna)."""
    return value is None or value is pd.NA


def _table_cells(row: dict) -> list[str]:
    """One line of the table, as the strings shown in its columns."""
    if row["error"]:
        result = "PROBLEM (see below)"
    elif _missing(row["matches"]):
        result = "-"
    else:
        result = "right" if row["matches"] else "wrong"
    checked = not row["error"]
    return [
        str(row["row"]),
        _shown(row["prefix"], "(empty)"),
        _shown(row["guess"], "(blank)"),
        _shown(row["accepted"], "none") if checked else "",
        _shown(row["added"], "none (end)") if checked else "",
        _shown(row["output"], "") if checked else "",
        _shown(row["expected_output"], ""),
        result,
    ]


def _widths(rows: Iterable[dict], path_symbols: str) -> list[int]:
    """Column widths: the student's cells as wide as the widest shown cell, results as the path.

    accepted, added and output are parts of the path (or "none (end)"), so their width
    is known without checking a row: a first pass over a long file only parses it.
    """
    widths = [len(name) for name in TABLE_HEADER]
    for row in rows:
        widths[0] = max(widths[0], len(str(row["row"])))
        for column, name in ((1, "prefix"), (2, "guess"), (6, "expected_output")):
            widths[column] = max(widths[column], len(_shown(row[name], "(empty)")))
    path_width = min(len(path_symbols), SHOWN_CELL_CHARS)
    for column, least in ((3, path_width), (4, len("none (end)")), (5, path_width)):
        widths[column] = max(widths[column], least)
    return widths


def _report_lines(rows: Iterable[dict], widths: list[int], title: str, tally: Tally):
    """The report of one file, line by line: title, table, problems, score.

    Yields as rows stream in; only the first MAX_PROBLEM_LINES problem lines are kept
    until the table ends, so the memory needed does not grow with the file.
    """
    yield f"== {title} =="
    yield _table_line(TABLE_HEADER, widths)
    problems = []
    for row in rows:
        tally.add(row)
        yield _table_line(_table_cells(row), widths)
        if row["error"] and len(problems) < MAX_PROBLEM_LINES:
            problems.append(shown(f"row {row['row']}: {row['error']}"))
    yield from problems
    result = tally.score()
    if result.problems > len(problems):
        hidden = result.problems - len(problems)
        yield f"... and {_rows(hidden)} more with a problem, not listed: fix the rows above first"
    yield _score_line(result)


def format_report(frame: pd.DataFrame, title: str, path_symbols: str = DEFAULT_PATH) -> str:
    """The row-by-row table and score for one checked file, as plain text."""
    rows = frame.to_dict("records")
    return "\n".join(_report_lines(rows, _widths(rows, path_symbols), shown(title), Tally()))


def _table_line(cells: list[str], widths: list[int]) -> str:
    return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip()


def _score_line(result: Score) -> str:
    expectations = (
        f"{result.right} of {result.with_expectation} expected outputs right"
        if result.with_expectation
        else "no expected_output filled in"
    )
    problems = "no problems" if result.all_valid else f"{_rows(result.problems)} with a problem"
    return f"score: {expectations}; {_rows(result.rows)} checked, {problems}"


def _rows(count: int) -> str:
    return f"{count} row" if count == 1 else f"{count} rows"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="a guesses CSV, or a folder of them (one per student); at most 20 MB each",
    )
    parser.add_argument(
        "--summary", action="store_true", help="only the one-line summary per student"
    )


def run(args: argparse.Namespace) -> int:
    """Print a report per file (and a class summary for several); 0 only if all rows are valid."""
    files, errors = class_files(args.files)
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    summary = []
    for path, student in zip(files, _student_names(files), strict=True):
        try:
            result = _check_and_print(path, args.summary)
        except GuessFileError as error:
            print(f"error: {error}", file=sys.stderr)
            result = None
        summary.append((student, result))
    if len(summary) > 1 or args.summary:
        print(format_summary(summary))
    all_valid = not errors and all(result and result.all_valid for _, result in summary)
    return 0 if all_valid else 1


def _check_and_print(path: Path, summary_only: bool) -> Score:
    """Check one file as a stream of rows: parse once for the widths, then check and print."""
    text = read_text(path)
    widths = _widths(_data_rows(text, path), DEFAULT_PATH)  # raises before anything is printed
    rows = (_checked(row, DEFAULT_PATH) for row in _data_rows(text, path))
    tally = Tally()
    if summary_only:
        for row in rows:
            tally.add(row)
    else:
        for line in _report_lines(rows, widths, shown(str(path)), tally):
            print(line)
        print()
    return tally.score()


def _student_names(files: list[Path]) -> list[str]:
    """Each file's name in the summary: its stem, or its whole path where two stems are alike."""
    stems = Counter(path.stem for path in files)
    return [shown(path.stem if stems[path.stem] == 1 else str(path)) for path in files]


def format_summary(summary: list[tuple[str, Score | None]]) -> str:
    """One line per student file: rows, problems, expectations right."""
    table = [["student", "rows", "problems", "expected right"]]
    for student, result in summary:
        if result is None:
            table.append([student, "-", "file error", "-"])
        else:
            right = f"{result.right}/{result.with_expectation}" if result.with_expectation else "-"
            table.append([student, str(result.rows), str(result.problems), right])
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    lines = ["== summary =="]
    lines += [_table_line(line, widths) for line in table]
    return "\n".join(lines)
