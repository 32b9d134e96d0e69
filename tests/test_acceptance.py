"""Tests for speclab.acceptance: the ABCDEFG table, every invalid case, and properties."""

import string

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from speclab.acceptance import InvalidGuess, Verdict, accept, verify_on_path

PATH = "ABCDEFG"

# The four rows of the lesson table (BRIEF, lesson 02), exactly.
TABLE = [
    ("", "ABX", "AB", "C", "ABC"),
    ("", "ABC", "ABC", "D", "ABCD"),
    ("", "XBC", "", "A", "A"),
    ("ABCD", "EFG", "EFG", "", "ABCDEFG"),
]


@pytest.mark.parametrize(("prefix", "guess", "accepted", "added", "output"), TABLE)
def test_table_rows(prefix, guess, accepted, added, output):
    assert verify_on_path(prefix, guess) == Verdict(accepted, added, output)


def test_verdict_is_frozen():
    verdict = verify_on_path("", "ABX")
    with pytest.raises(AttributeError):
        verdict.output = "Z"  # type: ignore[misc]


def test_default_path_is_abcdefg():
    assert verify_on_path("", "ABX", path="ABCDEFG") == verify_on_path("", "ABX")


def test_other_path():
    assert verify_on_path("K", "IW", path="KIWI") == Verdict("IW", "I", "KIWI")


INVALID = [
    ("", "", "empty_guess", "empty"),
    ("", "abx", "lowercase", "capitals"),
    ("", "AbC", "lowercase", "'ABC'"),
    ("", "A1", "not_capital", "'1'"),
    ("", "A B", "not_capital", "a space"),
    ("", "É", "not_capital", "A-Z"),
    ("ABD", "E", "prefix_not_on_path", "not a prefix"),
    ("X", "B", "prefix_not_on_path", "not a prefix"),
    ("ABCDEFG", "A", "prefix_complete", "whole path"),
    ("ABCD", "EFGH", "guess_too_long", "has only 3 left"),
    ("", "ABCDEFGH", "guess_too_long", "only 7 are on the path ABCDEFG"),
    ("ab", "C", "lowercase", "capitals"),
]


@pytest.mark.parametrize(("prefix", "guess", "reason", "phrase"), INVALID)
def test_invalid_cases_have_their_own_message(prefix, guess, reason, phrase):
    with pytest.raises(InvalidGuess) as info:
        verify_on_path(prefix, guess)
    assert info.value.reason == reason
    assert phrase in str(info.value)
    assert "\n" not in str(info.value)


def test_invalid_guess_is_a_value_error():
    assert issubclass(InvalidGuess, ValueError)


def test_each_invalid_case_has_a_distinct_message():
    first_of_each = {}
    for prefix, guess, reason, _ in INVALID:
        with pytest.raises(InvalidGuess) as info:
            verify_on_path(prefix, guess)
        first_of_each.setdefault(reason, str(info.value))
    assert len(set(first_of_each.values())) == len(first_of_each) == 6


def test_off_path_capitals_are_valid_wrong_guesses():
    assert verify_on_path("", "X") == Verdict("", "A", "A")
    assert verify_on_path("ABCDEF", "Z") == Verdict("", "G", "ABCDEFG")


