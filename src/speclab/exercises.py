"""The CSV exercise of lesson 02: check a student's guesses on the ABCDEFG path.

A student edits `data/guesses.csv` (columns `prefix`, `guess`, optionally
`expected_output`), predicts each new output on paper or in the file, then runs

    speclab check-guesses data/guesses.csv            (or check_guesses(path) in a notebook)

Every row is checked with `speclab.acceptance.verify_on_path`. Spreadsheet habits are
tolerated: a UTF-8 byte-order mark, spaces around cells, semicolon or tab separators
(and Excel's first line `sep=;`, which Excel does not show as a row), UTF-16 "Unicode
text" files with or without their byte-order mark, note cells that run over several
lines. A bad row is reported with its row number as a spreadsheet shows it (the header is
row 1) and never stops the good rows from being checked. Problems with the whole file (missing, not a
regular file, over 20 MB, empty, binary, no header, broken encoding) raise
`GuessFileError`, which the command prints as one line; reading the file safely is
`speclab.student_files`. The student's file is only ever read.

`check_guesses` returns the whole table as a DataFrame, for a notebook; the printed report
and the `speclab check-guesses` command are speclab.guesses_report, which streams the rows.

Languages: the report, the errors and the summary are in English, Chinese or Persian
(`speclab check-guesses --lang fa`, or `lang=` here; else LANGUAGE/LC_ALL/LC_MESSAGES/LANG),
through the one catalogue of `speclab.i18n`. The column headers are the English ones
(prefix, guess, expected_output) in every language; the Chinese and Persian names of the
lessons' tables (前缀, 猜测, 预期输出; پیشوند قبلی, حدس, خروجی مورد انتظار) are accepted too.
Row numbers and cells stay as the spreadsheet shows them (Latin digits). Persian or
Arabic-Indic digits in a cell and a Persian comma (،) as a separator get their own message,
as does a Chinese input method's full-width comma (，). A column named like the expected
output but not as it ('expected', 'output', 'expected_outptu') is an error: unread, the
student's predictions would go unchecked without a word.

Left out on purpose: silent fixes. A lower-case guess is an error with a hint, not
upper-cased behind the student's back; a file separated by ، is not re-read with it.
"""

import difflib
import functools
import gettext
import unicodedata
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from speclab.acceptance import (
    CAPITALS,
    DEFAULT_PATH,
    InvalidGuess,
    accept,
    first_non_capital,
    shown_text,
    verify_on_path,
)
from speclab.i18n import N_, Message, translator
from speclab.student_files import (
    GuessFileError,
    cut,
    excel_separator_line,
    read_text,
    records,
    separator,
    shown,
)

__all__ = [
    "GuessFileError",
    "Score",
    "check_guesses",
    "explain_invalid",
    "score",
]

REQUIRED_COLUMNS = ("prefix", "guess")
OPTIONAL_COLUMNS = ("expected_output",)
STUDENT_COLUMNS = ("prefix", "guess", "expected_output")
COLUMN_WORDS = (N_("prefix"), N_("guess"), N_("expected_output"))  # as messages name them
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
TABLE_HEADER = [
    N_("row"),
    N_("prefix"),
    N_("guess"),
    N_("accepted"),
    N_("added"),
    N_("output"),
    N_("expected"),
    N_("result"),
]
# The column names of the lessons' tables in Chinese and Persian, read as the English ones.
COLUMN_ALIASES = {
    "前缀": "prefix",
    "猜测": "guess",
    "预期输出": "expected_output",
    "پیشوند": "prefix",
    "پیشوند قبلی": "prefix",
    "حدس": "guess",
    "خروجی مورد انتظار": "expected_output",
}
# Marks a Persian keyboard (Arabic comma and semicolon) or a Chinese input method (full-width
# comma, ideographic comma, full-width semicolon) types where the checker needs ','. Each
# kind has its message for a header separated by one, and for a cell that holds one.
_PERSIAN = (
    N_(
        "{name}: the header (row {row}) is separated by the Persian '{mark}', which "
        "the checker does not read as a separator; save the file with Latin commas "
        "',' (a spreadsheet's 'CSV UTF-8'), or write prefix,guess,expected_output"
    ),
    N_(
        "{column} {value!r} holds the Persian '{mark}': cells are separated by "
        "Latin commas ',', and a cell holds capital letters A-Z only"
    ),
)
_FULL_WIDTH = (
    N_(
        "{name}: the header (row {row}) is separated by the full-width '{mark}', which "
        "the checker does not read as a separator; type Latin commas ',' (switch the "
        "input method to half-width), or write prefix,guess,expected_output"
    ),
    N_(
        "{column} {value!r} holds the full-width '{mark}': cells are separated by "
        "Latin commas ',', and a cell holds capital letters A-Z only"
    ),
)
FOREIGN_SEPARATORS = {"،": _PERSIAN, "؛": _PERSIAN, "，": _FULL_WIDTH, "、": _FULL_WIDTH,
                      "；": _FULL_WIDTH}  # fmt: skip
