import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from speclab.tokenizer import as_token_list, decode, encode, token_str


@given(st.text())
def test_round_trip_any_text(text):
    tokens = encode(text)
    assert all(0 <= t < 256 for t in tokens)
    assert decode(tokens) == text


def test_one_token_per_utf8_byte():
    assert encode("é") == [0xC3, 0xA9]
    assert len(encode("语")) == 3


def test_split_character_shows_replacement():
    tokens = encode("语言")
    assert decode(tokens[:4]) == "语\ufffd"


def test_numpy_input_and_bad_ids():
    assert decode(np.array([104, 105], dtype=np.uint8)) == "hi"
    with pytest.raises(ValueError, match="outside the vocabulary"):
        decode([300])
    with pytest.raises(TypeError, match="integers"):
        as_token_list([1.0])
    with pytest.raises(TypeError, match="integers"):
        as_token_list([True])
    with pytest.raises(TypeError):
        encode(b"bytes")


def test_token_str():
    assert token_str(ord("a")) == "a"
    assert token_str(10) == "\\n"
    assert token_str(0xFF) == "\\xff"


def test_half_a_character_is_named_not_a_codec_traceback():
    """encode("ab\\ud800") had raised Python's UnicodeEncodeError from inside the codec."""
    with pytest.raises(ValueError, match=r"half of a character \(U\+D800 at index 2\)"):
        encode("ab\ud800")
    assert encode("ab\ufffd") == [97, 98, 0xEF, 0xBF, 0xBD]  # the replacement character is fine
