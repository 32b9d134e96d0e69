"""The `speclab` command: one subcommand per task, each defined in the module it belongs to.

Each subcommand module offers `add_arguments(parser)` and `run(args) -> int` (the exit
status). Bad arguments end with a one-line error (argparse's exit status 2), never a traceback.

For every subcommand, `main` also makes printing safe on any console: a character the
console cannot encode (an emoji on a cp1252 Windows console) is printed escaped, a reader
that goes away (`speclab ... | head -1`) ends the command quietly, and Ctrl-C at any
moment, while the subcommands are still being imported too, prints one line (the streams'
side is `speclab.streams`). This module imports only `os` and `sys` at the top (both loaded
before any code runs), so that an early Ctrl-C already lands in `main`.
"""

import os
import sys

# name -> (module, one-line help); a module is imported only when its subcommand is built.
SUBCOMMANDS = {
    "check-guesses": ("speclab.guesses_report", "check a CSV of guesses against the ABCDEFG path"),
    "demo": ("speclab.demo", "speculative decoding on the shipped model, coloured"),
    "bench": ("speclab.bench_cli", "benchmark: forward cost, speedup per scenario"),
    "train": ("speclab.train_cli", "train the target or draft model in numpy"),
    "handouts": ("speclab.handouts", "build printable handouts (HTML, PDF) from lessons/"),
}

# The command whose messages, argparse's too, speak the learner's language (--lang or the
# environment): lessons 01-03 are in Chinese and Persian too (speclab.argparse_words).
TRANSLATED = "check-guesses"


def build_parser(argv: list[str] | None = None):
    """The argparse parser with every subcommand whose module is built. `argv` (the
    arguments it will parse) serves only to explain an error about a file named "-..."."""
    import argparse  # here, not at the top: see the module docstring
    import importlib
    import textwrap

    from speclab import argparse_words, command_parser

    arguments = sys.argv[1:] if argv is None else argv
    tr = _learner_translation(arguments)  # None: English
    parser = command_parser.parser_class(tr, arguments)(
        prog="speclab",
        description="speclab: the commands of the speclab lessons on speculative decoding "
        "(README, 'The command line'). speclab COMMAND --help tells more.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name != module_name:
                raise
            continue  # not built yet
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(sub)
        said = tr if name == TRANSLATED else None  # None: as written
        if statuses := getattr(module, "EXIT_STATUS", None):  # each command's, then the shared
            shared = argparse_words.SHARED_EXIT_STATUS
            line = argparse_words.EXIT_STATUS_LINE
            if said is not None:
                statuses, shared, line = (said.gettext(t) for t in (statuses, shared, line))
            line = line.format(statuses=statuses, shared=shared)
            if sub.formatter_class is argparse.RawDescriptionHelpFormatter:  # laid out by hand
                line = textwrap.fill(line, 79)
            sub.epilog = f"{sub.epilog}\n\n{line}" if sub.epilog else line
        if said is not None:
            argparse_words.translate_parser(sub, said)
        sub.set_defaults(run=module.run)
    return parser


def _interrupted(argv: list[str]) -> str:
    """ "interrupted", in the learner's language where TRANSLATED speaks it."""
    try:
        from speclab.argparse_words import INTERRUPTED

        tr = _learner_translation(argv)
    except BaseException:  # a second Ctrl-C while the catalogue loads: English it is
        return "interrupted"
    return "interrupted" if tr is None else tr.gettext(INTERRUPTED)


def _learner_translation(argv: list[str]):
    """The catalogue for TRANSLATED's messages when argv runs it in Chinese or Persian (its
    --lang, which argparse lets a student shorten to --l, or else the environment); else None."""
    if TRANSLATED not in argv[:1]:
        return None
    from speclab.i18n import LANGUAGES, resolve, translator

    given = None
    for i, text in enumerate(argv[1:], 1):
        if text == "--":
            break
        name, equals, value = text.partition("=")
        if len(name) > 2 and "--lang".startswith(name) and (equals or i + 1 < len(argv)):
            given = value if equals else argv[i + 1]  # the last one given, as argparse takes
    lang = resolve(given) if given in LANGUAGES else resolve()
    return None if lang == "en" else translator(lang)


class Terminated(KeyboardInterrupt):
    """Stopped by SIGTERM (`kill`, `timeout`) where a command catches it to stop cleanly, as
    `speclab train` and `speclab handouts` do: reported as "interrupted", with SIGTERM's
    status 143."""


def sigterm_stops_cleanly():
    """SIGTERM raises Terminated until the returned function is called, so that a command's
    clean-up runs as after a Ctrl-C; that function puts the earlier handler back. Where no
    handler can be set (no SIGTERM, or not the main thread) nothing changes."""
    import signal  # here, not at the top: see the module docstring

    def terminated(signum, frame):
        raise Terminated

    try:
        previous = signal.signal(signal.SIGTERM, terminated) or signal.SIG_DFL
    except (AttributeError, ValueError, OSError):
        return lambda: None
    return lambda: signal.signal(signal.SIGTERM, previous)


def console() -> int:
    """The `speclab` command: main(), and after a Ctrl-C no traceback from a second one
    while Python shuts down."""
    status = main()
    # not imported afresh here: main() may have stopped before loading it (an early Ctrl-C),
    # and then nothing was escaped to hint at, and an import now would be Ctrl-C's to break
    if (streams := sys.modules.get("speclab.streams")) is not None:
        streams.hint_for_a_narrow_console()
    if status == 130:
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)
    return status


