"""Printing a local HTML page to PDF with headless Chromium, for `speclab handouts`.

`print_pdf` runs Debian's `/usr/bin/chromium` with a fresh profile and no network, in a
process group of its own that is killed on every way out (its renderer and GPU helpers
too), and turns a failure or a time-out into a one-line HandoutError.
"""

import contextlib
import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from speclab.handout_folder import HandoutError

CHROMIUM = Path("/usr/bin/chromium")
PRINT_TIMEOUT_S = 120.0  # one page prints in seconds; a Chromium that hangs must not stall us


def one_line(text: str, width: int = 200) -> str:
    """text on one line of at most about width characters, for an error message."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 3] + "..."


def chromium_available() -> bool:
    return CHROMIUM.exists()


def print_pdf(html_path: Path, pdf_path: Path) -> None:
    """Print a local HTML page to PDF with headless Chromium (no network, fresh profile).

    Chromium failing, or still busy after PRINT_TIMEOUT_S, is a HandoutError.
    """
    # ignore_cleanup_errors: a Chromium helper still writing there must not hide the real error
    with tempfile.TemporaryDirectory(
        prefix="speclab-chromium-", ignore_cleanup_errors=True
    ) as profile:
        command = [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            f"--user-data-dir={profile}",
            "--no-pdf-header-footer",
            f"--print-to-pdf={pdf_path}",
            html_path.resolve().as_uri(),
        ]
        returncode, stderr = _run_chromium(command)
    if returncode != 0 or not pdf_path.exists():
        # Its last line says why (the first ones are warnings about D-Bus and the like);
        # a log line starts with [process:thread:time:ERROR:source.cc:line].
        lines = [re.sub(r"^\[[^\]]*\]\s*", "", line) for line in stderr.splitlines()]
        last = next((line for line in reversed(lines) if line.strip()), "")
        if returncode < 0:
            status = f"stopped by signal {-returncode}"
        elif returncode > 0:
            status = f"exit status {returncode}"
        else:
            status = "no PDF written"
        raise _chromium_error(f"{status}: {last}" if last else status)


def _run_chromium(command: list[str]) -> tuple[int, str]:
    """Run Chromium in a process group of its own: (exit status, stderr).

    Its stderr goes to a file, not a pipe: a helper that inherits the pipe and outlives
    Chromium would keep it open, and reading it to the end would wait for the time-out.
    Once Chromium has exited, after PRINT_TIMEOUT_S, or on Ctrl-C or any error here, the
    whole group is killed: its renderer and GPU helpers too, which killing Chromium alone
    leaves running (and which, in a group of their own, a Ctrl-C at the terminal does not
    reach). Chromium is reaped only after that, so its group's number cannot have gone to
    another process meanwhile.
    """
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as log:
        try:
            # TMPDIR: the folder Python found usable; Chromium given one that does not exist
            # (TMPDIR=/nonexistent) failed with "Failed to create a ProcessSingleton"
            env = os.environ | {"TMPDIR": tempfile.gettempdir()}
            process = subprocess.Popen(
                command, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True, env=env
            )
        except OSError as error:  # not executable, or gone since chromium_available()
            raise _chromium_error(f"{CHROMIUM}: {error.strerror or error}") from None
        try:
            if not _wait_unreaped(process, PRINT_TIMEOUT_S):
                raise _chromium_error(f"no PDF after {PRINT_TIMEOUT_S:g} s")
        finally:
            _kill_group(process)  # on every way out, helpers that outlive Chromium too
        log.seek(0)
        return process.returncode, log.read()


def _wait_unreaped(process: subprocess.Popen, timeout: float) -> bool:
    """Whether the process exits within timeout s; on POSIX it is left unreaped (a zombie)."""
    if not hasattr(os, "waitid"):  # Windows: no process groups to protect
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout)
        return process.poll() is not None
    deadline = time.monotonic() + timeout
    while os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def _kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError, AttributeError):
        os.killpg(process.pid, signal.SIGKILL)  # AttributeError: Windows, no process groups
    process.kill()  # does nothing once it has exited; then reap it
    process.wait()


def _chromium_error(reason: str) -> HandoutError:
    return HandoutError(f"Chromium could not print the PDFs ({one_line(reason)}); try --no-pdf")


# The Debian package whose fonts hold each translated language's letters (README, "Fonts").
FONT_PACKAGES = {"zh": "fonts-noto-cjk", "fa": "fonts-noto-core"}
LANGUAGE_NAMES = {"zh": "Chinese", "fa": "Persian"}


def languages_without_a_font(langs) -> list[str]:
    """The languages of langs ("zh", "fa") whose letters no installed font holds, as
    fontconfig (which Chromium prints with) answers `fc-list :lang=...`: without such a font
    the Chinese PDFs had printed every letter as an empty box, and the build said nothing.
    [] where fontconfig's fc-list is not installed (no telling)."""
    import shutil

    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return []
    missing = []
    for lang in sorted(set(langs) & set(FONT_PACKAGES)):
        try:
            found = subprocess.run([fc_list, f":lang={lang}", "family"], capture_output=True,
                                   text=True, timeout=60, check=False).stdout  # fmt: skip
        except (OSError, subprocess.TimeoutExpired):
            continue
        if not found.strip():
            missing.append(lang)
    return missing
