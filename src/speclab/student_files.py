"""Reading a student's CSV file as hostile input: which files, which bytes, which records.

Lesson 02's checker (`speclab.exercises`) reads files that come from a classroom: saved
by any spreadsheet, named in any language, sometimes a pipe, a device or a broken link.
This module turns a path into CSV records without ever hanging, filling the memory or
modifying the file:

- only a regular file is read, and at most `MAX_FILE_BYTES` of it;
- UTF-8 (with or without a byte-order mark) and UTF-16 "Unicode text" are decoded;
- the whole text goes through one `csv` reader (RFC 4180 records, `newline=""`), so a
  quoted cell may hold line breaks, and U+2028, U+2029, U+0085 are just characters;
- a record with broken quoting spoils that record only: reading goes on at the next line;
  once a quote has run on to the end of the file, a later record may span at most
  `MOST_LINES_PER_RECORD` lines, so that each further stray quote is found within a few
  lines, not by reading on to the end of the file again (which made a file of many such
  rows take minutes);
- `shown` escapes what a terminal would hide or obey (bidi and C1 controls, line breaks).

Problems with the file as a whole raise `GuessFileError`, a one-line message; its
`.message` (a `speclab.i18n.Message`) is shown in the learner's language by the checker,
and a record's problem is a `Message` too.
Left out on purpose: guessing legacy encodings (cp1252, Shift-JIS): the student is asked
to save as "CSV UTF-8" instead of being shown silently wrong letters.
"""

import csv
import io
import os
import stat
import unicodedata
from collections.abc import Iterator
from pathlib import Path

from speclab.i18n import N_, Message, translator

# A quoted cell may hold line breaks, but a guess is a few letters: once a stray quote has
# run on to the end of a file, a later record that runs on for more lines than this is taken
# for another one.
MOST_LINES_PER_RECORD = 20

MAX_FILE_BYTES = 20_000_000  # a lesson's guesses file is a few hundred bytes
# A record: (row number as a spreadsheet shows it, its cells or None, the problem or "").
Record = tuple[int, list[str] | None, str]


class GuessFileError(ValueError):
    """The file as a whole cannot be checked (missing, empty, binary, no usable header).

    Raised with a template marked by N_ and its values; str() is English, `.message.text(tr)` is
    the learner's language.
    """

    lang: str | None = None  # the learner's language, once the checker knows it

    def __init__(self, template: str, **params):
        self.message = Message(template, params)
        super().__init__(self.message)

    def _render_traceback_(self) -> list[str]:
        """What a notebook shows (IPython asks for this): the one line, in the learner's
        language, not a traceback through speclab's code that a typo in a file name caused."""
        return [f"{type(self).__name__}: {self.message.text(translator(self.lang))}"]


class NoRowsError(GuessFileError):
    """A header and nothing under it: a template handed in before any guess was written."""


def shown(text: str) -> str:
    """`text` with every non-printable character escaped (\\n, \\x9b, \\u202e).

    str.isprintable is False for controls, format characters (bidi, zero width),
    separators other than the space, surrogates (undecodable file-name bytes) and
    unassigned code points: exactly what would hide, reorder or corrupt a report line.
    Kept as they are: the zero-width non-joiner and joiner, which Persian writes inside words
    (a file named دانش‌آموز.csv was listed as دانش\u200cآموز). A byte of a file name that is
    not UTF-8 (which Python holds as a surrogate, U+DC80-U+DCFF) is shown as that byte,
    \\xe9 in caf\\xe9.csv, as a shell's $'...' writes it (so the name can be typed back);
    the C1 controls U+0080-U+009F read the same (\\x85), and are as rare in a file name.
    """
    if text.isprintable():
        return text
    return "".join(_shown_char(char) for char in text)


def _shown_char(char: str) -> str:
    if char.isprintable() or char in JOINERS:
        return char
    if "\udc80" <= char <= "\udcff":  # os.fsdecode's stand-in for an undecodable byte
        return f"\\x{ord(char) - 0xDC00:02x}"
    return char.encode("unicode_escape").decode("ascii")


JOINERS = frozenset("\u200c\u200d")


def is_wide(char: str) -> bool:
    """Whether a terminal gives the character two columns (Chinese, full-width signs)."""
    return unicodedata.east_asian_width(char) in "WF"


def columns(text: str) -> int:
    """The columns a terminal gives the text: a wide character two, a joiner or a direction
    mark none, any other one."""
    if text.isascii():
        return len(text)
    return sum(2 if is_wide(c) else 0 if c in "\u200c\u200d\u200e\u200f" else 1 for c in text)