def main(argv: list[str] | None = None) -> int:
    try:
        ctrl_c_seen, restore = _note_ctrl_c()
    except KeyboardInterrupt:  # at once: while `signal` loads
        print("interrupted", file=sys.stderr)
        return 130
    args, unwrap_stderr = None, lambda: None
    try:
        from speclab import streams  # here, not at the top: see the module docstring

        unwrap_stderr = streams.stand_in_for_closed_streams()
        streams.escape_what_the_console_cannot_show()
        parser = build_parser(argv)  # imports every subcommand's module: numpy, pandas...
        if ctrl_c_seen():  # a Ctrl-C that Python dropped (see _note_ctrl_c): stop here
            raise KeyboardInterrupt
        try:
            args = parser.parse_args(argv)
        except SystemExit:  # --help or a bad argument: what argparse printed must get out too
            streams.flush_stdout()
            raise
        if args.command is None:
            parser.print_help()
            streams.flush_stdout()
            return 2
        status = int(args.run(args) or 0)
        streams.flush_stdout()
        if ctrl_c_seen():  # a Ctrl-C that Python dropped (see _note_ctrl_c): still say so
            raise KeyboardInterrupt
        return status
    except KeyboardInterrupt as error:
        _stopping()  # a command's own handler (train's) may have taken the earlier Ctrl-Cs
        print(_interrupted(sys.argv[1:] if argv is None else argv), file=sys.stderr)
        return 143 if isinstance(error, Terminated) else 130
    except BrokenPipeError:
        streams.silence_stdout()
        return 141  # as a command that the closed pipe's SIGPIPE ended
    except OSError as error:  # output to a full disk (`> /dev/full`), or a file no command expected
        streams.silence_stdout()
        from speclab.student_files import printable  # here: see the module docstring

        if given := _too_long_argument(error, sys.argv[1:] if argv is None else argv):
            return bad_argument(f"speclab: {given}: a name in this path is longer than the "
                                f"file system allows ({error.strerror})")  # fmt: skip
        said = _what_failed(error)
        if saved := getattr(args, "saved", None):  # set by a command once its files are written
            said += f"; the files were saved: {', '.join(str(path) for path in saved)}"
        print(printable(f"speclab: {said}"), file=sys.stderr)
        return 1
    except Exception as error:
        # Ctrl-C inside a C extension's import comes out as another error: numpy turns it
        # into "Importing the numpy C-extensions failed" and pandas into ImportError.
        if ctrl_c_seen():
            print("interrupted", file=sys.stderr)
            return 130
        if (missing := _missing_module(error)) is None:
            raise
        print(  # an environment made before a requirement was added, or one half removed
            f"speclab: the Python package {missing!r} is not installed here; install "
            "speclab's requirements again (`make lab`, or `pip install -e .` in this folder)",
            file=sys.stderr,
        )
        return 1
    finally:
        restore()
        unwrap_stderr()


