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
Reading the rows and the header out of the file's text is speclab.guess_rows.

Languages: the report, the errors and the summary are in English, Chinese or Persian
(`speclab check-guesses --lang fa`, or `lang=` here; else LANGUAGE/LC_ALL/LC_MESSAGES/LANG),
through the one catalogue of `speclab.i18n`. The column headers are the English ones
(prefix, guess, expected_output) in every language; the Chinese and Persian names of the
lessons' tables (前缀, 猜测, 预期输出; پیشوند قبلی, حدس, خروجی مورد انتظار) are accepted too.
Row numbers and cells stay as the spreadsheet shows them (Latin digits). Persian or
Arabic-Indic digits in a cell and a Persian comma (،) as a separator get their own message,
as do a Chinese input method's full-width comma (，) and full-width letters (ＡＢＸ). A
column named like the expected output but not as it ('expected', 'output',
'expected_outptu') is an error: unread, the student's predictions would go unchecked
without a word.

Left out on purpose: silent fixes. A lower-case guess is an error with a hint, not
upper-cased behind the student's back; a file separated by ، is not re-read with it.
"""

import gettext
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from speclab.acceptance import (
    CAPITALS,
    DEFAULT_PATH,
    InvalidGuess,
    accept,
    as_capitals,
    first_non_capital,
    is_full_width,
    shown_text,
    verify_on_path,
)
from speclab.guess_rows import (
    FOREIGN_SEPARATORS,
    SHOWN_CELL_CHARS,
    STUDENT_COLUMNS,
    data_rows,
    in_every_language,
)
from speclab.i18n import N_, Message, translator
from speclab.student_files import (
    GuessFileError,
    cut,
    read_text,
)

__all__ = [
    "GuessFileError",
    "Score",
    "check_guesses",
    "explain_invalid",
    "score",
]

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
# What students type when they copy "(empty)" from the lesson table instead of leaving it
# blank; "(empty)" and "none" as the tables print them in Chinese and Persian count too.
PREFIX_PLACEHOLDERS = {"(empty)", "empty", "(none)", "none", "-", "—", "''", '""'}
MAX_CELL_CHARS = 100  # a prefix, guess or expectation is a few letters; more is a paste gone wrong
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
    if is_full_width(char):
        return Message(
            N_(
                "{what} {text!r} has the full-width letter {char!r} at position {position}: "
                "switch the input method to half-width and type capitals, e.g. {upper!r}"
            ),
            {**params, "upper": shown_text(as_capitals(text))},
        )
    if char.upper() in CAPITALS:
        return Message(
            N_(
                "{what} {text!r} has the lower-case letter {char!r} at position {position}: "
                "use capitals, e.g. {upper!r}"
            ),
            {**params, "upper": shown_text(as_capitals(text))},
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
    if prefix.startswith(path) and prefix != path:  # the whole path and more: leaves nowhere
        return Message(
            N_(
                "prefix {prefix!r} is longer than the path {path}: it has {length} letters, the path {size}"
            ),
            {**params, "length": len(prefix), "size": len(path)},
        )
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
        template = N_(  # "has only 1 left": one wording for 1 and for more
            "guess {guess!r} has {length} letters but the path {path} has only {remaining} "
            "left after prefix {prefix!r}"
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
    if prefix.strip().lower() in in_every_language(frozenset(PREFIX_PLACEHOLDERS)):
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
    if prefix.lower() in in_every_language(frozenset(PREFIX_PLACEHOLDERS)):
        result["error"] = _placeholder_prefix(prefix)
        return result
    try:
        verdict = verify_on_path(prefix, guess, path_symbols)
    except InvalidGuess as error:
        result["error"] = _invalid_message(prefix, guess, path_symbols) or str(error)
        return result
    result.update(accepted=verdict.accepted, added=verdict.added, output=verdict.output)
    if expected:
        # the first character capitals cannot fix comes first: an example must be valid
        bad = (first_non_capital(expected) or (0, None))[1]
        if bad is None:
            result["matches"] = expected == verdict.output
        elif is_full_width(bad):
            result["error"] = Message(
                N_(
                    "expected_output {expected!r} has full-width letters: switch the input "
                    "method to half-width and type capitals, e.g. {upper!r}"
                ),
                {"expected": expected, "upper": as_capitals(expected)},
            )
        elif bad.upper() in CAPITALS:
            result["error"] = Message(
                N_(
                    "expected_output {expected!r} has lower-case letters: "
                    "use capitals, e.g. {upper!r}"
                ),
                {"expected": expected, "upper": as_capitals(expected)},
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
    if isinstance(path, bool) or not isinstance(path, str | os.PathLike):
        raise TypeError(f"check_guesses needs the CSV file's name (text or a Path), got {path!r}")
    try:
        name = os.fspath(path)
        if not name.strip() and not Path(name).is_file():  # Path("") is ".": "is a folder"
            raise GuessFileError(N_("no file name was given: write the CSV file's name"))
        path = Path(name)
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


def score(frame: pd.DataFrame, lang: str | None = None) -> Score:
    """Rows, problems, and expectations filled in / right, for one checked file.

    frame None (lesson 02 sets its results to None before it reads a file) is refused with a
    GuessFileError in the language `lang`: after a file that could not be read, the score
    of the file before it was shown.
    """
    if frame is None:
        error = GuessFileError(
            N_("no checked file to score: the checker could not read the file (see the cell "
               "above); correct what it says and run that cell again")
        )  # fmt: skip
        error.lang = lang  # a notebook shows it in the learner's language
        raise error
    if not isinstance(frame, pd.DataFrame) or "matches" not in frame:  # score("maria.csv")
        error = GuessFileError(
            N_("score needs the table that check_guesses returns, not {given}: first "
               "results = check_guesses(your_file), then score(results)"),
            given=type(frame).__name__,
        )  # fmt: skip
        error.lang = lang
        raise error
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
