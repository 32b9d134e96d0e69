"""speclab.argparse_words: argparse's headings and error messages in the learner's language,
and help wrapped by the columns a terminal gives each character. The expected words are the
Chinese catalogue's (speclab/locale/zh/LC_MESSAGES/speclab.po)."""

import argparse
import gettext
import textwrap

import numpy as np
import pytest

from speclab.argparse_words import (
    DESCRIPTION,
    ColumnsFormatter,
    error_text,
    help_text,
    translate_parser,
    wrapped,
)
from speclab.i18n import translator
from speclab.student_files import columns


@pytest.fixture(scope="module")
def zh():
    return translator("zh")


def test_headings_are_translated_only_where_argparse_puts_them(zh):
    """The usage line opens with "usage: "; the section titles are lines of their own. The
    same words inside a description or an option's help stay as written."""
    text = (
        "usage: speclab check-guesses [-h] FILE\n\nsee usage: above\n\n"
        "positional arguments:\n  FILE\n\noptions:\n  -h\noptions: in any order\n"
    )
    assert help_text(text, zh) == (
        "用法：speclab check-guesses [-h] FILE\n\nsee usage: above\n\n"
        "位置参数：\n  FILE\n\n选项：\n  -h\noptions: in any order\n"
    )


class Backslashes(gettext.NullTranslations):
    """A catalogue whose heading holds what re.sub would read as a group and an escape."""

    def gettext(self, message):
        return r"\1 \n usage: " if message == "usage: " else message


def test_a_translated_heading_is_put_in_as_written():
    assert help_text("usage: speclab x\n", Backslashes()) == r"\1 \n usage: speclab x" + "\n"


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ("the following arguments are required: FILE", "缺少必需的参数：FILE"),
        ("unrecognized arguments: --bogus x", "无法识别的参数：--bogus x"),
        ("argument --lang: invalid choice: 'de' (choose from 'en', 'zh')",
         "参数 --lang：无效的选择 'de'（请从 'en', 'zh' 中选择）"),
        ("argument --lang: expected one argument", "参数 --lang 后面需要一个值"),
        ("argument --summary: ignored explicit argument '3'", "参数 --summary 不带值，却给了 '3'"),
        # a problem an argument's own check reported (speclab.cli.path_argument) is translated
        ("argument FILE: an empty path: give a file or folder name",
         "参数 FILE：文件名是空的：请写出文件或文件夹的名字"),
        # a check's problem on two lines is still that argument's problem
        ("argument FILE: line one\nline two", "参数 FILE：line one\nline two"),
        # a message argparse words otherwise is left as it is
        ("ambiguous option: --l could match --lang, --lines",
         "ambiguous option: --l could match --lang, --lines"),
    ],
)  # fmt: skip
def test_argparses_error_messages_in_chinese(zh, message, said):
    assert error_text(message, zh) == said


def test_a_parsers_own_texts_are_translated_and_an_empty_help_stays_empty(zh):
    """gettext("") is the catalogue's header (Project-Id-Version: ...), not a translation."""
    parser = argparse.ArgumentParser(prog="speclab check-guesses", description=DESCRIPTION)
    parser.add_argument("--quiet", help="")
    parser.add_argument("--plain")  # no help at all
    translate_parser(parser, zh)
    assert parser.description == "对照 ABCDEFG 路径检查一份猜测 CSV"
    helps = {action.dest: action.help for action in parser._actions}
    assert helps == {"help": "显示本帮助并退出", "quiet": "", "plain": None}
    assert parser.formatter_class is ColumnsFormatter


def test_wrapping_text_with_no_wide_character_is_argparses_wrapping():
    """argparse wraps help with textwrap, after making every run of whitespace one space; a
    word longer than the line stands alone here (textwrap would cut it: left out)."""
    rng = np.random.default_rng(0)
    for _ in range(300):
        lengths = rng.integers(1, 12, size=rng.integers(0, 12))
        words = ["".join(rng.choice(list("abc.,:"), size=n)) for n in lengths]
        spaces = rng.choice([" ", "  ", "\n", "\t", " \n "], size=len(words))
        text = "".join(word + space for word, space in zip(words, spaces, strict=True))
        width = int(rng.integers(1, 30))
        oracle = textwrap.wrap(
            " ".join(text.split()), width, break_long_words=False, break_on_hyphens=False
        )
        assert wrapped(text, width) == oracle, (text, width)


@pytest.mark.parametrize(
    ("text", "width", "lines"),
    [
        ("价格价格", 4, ["价格", "价格"]),  # two columns a character: two to a line
        ("价格ab", 4, ["价格", "ab"]),  # a line may end between a wide character and a letter
        ("价格ab", 6, ["价格ab"]),  # ... and need not
        ("ab价格", 3, ["ab", "价", "格"]),  # or between a letter and a wide character
    ],
)
def test_wrapping_counts_two_columns_for_a_chinese_character(text, width, lines):
    assert wrapped(text, width) == lines


def test_the_columns_formatter_lays_out_ascii_help_as_argparse_does(monkeypatch):
    """The description of a group of options and each option's help are indented: the indent
    counts in the width."""
    monkeypatch.setenv("COLUMNS", "42")

    def help_with(formatter_class):
        parser = argparse.ArgumentParser(
            prog="speclab check-guesses",
            description="check a CSV of guesses against the ABCDEFG path, row by row",
            epilog="Exit status: 0 every file is valid, 1 some file is not, 2 a bad argument.",
            formatter_class=formatter_class,
        )
        parser.add_argument("files", nargs="*", help="the CSV files or folders to check, in turn")
        parser.add_argument("--summary", action="store_true", help="one line for each student")
        group = parser.add_argument_group(
            "output", "the report goes to a folder, one file a student, or to the terminal"
        )
        group.add_argument("--out", help="a folder for one report file for each student")
        return parser.format_help()

    assert help_with(ColumnsFormatter) == help_with(argparse.HelpFormatter)
    chinese = argparse.ArgumentParser(prog="speclab", formatter_class=ColumnsFormatter)
    chinese.add_argument("--summary", action="store_true", help="每个学生只显示一行汇总" * 4)
    assert max(columns(line) for line in chinese.format_help().splitlines()) <= 40