def bad_argument(message: str) -> int:
    """Say what is wrong with an argument that a command checks itself, and return 2, the
    status of a bad argument, also where stderr cannot be written (a full disk): the
    OSError of the message had turned the status into 1, as if the command had failed."""
    from speclab.student_files import printable  # here: see the module docstring

    try:
        print(printable(message), file=sys.stderr)
    except OSError:
        pass
    return 2


def _stopping() -> None:
    """Ignore further Ctrl-Cs: the command is stopping. A command with a handler of its own
    (train saves a checkpoint) took the first ones, so main's handler had seen none and a
    Ctrl-C held down raised again while "interrupted" was printed: a traceback."""
    import signal

    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread
        pass


def as_typed(text: str) -> str:
    """An argument as the user typed it: under an ASCII locale (LC_ALL=C with PYTHONUTF8=0)
    argv keeps the bytes of UTF-8 text as lone surrogates U+DC80..U+DCFF; they are read as
    UTF-8 here. Bytes that are not UTF-8 stay as they were, for the caller to name."""
    if any("\udc80" <= char <= "\udcff" for char in text):
        try:
            return os.fsencode(text).decode("utf-8")
        except (UnicodeError, ValueError):
            pass
    return text


def path_argument(text: str):
    """argparse type for a file or folder: an empty argument ("") is an error, not the
    current folder (which Path("") would silently be)."""
    import argparse
    from pathlib import Path

    from speclab.argparse_words import EMPTY_PATH

    if not text.strip():
        raise argparse.ArgumentTypeError(EMPTY_PATH)
    return Path(text)


def text_path_argument(text: str) -> str:
    """As path_argument, for options that keep their paths as text."""
    path_argument(text)
    return text


def _missing_module(error: BaseException) -> str | None:
    """The module a failed import was missing, also where a library re-raised it as another
    ImportError (pandas: "Unable to import required dependency numpy"); None otherwise."""
    seen = 0
    while error is not None and seen < 10:  # a chain of causes, never a cycle
        if isinstance(error, ModuleNotFoundError) and error.name:
            return error.name.split(".")[0]
        if not isinstance(error, ImportError):
            return None
        error, seen = error.__cause__ or error.__context__, seen + 1
    return None


class importing:
    """`with importing():` around a script's imports: Ctrl-C while numpy loads is one line
    ("interrupted", status 130), not a traceback. numpy may turn the KeyboardInterrupt into
    an ImportError; that too, when a Ctrl-C came, is the Ctrl-C."""

    def __enter__(self):
        self.seen, self.restore = _note_ctrl_c()

    def __exit__(self, kind, error, traceback):
        self.restore()
        # seen() with no error: a Ctrl-C that Python dropped (see _note_ctrl_c)
        if self.seen() or (kind is not None and issubclass(kind, KeyboardInterrupt)):
            print("interrupted", file=sys.stderr)  # as main() and run_script() say it
            sys.exit(130)
        return False


