"""speclab's command line as a whole: what every command's --help promises."""

import argparse
import re

import pytest

from speclab.cli import SUBCOMMANDS, main


@pytest.mark.parametrize("command", list(SUBCOMMANDS))
def test_every_command_lists_its_exit_statuses_and_the_shared_ones(command, capsys):
    """check-guesses, train and handouts listed none; demo and bench not Ctrl-C's 130 or a
    closed pipe's 141, which every command can end with."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "Exit status: 0 " in said and ", 2 a bad argument" in said
    assert "130 stopped by Ctrl-C, 143 stopped by SIGTERM (kill, timeout), 141 its" in said


def test_the_statuses_said_are_the_ones_given(tmp_path, capsys):
    """check-guesses: 1 for a file that cannot be read, 2 for a bad argument."""
    assert main(["check-guesses", str(tmp_path / "missing.csv")]) == 1
    with pytest.raises(SystemExit) as stopped:
        main(["check-guesses", "--lang", "xx", "a.csv"])
    assert stopped.value.code == 2


def test_a_persian_windows_console_gets_the_arabic_lookalikes_not_escapes(tmp_path):
    """cp1256 lacks the Persian ی and ک: every other word of a Persian report read
    "رد\\u06ccف"; an ASCII console still gets escapes, never an error."""
    import os
    import subprocess
    import sys

    from speclab.paths import data_dir

    student = tmp_path / "student.csv"  # the exercise, and a row whose message has a hamza
    text = (data_dir() / "guesses.csv").read_text(encoding="utf-8")
    student.write_text(text.rstrip("\n") + "\n,A?C,\n", encoding="utf-8")
    command = [sys.executable, "-m", "speclab", "check-guesses", "--lang", "fa", str(student)]
    for encoding in ("cp1256", "ascii"):
        env = {**os.environ, "PYTHONIOENCODING": encoding}
        done = subprocess.run(command, capture_output=True, env=env)
        text = done.stdout.decode(encoding)
        assert done.returncode in (0, 1), done.stderr
        if encoding == "cp1256":
            assert "\\u06cc" not in text and "رديف" in text  # Arabic yeh, which cp1256 has
            assert "نويسه '?'" in text  # the hamza above ("نویسهٔ"): left out, no \\u0654
            assert not done.stderr  # nothing escaped: no hint
        else:
            assert "\\u06cc" in text
            hint = done.stderr.decode("ascii")  # one line, in letters this console has
            assert hint.count("\n") == 1 and "encoding (ascii) cannot hold" in hint
            assert "PYTHONIOENCODING=utf-8" in hint


_ARGPARSE_NUMBER = getattr(  # what argparse reads as a number (float() reads more)
    argparse.ArgumentParser(), "_negative_number_matcher", re.compile(r"^-\d+$|^-\d*\.\d+$")
)


@pytest.mark.parametrize(
    ("argv", "text"),
    [
        (["demo", "-hello"], "-hello"),  # read as -h with the argument "ello"
        (["demo", "--k", "3", "-x"], "-x"),  # the top parser reports this one
        (["demo", "--fixed-k", "-- a list item"], None),  # a space: argparse takes it as text
        (["demo", "--k", "-3"], None),  # a number is a value; --k's own check speaks
        # an option to argparse's negative-number pattern in 3.11 and 3.13 (not float()'s)
        (["demo", "-1e5"], None if _ARGPARSE_NUMBER.match("-1e5") else "-1e5"),
        (["check-guesses", "-x"], None),  # no prompt to give
    ],
)
def test_a_prompt_that_starts_with_a_dash_gets_a_hint(argv, text, capsys, monkeypatch):
    """`speclab demo -hello` ended in "argument -h/--help: ignored explicit argument 'ello'",
    with no word of how to give such a prompt."""
    monkeypatch.setattr("speclab.demo.run", lambda args: 0)  # parse only: no model is run
    try:
        main(argv)
    except SystemExit as stop:
        assert stop.code == 2
    err = capsys.readouterr().err
    hint = f"'{text}' is read as an option: to give a prompt that starts with '-', put -- before it"
    if text is None:
        assert "put -- before it" not in err
    else:
        assert f"{hint}, after every option (speclab demo -- '{text}')" in err
        assert main(["demo", "--", text]) == 0  # the hint works


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["demo", "hello", "world"], "speclab demo 'hello world'"),
        (["demo", "--k", "3", "def", "add(a,", "b):"], "speclab demo --k 3 'def add(a, b):'"),
        # a shortened option's value is no word of the prompt (it had hinted "5 hello world")
        (["demo", "--max-new", "5", "hello", "world"], "speclab demo --max-new 5 'hello world'"),
        (["demo", "--k=3", "cost $5", "now"], "speclab demo --k=3 'cost $5 now'"),  # no $5 lost
        (["demo", "say \"hi\"", "there"], """speclab demo 'say "hi" there'"""),
        (["demo", "--", "-x", "foo"], "speclab demo -- '-x foo'"),
        (["demo", "--", "-x", "--k", "2"],
         "every word after -- is read as the prompt: give the options first"),
        (["train", "smoke", "smoke"], None),
        (["bench", "forward", "decode"], None),
        (["train", "smoke", "--", "--steps", "3"], None),  # no prompt: no word of one
        (["bench", "decode", "--", "--quick"], None),
    ],
)  # fmt: skip
def test_words_a_command_does_not_take_get_its_usage_and_a_prompt_its_quotes(
    argv, hint, capsys, monkeypatch
):
    """`speclab demo hello world` (a prompt typed without quotes) got the top parser's usage,
    `speclab [-h] COMMAND ...`, and no word of quotes; so did `speclab train smoke smoke`."""
    import shlex

    monkeypatch.setattr("speclab.demo.run", lambda args: 0)  # parse only: no model is run
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: speclab {argv[0]} ")
    assert f"speclab {argv[0]}: error: unrecognized arguments: " in err
    if hint is None:
        assert "quotes" not in err and "prompt" not in err.splitlines()[-1]
        return
    assert err.rstrip().endswith(hint), err
    if hint.startswith("speclab "):  # the command the hint gives works, as a shell splits it
        assert main(shlex.split(hint)[1:]) == 0


def test_a_relative_path_too_long_is_blamed_on_its_option_not_on_the_command(
    tmp_path, capsys, monkeypatch
):
    """`speclab handouts --out handouts/zzz...` blamed "handouts", the command's own name,
    which is a prefix of the path."""
    monkeypatch.chdir(tmp_path)
    long = "handouts/" + "z" * 300
    assert main(["handouts", "--no-pdf", "--out", long]) == 2
    assert capsys.readouterr().err.startswith("speclab: --out handouts/zzzzzzzzzzzzzzzzzzzzz...")


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["train", "smoke", "--smoke", "--run-dir", "{long}"], "--run-dir"),
        (["bench", "decode", "--out={long}"], "--out"),
        (["demo", "a", "--target", "{long}.npz"], "--target"),
        (["handouts", "--lessons", "{long}"], "--lessons"),
    ],
)
def test_a_path_too_long_for_the_file_system_names_its_option(tmp_path, capsys, argv, option):
    """A 300-letter name ended in "speclab: FOLDER/zzz...: File name too long", status 1: it
    named neither the option nor the command, and handouts blamed the writing of its pages."""
    long = str(tmp_path / ("z" * 300))
    assert main([a.replace("{long}", long) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"speclab: {option} {long[:30]}...")
    assert err.endswith(
        "a name in this path is longer than the file system allows (File name too long)\n"
    )


def test_an_out_folder_too_long_for_the_file_system_names_the_option(tmp_path, capsys, monkeypatch):
    """Looking for the folders --out would make (to remove them after a failed start) had
    met the long name first: "speclab: FOLDER/aaa...: File name too long", status 1."""
    monkeypatch.chdir(tmp_path)
    out = str(tmp_path / ("a" * 300) / "x.npz")
    assert main(["train", "smoke", "--smoke", "--run-dir", "rd", "--out", out]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"speclab: --out {out[:30]}...") and "longer than the file" in err, err
    assert not (tmp_path / "rd").exists()
    # a new folder above the long name: made on the way to it, removed again (it had stayed)
    out = str(tmp_path / "new" / ("a" * 300) / "x.npz")
    assert main(["train", "smoke", "--smoke", "--run-dir", "rd", "--out", out]) == 2
    err = capsys.readouterr().err
    assert err.startswith("speclab train: --out ") and "(File name too long)" in err, err
    # the same below a new folder for handouts: "speclab: FOLDER/aaa...: File name too
    # long", status 1, naming no option (the long name is a folder on the way to --out)
    out = str(tmp_path / "new" / ("a" * 300) / "sub")
    assert main(["handouts", "--no-pdf", "--out", out]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"speclab: --out {out[:30]}...") and "longer than the file" in err, err
    assert not (tmp_path / "new").exists()
    assert not (tmp_path / "new").exists() and not (tmp_path / "rd").exists()


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["train", "smoke", "--max-minutes", "-inf"], "write --max-minutes=-inf"),
        (["train", "smoke", "--scale-attention", "-0.1=2"], "write --scale-attention=-0.1=2"),
        (["train", "smoke", "--max-minutes"], None),  # no value at all: nothing to rewrite
        (["train", "smoke", "--max-minutes", "--smoke"], None),  # forgotten, not dashed
        (["bench", "decode", "--out", "--quick"], None),
        (["train", "smoke", "--max-min", "-inf"], "write --max-min=-inf"),  # as abbreviated
        (["demo", "--target", "-my.npz", "hello"], "write --target=-my.npz"),  # not a prompt
        # a value read as -h after an abbreviated option: a value, not a word to refuse as -h
        (["train", "smoke", "--init", "-hx.npz"], "write --init=-hx.npz"),
        (["bench", "decode", "--o", "-hx"], "write --o=-hx"),
    ],
)
def test_a_value_that_starts_with_a_dash_gets_a_hint(argv, hint, capsys):
    """`--max-minutes -inf` ended in "expected one argument", as if no value were given."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "expected one argument" in err
    if hint is None:
        assert "starts with '-'" not in err
    else:
        assert err.rstrip().endswith(f"; to give a value that starts with '-', {hint}")


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGINT"), reason="no SIGINT")
def test_a_ctrl_c_while_interrupted_is_printed_is_no_traceback(monkeypatch, capsys, tmp_path):
    """`speclab train` takes Ctrl-C with a handler of its own (it saves a checkpoint); main's
    handler then has seen none, and a Ctrl-C held down raised again while main printed
    "interrupted": a traceback and status -2 after a clean stop."""
    import os
    import signal

    from speclab import bench, cli

    def stopped(args):  # as train: its own handler took the Ctrl-C and stopped the run
        raise KeyboardInterrupt

    said = cli._interrupted

    def held_down(argv):  # the next Ctrl-C arrives while the message is being made
        os.kill(os.getpid(), signal.SIGINT)
        return said(argv)

    monkeypatch.setattr(bench, "run_forward", stopped)
    monkeypatch.setattr(cli, "_interrupted", held_down)
    assert main(["bench", "forward", "--out", str(tmp_path / "bench")]) == 130
    assert capsys.readouterr().err.endswith("interrupted\n")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back


def test_console_imports_nothing_after_an_early_ctrl_c(monkeypatch):
    """main() can stop before it loads speclab.streams (a Ctrl-C at once): console() then
    imported it afresh, an import a second Ctrl-C could break with a traceback."""
    import signal
    import sys

    from speclab import cli

    monkeypatch.setattr(cli, "main", lambda: 130)
    monkeypatch.delitem(sys.modules, "speclab.streams", raising=False)
    monkeypatch.delattr("speclab.streams", raising=False)  # as if never imported
    previous = signal.getsignal(signal.SIGINT)
    try:
        assert cli.console() == 130
    finally:
        signal.signal(signal.SIGINT, previous)
    assert "speclab.streams" not in sys.modules
