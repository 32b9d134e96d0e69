"""speclab.command_parser: argparse's parser with a hint for each mistake people make typing a
command, tried in-process on a small `speclab` of the same shape (demo takes a prompt, check
takes files). test_cli.py tries the hints on the real commands."""

import contextlib
import io
import shlex

import pytest

from speclab.command_parser import parser_class
from speclab.i18n import translator


def build(argv: list[str], tr=None):
    """`speclab demo`: a prompt, options with a value (one with a short name too) and a flag;
    `speclab check`: files and no prompt. argv: the command line it will parse."""
    top = parser_class(tr, argv)(prog="speclab")
    commands = top.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser("demo")
    demo.add_argument("prompt", nargs="?")
    demo.add_argument("--k", type=int)
    demo.add_argument("--quiet", action="store_true")
    demo.add_argument("-o", "--out")
    check = commands.add_parser("check")
    check.add_argument("files", nargs="*")
    check.add_argument("--lang", choices=["en", "zh"])
    return top


def refused(argv: list[str], tr=None) -> tuple[str, str]:
    """(the first line, the last line) of what parsing argv printed; it must end in status 2."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as stop:
        build(argv, tr).parse_args(argv)
    assert stop.value.code == 2, err.getvalue()
    lines = err.getvalue().splitlines()
    return lines[0], lines[-1]


def parsed(argv: list[str]):
    return build(argv).parse_args(argv)


VALUE_HINT = "; to give a value that starts with '-', write "


@pytest.mark.parametrize(
    ("argv", "option", "value"),
    [
        (["demo", "--out", "-x.txt", "hi"], "--out", "-x.txt"),  # argparse: "-o/--out"
        (["demo", "-o", "-x.txt", "hi"], "-o", "-x.txt"),
        # a value starting with -h is a value, not a prompt to refuse as -h
        (["demo", "--out", "-hx.txt", "hi"], "--out", "-hx.txt"),
    ],
)
def test_a_value_that_starts_with_a_dash_gets_the_option_equals_value_form(argv, option, value):
    _, error = refused(argv)
    expected = f"error: argument -o/--out: expected one argument{VALUE_HINT}{option}={value}"
    assert error.endswith(expected)
    rewritten = [w for w in argv if w != value]
    rewritten[rewritten.index(option)] = f"{option}={value}"
    assert parsed(rewritten).out == value  # the hint works


@pytest.mark.parametrize(
    "argv",
    [
        ["demo", "--out", "--", "hi"],  # "--" is no value to rewrite as --out=--
        ["demo", "-", "-x", "--out"],  # "-" (a prompt) is no abbreviation of -o or --out
    ],
)
def test_an_option_left_without_its_value_gets_no_value_hint(argv):
    _, error = refused(argv)
    assert "expected one argument" in error and VALUE_HINT not in error


@pytest.mark.parametrize(
    "argv",
    [
        ["demo", "--quiet", "-x"],  # a flag takes no value: -x is no value of --quiet
        ["demo", "--k=3", "-x"],  # --k=3 is the option --k
        ["demo", "-", "-x"],  # "-" alone is a prompt (argparse reads it so), not an option
    ],
)
def test_the_hint_for_a_prompt_that_starts_with_a_dash_names_that_word(argv):
    _, error = refused(argv)
    assert error.endswith(
        "error: unrecognized arguments: -x; '-x' is read as an option: to give a prompt that "
        "starts with '-', put -- before it, after every option (speclab demo -- '-x')"
    )
    assert parsed(["demo", "--", "-x"]).prompt == "-x"  # the hint works


def test_a_prompt_read_as_minus_h_is_refused_as_an_unrecognized_argument():
    """argparse reads `demo -hello` as -h with the value "ello": 3.11 then said "argument
    -h/--help: ignored explicit argument 'ello'", 3.13 prints the help and ends in 0."""
    _, error = refused(["demo", "-hello"])
    assert "error: unrecognized arguments: -hello; '-hello' is read as an option" in error
    assert parsed(["demo", "--", "-hello"]).prompt == "-hello"  # after --, no word is refused


@pytest.mark.parametrize(
    "argv",
    [
        ["demo", "--k", "x", "--", "-y"],  # after --, every word is the prompt's
        ["demo", "-y is the prompt", "--k", "x"],  # with a space, argparse takes it as text
    ],
)
def test_a_dashed_word_that_argparse_takes_for_the_prompt_gets_no_hint(argv):
    _, error = refused(argv)
    assert error.endswith("error: argument --k: invalid int value: 'x'")


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["demo", "--quiet", "hello", "world"], "speclab demo --quiet 'hello world'"),
        (["demo", "-o", "x.txt", "hello", "world"], "speclab demo -o x.txt 'hello world'"),
        (["demo", "--k", "3", "-", "x"], "speclab demo --k 3 '- x'"),  # "-" is a word
    ],
)
def test_a_prompt_in_pieces_is_given_back_in_quotes_after_the_options(argv, hint):
    """A flag takes no value and a short option's value is no word of the prompt."""
    _, error = refused(argv)
    assert error.endswith(f"; a prompt of several words goes in quotes, as one argument: {hint}")
    assert parsed(shlex.split(hint)[1:]).prompt == " ".join(argv[-2:])  # the hint works