# Header names a student may give the expected output: with none of them read, the
# predictions would go unchecked without a word. (Typos are caught by their closeness.) The
# words the checker's own tables use, in every language, count too (`_in_every_language`).
EXPECTED_LOOKALIKES = {"expected", "expect", "output", "prediction", "predicted", "new output"}
# What students type when they copy "(empty)" from the lesson table instead of leaving it
# blank; "(empty)" and "none" as the tables print them in Chinese and Persian count too.
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
    unchecked: int = 0  # rows with a problem whose expected_output was filled in

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
            self.counts["unchecked"] += bool((row.get("expected_output") or "").strip())
        elif not missing(row["matches"]):
            self.counts["with_expectation"] += 1
            self.counts["right"] += bool(row["matches"])

    def score(self) -> Score:
        return Score(**{name: self.counts[name] for name in Score.__dataclass_fields__})


def data_rows(text: str, path: Path) -> Iterator[dict]:
    """One dict per non-blank data record: row, the student's cells, and "error" from parsing.

    "error" is "" or a Message (English as a str, translated where it is shown).
    Raises GuessFileError for a header that cannot be used, and at the end for a file
    with no data rows.
    """
    named, text = excel_separator_line(text)  # Excel hides that line: the header is row 1
    delimiter = named or separator(text)
    rows = records(text, delimiter)
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
        if len(cells) == 1 < len(header_cells) and (other := _other_separator(cells[0], delimiter)):
            # a spreadsheet in a semicolon locale saves its rows with ';' under a ',' header it
            # left in one cell: every row read as an empty guess, with no word of the cause
            yield {"row": row_number, **dict.fromkeys(STUDENT_COLUMNS),
                   "error": Message(N_("this row's cells are separated by {found} but the "
                                       "header's by {header}; use one separator in the whole "
                                       "file (save it as 'CSV UTF-8')"),
                                    {"found": other, "header": SEPARATOR_NAMES[delimiter]})}  # fmt: skip
            continue
        if _repeats_header(cells, columns):  # two files pasted together: not a lower-case guess
            yield {"row": row_number, **dict.fromkeys(STUDENT_COLUMNS),
                   "error": Message(N_("this row repeats the header (row {header}); delete it"),
                                    {"header": header_row})}  # fmt: skip
            continue
        yield _student_cells(row_number, cells, columns, len(header_cells))
    if not found:
        raise GuessFileError(
            N_("{name}: has a header but no rows to check; add a row per guess"),
            name=shown(str(path)),
        )


SEPARATOR_NAMES = {",": "','", ";": "';'", "\t": "'\\t'"}  # a tab, as a reader can see it


def _other_separator(cell: str, delimiter: str) -> str | None:
    """The name of another separator a lone cell holds (';' in `;ABX;ABC` under a ','
    header), or None."""
    for mark, name in SEPARATOR_NAMES.items():
        if mark != delimiter and mark in cell:
            return name
    return None


