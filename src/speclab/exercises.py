"""The CSV exercise of lesson 02: check a student's guesses on the ABCDEFG path.

A student edits `data/guesses.csv` (columns `prefix`, `guess`, optionally
`expected_output`), predicts each new output on paper or in the file, then runs

    speclab check-guesses data/guesses.csv            (or check_guesses(path) in a notebook)

Every row is checked with `speclab.acceptance.verify_on_path`. Spreadsheet habits are
tolerated: a UTF-8 byte-order mark, spaces around cells, semicolon or tab separators,
UTF-16 "Unicode text" files. A bad row is reported with its row number as a
spreadsheet shows it (the header is row 1) and never stops the good rows from being
checked. Problems with the whole file (missing, empty, binary, no header, broken
encoding) raise `GuessFileError`, which the command prints as one line. The student's
file is only ever read.

Left out on purpose: silent fixes. A lower-case guess is an error with a hint, not
upper-cased behind the student's back.
"""

import argparse
import csv
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from speclab.acceptance import CAPITALS, DEFAULT_PATH, InvalidGuess, verify_on_path

REQUIRED_COLUMNS = ("prefix", "guess")
OPTIONAL_COLUMNS = ("expected_output",)
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
# What students type when they copy "(empty)" from the lesson table instead of leaving it blank.
PREFIX_PLACEHOLDERS = {"(empty)", "empty", "(none)", "none", "-", "—", "''", '""'}


class GuessFileError(ValueError):
    """The file as a whole cannot be checked (missing, empty, binary, no usable header)."""


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


def _read_text(path: Path) -> str:
    """The file's text, or GuessFileError saying in one line why it is not a text CSV."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise GuessFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise GuessFileError(f"{path}: is a folder, not a CSV file") from None
    except OSError as error:
        raise GuessFileError(f"{path}: cannot be read ({error.strerror})") from None
    if raw.startswith(b"PK\x03\x04"):
        raise GuessFileError(
            f"{path}: is a spreadsheet workbook (.xlsx) or zip, not CSV; "
            "in your spreadsheet use Save As -> 'CSV UTF-8'"
        )
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = raw.decode("utf-16", errors="replace")  # spreadsheet "Unicode text" export
    elif b"\x00" in raw:
        raise GuessFileError(f"{path}: looks like a binary file, not a CSV text file")
    else:
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise GuessFileError(
                f"{path}: is not UTF-8 text (a binary file, or a CSV saved in another "
                "encoding); save it as 'CSV UTF-8'"
            ) from None
    if any(ord(char) < 32 and char not in "\t\r\n" for char in text):
        raise GuessFileError(f"{path}: contains control characters: not a CSV text file")
    if not text.strip():
        raise GuessFileError(
            f"{path}: is empty; it needs a header row: prefix,guess,expected_output"
        )
    return text


def _separator(header_line: str) -> str:
    """Comma, or the semicolon / tab a spreadsheet in another locale writes."""
    counts = {sep: header_line.count(sep) for sep in (",", ";", "\t")}
    best = max(counts, key=counts.get)
    return best if counts[best] > 0 else ","


def _split_line(line: str, separator: str) -> list[str]:
    """The cells of one line; csv.Error for broken quoting."""
    return next(csv.reader([line], delimiter=separator, strict=True), [])


def _column_name(cell: str) -> str:
    return cell.replace("\ufeff", "").strip().lower().replace(" ", "_").replace("-", "_")


def _header(cells: list[str], path: Path, row_number: int) -> dict[str, int]:
    """Column name -> cell index, checking that the required columns are there once."""
    names = [_column_name(cell) for cell in cells]
    for name in set(names):
        if name and names.count(name) > 1:
            raise GuessFileError(f"{path}: row {row_number} names the column {name!r} twice")
    missing = [name for name in REQUIRED_COLUMNS if name not in names]
    if missing:
        found = ", ".join(repr(cell.strip()) for cell in cells) or "nothing"
        raise GuessFileError(
            f"{path}: missing column {' and '.join(map(repr, missing))}; the header "
            f"(row {row_number}) must name prefix, guess and optionally expected_output, "
            f"found {found}"
        )
    return {
        name: names.index(name) for name in REQUIRED_COLUMNS + OPTIONAL_COLUMNS if name in names
    }


def _check_row(prefix: str, guess: str, expected: str, path_symbols: str) -> dict:
    """The result columns for one row's cleaned cells; problems go into 'error'."""
    result = {"accepted": None, "added": None, "output": None, "matches": None, "error": ""}
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
    lines = _read_text(path).splitlines()
    header_index = next(index for index, line in enumerate(lines) if line.strip())
    separator = _separator(lines[header_index])
    try:
        header_cells = _split_line(lines[header_index], separator)
    except csv.Error:
        raise GuessFileError(
            f"{path}: broken quoting in the header (row {header_index + 1})"
        ) from None
    columns = _header(header_cells, path, header_index + 1)
    records = []
    for index in range(header_index + 1, len(lines)):
        row_number = index + 1
        try:
            cells = [cell.strip() for cell in _split_line(lines[index], separator)]
        except csv.Error:
            problem = 'broken quoting: a " opens a cell and never closes (or text follows it)'
            records.append({"row": row_number, "error": problem})
            continue
        if not any(cells):
            continue  # a blank spreadsheet row
        cell = {name: cells[i] if i < len(cells) else "" for name, i in columns.items()}
        cell.setdefault("expected_output", "")
        record = {"row": row_number, **cell}
        extra = [value for i, value in enumerate(cells) if i >= len(header_cells) and value]
        if extra:
            record.update(accepted=None, added=None, output=None, matches=None)
            record["error"] = (
                f"{len(cells)} cells but the header names {len(header_cells)} columns "
                "(an extra separator, or a comma inside a cell?)"
            )
        else:
            record.update(
                _check_row(cell["prefix"], cell["guess"], cell["expected_output"], path_symbols)
            )
        records.append(record)
    if not records:
        raise GuessFileError(f"{path}: has a header but no rows to check; add a row per guess")
    return _as_frame(records)


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
    """A cell for the printed table: `blank` names an empty cell, <NA> (unread) shows nothing."""
    if pd.isna(value):
        return ""
    return blank if value == "" else str(value)


