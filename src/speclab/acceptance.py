"""Greedy acceptance: how much of a guess the checker keeps.

Lessons 01-03 use it on symbols (quiz answers, the letters of the path `ABCDEFG`),
lesson 05 on token ids. One rule for all of them:

    compare the draft with what the target would choose, left to right;
    keep everything up to the first mismatch; at the mismatch the target's own
    choice is appended and the rest of the draft is dropped; if every drafted symbol
    is kept and the target still has a next symbol, that one is appended too.

`accept(draft, target)` is the shared core (the accepted prefix length).
`verify_on_path(prefix, guess, path)` is the symbolic lesson built on it: the target
is a fixed greedy path, and the letters are teaching symbols, not tokens.

Reference: Leviathan, Kalman, Matias (2023), "Fast Inference from Transformers via
Speculative Decoding", Algorithm 1 with greedy (argmax) verification. Left out here:
the sampling rule min(1, p_target / p_draft) (lesson 07, `speclab.sampling`); equality
of symbols is the greedy rule only.
"""

import string
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

CAPITALS = frozenset(string.ascii_uppercase)
DEFAULT_PATH = "ABCDEFG"


class InvalidGuess(ValueError):
    """A prefix or guess that the path lesson does not allow; `.reason` names the case.

    Reasons: "empty_guess", "lowercase", "full_width", "not_capital", "prefix_not_on_path",
    "prefix_complete", "guess_too_long", "bad_path".
    """

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Verdict:
    """What one check of a guess produces (all plain strings of path symbols)."""

    accepted: str  # the leading part of the guess the target agrees with ("" if none)
    added: str  # the target's own next symbol ("" at the end of the path)
    output: str  # prefix + accepted + added: the new output, always a prefix of the path


def _as_symbols(sequence: Sequence | np.ndarray, name: str) -> Sequence:
    """A str, list, tuple or 1-D array as something zip() walks quickly."""
    if isinstance(sequence, np.ndarray):
        if sequence.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got an array of shape {sequence.shape}")
        return sequence.tolist()  # Python scalars compare several times faster than numpy ones
    return sequence


def accept(draft: Sequence | np.ndarray, target: Sequence | np.ndarray) -> int:
    """Length of the longest prefix of `draft` that matches `target` position by position.

    draft:  [k] symbols proposed by the guesser (str, list, tuple or 1-D array)
    target: [k] or [k + 1] symbols the target would choose at the same positions
    Returns an int in 0..min(len(draft), len(target)); later matches after the first
    mismatch do not count (they were guessed in a context the target rejected).
    """
    draft = _as_symbols(draft, "draft")
    target = _as_symbols(target, "target")
    accepted_prefix_length = 0
    for drafted, chosen in zip(draft, target, strict=False):
        if drafted != chosen:
            break
        accepted_prefix_length += 1
    return accepted_prefix_length


SHOWN_CHARS = 40  # the most of a guess a message repeats: a paste of 5,000 letters is cut


def shown_text(text: str) -> str:
    """text as a message repeats it: whole, or cut to SHOWN_CHARS ending in "..." (as
    student_files.cut cuts a cell; cut also escapes, which a message's repr does here)."""
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def as_capitals(text: str) -> str:
    """text as the capitals a student meant: lower-case and full-width letters (a Chinese
    input method's ＡＢＸ) made plain capitals, by NFKC and upper-casing; other
    compatibility forms change too (１ to 1, an ideographic space to a space), so use it only
    where every character is a letter (first_non_capital says which are)."""
    return unicodedata.normalize("NFKC", text).upper()


def is_full_width(char: str) -> bool:
    """A full-width letter (Ａ, ｂ): what a Chinese input method types in full-width mode."""
    return "\uff21" <= char <= "\uff3a" or "\uff41" <= char <= "\uff5a"


def first_non_capital(text: str) -> tuple[int, str] | None:
    """(position from 1, character) of the first character that is not a capital A-Z, or None.
    One that capitals cannot fix (a space, '?') comes before a lower-case or full-width
    letter, so that the advice "use capitals, e.g. ..." is only given when it would work."""
    wrong = [(i, char) for i, char in enumerate(text, start=1) if char not in CAPITALS]
    unfixable = [(i, char) for i, char in wrong if as_capitals(char) not in CAPITALS]
    return (unfixable or wrong or [None])[0]


def _check_letters(text: str, what: str) -> None:
    """Raise InvalidGuess unless every character of `text` is a capital A-Z."""
    found = first_non_capital(text)
    if found is None:
        return
    position, char = found
    if is_full_width(char):
        raise InvalidGuess(
            f"{what} {shown_text(text)!r} has the full-width letter {char!r} at position "
            f"{position}: switch the input method to half-width and type capitals, e.g. "
            f"{shown_text(as_capitals(text))!r}",
            "full_width",
        )
    if char.upper() in CAPITALS:
        raise InvalidGuess(
            f"{what} {shown_text(text)!r} has the lower-case letter {char!r} at position "
            f"{position}: use capitals, e.g. {shown_text(as_capitals(text))!r}",
            "lowercase",
        )
    shown = "a space" if char.isspace() else repr(char)
    raise InvalidGuess(
        f"{what} {shown_text(text)!r} has {shown} at position {position}: "
        "only capital letters A-Z are allowed",
        "not_capital",
    )


def _check_inputs(prefix: str, guess: str, path: str) -> None:
    for value, name in ((prefix, "prefix"), (guess, "guess"), (path, "path")):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if not path:
        raise InvalidGuess("the path is empty: it needs at least one letter", "bad_path")
    _check_letters(path, "path")
    if not guess:
        raise InvalidGuess(
            "the guess is empty: write at least one capital letter to check", "empty_guess"
        )
    _check_letters(guess, "guess")
    _check_letters(prefix, "prefix")
    if prefix.startswith(path) and prefix != path:  # the whole path and more
        raise InvalidGuess(
            f"prefix {shown_text(prefix)!r} is longer than the path {path}: it has "
            f"{len(prefix)} letters, the path {len(path)}",
            "prefix_not_on_path",
        )
    if not path.startswith(prefix):
        where = accept(prefix, path) + 1
        raise InvalidGuess(
            f"prefix {shown_text(prefix)!r} is not a prefix of the path {path}: "
            f"it leaves the path at position {where}",
            "prefix_not_on_path",
        )
    if prefix == path:
        raise InvalidGuess(
            f"prefix {shown_text(prefix)!r} is already the whole path {path}: nothing is left to guess",
            "prefix_complete",
        )
    remaining = len(path) - len(prefix)
    if len(guess) > remaining:
        raise InvalidGuess(
            f"guess {shown_text(guess)!r} has {len(guess)} letters but "
            + (
                f"the path {path} has only {remaining} left after prefix {shown_text(prefix)!r}"
                if prefix
                else f"only {remaining} are on the path {path}"
            ),
            "guess_too_long",
        )


def verify_on_path(prefix: str, guess: str, path: str = DEFAULT_PATH) -> Verdict:
    """Check `guess` as the continuation of `prefix` along the greedy target `path`.

    Any capital letter is a valid guess (X is simply wrong); invalid input raises
    InvalidGuess with a message for its case.
    """
    _check_inputs(prefix, guess, path)
    target = path[len(prefix) :]  # what the target would choose from here on
    accepted_prefix_length = accept(guess, target)
    accepted = guess[:accepted_prefix_length]
    added = target[accepted_prefix_length : accepted_prefix_length + 1]  # "" past the end
    return Verdict(accepted=accepted, added=added, output=prefix + accepted + added)