def _repeats_header(cells: list[str], columns: dict[str, int]) -> bool:
    """Whether a data row names the columns as the header does (in any language it reads)."""
    return all(i < len(cells) and _column_name(cells[i]) == name for name, i in columns.items())


def _header_record(rows: Iterator[tuple], path: Path) -> tuple[int, list[str]]:
    """The first record with a non-blank cell: the header, as (row number, cells)."""
    for row_number, cells, problem in rows:
        if problem:
            raise GuessFileError(
                N_("{name}: {problem} in the header (row {row})"),
                name=shown(str(path)),
                problem=problem.text().split(":")[0],  # "broken quoting", "a cell is too long"
                row=row_number,
            )
        if any(cell.strip() for cell in cells):
            return row_number, cells
    raise GuessFileError(
        N_("{name}: has no header row; it needs: prefix,guess,expected_output"),
        name=shown(str(path)),
    )


def _student_cells(row_number: int, cells: list[str], columns: dict, header_width: int) -> dict:
    row = {"row": row_number}
    row.update({name: cells[i] if i < len(cells) else "" for name, i in columns.items()})
    row.setdefault("expected_output", "")
    extra = [value for i, value in enumerate(cells) if i >= header_width and value]
    row["error"] = (
        Message(
            N_(
                "{cells} cells but the header names {columns} columns "
                "(an extra separator, or a comma inside a cell?)"
            ),
            {"cells": len(cells), "columns": header_width},
        )
        if extra
        else ""
    )
    return row


# Letters an Arabic keyboard types where Persian has its own: the same names to a reader.
ARABIC_TO_PERSIAN = str.maketrans({"\u064a": "\u06cc", "\u0643": "\u06a9", "\u0649": "\u06cc"})


def _column_name(cell: str) -> str:
    """A header cell as the name it means: full-width letters and spaces as plain ones (NFKC,
    what a Chinese input method types), Arabic ي and ك as Persian ی and ک, aliases read."""
    name = unicodedata.normalize("NFKC", cell).translate(ARABIC_TO_PERSIAN)
    name = name.replace("\ufeff", "").replace("\u200c", " ").strip().lower()
    spaced = " ".join(name.split())
    name = COLUMN_ALIASES.get(spaced, COLUMN_ALIASES.get(spaced.replace(" ", ""), name))
    return name.replace(" ", "_").replace("-", "_")


def _header(cells: list[str], path: Path, row_number: int) -> dict[str, int]:
    """Column name -> cell index, checking that the required columns are there once."""
    names = [_column_name(cell) for cell in cells]
    for name, count in Counter(names).items():  # not names.count: a wide header is quadratic
        if name and count > 1:
            raise GuessFileError(
                N_("{name}: row {row} names the column '{column}' twice"),
                name=shown(str(path)),
                row=row_number,
                column=cut(name, SHOWN_CELL_CHARS),
            )
    missing = [name for name in REQUIRED_COLUMNS if name not in names]
    marks = [mark for mark in FOREIGN_SEPARATORS if mark in "".join(cells)]
    if missing and marks:
        header_message, _ = FOREIGN_SEPARATORS[marks[0]]
        raise GuessFileError(header_message, name=shown(str(path)), row=row_number, mark=marks[0])
    if missing:
        found = ", ".join(f"'{cut(cell.strip(), SHOWN_CELL_CHARS)}'" for cell in cells[:8])
        found += ", ..." if len(cells) > 8 else ""
        template = (
            N_(
                "{name}: missing column {missing}; the header (row {row}) must name prefix, "
                "guess and optionally expected_output, found {found}"
            )
            if len(missing) == 1
            else N_(
                "{name}: missing columns 'prefix' and 'guess'; the header (row {row}) must name "
                "prefix, guess and optionally expected_output, found {found}"
            )
        )
        raise GuessFileError(
            template,
            name=shown(str(path)),
            missing=repr(missing[0]),
            row=row_number,
            found=found or "''",
        )
    if "expected_output" not in names:
        lookalike = next((i for i, name in enumerate(names) if _looks_like_expected(name)), None)
        if lookalike is not None:
            raise GuessFileError(
                N_(
                    "{name}: the header (row {row}) names a column '{column}', which the checker "
                    "does not read; to have your predictions checked, name it expected_output"
                ),
                name=shown(str(path)),
                row=row_number,
                column=cut(cells[lookalike].strip(), SHOWN_CELL_CHARS),  # as typed
            )
    return {
        name: names.index(name) for name in REQUIRED_COLUMNS + OPTIONAL_COLUMNS if name in names
    }


