"""The printed report of the CSV exercise (lesson 02) and the `speclab check-guesses` command.

speclab.exercises reads and checks a student's rows; this module prints them: a table per
file with the row numbers a spreadsheet shows, the problems under it, a score line, and for
several files (a folder, one per student) a class summary. Every word comes from the one
catalogue of speclab.i18n (`--lang`, or LANGUAGE/LC_ALL/LC_MESSAGES/LANG). Rows stream: each
is checked, printed and counted, so a file of a million rows needs no more memory than its
text. Cells are cut to a width, invisible characters escaped, and Chinese double-width
characters counted as two columns, so no cell can stretch, reorder or hide a line.
"""

import argparse
import gettext
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from speclab.acceptance import DEFAULT_PATH
from speclab.cli import text_path_argument
from speclab.exercises import (
    MAX_PROBLEM_LINES,
    TABLE_HEADER,
    GuessFileError,
    Score,
    Tally,
    checked_row,
    missing,
)
from speclab.guess_rows import SHOWN_CELL_CHARS, data_rows
from speclab.i18n import LANGUAGES, N_, translator
from speclab.student_files import (
    NoRowsError,
    class_files,
    columns,
    cut,
    read_text,
    shown,
    without_repeats,
)


def _shown(value, blank: str) -> str:
    """A cell for the printed table: `blank` names an empty cell, <NA> (unread) shows nothing.

    Cut to SHOWN_CELL_CHARS, invisible characters escaped (a bidi control in a cell
    would otherwise reorder the rest of the line on the screen).
    """
    if missing(value):
        return ""
    return blank if value == "" else cut(str(value), SHOWN_CELL_CHARS)


class Words:
    """The report's words in one language (looked up once per report, not per row)."""

    def __init__(self, tr: gettext.NullTranslations):
        _ = tr.gettext
        self.tr = tr
        self.header = [_(name) for name in TABLE_HEADER]
        self.problem = _("PROBLEM (see below)")
        self.right, self.wrong = _("right"), _("wrong")
        self.empty, self.blank = _("(empty)"), _("(blank)")
        self.none, self.none_end = _("none"), _("none (end)")
        self.row_problem = _("row {row}: {error}")


def _table_cells(row: dict, words: Words) -> list[str]:
    """One line of the table, as the strings shown in its columns."""
    if row["error"]:
        result = words.problem
    elif missing(row["matches"]):
        result = "-"
    else:
        result = words.right if row["matches"] else words.wrong
    checked = not row["error"]
    prefix, guess, expected = _student_cells(row, words)
    return [
        str(row["row"]),
        prefix,
        guess,
        _shown(row["accepted"], words.none) if checked else "",
        _shown(row["added"], words.none_end) if checked else "",
        _shown(row["output"], "") if checked else "",
        expected,
        result,
    ]


def _student_cells(row: dict, words: Words) -> tuple[str, str, str]:
    """The prefix, guess and expected_output cells as the table shows them (and measures them:
    an empty guess measured as "(empty)" but shown as the longer "(blank)" pushed the
    Persian row's later columns out of line)."""
    return (
        _shown(row["prefix"], words.empty),
        _shown(row["guess"], words.blank),
        _shown(row["expected_output"], ""),
    )


def _widths(rows: Iterable[dict], path_symbols: str, words: Words) -> list[int]:
    """Column widths: the student's cells as wide as the widest shown cell, results as the path.

    accepted, added and output are parts of the path (or "none (end)"), so their width
    is known without checking a row: a first pass over a long file only parses it.
    """
    widths = [_display_width(name) for name in words.header]
    for row in rows:
        widths[0] = max(widths[0], len(str(row["row"])))
        for column, cell in zip((1, 2, 6), _student_cells(row, words), strict=True):
            widths[column] = max(widths[column], _display_width(cell))
    path_width = min(len(path_symbols), SHOWN_CELL_CHARS)
    for column, least in ((3, path_width), (4, _display_width(words.none_end)), (5, path_width)):
        widths[column] = max(widths[column], least)
    return widths