def printable(text: str) -> str:
    """A message for the terminal with `shown` applied line by line (tabs kept): a path
    argument holding escape codes is shown as escapes, not obeyed by the terminal."""
    return "\n".join(
        "\t".join(shown(part) for part in line.split("\t")) for line in str(text).split("\n")
    )


def cut(text: str, width: int) -> str:
    """`shown(text)` in at most `width` characters, ending in "..." when cut."""
    visible = shown(text[: width + 1])  # escaping only the part that can be shown
    return visible if len(visible) <= width else visible[: width - 3] + "..."


def read_text(path: Path) -> str:
    """The file's decoded text, or GuessFileError saying in one line why not."""
    raw = _read_bytes(path)
    if raw.startswith(b"PK\x03\x04"):
        raise GuessFileError(
            N_(
                "{name}: is a spreadsheet workbook (.xlsx) or zip, not CSV; "
                "in your spreadsheet use Save As -> 'CSV UTF-8'"
            ),
            name=shown(str(path)),
        )
    text = _decode(raw, path)
    control = next(
        (i for i, char in enumerate(text) if ord(char) < 32 and char not in "\t\r\n"), None
    )
    if control is not None:
        line = text.count("\n", 0, control) + 1  # the line a text editor shows it on
        raise GuessFileError(
            N_("{name}: line {line} contains a control character ({char}): not a CSV text file"),
            name=shown(str(path)), line=line, char=f"U+{ord(text[control]):04X}",
        )  # fmt: skip
    if not text.strip():
        raise GuessFileError(
            N_("{name}: is empty; it needs a header row: prefix,guess,expected_output"),
            name=shown(str(path)),
        )
    return text


def _read_bytes(path: Path) -> bytes:
    """The bytes of a regular file of at most MAX_FILE_BYTES; anything else is refused unread."""
    name = shown(str(path))
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        if os.path.islink(path):
            raise GuessFileError(N_("{name}: is a broken link"), name=name) from None
        if str(path) == "-":  # many commands read standard input from "-": this one does not
            raise GuessFileError(
                N_("-: the checker reads files, not standard input; give the CSV file's name")
            ) from None
        raise GuessFileError(N_("{name}: no such file"), name=name) from None
    except OSError as error:
        raise GuessFileError(
            N_("{name}: cannot be read ({reason})"), name=name, reason=error.strerror
        ) from None
    except ValueError as error:  # a NUL in the name (a path typed in a notebook)
        raise GuessFileError(
            N_("{name}: cannot be read ({reason})"), name=name, reason=str(error)
        ) from None
    try:
        raw = _read_regular(descriptor, name)
    finally:
        os.close(descriptor)
    if len(raw) > MAX_FILE_BYTES:
        _too_big(name, len(raw))
    return raw


def _read_regular(descriptor: int, name: str) -> bytes:
    """The bytes behind an open descriptor if it is a regular file of at most the limit."""
    status = os.fstat(descriptor)  # of what was opened: no race with a renamed file
    if stat.S_ISDIR(status.st_mode):
        raise GuessFileError(N_("{name}: is a folder, not a CSV file"), name=name)
    if not stat.S_ISREG(status.st_mode):
        raise GuessFileError(
            N_("{name}: is not a regular file (a pipe or a device); not read"), name=name
        )
    if status.st_size > MAX_FILE_BYTES:
        _too_big(name, status.st_size)
    chunks, total = [], 0
    try:  # past the limit by at most one chunk: a file that grew since fstat is refused
        while total <= MAX_FILE_BYTES and (chunk := os.read(descriptor, 1 << 20)):
            chunks.append(chunk)
            total += len(chunk)
    except OSError as error:
        raise GuessFileError(
            N_("{name}: cannot be read ({reason})"), name=name, reason=error.strerror
        ) from None
    return b"".join(chunks)


def _too_big(name: str, size: int) -> None:
    raise GuessFileError(
        N_(
            "{name}: is too big ({size:,} bytes); the checker reads files up to "
            "{limit} MB, and a guesses file is a few KB; not read"
        ),
        name=name,
        size=size,
        limit=MAX_FILE_BYTES // 1_000_000,
    )


