"""Answers stay out of handouts: what a handout shares with its answer key.

`answer_leaks(handout, key)` lists what a handout (Markdown) gives away of its key: an
"Answers"/"Solution" heading, a sentence of the key, a table row of the key with its blanks
filled. `check_no_answers(lessons_dir)` runs it on every handout that has a key of the same
name in `answers/`, and `speclab handouts` stops when it finds any.
"""

import re
from pathlib import Path

from speclab.handout_folder import HandoutError, read_text_file

# Headings that open an answer section; they belong in lessons/answers/, not in a handout.
ANSWER_HEADING = re.compile(r"^\s*(answer key|answers?|solutions?)\b", re.IGNORECASE)
MIN_SENTENCE_CHARS = 40  # shorter key sentences ("a) 3 squares.") may repeat a question


def markdown_parser():
    """The Markdown parser of the handouts (CommonMark with tables), shared with the check."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _inline_text(token) -> str:
    """An inline token as the reader sees it: text and code, line breaks as spaces."""
    pieces = [
        " " if child.type in ("softbreak", "hardbreak") else child.content
        for child in token.children or []
    ]
    return _normalise("".join(pieces))


def _blocks(markdown: str) -> dict[str, list]:
    """Headings, sentences of paragraphs and list items, and table rows, as plain text."""
    tokens = markdown_parser().parse(markdown)
    found: dict[str, list] = {"headings": [], "sentences": [], "rows": []}
    row: list[str] | None = None
    for i, token in enumerate(tokens):
        if token.type == "tr_open":
            row = []
        elif token.type == "tr_close" and row is not None:
            found["rows"].append(tuple(row))
            row = None
        elif token.type == "inline":
            plain = _inline_text(token)
            if row is not None:
                row.append(plain)
            elif tokens[i - 1].type == "heading_open":
                found["headings"].append(plain)
            else:
                found["sentences"] += re.split(r"(?<=[.!?])\s+", plain)
    return found


def _is_blank(cell: str) -> bool:
    return not cell or bool(re.fullmatch(r"_+|\?+", cell))


def answer_leaks(handout: str, key: str) -> list[str]:
    """What the handout (Markdown) gives away of its answer key (Markdown); [] if nothing.

    A leak is: a heading that opens an answer section; a sentence of the key (at least
    MIN_SENTENCE_CHARS long) found in the handout; or a key table row that also appears in
    the handout, cell for cell, where the key fills in a cell (handouts leave blanks).
    """
    handout_blocks, key_blocks = _blocks(handout), _blocks(key)
    leaks = [
        f"answer heading {heading!r}"
        for heading in handout_blocks["headings"]
        if ANSWER_HEADING.match(heading)
    ]
    handout_text = _normalise(" ".join(handout_blocks["sentences"] + handout_blocks["headings"]))
    leaks += [
        f"answer-key sentence {sentence!r}"
        for sentence in key_blocks["sentences"]
        if len(sentence) >= MIN_SENTENCE_CHARS and sentence in handout_text
    ]
    handout_rows = set(handout_blocks["rows"])
    leaks += [
        f"answer-key table row {' | '.join(row)!r}"
        for row in key_blocks["rows"]
        if row in handout_rows
        and len(row) > 1
        and not any(map(_is_blank, row))
        and row not in _header_rows(handout)
    ]
    return leaks


def _header_rows(markdown: str) -> set[tuple[str, ...]]:
    """Table header rows: a handout and its key share them by design."""
    tokens = markdown_parser().parse(markdown)
    headers, row, in_head = set(), [], False
    for token in tokens:
        if token.type == "thead_open":
            in_head, row = True, []
        elif token.type == "thead_close":
            in_head = False
            headers.add(tuple(row))
        elif in_head and token.type == "inline":
            row.append(_inline_text(token))
    return headers


def check_no_answers(lessons_dir: Path) -> None:
    """Stop the build if any handout gives away its answer key (same file name in answers/)."""
    problems = []
    for handout in sorted(lessons_dir.glob("*.md")):
        key = lessons_dir / "answers" / handout.name
        if key.exists():
            leaks = answer_leaks(read_text_file(handout), read_text_file(key))
            problems += [f"{handout}: {leak}" for leak in leaks]
    if problems:
        raise HandoutError("handouts give answers away:\n" + "\n".join(problems))
