"""speclab.chromium: printing a page to PDF with headless Chromium, its failures as one line,
and which translated languages no installed font can print.

A shell script stands in for /usr/bin/chromium (and for fontconfig's fc-list), so no browser
starts here; the PDFs of the real Chromium are tested in test_handouts.py.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import speclab.chromium
from speclab.chromium import languages_without_a_font, one_line, print_pdf
from speclab.handout_folder import HandoutError

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="shell scripts stand in")

# The shell loop a stand-in uses to find the file it was asked to print to.
WRITE_THE_PDF = (
    'for a in "$@"; do case $a in --print-to-pdf=*) echo pdf > "${a#--print-to-pdf=}";; '
    "esac; done\n"
)


def executable(path: Path, script: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + script, encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def chromium_runs(tmp_path, monkeypatch):
    """chromium_runs(script): print_pdf now runs that shell script; returns the page to print."""

    def stand_in(script: str) -> Path:
        monkeypatch.setattr(speclab.chromium, "CHROMIUM", executable(tmp_path / "chromium", script))
        monkeypatch.setattr(speclab.chromium, "PRINT_TIMEOUT_S", 20.0)
        page = tmp_path / "page.html"
        page.write_text("<p>x</p>", encoding="utf-8")
        return page

    return stand_in


def failure(page: Path) -> str:
    with pytest.raises(HandoutError) as raised:
        print_pdf(page, page.with_suffix(".pdf"))
    return str(raised.value)


# --- one_line -----------------------------------------------------------------------------


def test_one_line_joins_the_lines_and_runs_of_spaces():
    assert one_line("Traceback:\n  bad  value\n\tat x\n") == "Traceback: bad value at x"


def test_one_line_keeps_a_line_of_exactly_width_characters_and_cuts_a_longer_one_to_width():
    assert one_line("x" * 200) == "x" * 200
    assert one_line("x" * 201) == "x" * 197 + "..."  # 197 letters and 3 dots: 200
    assert one_line("abcdefghij", width=5) == "ab..."


# --- print_pdf ----------------------------------------------------------------------------


def test_chromium_available_is_whether_the_executable_is_there(tmp_path, monkeypatch):
    monkeypatch.setattr(speclab.chromium, "CHROMIUM", tmp_path / "chromium")
    assert not speclab.chromium.chromium_available()
    executable(tmp_path / "chromium", "exit 0\n")
    assert speclab.chromium.chromium_available()


def test_chromium_prints_headless_with_a_fresh_profile_that_is_removed_after(
    tmp_path, chromium_runs
):
    """The stand-in notes its arguments and what its --user-data-dir held when it started."""
    seen = tmp_path / "seen"
    page = chromium_runs(
        f'for a in "$@"; do echo "$a" >> {seen}/args; case $a in --user-data-dir=*) '
        f'd="${{a#--user-data-dir=}}"; echo "$d" > {seen}/profile; ls -A "$d" > {seen}/held;; '
        "esac; done\n" + WRITE_THE_PDF
    )
    seen.mkdir()
    print_pdf(page, tmp_path / "page.pdf")
    assert (tmp_path / "page.pdf").read_text() == "pdf\n"
    args = (seen / "args").read_text().splitlines()
    assert "--headless" in args and f"--print-to-pdf={tmp_path / 'page.pdf'}" in args
    profile = Path((seen / "profile").read_text().strip())
    assert (seen / "held").read_text() == ""  # a new, empty profile folder
    assert not profile.exists()  # removed once Chromium is done


def test_a_page_given_by_a_relative_path_is_opened_as_a_file_url(
    tmp_path, chromium_runs, monkeypatch
):
    args = tmp_path / "args"
    chromium_runs(f'for a in "$@"; do echo "$a" >> {args}; done\n' + WRITE_THE_PDF)
    monkeypatch.chdir(tmp_path)
    print_pdf(Path("page.html"), Path("page.pdf"))
    assert args.read_text().splitlines()[-1] == (tmp_path / "page.html").as_uri()
    assert (tmp_path / "page.pdf").is_file()


def test_chromium_is_given_the_temporary_folder_python_found_usable(
    tmp_path, chromium_runs, monkeypatch
):
    """TMPDIR=/nonexistent: Python falls back to /tmp, and Chromium, given the variable as it
    was, failed with "Failed to create a ProcessSingleton" (see print_pdf's comment)."""
    usable = tempfile.gettempdir()  # found before the variable changes, as in a fresh process
    told = tmp_path / "tmpdir"
    page = chromium_runs(f'echo "$TMPDIR" > {told}\n' + WRITE_THE_PDF)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "no-such-folder"))
    print_pdf(page, tmp_path / "page.pdf")
    assert told.read_text().strip() == usable