def _report_lines(rows: Iterable[dict], widths: list[int], title: str, tally: Tally, words: Words):
    """The report of one file, line by line: title, table, problems, score.

    Yields as rows stream in; only the first MAX_PROBLEM_LINES problem lines are kept
    until the table ends, so the memory needed does not grow with the file.
    """
    yield f"== {title} =="
    yield _table_line(words.header, widths)
    problems = []
    for row in rows:
        tally.add(row)
        yield _table_line(_table_cells(row, words), widths)
        if row["error"] and len(problems) < MAX_PROBLEM_LINES:
            # not shown(): the translation's joiners (ZWNJ) stay; the cells in it are escaped
            problems.append(words.row_problem.format(row=row["row"], error=row["error"]))
    yield from problems
    result = tally.score()
    if result.problems > len(problems):
        hidden = result.problems - len(problems)
        yield words.tr.ngettext(
            "... and {count} row more with a problem, not listed: fix the rows above first",
            "... and {count} rows more with a problem, not listed: fix the rows above first",
            hidden,
        ).format(count=hidden)
    yield _score_line(result, words.tr)


def format_report(
    frame: pd.DataFrame, title: str, path_symbols: str = DEFAULT_PATH, lang: str | None = None
) -> str:
    """The row-by-row table and score for one checked file, as plain text in `lang`."""
    words = Words(translator(lang))
    rows = frame.to_dict("records")
    widths = _widths(rows, path_symbols, words)
    return "\n".join(_report_lines(rows, widths, shown(title), Tally(), words))


def _display_width(text: str) -> int:
    """Columns a terminal gives the text: a Chinese character takes two, a joiner none; on a
    console that cannot show a letter, its code as speclab.cli writes it (\\u65e0)."""
    return columns(text if text.isascii() else _as_printed(text))


def _as_printed(text: str) -> str:
    """text as standard output will write it: with the stream's own error handler, which
    speclab.cli sets to write what the encoding lacks as a lookalike or a \\u code."""
    encoding, errors = getattr(sys.stdout, "encoding", None), getattr(sys.stdout, "errors", None)
    if not encoding:
        return text
    try:
        return text.encode(encoding, errors or "strict").decode(encoding, "replace")
    except (UnicodeError, LookupError):
        return text


def _table_line(cells: list[str], widths: list[int]) -> str:
    padded = (
        cell + " " * (width - _display_width(cell))
        for cell, width in zip(cells, widths, strict=True)
    )
    return "  ".join(padded).rstrip()


def _score_line(result: Score, tr: gettext.NullTranslations) -> str:
    _, n_ = tr.gettext, tr.ngettext
    expectations = _("no expected_output filled in")
    if result.problems:  # a row the checker could not read may have held one
        expectations = _("no expected_output checked")
    if result.with_expectation:
        expectations = _("{right} of {count} expected outputs right").format(
            right=result.right, count=result.with_expectation
        )
    if result.unchecked:  # filled in, on a row the checker could not follow
        not_checked = n_(
            "{count} expected output not checked, as its row has a problem",
            "{count} expected outputs not checked, as their rows have a problem",
            result.unchecked,
        ).format(count=result.unchecked)
        expectations = (
            _("{checked}, {not_checked}").format(checked=expectations, not_checked=not_checked)
            if result.with_expectation
            else not_checked
        )
    checked = n_("{count} row checked", "{count} rows checked", result.rows)
    if result.all_valid:
        problems = _("no problems")
    else:
        problems = n_(
            "{count} row with a problem", "{count} rows with a problem", result.problems
        ).format(count=result.problems)
    return _("score: {expectations}; {checked}, {problems}").format(
        expectations=expectations, checked=checked.format(count=result.rows), problems=problems
    )


