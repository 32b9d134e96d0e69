"""Byte-level tokenizer: every byte value 0..255 is one token (lessons 04–07).

GPT-2 uses byte-pair encoding over these same bytes; speclab stops at the bytes, so the
vocabulary is exactly 256 ids and any UTF-8 text round-trips. A token sequence cut in the
middle of a multi-byte character decodes with U+FFFD (the replacement character) in its
place instead of raising: a model can stop anywhere.

Left out: BPE merges (Sennrich et al. 2016; GPT-2's byte-level variant, Radford et al.
2019), special tokens such as end-of-text, and normalization of the text.
"""

import numpy as np

N_VOCAB = 256


def encode(text: str) -> list[int]:
    """Text -> UTF-8 byte values, one token each."""
    if not isinstance(text, str):
        raise TypeError(f"encode expects str, got {type(text).__name__}")
    try:
        return list(text.encode("utf-8"))
    except UnicodeEncodeError as error:  # a lone surrogate: half of a character
        char = f"U+{ord(text[error.start]):04X}"
        raise ValueError(
            f"the text holds half of a character ({char} at index {error.start}), "
            "which UTF-8 cannot encode: retype or remove it"
        ) from None


def as_token_list(tokens, name: str = "tokens") -> list[int]:
    """A list of ints or a 1-D integer numpy array -> list[int] of ids in 0..255 (checked)."""
    if type(tokens) is list and all(type(t) is int for t in tokens):  # the common case, fast
        if not tokens or (min(tokens) >= 0 and max(tokens) < N_VOCAB):
            return list(tokens)
    if isinstance(tokens, np.ndarray):
        if tokens.ndim != 1 or not np.issubdtype(tokens.dtype, np.integer):
            raise ValueError(
                f"{name} must be a 1-D integer array, got {tokens.dtype} {tokens.shape}"
            )
        tokens = tokens.tolist()
    elif isinstance(tokens, (str, bytes)):
        raise TypeError(f"{name} must be token ids, not {type(tokens).__name__}: use encode(text)")
    try:
        tokens = list(tokens)
    except TypeError:  # "'DecodeResult' object is not iterable" said nothing of what to give
        kind = type(tokens).__name__
        hint = " (its .tokens are token ids)" if hasattr(tokens, "tokens") else ""
        raise TypeError(f"{name} must be a list of token ids, got {kind}{hint}") from None
    for position, token in enumerate(tokens):
        if isinstance(token, bool) or not isinstance(token, (int, np.integer)):
            raise TypeError(f"{name}[{position}] is {token!r}: token ids are integers")
        if not 0 <= token < N_VOCAB:
            raise ValueError(f"{name}[{position}] = {token} is outside the vocabulary 0..255")
    return [int(token) for token in tokens]


def decode(tokens) -> str:
    """Token ids -> text; a split multi-byte character shows as U+FFFD."""
    return bytes(as_token_list(tokens)).decode("utf-8", errors="replace")


def token_str(token: int) -> str:
    """How one token looks on its own: printable ASCII as itself, other bytes escaped."""
    if 32 <= token < 127:
        return chr(token)
    return {10: "\\n", 9: "\\t", 13: "\\r"}.get(token, f"\\x{token:02x}")