def _too_long_argument(error: OSError, argv: list[str]) -> str | None:
    """The option and path (cut short) of a path too long for the file system, which pathlib
    raises where it asks whether the path exists; None for any other error."""
    import errno  # here: see the module docstring

    if error.errno != errno.ENAMETOOLONG or not error.filename:
        return None
    name = os.fsdecode(error.filename)
    given = [tuple(text.split("=", 1)) for text in argv if text.startswith("--") and "=" in text]
    given += [
        (option, value)
        for option, value in zip(argv[1:], argv[2:], strict=False)
        if option.startswith("--") and "=" not in option
    ]  # fmt: skip  (option values only)
    found = [(option, value) for option, value in given if value and (  # the value, in it, or
        name == value or name.startswith(value.rstrip("/\\") + os.sep)  # a folder on its way
        or value.startswith(name.rstrip("/\\") + os.sep))]  # fmt: skip
    if not found:
        return None
    option, value = max(found, key=lambda pair: len(pair[1]))  # the path nearest the name
    cut = value if len(value) <= 60 else f"{value[:30]}...{value[-20:]}"
    return f"{option} {cut}"


def _what_failed(error: OSError) -> str:
    """An OSError that reached the top, in words: the file it names, or the standard output
    (a full disk with `> /dev/full`, or stdout closed), without the [Errno n] of str(error)."""
    import errno  # here: see the module docstring

    if error.filename:  # read or written: the error says which it could not do
        return f"{error.filename}: {error.strerror or error}"
    if error.errno in (errno.ENOSPC, errno.EIO, errno.EFBIG):
        return f"cannot write the standard output: {error.strerror}"  # commands name their files
    return str(error.strerror or error)


def run_script(main, name: str) -> None:
    """Run a script's main() (the ones in benchmarks/) with the command's manners, then exit.

    As `main` above: unencodable characters escaped, a closed pipe quiet, Ctrl-C one line;
    and an OSError or ValueError (a missing or damaged weights file) one line naming it.
    """
    from speclab import streams

    streams.stand_in_for_closed_streams()
    streams.escape_what_the_console_cannot_show()
    try:
        ctrl_c_seen, restore = _note_ctrl_c()
    except KeyboardInterrupt:  # at once: while `signal` loads
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    restore_sigterm = lambda: None  # noqa: E731  (until the handler below is set)
    try:
        restore_sigterm = sigterm_stops_cleanly()  # `kill` or `timeout`: the clean-up runs
        status = main()
        if sys.stdout is not None:
            sys.stdout.flush()
        if ctrl_c_seen():  # a Ctrl-C that Python dropped (see _note_ctrl_c): still say so
            raise KeyboardInterrupt
    except KeyboardInterrupt as error:
        print("interrupted", file=sys.stderr)
        status = 143 if isinstance(error, Terminated) else 130
    except BrokenPipeError:
        streams.silence_stdout()
        status = 141
    except (OSError, ValueError, TypeError) as error:  # TypeError: a record's field of a wrong kind
        streams.silence_stdout()
        if ctrl_c_seen():  # a Ctrl-C that C code turned into another error
            print("interrupted", file=sys.stderr)
            status = 130
        else:
            from speclab.student_files import printable  # here: see the module docstring

            said = _what_failed(error) if isinstance(error, OSError) else error
            print(printable(f"{name}: {said}"), file=sys.stderr)
            status = 1
    finally:
        restore_sigterm()
        restore()
    streams.hint_for_a_narrow_console()
    sys.exit(status or 0)


