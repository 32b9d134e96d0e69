"""The rows of a guesses file (lesson 02's CSV exercise), read as a spreadsheet wrote them.

`data_rows` turns the text of a student's file (`speclab.student_files` reads it safely)
into one dict per data row: its row number as the spreadsheet shows it, the cells of the
columns prefix, guess and expected_output, and "error" where the row cannot be read as one
(its cells separated otherwise than the header's, a header repeated mid-file). The header is
read in every language of the lessons (前缀, 猜测, 预期输出; پیشوند, حدس, خروجی مورد انتظار),
with full-width letters, Arabic keyboard letters and spaces as a student types them; a header
that cannot be used (a column missing or named twice, a Persian or full-width comma as its
separator, a column named like the expected output but not as it) raises GuessFileError.
Checking the cells against the path is speclab.exercises.

Left out on purpose: silent fixes. A file separated by ، is not re-read with it.
"""

import difflib
import functools
import unicodedata
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from speclab.i18n import N_, Message, translator
from speclab.student_files import (
    GuessFileError,
    NoRowsError,
    cut,
    excel_separator_line,
    records,
    separator,
    shown,
)

REQUIRED_COLUMNS = ("prefix", "guess")
OPTIONAL_COLUMNS = ("expected_output",)
STUDENT_COLUMNS = ("prefix", "guess", "expected_output")
SHOWN_CELL_CHARS = 20  # the widest a cell is shown in the table, so one cell cannot widen it all
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
# words the checker's own tables use, in every language, count too (`in_every_language`).
EXPECTED_LOOKALIKES = {"expected", "expect", "output", "prediction", "predicted", "new output"}


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
        raise NoRowsError(
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
    if missing and "|" in "".join(cells):  # a lesson's Markdown table copied into the file
        raise GuessFileError(
            N_(
                "{name}: the header (row {row}) is a line of a Markdown table, its cells between "
                "'|'; a CSV file separates cells with commas: write prefix,guess,expected_output "
                "and a row such as ,ABX,ABC"
            ),
            name=shown(str(path)),
            row=row_number,
        )
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


def _looks_like_expected(name: str) -> bool:
    """'expected', 'output', 'expected_outptu', '输出': meant as expected_output, not a note
    column."""
    spaced = name.lower().replace("_", " ")  # _column_name made the spaces underscores
    if spaced in in_every_language(frozenset(EXPECTED_LOOKALIKES)):
        return True
    # a ratio of 0.7 against 15 characters needs a name of 7 to 27: others are not compared,
    # so that a header of many long names stays fast
    matcher = difflib.SequenceMatcher(None, name, "expected_output")
    return 7 <= len(name) <= 27 and matcher.quick_ratio() >= 0.7 and matcher.ratio() >= 0.7


@functools.cache
def in_every_language(words: frozenset[str]) -> frozenset[str]:
    """words and their translations in every language of the checker, lower case, each
    also without its brackets and in either kind of bracket: '(empty)' gives '（空）', '空',
    '(空)' (half-width brackets around Chinese), '(خالی)', 'خالی', ..."""
    from speclab.i18n import LANGUAGES

    found = {translator(lang).gettext(word).lower() for word in words for lang in LANGUAGES}
    bare = {word.strip("()（）") for word in found} - {""}
    return frozenset(
        found | bare | {f"({word})" for word in bare} | {f"（{word}）" for word in bare}
    )