def test_a_prompt_in_pieces_with_a_lone_dash_inside_is_given_back_in_quotes():
    _, error = refused(["demo", "hello", "-", "world"])
    assert error.endswith("as one argument: speclab demo 'hello - world'")


def test_a_prompt_read_as_minus_h_gets_the_commands_usage():
    usage, error = refused(["demo", "-hello"])
    assert usage.startswith("usage: speclab demo ") and error.startswith("speclab demo: error: ")


def test_a_prompt_read_as_minus_h_after_another_dashed_word_is_refused():
    _, error = refused(["demo", "-x", "-hello"])
    assert "unrecognized arguments:" in error and "-hello" in error


def test_a_prompt_with_a_space_read_as_minus_h_gets_the_hint():
    _, error = refused(["demo", "-h is the prompt"])
    assert "'-h is the prompt' is read as an option" in error


def test_a_file_that_argparse_would_read_as_minus_h_is_refused_not_answered_with_the_help(
    tmp_path, monkeypatch
):
    """A homework file "-hw1.csv" is -h with "w1.csv" to argparse: Python 3.13 printed the
    help and ended 0, as if the file had been checked; 3.11 said 'ignored explicit argument'."""
    monkeypatch.chdir(tmp_path)
    _, error = refused(["check", "-hw2.csv"])
    assert error == "speclab check: error: unrecognized arguments: -hw2.csv"
    (tmp_path / "-hw1.csv").write_text("prefix,guess\n")
    usage, error = refused(["check", "--lang", "en", "-hw1.csv"])
    assert usage.startswith("usage: speclab check ")
    assert error.endswith("'-hw1.csv' is read as an option: to name the file, write ./-hw1.csv "
                          "or put -- before it")  # fmt: skip


def test_a_file_named_like_an_option_gets_a_hint_in_the_learners_language(tmp_path, monkeypatch):
    """The catalogue's words (speclab/locale/zh), the hint joined with a full-width ；."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-alice.csv").write_text("prefix,guess\n")
    usage, error = refused(["check", "-alice.csv"], translator("zh"))
    assert usage.startswith("用法：speclab check ")
    assert error == (
        "speclab check: 错误：无法识别的参数：-alice.csv；'-alice.csv' 被当成了选项："
        "要把它当作文件名，请写成 ./-alice.csv，或在它前面加上 --"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "-", "--bogus"],  # "-" is standard input to argparse, never an option
        ["check", "--lang", "xx", "--", "-alice.csv"],  # after --, a file is read as one
    ],
)
def test_a_file_that_argparse_reads_as_a_file_gets_no_hint(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("-", "-alice.csv"):
        (tmp_path / name).write_text("prefix,guess\n")
    _, error = refused(argv)
    assert "is read as an option" not in error


def test_a_translated_error_keeps_argparses_status_and_usage():
    usage, error = refused(["check", "--lang", "xx"], translator("zh"))
    assert usage == "用法：speclab check [-h] [--lang {en,zh}] [files ...]"
    assert error == "speclab check: 错误：参数 --lang：无效的选择 'xx'（请从 'en', 'zh' 中选择）"


def test_an_error_with_no_stderr_still_ends_in_status_2(monkeypatch, capsys):
    """Under pythonw, or started with stderr closed, sys.stderr is None."""
    monkeypatch.setattr("sys.stderr", None)
    with pytest.raises(SystemExit) as stop:
        build(["demo", "--k", "x"]).parse_args(["demo", "--k", "x"])
    assert stop.value.code == 2


class Unwritable(io.StringIO):
    def write(self, text):
        raise OSError(28, "No space left on device")


def test_help_that_cannot_be_written_is_an_error_and_an_error_message_is_not(monkeypatch):
    """argparse drops the OSError of writing the help (`--help > /dev/full` ended in 0); an
    error message to a stderr that cannot take it is dropped, and the status, 2, says it."""
    parser = build(["demo", "--k", "x"])
    with pytest.raises(OSError, match="No space left"):
        parser.print_help(Unwritable())
    monkeypatch.setattr("sys.stderr", Unwritable())
    with pytest.raises(SystemExit) as stop:
        parser.parse_args(["demo", "--k", "x"])
    assert stop.value.code == 2
