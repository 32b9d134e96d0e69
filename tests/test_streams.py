"""The streams a command writes to (speclab.streams), tested on their own; the commands'
behaviour on closed pipes, full disks and narrow consoles is tested in test_cli.py and
test_i18n.py through `speclab.cli.main`."""

import codecs
import errno
import io

import pytest

from speclab import streams


class Broken(io.StringIO):
    def write(self, text):
        raise OSError(errno.EPIPE, "Broken pipe")

    def flush(self):
        raise OSError(errno.ENOSPC, "No space left on device")


def test_messages_may_be_lost_drops_what_cannot_be_written_but_not_bad_text():
    stderr = streams.MessagesMayBeLost(Broken())
    assert stderr.write("a progress bar\n") == len("a progress bar\n")  # dropped, not raised
    stderr.flush()
    closed = io.StringIO()
    closed.close()
    assert streams.MessagesMayBeLost(closed).write("after close") == len("after close")
    narrow = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    with pytest.raises(UnicodeEncodeError):  # the text's fault: the caller must hear of it
        streams.MessagesMayBeLost(narrow).write("\u65e0")
    assert streams.MessagesMayBeLost(narrow).encoding == "ascii"  # the stream's own attributes


def test_closed_output_fails_at_the_first_write():
    with pytest.raises(OSError, match="standard output is closed"):
        streams.ClosedOutput().write("x")
    streams.ClosedOutput().flush()  # nothing to flush: no error at exit


@pytest.mark.parametrize(
    ("encoding", "text", "shown", "escaped"),
    [
        ("cp1256", "\u06cc\u0627", "\u064a\u0627", False),  # Persian yeh -> Arabic yeh
        ("cp1256", "\u0647\u0654", "\u0647", False),  # hamza above left out
        ("cp1252", "\u06cc", "\\u06cc", True),  # no lookalike on a Western console
        ("cp1252", "ok \U0001f642", "ok \\U0001f642", True),
    ],
)
def test_a_narrow_console_gets_lookalikes_or_codes(monkeypatch, encoding, text, shown, escaped):
    monkeypatch.setattr(streams, "_escaped_on", [])
    name = f"speclab-test-{encoding}"
    codecs.register_error(name, streams._lookalike_or_escape(encoding))
    assert text.encode(encoding, errors=name).decode(encoding) == shown
    assert streams._escaped_on == ([encoding] if escaped else [])
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    streams.hint_for_a_narrow_console()
    assert (encoding in err.getvalue()) == escaped and streams._escaped_on == []