def _decode(raw: bytes, path: Path) -> str:
    if raw.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):  # UTF-32, rare but seen
        return raw.decode("utf-32", errors="replace")
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw.decode("utf-16", errors="replace")  # spreadsheet "Unicode text" export
    if (encoding := _utf16_without_bom(raw)) is not None:
        return raw.decode(encoding, errors="replace")
    if b"\x00" in raw:
        raise GuessFileError(
            N_("{name}: looks like a binary file, not a CSV text file"), name=shown(str(path))
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise GuessFileError(
            N_(
                "{name}: is not UTF-8 text (a binary file, or a CSV saved in "
                "another encoding); save it as 'CSV UTF-8'"
            ),
            name=shown(str(path)),
        ) from None


def _utf16_without_bom(raw: bytes) -> str | None:
    """ "utf-16-le" or "-be" for UTF-16 text saved without its byte-order mark, else None.

    Text of Latin letters, digits and punctuation in UTF-16 has a zero byte in every other
    place: the second of each pair (little-endian) or the first (big-endian). A binary file
    has zeros too, but not in that pattern, and not in every line.
    """
    if len(raw) < 4 or len(raw) % 2 or b"\x00" not in raw:
        return None
    for encoding, zeros, others in (("utf-16-le", raw[1::2], raw[0::2]), ("utf-16-be", raw[0::2], raw[1::2])):  # fmt: skip
        if zeros.count(0) >= 0.9 * len(zeros) and others.count(0) == 0:
            try:
                text = raw.decode(encoding)
            except UnicodeDecodeError:
                return None
            return encoding if "\n" in text or "," in text or ";" in text or "\t" in text else None
    return None


def excel_separator_line(text: str) -> tuple[str | None, str]:
    """(the separator, the text after that line) for a first line `sep=;` (Excel's way to say
    which separator a file uses; Excel does not show it as a row), else (None, text).
    Any line ends: LF, CRLF or CR."""
    stream = io.StringIO(text, newline="")
    first = next((line for line in iter(stream.readline, "") if line.strip()), "")
    first = first.strip("\r\n").strip(" ")
    if len(first) == 5 and first.lower().startswith("sep=") and first[4] not in "\"'":
        return first[4], stream.read()
    return None, text


def separator(text: str) -> str:
    """Comma, or the semicolon / tab a spreadsheet in another locale writes (from the header),
    or the one a first line `sep=X` names."""
    if (named := excel_separator_line(text)[0]) is not None:
        return named
    header_line = next((line for line in io.StringIO(text, newline="") if line.strip()), "")
    counts = {sep: header_line.count(sep) for sep in (",", ";", "\t")}
    best = max(counts, key=counts.get)
    return best if counts[best] > 0 else ","


def records(text: str, delimiter: str) -> Iterator[Record]:
    """Every CSV record of `text`, numbered from 1 as a spreadsheet numbers its rows.

    A blank line is a record with no cells (a spreadsheet shows it as an empty row).
    A record the csv module refuses yields (row, None, problem); reading goes on at the
    line after the one where that record began, so one stray quote spoils one row. Once a
    record has run on to the end of the text, a record that needs more than
    MOST_LINES_PER_RECORD lines is refused too.
    """
    stream = io.StringIO(text, newline="")
    row_number = 1
    most_lines = None  # no limit until a quote has run on to the end
    while True:
        start = stream.tell()
        lines = _Lines(stream, most_lines)
        reader = csv.reader(lines, delimiter=delimiter, strict=True)
        try:
            for cells in reader:
                yield row_number, cells, ""
                row_number += 1
                start = stream.tell()
                lines.in_record = 0
            return
        except csv.Error as error:
            yield row_number, None, _quoting_problem(error)
            row_number += 1
            if stream.read(1) == "":  # it ran on to the end: from the next line it would again
                most_lines = MOST_LINES_PER_RECORD
            stream.seek(start)
            stream.readline()  # skip the line the spoilt record began on


class _Lines:
    """Lines read one at a time, so that stream.tell() marks where the next record begins;
    with most_lines, a record that needs more of them is refused as broken quoting.
    (csv.reader asks for the next line only while its record is unfinished.)"""

    def __init__(self, stream: io.StringIO, most_lines: int | None):
        self.stream, self.most_lines, self.in_record = stream, most_lines, 0

    def __iter__(self):
        return self

    def __next__(self) -> str:
        line = self.stream.readline()
        if not line:
            raise StopIteration
        self.in_record += 1
        if self.most_lines is not None and self.in_record > self.most_lines:
            raise csv.Error(f"a record runs on for more than {self.most_lines} lines")
        return line


def _quoting_problem(error: csv.Error) -> Message:
    if "field larger than field limit" in str(error):
        return Message(
            N_("a cell is too long: longer than the {limit:,} characters a CSV cell may hold"),
            {"limit": csv.field_size_limit()},
        )
    return Message(N_('broken quoting: a " opens a cell and never closes (or text follows it)'))


def _same_place(path: Path) -> str:
    """A folder's name for comparing two spellings of it (`class/a`, `./class/a/`)."""
    try:
        return os.path.normcase(os.path.realpath(path))
    except (OSError, ValueError):
        return str(path)


def class_files(names: list[str]) -> tuple[list[Path], list[Message], list[Message]]:
    """The files to check (a folder gives its *.csv entries), one error line per bad name,
    and one note per entry skipped.

    Every *.csv entry of a folder is kept, whatever it is (a broken link, a pipe, an
    unreadable file), so that read_text names its problem instead of it going missing;
    except the helper files other programs leave beside a spreadsheet (macOS's `._x.csv`
    on a shared drive or USB stick, Office's lock file `~$x.csv`), which are noted and
    skipped. A helper file named on its own is checked like any other.
    """
    files, errors, notes = [], [], []
    named_folders = {_same_place(Path(name)) for name in names}
    listed_folders = set()
    for name in names:
        path = Path(name)
        if not _is_folder(path):
            files.append(path)
            continue
        if (place := _same_place(path)) in listed_folders:  # named twice: listed (noted) once
            continue
        listed_folders.add(place)
        try:
            with os.scandir(path) as entries:
                listed = list(entries)
                named = [(entry.name, _is_csv_entry(entry)) for entry in listed
                         if entry.name.lower().endswith(".csv")]  # fmt: skip
                inner = sorted(entry.name for entry in listed  # folders within, not read
                               if not entry.name.lower().endswith(".csv")
                               and _is_folder_with_csv(entry))  # fmt: skip
        except OSError as error:
            errors.append(
                Message(
                    N_("{name}: folder cannot be listed ({reason})"),
                    {"name": shown(str(path)), "reason": error.strerror},
                )
            )
            continue
        found = sorted(path / name for name, is_file in named if is_file)
        notes += [  # a folder named x.csv (or a link to one): said, not dropped in silence
            Message(
                N_("{name}: skipped, a folder, not a student's .csv file"),
                {"name": shown(str(path / name))},
            )
            for name, is_file in sorted(named)
            if not is_file
        ]
        notes += [  # a class folder with a folder per group: said, not dropped in silence
            Message(
                N_("{name}: a folder inside, not read; name it too to check its .csv files"),
                {"name": shown(str(path / name))},
            )
            for name in inner
            if _same_place(path / name) not in named_folders  # named too: read, nothing to say
        ]
        helpers = [entry for entry in found if entry.name.startswith(HELPER_FILE_PREFIXES)]
        notes += [
            Message(
                N_(
                    "{name}: skipped, a helper file that macOS or Office leaves beside a spreadsheet"
                ),
                {"name": shown(str(entry))},
            )
            for entry in helpers
        ]
        found = [entry for entry in found if entry not in helpers]
        if not found:
            errors.append(
                Message(N_("{name}: folder has no .csv files"), {"name": shown(str(path))})
            )
        files.extend(found)
    return files, errors, notes


def without_repeats(files: list[Path]) -> tuple[list[Path], list[Message]]:
    """The files with each one kept once (the same file named twice, or named and also found
    in a folder given, is checked and counted once), and a note for each one dropped."""
    seen, kept, notes = set(), [], []
    for path in files:
        try:
            info = os.stat(path)
            regular = stat.S_ISREG(info.st_mode)
        except (OSError, ValueError):
            regular = False  # missing or unreachable: read_text will say why
        key = (info.st_dev, info.st_ino) if regular else os.path.abspath(path)
        if key in seen:
            notes.append(
                Message(
                    N_("{name}: given more than once; checked once"), {"name": shown(str(path))}
                )
            )
            continue
        seen.add(key)
        kept.append(path)
    return kept, notes


HELPER_FILE_PREFIXES = ("._", "~$")  # macOS's AppleDouble files, Office's lock files


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False  # missing or unreachable: read_text will say why


def _is_folder_with_csv(entry: os.DirEntry) -> bool:
    """Whether an entry is a folder holding a student's .csv file (a group's folder in a
    class folder). Hidden folders (Jupyter's .ipynb_checkpoints) and __MACOSX (a Mac's zip
    leaves helper files there) are not groups: naming them would count copies as students."""
    if entry.name.startswith(".") or entry.name == "__MACOSX":
        return False
    try:
        if not entry.is_dir():
            return False
        with os.scandir(entry.path) as inside:
            return any(item.name.lower().endswith(".csv")
                       and not item.name.startswith(HELPER_FILE_PREFIXES) for item in inside)  # fmt: skip
    except OSError:
        return False


def _is_csv_entry(entry: os.DirEntry) -> bool:
    """Whether a *.csv entry is to be read as a file (not a folder, followed through links)."""
    try:
        return not entry.is_dir()  # a sub-folder named x.csv is not a student's file
    except OSError:
        return True  # cannot even tell: read_text will say why