@functools.cache
def _in_every_language(words: frozenset[str]) -> frozenset[str]:
    """words and their translations in every language of the checker, lower case, each
    also without its brackets: '(empty)' gives '（空）', '空', '(خالی)', 'خالی', ..."""
    from speclab.i18n import LANGUAGES

    found = {translator(lang).gettext(word).lower() for word in words for lang in LANGUAGES}
    return frozenset(found | {word.strip("()（）") for word in found} - {""})


def _looks_like_expected(name: str) -> bool:
    """'expected', 'output', 'expected_outptu', '输出': meant as expected_output, not a note
    column."""
    spaced = name.lower().replace("_", " ")  # _column_name made the spaces underscores
    if spaced in _in_every_language(frozenset(EXPECTED_LOOKALIKES)):
        return True
    # a ratio of 0.7 against 15 characters needs a name of 7 to 27: others are not compared,
    # so that a header of many long names stays fast
    matcher = difflib.SequenceMatcher(None, name, "expected_output")
    return 7 <= len(name) <= 27 and matcher.quick_ratio() >= 0.7 and matcher.ratio() >= 0.7


def checked_row(row: dict, path_symbols: str, tr: gettext.NullTranslations) -> dict:
    """The row with its result columns, its error in tr's language ("" for a valid row)."""
    result = {**row, "accepted": None, "added": None, "output": None, "matches": None}
    if not row["error"]:
        cells = [row[name] for name in STUDENT_COLUMNS]
        result.update(_check_row(*cells, path_symbols))
    error = result["error"]
    result["error"] = _in_language(error, tr) if isinstance(error, Message) else error
    return result


def _in_language(message: Message, tr: gettext.NullTranslations) -> str:
    """The message in tr's language, the column it names too ('guess' -> '猜测', as the
    report's table header says it)."""
    named = {
        key: tr.gettext(message.params[key]) for key in ("what", "column") if key in message.params
    }
    return Message(message.template, {**message.params, **named}).text(tr)


def _cell_problem(name: str, value: str) -> Message | str:
    """Why a cell cannot even be checked as letters ("" if it can)."""
    if len(value) > MAX_CELL_CHARS:
        return Message(
            N_(
                "{column} is too long: {length:,} characters ({start}); "
                "it should be a few capital letters"
            ),
            {"column": name, "length": len(value), "start": cut(value, SHOWN_CELL_CHARS)},
        )
    if "\n" in value or "\r" in value:
        return Message(
            N_(
                "{column} {value!r} holds a line break: the cell is quoted over several lines "
                '(is a " left open?)'
            ),
            {"column": name, "value": value},
        )
    for mark, (_, cell_message) in FOREIGN_SEPARATORS.items():
        if mark in value:
            return Message(cell_message, {"column": name, "value": value, "mark": mark})
    digit = next((char for char in value if char.isdigit()), None)
    if value[:1] in ("=", "+", "-", "@"):
        digit = None  # '=1+1', a spreadsheet formula: its first character is what to say
    if digit is not None:
        params = {"column": name, "value": value, "digit": digit}
        params["position"] = value.index(digit) + 1
        if "\u06f0" <= digit <= "\u06f9":
            template = N_(
                "{column} {value!r} has the Persian digit {digit!r} at position {position}: "
                "cells hold capital letters A-Z, never digits"
            )
        elif "\u0660" <= digit <= "\u0669":
            template = N_(
                "{column} {value!r} has the Arabic-Indic digit {digit!r} at position "
                "{position}: cells hold capital letters A-Z, never digits"
            )
        else:
            template = N_(
                "{column} {value!r} has the digit {digit!r} at position {position}: "
                "cells hold capital letters A-Z, never digits"
            )
        return Message(template, params)
    return ""


