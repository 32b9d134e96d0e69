"""The streams a command writes to, made safe: closed, full, gone or too narrow.

`speclab.cli` (the `speclab` command and the benchmark scripts' `run_script`) sets them up
before a command runs: a command started with stdout or stderr closed gets a stand-in; a
stderr that cannot be written drops progress bars and notes instead of stopping the run; a
character the console cannot encode (an emoji on a cp1252 Windows console) is printed as a
lookalike or a \\u... code, with one line at the end saying why and how to keep it; and
stdout is flushed where an error can still be reported.

Like speclab.cli it imports only `os` and `sys` at the top, so that loading it early costs
nothing a Ctrl-C could land in. State: `_escaped_on` records, for this process, which
encodings had to escape a letter (the process's streams are themselves global).
Left out: Windows' console API (the `chcp` code page): Python already writes UTF-8 there.
"""

import os
import sys


class ClosedOutput:
    """Stands in for a stdout the command was started without (`speclab ... >&-`): the first
    write is an OSError, which main() reports, as it does a full disk, instead of printing
    into nothing and ending with status 0."""

    def write(self, text: str) -> int:
        import errno

        raise OSError(errno.EBADF, "standard output is closed: nothing can be shown")

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        import io

        raise io.UnsupportedOperation("standard output is closed")


class MessagesMayBeLost:
    """stderr while a command runs: its progress bars, notes and messages are not its results,
    so a stderr that cannot be written (`2>/dev/full`, a closed pipe) drops them instead of
    stopping the run: a benchmark or a training run had ended at its first progress bar with
    nothing saved. The exit status still tells."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except UnicodeError:
            raise  # not the stream's fault: the text, which the caller must hear of
        except (OSError, ValueError):  # ValueError: written after the stream was closed
            return len(text)

    def flush(self) -> None:
        try:
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def __getattr__(self, name):  # encoding, isatty(), fileno(), reconfigure(): the stream's
        return getattr(self.stream, name)


def stand_in_for_closed_streams():
    """A command started with stdout or stderr closed: sys.stdout or sys.stderr is None, and
    print() to None writes to stdout instead, a progress bar raises AttributeError. stdout
    becomes `ClosedOutput`; stderr, /dev/null (messages have nowhere to go; the exit status
    still tells). stderr is then wrapped in `MessagesMayBeLost`; the function returned puts
    the stream it wrapped back (a test's or a notebook's capture)."""
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (for the whole run)
    if sys.stdout is None:
        sys.stdout = ClosedOutput()
    if isinstance(sys.stderr, MessagesMayBeLost):
        return lambda: None
    wrapped = sys.stderr = MessagesMayBeLost(sys.stderr)

    def unwrap():
        if sys.stderr is wrapped:
            sys.stderr = wrapped.stream

    return unwrap


# Persian marks that a Persian Windows console (cp1256) lacks, and what Persian readers read
# the same: "ی" printed as \u06cc broke every other word, so it prints as the Arabic yeh that
# cp1256 has; the hamza above a final he ("جداکنندهٔ") is left out, as handwriting often does.
# (cp1256 has the Persian ک, 0x98, and the zero-width non-joiner.)
LOOKALIKES = {"\u06cc": "\u064a", "\u0654": ""}  # Persian yeh -> Arabic yeh; hamza above

# What output that had to escape letters is followed by once, when the command ends (ASCII:
# that output may be the one that cannot hold the rest). Not `chcp 65001`: a Windows console
# gets UTF-8 from Python anyway; a pipe or file gets the ANSI code page, which chcp leaves.
NARROW_CONSOLE_HINT = (
    "speclab: this output's encoding ({encoding}) cannot hold some of these letters, so they "
    "were written as \\u... codes; set PYTHONIOENCODING=utf-8 (or PYTHONUTF8=1) to keep them"
)
_escaped_on: list[str] = []  # the encodings that escaped something, in this process


def _lookalike_or_escape(encoding: str):
    """An encode error handler for a console of this encoding: a letter's lookalike where the
    console has it, else \\u.... (The error itself names only "charmap", not the encoding.)"""
    has = {char: other for char, other in LOOKALIKES.items() if _encodes(other, encoding)}

    def handler(error: UnicodeEncodeError):
        text = error.object[error.start : error.end]
        out = [has[c] if c in has else c.encode("ascii", "backslashreplace").decode() for c in text]
        if any(c not in has for c in text) and encoding not in _escaped_on:
            _escaped_on.append(encoding)
        return "".join(out), error.end

    return handler


def hint_for_a_narrow_console() -> None:
    """After a command that had to escape letters: one line saying why, and how to see them."""
    if _escaped_on and sys.stderr is not None:
        try:
            print(NARROW_CONSOLE_HINT.format(encoding=_escaped_on[0]), file=sys.stderr)
        except (OSError, ValueError):
            pass  # a closed stderr: nobody to tell
        _escaped_on.clear()


def _encodes(text: str, encoding: str) -> bool:
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def escape_what_the_console_cannot_show() -> None:
    """Print \\U0001f642 instead of raising UnicodeEncodeError on a narrow console (and a
    Persian letter's Arabic lookalike where the console has that)."""
    import codecs

    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # absent in Jupyter's streams
        if reconfigure is not None:
            encoding = getattr(stream, "encoding", None) or "utf-8"
            name = f"speclab-lookalike-{encoding}"
            codecs.register_error(name, _lookalike_or_escape(encoding))
            reconfigure(errors=name)


def flush_stdout() -> None:
    """Flush here, so that a closed pipe or a full disk shows up as an error main() reports,
    not at interpreter exit (status 120 and "Exception ignored")."""
    if sys.stdout is not None:  # None: started with stdout closed (`speclab ... >&-`)
        sys.stdout.flush()


def silence_stdout() -> None:
    """Point stdout at /dev/null, so that the flush at exit cannot raise BrokenPipeError again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass  # stdout is not a file descriptor (a notebook, a test's capture)
