"""One message catalogue for what lessons 01-03 show: widgets, figures and `check-guesses`.

The series speaks English (the default), Chinese (`zh`) and Persian (`fa`), the languages
of its two source texts. Every string a lesson 01-03 widget, figure or the CSV checker
shows is written in English in the code and looked up with the standard library's
`gettext` in `speclab/locale/<lang>/LC_MESSAGES/speclab.po`:

    tr = translator("fa")            # or translator(None): from the environment
    _ = tr.gettext
    _("{count} rows checked").format(count=3)

No build step: the `.po` text files are the catalogues, and `translator` compiles the
chosen one to gettext's binary `.mo` form in memory when it is asked for it (`mo_bytes`,
a small msgfmt: msgid, msgid_plural, msgstr[n], continued lines, escapes). So an
editable install, a wheel and a fresh CI clone all read the same files, and a `.po`
edit shows up at the next call. `gettext.GNUTranslations` then does the lookups and the
plural rules (from each catalogue's `Plural-Forms` header).

Language choice: the `lang` argument first (`speclab check-guesses --lang fa`), else the
environment as gettext reads it (`LANGUAGE`, a colon list, then `LC_ALL`, `LC_MESSAGES`,
`LANG`); `fa_IR.UTF-8` means `fa`, `zh_CN`/`zh_TW` mean `zh`, anything else English.

Digits, one convention for the series: Persian digits (`persian_digits`) in written
Persian prose (notebook text, computed sentences, handouts); Latin digits in everything
a program prints or draws as data (code, formulas, tables, CSV files, the checker's
report, widgets' readouts, figures), so what you type and what you read match.

Left out on purpose: per-string fallbacks inside a catalogue (a test fails on any
untranslated msgid instead), and languages other than the three.
"""

import ast
import gettext
import io
import os
import re
import struct
from pathlib import Path

LANGUAGES = ("en", "zh", "fa")
NAMES = {"en": "English", "zh": "中文", "fa": "فارسی"}
DIRECTION = {"en": "ltr", "zh": "ltr", "fa": "rtl"}
DOMAIN = "speclab"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
ENVIRONMENT = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
PERSIAN_DIGITS = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")


def _code(name: str) -> str | None:
    """'fa_IR.UTF-8' -> 'fa', 'zh-Hans' -> 'zh', 'en' -> 'en'; None when not one of ours."""
    code = re.split(r"[_.@-]", name.strip().lower(), maxsplit=1)[0]
    return code if code in LANGUAGES else None


def resolve(lang: str | None = None) -> str:
    """The language to show: `lang` if given (it must be one of LANGUAGES), else the environment."""
    if lang is not None:
        code = _code(lang) if isinstance(lang, str) else None
        if code is None:
            raise ValueError(f"unknown language {lang!r}; choose one of: {', '.join(LANGUAGES)}")
        return code
    for variable in ENVIRONMENT:
        value = os.environ.get(variable, "")
        if not value:
            continue
        for name in value.split(":"):  # LANGUAGE is a priority list; the others hold one name
            if code := _code(name):
                return code
        if variable != "LANGUAGE":
            return "en"  # gettext stops at the first locale variable that is set
    return "en"


