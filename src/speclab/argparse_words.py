"""argparse's own words in the learner's language, for `speclab check-guesses --lang zh|fa`.

Lessons 01-03 serve Chinese and Persian readers, and lesson 02 has them run `speclab
check-guesses --lang zh data/maria.csv`. Its report speaks their language (speclab.i18n), but
argparse writes its usage line, section titles and errors in English only (its messages have
no catalogue for these languages). So `speclab.cli` passes what argparse formats through
`help_text` and `error_text` here, with the command's own texts (`translate_parser`).
Left out: the other commands, which serve lessons 04-07, written in English.
"""

import argparse
import re

from speclab.i18n import N_
from speclab.student_files import columns, is_wide

# argparse's words in a help text, each on a line of its own or opening the usage line
HEADINGS = {"usage: ": N_("usage: "), "positional arguments:": N_("positional arguments:"),
            "options:": N_("options:")}  # fmt: skip
HELP_OPTION = N_("show this help message and exit")
EXIT_STATUS_LINE = N_("Exit status: {statuses}, {shared}.")
# how every command ends when it is stopped (speclab.cli.main); each names its own 0, 1, 2...
SHARED_EXIT_STATUS = N_(
    "130 stopped by Ctrl-C, 143 stopped by SIGTERM (kill, timeout), 141 its output went to a "
    "closed pipe (| head)"
)
DESCRIPTION = N_("check a CSV of guesses against the ABCDEFG path")  # speclab.cli.SUBCOMMANDS
INTERRUPTED = N_("interrupted")  # Ctrl-C or SIGTERM (speclab.cli.main)
EMPTY_PATH = N_("an empty path: give a file or folder name")  # speclab.cli.path_argument's
WITH_HINT = N_("{problem}; {hint}")  # an error, then how to get round it
DASHED_FILE = N_("'{name}' is read as an option: to name the file, write ./{name} or put -- "
                 "before it")  # fmt: skip

# argparse's error messages (Python 3.11-3.13), most specific first
ERRORS = [
    (r"the following arguments are required: (?P<names>.+)",
     N_("the following arguments are required: {names}")),
    (r"unrecognized arguments: (?P<names>.+)", N_("unrecognized arguments: {names}")),
    (r"argument (?P<name>\S+): invalid choice: (?P<value>.+) \(choose from (?P<choices>.+)\)",
     N_("argument {name}: invalid choice: {value} (choose from {choices})")),
    (r"argument (?P<name>\S+): expected one argument",
     N_("argument {name}: expected one argument")),
    (r"argument (?P<name>\S+): ignored explicit argument (?P<value>.+)",
     N_("argument {name}: takes no value, but was given {value}")),
    (r"argument (?P<name>\S+): (?P<problem>.+)", N_("argument {name}: {problem}")),
]  # fmt: skip


def translate_parser(parser, tr) -> None:
    """The parser's description, each argument's help and its epilog, in tr's language (a
    text with no translation stays as it is), wrapped to the columns a terminal gives them."""
    parser.formatter_class = ColumnsFormatter
    parser.description = parser.description and tr.gettext(parser.description)
    for action in parser._actions:
        if action.help:
            action.help = tr.gettext(action.help)


def help_text(text: str, tr) -> str:
    """A usage line or help text as argparse formatted it, with its headings translated."""
    for english, template in HEADINGS.items():
        said = tr.gettext(template)
        pattern = f"^{re.escape(english)}" if english.endswith(" ") else f"^{re.escape(english)}$"
        text = re.sub(pattern, lambda _, said=said: said, text, flags=re.M)  # said: no \1
    return text


def error_text(message: str, tr) -> str:
    """One of argparse's error messages in tr's language (a message it does not know, as it
    is); a problem that an argument's check reported is translated too."""
    for pattern, template in ERRORS:
        if found := re.fullmatch(pattern, message, flags=re.S):
            values = found.groupdict()
            if "problem" in values:
                values["problem"] = tr.gettext(values["problem"])
            return tr.gettext(template).format(**values)
    return message


def wrapped(text: str, width: int) -> list[str]:
    """text in lines of at most width columns: between words, and between any two wide
    (Chinese) characters (argparse counts characters, so a Chinese line came out twice as
    wide)."""
    pieces = []  # words, each wide character alone, and the spaces between them
    for char in " ".join(text.split()):
        if (
            char == " "
            or is_wide(char)
            or not pieces
            or pieces[-1] == " "
            or is_wide(pieces[-1][-1])
        ):
            pieces.append(char)
        else:
            pieces[-1] += char
    lines, line = [], ""
    for piece in pieces:
        if piece == " ":
            line += " " if line else ""
            continue
        if line.strip() and columns(line + piece) > width:
            lines.append(line.rstrip())
            line = ""
        line += piece
    return [*lines, line.rstrip()] if line.strip() else lines


class ColumnsFormatter(argparse.HelpFormatter):
    """argparse's help layout, with lines wrapped by the columns they take (see wrapped)."""

    def _split_lines(self, text, width):
        return wrapped(text, width)

    def _fill_text(self, text, width, indent):
        return "\n".join(indent + line for line in wrapped(text, width - len(indent)))