EXIT_STATUS = N_("0 every file is valid, 1 a file has problems or cannot be read, 2 a bad argument")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files",
        nargs="+",
        type=text_path_argument,
        metavar="FILE",
        help=N_("a guesses CSV, or a folder of them (one per student); at most 20 MB each"),
    )
    parser.add_argument(
        "--summary", action="store_true", help=N_("only the one-line summary per student")
    )
    parser.add_argument(
        "--lang",
        choices=LANGUAGES,
        default=None,
        help=N_(
            "language of the report: en, zh or fa (default: from LANGUAGE, LC_ALL, "
            "LC_MESSAGES or LANG, else English)"
        ),
    )


def run(args: argparse.Namespace) -> int:
    """Print a report per file (and a class summary for several); 0 only if all rows are valid."""
    tr = translator(getattr(args, "lang", None))
    _ = tr.gettext
    files, errors, skipped = class_files(args.files)
    files, repeats = without_repeats(files)
    for note in skipped + repeats:  # first: a note can say why a folder below had no files
        print(_("note: {problem}").format(problem=note.text(tr)), file=sys.stderr)
    for error in errors:
        print(_("error: {problem}").format(problem=error.text(tr)), file=sys.stderr)
    summary = []
    words = Words(tr)
    for path, student in zip(files, _student_names(files), strict=True):
        try:
            result = _check_and_print(path, args.summary, words)
        except GuessFileError as error:
            print(_("error: {problem}").format(problem=error.message.text(tr)), file=sys.stderr)
            result = _("no rows") if isinstance(error, NoRowsError) else None
        summary.append((student, result))
    if len(summary) > 1 or (args.summary and summary):  # no table of no students
        print(format_summary(summary, tr))
    all_valid = not errors and all(
        isinstance(result, Score) and result.all_valid for _, result in summary
    )
    return 0 if all_valid else 1


def _check_and_print(path: Path, summary_only: bool, words: Words) -> Score:
    """Check one file as a stream of rows: parse once for the widths, then check and print."""
    text = read_text(path)
    lines = text.count("\n") + 1 if len(text) >= LONG_FILE else None  # None: no bar
    # raises before anything is printed
    widths = _widths(_progress(data_rows(text, path), lines, "reading"), DEFAULT_PATH, words)
    rows = (checked_row(row, DEFAULT_PATH, words.tr) for row in data_rows(text, path))
    tally = Tally()
    if summary_only:
        for row in _progress(rows, lines, "checking"):
            tally.add(row)
    else:
        for line in _report_lines(rows, widths, shown(str(path)), tally, words):
            print(line)
        print()
    return tally.score()


LONG_FILE = 1_000_000  # characters: a file this long takes seconds to check (20 MB: a minute)


def _progress(rows: Iterable[dict], lines: int | None, what: str) -> Iterable[dict]:
    """rows, with a progress bar on a terminal's stderr over a long file's lines (None: a
    short file, no bar); the bar is gone once done."""
    if lines is None:
        return rows
    from tqdm import tqdm

    # disable=None: no bar where stderr is not a terminal (a log, a notebook's command)
    return tqdm(rows, total=lines, desc=what, unit=" rows", leave=False, disable=None)


def _student_names(files: list[Path]) -> list[str]:
    """Each file's name in the summary: its stem, or its whole path where two stems are alike."""
    stems = Counter(path.stem for path in files)
    return [shown(path.stem if stems[path.stem] == 1 else str(path)) for path in files]


def format_summary(
    summary: list[tuple[str, Score | str | None]], tr: gettext.NullTranslations | None = None
) -> str:
    """One line per student file: rows, problems, expectations right. A file that could not
    be checked has None (shown as a file error) or the words that say why, as shown."""
    _ = (tr or gettext.NullTranslations()).gettext
    table = [[_("student"), _("rows"), _("problems"), _("expected right")]]
    for student, result in summary:
        if result is None or isinstance(result, str):
            table.append([student, "-", result or _("file error"), "-"])
        else:
            right = f"{result.right}/{result.with_expectation}" if result.with_expectation else "-"
            table.append([student, str(result.rows), str(result.problems), right])
    widths = [max(_display_width(line[i]) for line in table) for i in range(len(table[0]))]
    lines = [_("== summary ==")]
    lines += [_table_line(line, widths) for line in table]
    return "\n".join(lines)