def catalogue_path(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def _unquote(text: str) -> str:
    """The value of one .po string literal ("..."), with its C escapes undone."""
    return ast.literal_eval(text.strip())


def read_po(text: str) -> dict[str, list[str]]:
    """A .po file's entries: msgid (with '\\0' + msgid_plural when plural) -> [msgstr, ...].

    Comments and obsolete entries (#~) are skipped; the header is the entry with msgid "".
    """
    entries: dict[str, list[str]] = {}
    entry: dict[str, str] = {}
    key = None

    def finish():
        if "msgid" in entry:
            msgid = entry["msgid"]
            if "msgid_plural" in entry:
                msgid += "\0" + entry["msgid_plural"]
            forms = sorted(k for k in entry if k.startswith("msgstr"))
            entries[msgid] = [entry[form] for form in forms]

    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            if line.startswith('"'):
                entry[key] += _unquote(line)
                continue
            keyword, _, literal = line.partition(" ")
            if keyword == "msgid":
                finish()
                entry = {}
            key = keyword
            entry[key] = _unquote(literal)
        except (SyntaxError, ValueError, KeyError, TypeError) as error:
            raise ValueError(f"line {number} of the catalogue cannot be read: {line!r}") from error
    finish()
    return entries


def mo_bytes(entries: dict[str, list[str]]) -> bytes:
    """The entries as a GNU .mo file (what msgfmt writes), for gettext.GNUTranslations."""
    keys = sorted(entries)
    ids = [key.encode("utf-8") for key in keys]
    strs = ["\0".join(entries[key]).encode("utf-8") for key in keys]
    header_size = 7 * 4
    ids_start = header_size + 16 * len(keys)  # two tables of (length, offset) pairs
    data = b""
    id_table, str_table = [], []
    for table, items in ((id_table, ids), (str_table, strs)):
        for item in items:
            table.append((len(item), ids_start + len(data)))
            data += item + b"\0"
    header = struct.pack(
        "<7I", 0x950412DE, 0, len(keys), header_size, header_size + 8 * len(keys), 0, 0
    )
    tables = b"".join(struct.pack("<2I", *pair) for pair in id_table + str_table)
    return header + tables + data


def translator(lang: str | None = None) -> gettext.NullTranslations:
    """The catalogue of `lang` (see `resolve`); English is the code's own text."""
    code = resolve(lang)
    path = catalogue_path(code)
    if code == "en" or not path.exists():
        return gettext.NullTranslations()
    entries = read_po(path.read_text(encoding="utf-8"))
    return gettext.GNUTranslations(io.BytesIO(mo_bytes(entries)))


def persian_digits(text: str) -> str:
    """'3 of 4' -> '۳ of ۴': Latin digits as Persian ones, for Persian prose only."""
    return str(text).translate(PERSIAN_DIGITS)


def N_(template: str) -> str:
    """Marks a message template for the catalogue; it is translated later, where it is shown."""
    return template


class Message(str):
    """An English message (a str) that remembers its template and values, to be translated.

    Message(N_("{name}: no such file"), {"name": "a.csv"}) == "a.csv: no such file"; its
    .text(tr) is the same message in tr's language. The values are filled in with
    str.format, so a translation may put them in another order.
    """

    template: str
    params: dict

    def __new__(cls, template: str, params: dict | None = None):
        params = dict(params or {})
        message = super().__new__(cls, template.format(**params))
        message.template, message.params = template, params
        return message

    def text(self, tr: gettext.NullTranslations | None = None) -> str:
        template = tr.gettext(self.template) if tr is not None else self.template
        return template.format(**self.params)


PERSIAN_SEPARATORS = str.maketrans({".": "\u066b", ",": "\u066c"})  # ٫ decimal, ٬ thousands


def prose_number(value, lang: str) -> str:
    """A number for a sentence of prose: in Persian its digits and separators ('5,670.25' ->
    '۵٬۶۷۰٫۲۵', as the handouts write them); in the other languages as it is."""
    if lang != "fa":
        return str(value)
    return persian_digits(str(value)).translate(PERSIAN_SEPARATORS)


def markdown_block(markdown: str, lang: str) -> str:
    """Markdown wrapped in a block that carries its language and direction (Persian: rtl).

    The blank lines keep the Markdown inside the <div> Markdown (CommonMark, JupyterLab).
    Inside it, write left-to-right pieces (letters ABCDEFG, code, formulas) as
    <span dir="ltr">...</span> or `code`, so they keep their order (a code span of digits
    alone, `8, 56`, keeps it through notebook_style's rule).
    """
    return f'<div lang="{lang}" dir="{DIRECTION[lang]}">\n\n{markdown}\n\n</div>'


class TableBlock:
    """A pandas table shown in a notebook in its language's direction: in Persian its first
    column on the right, as in the lesson's Markdown tables (a table to predict on paper and
    the one computed then line up column for column; a DataFrame alone is laid out left to
    right). The cells keep their Latin digits. Its `frame` is the table itself."""

    def __init__(self, frame, lang: str):
        if lang not in DIRECTION:
            raise ValueError(f"no such language: {lang!r} (one of {', '.join(DIRECTION)})")
        self.frame, self.lang = frame, lang

    def _repr_html_(self) -> str:  # what a notebook shows
        return f'<div lang="{self.lang}" dir="{DIRECTION[self.lang]}">{self.frame.to_html()}</div>'

    def __repr__(self) -> str:  # a text-only front end (a terminal, nbconvert to text)
        return repr(self.frame)


def speaker(lang: str):
    """say(markdown): show Markdown in a notebook as a block in lang's language and direction.

    A translated notebook's prose that holds computed numbers is printed this way:
    `say = speaker(LANG)`, then `say(f"... {value} ...")`.
    """
    from IPython.display import Markdown, display

    if lang not in DIRECTION:
        raise ValueError(f"no such language: {lang!r} (one of {', '.join(DIRECTION)})")

    def say(markdown: str) -> None:
        display(Markdown(markdown_block(markdown, lang)))

    return say


# JupyterLab's stylesheet sets `text-align: left` on every Markdown paragraph and list item,
# so a right-to-left block still lines its text up on the left. A notebook's first cell
# shows this style (an HTML output, trusted because the kernel made it) to line Persian up
# on the right; until that cell runs, the blocks read right to left but sit on the left.
# It also keeps a code span left to right: in a right-to-left paragraph `8, 56, 5, 90`, which
# has no letter to set its direction, read "90 ,5 ,56 ,8".
RTL_NOTEBOOK_STYLE = (
    "<style>.jp-RenderedHTMLCommon div[dir='rtl'] :is(p, li, th, td, h1, h2, h3) "
    "{ text-align: right; } "
    ".jp-RenderedHTMLCommon div[dir='rtl'] code { direction: ltr; unicode-bidi: isolate; }"
    "</style>"
)


def notebook_style(lang: str) -> str:
    """The HTML a notebook in `lang` shows once to lay its Markdown out (empty unless rtl)."""
    return RTL_NOTEBOOK_STYLE if DIRECTION[lang] == "rtl" else ""
