"""speclab's command line as a whole: what every command's --help promises."""

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