def _letters_problem(text: str, what: str) -> Message | None:
    """The message `verify_on_path` gives for a non-capital in `text`, as a Message."""
    found = first_non_capital(text)
    if found is None:
        return None
    position, char = found
    params = {"what": what, "text": shown_text(text), "char": char, "position": position}
    if char.upper() in CAPITALS:
        return Message(
            N_(
                "{what} {text!r} has the lower-case letter {char!r} at position {position}: "
                "use capitals, e.g. {upper!r}"
            ),
            {**params, "upper": shown_text(text.upper())},
        )
    if char.isspace():
        template = N_(
            "{what} {text!r} has a space at position {position}: only capital letters A-Z are allowed"
        )
    else:
        template = N_(
            "{what} {text!r} has {char!r} at position {position}: only capital letters A-Z are allowed"
        )
    return Message(template, params)


def _invalid_message(prefix: str, guess: str, path: str) -> Message | None:
    """Why `verify_on_path(prefix, guess, path)` refuses its input, as a Message (None if it does not).

    The checks and their order are verify_on_path's (a test compares the English texts),
    so that the same rule speaks every language.
    """
    if not guess:
        return Message(N_("the guess is empty: write at least one capital letter to check"))
    problem = _letters_problem(guess, "guess") or _letters_problem(prefix, "prefix")
    if problem is not None:
        return problem
    params = {"prefix": shown_text(prefix), "guess": shown_text(guess), "path": path}
    if not path.startswith(prefix):
        return Message(
            N_(
                "prefix {prefix!r} is not a prefix of the path {path}: "
                "it leaves the path at position {where}"
            ),
            {**params, "where": accept(prefix, path) + 1},
        )
    if prefix == path:
        return Message(
            N_("prefix {prefix!r} is already the whole path {path}: nothing is left to guess"),
            params,
        )
    remaining = len(path) - len(prefix)
    if len(guess) > remaining:
        template = N_(
            "guess {guess!r} has {length} letters but only {remaining} "
            "remain after prefix {prefix!r} on the path {path}"
        )
        if not prefix:  # "after prefix ''" read oddly
            template = N_(
                "guess {guess!r} has {length} letters but only {remaining} are on the path {path}"
            )
        return Message(template, {**params, "length": len(guess), "remaining": remaining})
    return None


def explain_invalid(
    prefix: str, guess: str, path: str = DEFAULT_PATH, lang: str | None = None
) -> str:
    """Why the path lesson refuses (prefix, guess), in the learner's language ("" if it does not).

    Used by the checker and by lesson 02's widget, so both speak the learner's language.
    """
    message = _invalid_message(prefix, guess, path)
    if prefix.strip().lower() in _in_every_language(frozenset(PREFIX_PLACEHOLDERS)):
        message = _placeholder_prefix(prefix.strip())  # "(empty)" typed: the CSV's advice
    if message is None:
        try:
            verify_on_path(prefix, guess, path)
        except InvalidGuess as error:  # a case this module does not know: English, not lost
            return str(error)
        return ""
    return _in_language(message, translator(lang))


def _placeholder_prefix(prefix: str) -> Message:
    """A prefix written as the tables write an empty one ("(empty)", "none", "-")."""
    return Message(
        N_("prefix {prefix!r}: leave the prefix cell blank to start at the beginning"),
        {"prefix": prefix},
    )