def _note_ctrl_c():
    """(seen, restore): Ctrl-C still raises KeyboardInterrupt, and seen() says it came.

    Python runs a signal handler wherever it happens to be, also inside code whose
    exceptions it cannot pass on: a weakref callback of the import machinery, a __del__
    (printed as "Exception ignored in ..." with a traceback, through sys.unraisablehook),
    or Python code that C code ran and then printed what it raised and went on, as
    Cython's noexcept functions do under numpy's import (a bare traceback, through
    sys.excepthook). Either way the KeyboardInterrupt is dropped. While the handler is
    installed, such a dropped Ctrl-C is not printed; the next Ctrl-C raises again, and
    seen() stays true, so that the caller can still stop.
    """
    import signal  # it imports enum: a Ctrl-C can come in here, which the callers catch

    seen, dropped = [], []

    def handler(signum, frame):
        seen.append(signum)
        # raise for the first Ctrl-C, or again if Python dropped it; not for a second one
        # while the first is handled (already stopping)
        if len(seen) == 1 or dropped:
            dropped.clear()
            raise KeyboardInterrupt

    def unraisable(report):
        if seen and isinstance(report.exc_value, KeyboardInterrupt):
            dropped.append(True)
            return
        previous_hook(report)

    def excepthook(kind, value, traceback):
        if seen and isinstance(value, KeyboardInterrupt):
            if traceback is not None and traceback.tb_frame.f_back is None:
                # from the program's top: it escaped a caller's `try` through a gap (a line
                # before it), so Python is ending; say it in the callers' words
                print("interrupted", file=sys.stderr)
                return
            dropped.append(True)  # printed by C code that goes on: the callers carry on
            return
        previous_excepthook(kind, value, traceback)

    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:
        return (lambda: False), (lambda: None)  # someone else's handler (a notebook): keep it
    try:
        signal.signal(signal.SIGINT, handler)
    except ValueError:  # not the main thread
        return (lambda: False), (lambda: None)
    previous_hook, sys.unraisablehook = sys.unraisablehook, unraisable
    previous_excepthook, sys.excepthook = sys.excepthook, excepthook

    def restore():
        signal.signal(signal.SIGINT, previous)
        if sys.unraisablehook is unraisable:
            sys.unraisablehook = previous_hook
        if sys.excepthook is excepthook:
            sys.excepthook = previous_excepthook

    return (lambda: bool(seen)), restore


NOTEBOOK_LINES = 500  # of a command's output that a notebook shows; a terminal shows all
NOTEBOOK_TAIL = 50  # of them from its end, where check-guesses prints the score


def command_in_notebook(argv: list[str], lang: str) -> int:
    """Run `speclab argv` in a notebook and show what it prints, laid out for lang; its status.

    A notebook shows printed text left to right as one paragraph per line, so a Persian
    report came out of order ("ردیف 3: guess 'abx' در جایگاه 1 …" in pieces). Here each
    sentence line takes lang's direction, and each table line (cells apart by two spaces or
    more) and each file title stays left to right with every cell isolated, so the columns
    keep their order under their header as on a console. Errors (stderr) are shown as the
    notebook shows them; what was printed before an error or a Ctrl-C is shown too. A bad
    argument ends in argparse's message and status 2, not in a SystemExit for the notebook
    to show as an exception.
    """
    import contextlib
    import html
    import io
    import re

    from IPython.display import HTML, display

    from speclab.i18n import DIRECTION

    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            status = main(argv)
    except SystemExit as stop:  # --help, or argparse refused an argument (printed on stderr)
        status = stop.code if isinstance(stop.code, int) else 2
    finally:
        lines, printed_lines = [], printed.getvalue().splitlines()
        if len(printed_lines) > NOTEBOOK_LINES:  # 200,000 rows had put 14 MB into a notebook
            from speclab.i18n import translator

            more = translator(lang).gettext(
                "... {count:,} more lines: the same command in a terminal prints them all"
            )
            head, tail = NOTEBOOK_LINES - NOTEBOOK_TAIL, NOTEBOOK_TAIL  # the tail: the score
            printed_lines = [
                *printed_lines[:head],
                more.format(count=len(printed_lines) - NOTEBOOK_LINES),
                *printed_lines[-tail:],
            ]
        for line in printed_lines:
            if line.startswith("== ") or re.search(r"\S {2,}\S", line):
                cells = re.split(r"( {2,})", line)
                text = "".join(c if not c.strip() else f"\u2068{c}\u2069" for c in cells)
                lines.append(f'<div dir="ltr">{html.escape(text) or "&nbsp;"}</div>')
            else:
                lines.append(f'<div dir="{DIRECTION[lang]}">{html.escape(line) or "&nbsp;"}</div>')
        display(HTML(f'<pre lang="{lang}">{"".join(lines)}</pre>'))
    return status


if __name__ == "__main__":
    sys.exit(main())