def format_report(frame: pd.DataFrame, title: str) -> str:
    """The row-by-row table and score for one file, as plain text."""
    header = ["row", "prefix", "guess", "accepted", "added", "output", "expected", "result"]
    table = [header]
    for record in frame.itertuples(index=False):
        if record.error:
            result = "PROBLEM (see below)"
        elif pd.isna(record.matches):
            result = "-"
        else:
            result = "right" if record.matches else "wrong"
        table.append(
            [
                str(record.row),
                _shown(record.prefix, "(empty)"),
                _shown(record.guess, "(blank)"),
                "" if record.error else _shown(record.accepted, "none"),
                "" if record.error else _shown(record.added, "none (end)"),
                "" if record.error else _shown(record.output, ""),
                _shown(record.expected_output, ""),
                result,
            ]
        )
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    lines = [f"== {title} =="]
    lines += [_table_line(line, widths) for line in table]
    for record in frame.itertuples(index=False):
        if record.error:
            lines.append(f"row {record.row}: {record.error}")
    lines.append(_score_line(score(frame)))
    return "\n".join(lines)


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


def _csv_files(names: list[str]) -> tuple[list[Path], list[str]]:
    """The files to check (a folder gives its *.csv files) and one error line per bad name."""
    files, errors = [], []
    for name in names:
        path = Path(name)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix.lower() == ".csv" and p.is_file())
            if not found:
                errors.append(f"{path}: folder has no .csv files")
            files.extend(found)
        else:
            files.append(path)
    return files, errors


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="a guesses CSV, or a folder of them (one per student)",
    )
    parser.add_argument(
        "--summary", action="store_true", help="only the one-line summary per student"
    )


def run(args: argparse.Namespace) -> int:
    """Print a report per file (and a class summary for several); 0 only if all rows are valid."""
    files, errors = _csv_files(args.files)
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    summary = []
    for path in files:
        try:
            frame = check_guesses(path)
        except GuessFileError as error:
            print(f"error: {error}", file=sys.stderr)
            summary.append((path.stem, None))
            continue
        if not args.summary:
            print(format_report(frame, str(path)))
            print()
        summary.append((path.stem, score(frame)))
    if len(summary) > 1 or args.summary:
        print(format_summary(summary))
    all_valid = not errors and all(result and result.all_valid for _, result in summary)
    return 0 if all_valid else 1


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