def test_the_reason_is_the_last_line_that_is_not_blank_without_its_log_prefix(chromium_runs):
    page = chromium_runs(
        "echo '[1:2:0101/0:ERROR:bus.cc:405] Failed to connect to the bus' >&2\n"
        "echo '[1:2:0101/0:ERROR:file.cc:12] Cannot open the page' >&2\n"
        "printf '   \\n\\n' >&2\nexit 2\n"
    )
    assert failure(page) == (
        "Chromium could not print the PDFs (exit status 2: Cannot open the page); try --no-pdf"
    )


def test_a_failure_without_a_word_on_stderr_gives_the_status_alone(chromium_runs):
    assert failure(chromium_runs("exit 4\n")) == (
        "Chromium could not print the PDFs (exit status 4); try --no-pdf"
    )


def test_a_chromium_killed_by_a_signal_is_named_by_its_signal(chromium_runs):
    page = chromium_runs("echo 'out of memory' >&2\nkill -9 $$\n")
    assert failure(page) == (
        "Chromium could not print the PDFs (stopped by signal 9: out of memory); try --no-pdf"
    )


def test_a_long_reason_is_cut_to_one_line_in_the_message(chromium_runs):
    page = chromium_runs(f"echo '{'y' * 300}' >&2\nexit 1\n")
    reason = "exit status 1: " + "y" * 300  # 315 characters: one_line keeps 197 and "..."
    assert failure(page) == (f"Chromium could not print the PDFs ({reason[:197]}...); try --no-pdf")


@pytest.mark.parametrize(
    "make, strerror",
    [
        (lambda path: path.write_text("#!/bin/sh\n", encoding="utf-8"), "Permission denied"),
        (lambda path: None, "No such file or directory"),
    ],
    ids=["not executable", "gone"],
)
def test_a_chromium_that_cannot_be_started_is_one_handout_error(
    tmp_path, monkeypatch, make, strerror
):
    chromium = tmp_path / "chromium"
    make(chromium)  # written without its executable bit, or not at all
    monkeypatch.setattr(speclab.chromium, "CHROMIUM", chromium)
    page = tmp_path / "page.html"
    page.write_text("<p>x</p>", encoding="utf-8")
    assert failure(page) == (
        f"Chromium could not print the PDFs ({chromium}: {strerror}); try --no-pdf"
    )


# --- languages_without_a_font ---------------------------------------------------------------


def test_fc_list_answering_a_blank_line_means_no_font_holds_the_letters(tmp_path, monkeypatch):
    executable(
        tmp_path / "bin" / "fc-list", 'case "$1" in ":lang=fa") echo Vazirmatn;; *) echo;; esac\n'
    )
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin")
    assert languages_without_a_font(["zh", "fa"]) == ["zh"]


@pytest.mark.parametrize(
    "error", [subprocess.TimeoutExpired("fc-list", 60), PermissionError(13, "Permission denied")]
)
def test_an_fc_list_that_hangs_or_cannot_run_names_no_language(tmp_path, monkeypatch, error):
    """No answer from fontconfig is no telling, as where fc-list is not installed."""
    executable(tmp_path / "bin" / "fc-list", "exit 0\n")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))

    def fails(*args, **kwargs):
        raise error

    monkeypatch.setattr(subprocess, "run", fails)
    assert languages_without_a_font(["zh", "fa"]) == []