def test_non_str_is_a_type_error():
    with pytest.raises(TypeError):
        verify_on_path("", ["A"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("draft", "target", "expected"),
    [
        ("ABX", "ABCD", 2),
        ("XBC", "ABCD", 0),
        ("ABC", "ABCD", 3),
        ("", "ABC", 0),
        ("ABCD", "AB", 2),  # never past the end of the target
        ([5, 7, 9], [5, 7, 1, 2], 2),
        ((5, 7), (5, 7, 8), 2),
        (np.array([5, 7, 9]), np.array([5, 7, 9, 4]), 3),
        (np.array([5, 7, 9], dtype=np.int32), [5, 8, 9], 1),
        ([5, 7, 9], np.array([5, 7, 9, 4], dtype=np.int64), 3),
        (["Paris", "56"], ["Paris", "56", "8"], 2),
    ],
)
def test_accept(draft, target, expected):
    result = accept(draft, target)
    assert result == expected
    assert type(result) is int


def test_accept_rejects_2d_arrays():
    with pytest.raises(ValueError, match="1-D"):
        accept(np.zeros((2, 2), dtype=np.int64), [0, 0])


def _first_mismatch_oracle(draft, target):
    # independent oracle: the longest n such that the slices are equal
    n = min(len(draft), len(target))
    while n > 0 and list(draft[:n]) != list(target[:n]):
        n -= 1
    return n


@given(st.lists(st.integers(0, 3), max_size=8), st.lists(st.integers(0, 3), max_size=9))
def test_accept_matches_oracle(draft, target):
    assert accept(draft, target) == _first_mismatch_oracle(draft, target)
    assert accept(np.array(draft, dtype=np.int64), np.array(target, dtype=np.int64)) == (
        _first_mismatch_oracle(draft, target)
    )


valid_calls = st.integers(0, len(PATH) - 1).flatmap(
    lambda n_prefix: st.tuples(
        st.just(PATH[:n_prefix]),
        st.text(alphabet=string.ascii_uppercase, min_size=1, max_size=len(PATH) - n_prefix),
    )
)


@given(valid_calls)
def test_output_is_a_prefix_of_the_path_and_grows_by_accepted_plus_one(call):
    prefix, guess = call
    verdict = verify_on_path(prefix, guess)
    assert PATH.startswith(verdict.output)
    assert verdict.output == prefix + verdict.accepted + verdict.added
    assert guess.startswith(verdict.accepted)
    at_end = len(prefix) + len(verdict.accepted) == len(PATH)
    grown = len(verdict.output) - len(prefix)
    if at_end:
        assert verdict.added == ""
        assert grown == len(verdict.accepted)
    else:
        assert len(verdict.added) == 1
        assert grown == len(verdict.accepted) + 1


@given(valid_calls)
def test_only_the_path_decides_the_output(call):
    # the target's choice never depends on the guess beyond the first mismatch
    prefix, guess = call
    verdict = verify_on_path(prefix, guess)
    m = len(verdict.accepted)
    if m < len(guess):
        tail_changed = guess[: m + 1] + "Q" * (len(guess) - m - 1)
        assert verify_on_path(prefix, tail_changed) == verdict


@given(st.text(max_size=8), st.text(max_size=8))
def test_any_text_gives_a_verdict_or_invalid_guess(prefix, guess):
    try:
        verdict = verify_on_path(prefix, guess)
    except InvalidGuess as error:
        assert str(error)
    else:
        assert PATH.startswith(verdict.output)


def test_a_problem_capitals_cannot_fix_is_named_before_a_lower_case_letter():
    """'a c' was told "use capitals, e.g. 'A C'", advice that fails again on the space; a paste
    of 5,000 letters was repeated whole in the message."""
    from speclab.acceptance import SHOWN_CHARS, first_non_capital

    assert first_non_capital("a c") == (2, " ") and first_non_capital("ab?") == (3, "?")
    assert first_non_capital("aBc") == (1, "a") and first_non_capital("ABC") is None
    with pytest.raises(InvalidGuess, match=r"guess 'a c' has a space at position 2"):
        verify_on_path("", "a c")
    with pytest.raises(InvalidGuess) as refused:
        verify_on_path("", "x" * 5000)
    assert str(refused.value) == (
        f"guess '{'x' * (SHOWN_CHARS - 3)}...' has the lower-case letter 'x' at position 1: "
        f"use capitals, e.g. '{'X' * (SHOWN_CHARS - 3)}...'"
    )


# --- edges a mutation audit found untested -----------------------------------------------


def test_the_edges_of_the_path_checks():
    """A full-width small ａ gets the input-method advice as Ａ does; an empty path is a bad
    path, not a finished prefix; a text of exactly SHOWN_CHARS is shown whole."""
    from speclab.acceptance import SHOWN_CHARS, InvalidGuess, shown_text, verify_on_path

    with pytest.raises(InvalidGuess) as refused:
        verify_on_path("", "\uff41B")
    assert refused.value.reason == "full_width"
    with pytest.raises(InvalidGuess) as refused:
        verify_on_path("", "A", path="")
    assert refused.value.reason == "bad_path"
    assert shown_text("A" * SHOWN_CHARS) == "A" * SHOWN_CHARS