def _check_row(prefix: str, guess: str, expected: str, path_symbols: str) -> dict:
    """The result columns for one row's cleaned cells; problems go into 'error' (a Message)."""
    result = {"accepted": None, "added": None, "output": None, "matches": None, "error": ""}
    for name, value in zip(STUDENT_COLUMNS, (prefix, guess, expected), strict=True):
        if problem := _cell_problem(name, value):
            result["error"] = problem
            return result
    if prefix.lower() in _in_every_language(frozenset(PREFIX_PLACEHOLDERS)):
        result["error"] = _placeholder_prefix(prefix)
        return result
    try:
        verdict = verify_on_path(prefix, guess, path_symbols)
    except InvalidGuess as error:
        result["error"] = _invalid_message(prefix, guess, path_symbols) or str(error)
        return result
    result.update(accepted=verdict.accepted, added=verdict.added, output=verdict.output)
    if expected:
        bad = next((char for char in expected if char not in CAPITALS), None)
        if bad is None:
            result["matches"] = expected == verdict.output
        elif bad.upper() in CAPITALS:
            result["error"] = Message(
                N_(
                    "expected_output {expected!r} has lower-case letters: "
                    "use capitals, e.g. {upper!r}"
                ),
                {"expected": expected, "upper": expected.upper()},
            )
        else:
            result["error"] = Message(
                N_(
                    "expected_output {expected!r} has {bad!r}: only capital letters A-Z are allowed"
                ),
                {"expected": expected, "bad": bad},
            )
    return result


def check_guesses(
    path: str | Path, path_symbols: str = DEFAULT_PATH, lang: str | None = None
) -> pd.DataFrame:
    """Check every row of a guesses CSV; one result row per non-blank data row.

    Columns: row (as a spreadsheet numbers it, header = 1), prefix, guess,
    expected_output (the student's cells, stripped), accepted, added, output (from the
    target path; <NA> for a bad row), matches (expected_output == output; <NA> when
    not filled in or the row is bad) and error ("" for a valid row, else the problem in
    the language `lang`, see speclab.i18n; the column names stay English).
    Raises GuessFileError when the file as a whole cannot be checked (its
    `.message.text(translator(lang))` is the learner's language).
    """
    tr = translator(lang)
    path = Path(path)
    try:
        text = read_text(path)
        rows = [checked_row(row, path_symbols, tr) for row in data_rows(text, path)]
    except GuessFileError as error:
        error.lang = lang  # a notebook shows it in the learner's language
        raise
    return _as_frame(rows)


def _as_frame(records: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame.from_records(records, columns=RESULT_COLUMNS)
    frame["row"] = frame["row"].astype("int64")
    for column in ("prefix", "guess", "expected_output", "accepted", "added", "output", "error"):
        frame[column] = frame[column].astype("string")
    frame["matches"] = frame["matches"].astype("boolean")
    return frame


def score(frame: pd.DataFrame) -> Score:
    """Rows, problems, and expectations filled in / right, for one checked file.

    frame None (lesson 02 sets its results to None before it reads a file) is refused with a
    message: after a file that could not be read, the score of the file before it was shown.
    """
    if frame is None:
        raise ValueError("no checked file to score: the checker could not read the file (see "
                         "the cell above); correct what it says and run that cell again")  # fmt: skip
    valid = frame["error"] == ""
    filled = valid & frame["matches"].notna()
    return Score(
        rows=len(frame),
        problems=int((~valid).sum()),
        with_expectation=int(filled.sum()),
        right=int((filled & frame["matches"].fillna(False)).sum()),
        unchecked=int((~valid & (frame["expected_output"].fillna("").str.strip() != "")).sum()),
    )


def missing(value) -> bool:
    """An unset result: None while streaming, <NA> in a DataFrame's records (cheaper than pd.isna)."""
    return value is None or value is pd.NA
