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


@pytest.mark.parametrize("bad", [[256], [-1], np.array([256]), np.array([-1])])
def test_a_token_outside_the_vocabulary_is_named_whatever_its_container(bad):
    """-1 would otherwise index the embedding of byte 255 in silence."""
    with pytest.raises(ValueError, match="outside the vocabulary"):
        as_token_list(bad)


def test_control_bytes_are_shown_and_bytes_are_not_taken_for_tokens():
    assert token_str(127) == "\\x7f" and token_str(13) == "\\r" and token_str(32) == " "
    with pytest.raises(TypeError, match="use encode"):
        decode(b"hi")
