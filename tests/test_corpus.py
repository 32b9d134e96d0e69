"""speclab.corpus: copy documents of every kind, the context a byte needs, the batches."""

from pathlib import Path

import numpy as np
import pytest

from speclab.corpus import batch, copy_document, small_edit
from speclab.recipe import TrainConfig


def test_copy_documents_repeat_their_snippet():
    rng = np.random.default_rng(0)
    text = np.frombuffer(b"def f(alpha, beta):\n    return alpha + beta\n" * 50, dtype=np.uint8)
    edited = small_edit(b"total = total + value\n", np.random.default_rng(1))
    assert edited != b"total = total + value\n"
    for _ in range(20):
        document = copy_document(text, rng, max_len=120)
        assert len(document) > 30


def test_interleaved_copies_put_other_text_between_the_repeat():
    """With interleave_fraction=1 every copy document is: piece, other source, piece again
    (verbatim_fraction=1: unchanged), so the repeat's start is not foretold by a separator."""
    words = b"".join(f"value_{i} = compute(item_{i}, {i})\n".encode() for i in range(2000))
    text = np.frombuffer(words, dtype=np.uint8)
    cfg = TrainConfig(verbatim_fraction=1.0, interleave_fraction=1.0)
    rng = np.random.default_rng(3)
    for _ in range(20):
        document = copy_document(text, rng, max_len=120, cfg=cfg)
        lines = document.rstrip(b"\n").split(b"\n")
        first = lines[0]
        assert document.count(first) == 2  # the piece and its verbatim repeat
        start, again = document.index(first), document.rindex(first)
        between = document[start + len(first) : again]
        assert any(line.startswith(b"value_") for line in between.split(b"\n")[1:])


def test_scrambled_names_are_random_but_the_same_everywhere():
    from speclab.corpus import scramble_names

    piece = b"def moving_average(values, window):\n    return sum(values[:window]) / window\n"
    out = scramble_names(piece, np.random.default_rng(5))
    assert len(out) == len(piece) and out.startswith(b"def ") and b"return " in out
    assert b"moving_average" not in out and b"values" not in out and b"window" not in out
    # one name, one replacement: the text repeats where the original repeated
    old_words, new_words = piece.split(), out.split()
    pairs = {(a, b) for a, b in zip(old_words, new_words, strict=True)}
    assert len({a for a, _ in pairs}) == len(pairs)


def test_few_letter_pieces_cannot_be_copied_from_the_last_few_bytes():
    from speclab.corpus import copy_document, few_letters
    from speclab.recipe import TrainConfig

    rng = np.random.default_rng(4)
    needs_five = []
    for _ in range(20):
        piece = few_letters(rng, max_len=200)
        assert 100 <= len(piece) <= 200 and piece.endswith(b"\n")
        assert 2 <= len(set(piece) - {ord("\n")}) <= 4
        # a byte needs 5+ bytes of context if some 4 bytes before it recur with another byte after
        for j in range(4, len(piece)):
            key = piece[j - 4 : j]
            after = {piece[k] for k in range(4, len(piece)) if piece[k - 4 : k] == key}
            needs_five.append(len(after) > 1)
    assert np.mean(needs_five) > 0.35  # in code's repeats: 19 % (benchmarks/copy_diagnosis.py)
    text = np.frombuffer(b"def f(x):\n    return x\n" * 200, dtype=np.uint8)
    cfg = TrainConfig(few_letters_fraction=1.0, verbatim_fraction=1.0)
    document = copy_document(text, np.random.default_rng(1), max_len=100, cfg=cfg)
    assert b"return" not in document  # the piece replaced the source
    n = len(document)  # piece, separator, the same piece, a blank line
    assert any(document[:i] == document[n - 2 - i : n - 2] for i in range(50, n // 2))


def test_blocks_are_whole_dedented_lines_with_consistent_indentation():
    from speclab.corpus import block

    source = b"".join(
        f"class C{i}:\n    def m(self, x):\n        y = x * {i}\n        return y\n\n".encode()
        for i in range(300)
    )
    text = np.frombuffer(source, dtype=np.uint8)
    rng = np.random.default_rng(2)
    for _ in range(30):
        piece = block(text, rng, max_len=120)
        lines = piece.rstrip(b"\n").split(b"\n")
        assert lines[0] and not lines[0].startswith(b" ")  # starts in column 0
        assert all(line.startswith(b" ") or not line or line.startswith(b"class")
                   or line.startswith(b"def") or line[:1].isalpha() for line in lines)  # fmt: skip
        # every line is a line of the source, dedented by the first line's indentation
        indent = len(source.split(lines[0])[0].rsplit(b"\n", 1)[-1])
        assert all(b" " * indent + line in source for line in lines if line)
        assert len(piece) <= 120


def test_top_level_rows_start_at_a_line_in_column_0():
    source = b"".join(
        b"class C%d:\n    def f(self):\n        return %d\n\n" % (i, i) for i in range(900)
    )
    text = np.frombuffer(source, dtype=np.uint8)
    cfg = TrainConfig(copy_fraction=0.0, top_level_fraction=1.0)
    inputs, _ = batch(text, 50, 40, np.random.default_rng(0), cfg)
    assert all(row.astype(np.uint8).tobytes().startswith(b"class C") for row in inputs)
    inputs, _ = batch(text, 50, 40, np.random.default_rng(0), TrainConfig(copy_fraction=0.0))
    assert sum(row.astype(np.uint8).tobytes().startswith(b"class C") for row in inputs) < 25


def test_context_needed_is_the_shortest_match_that_settles_the_next_byte():
    from speclab.corpus import context_needed

    text = b"ab_x ab_y cb_x"
    assert context_needed(text, 13) == 3  # "_" and "b_" are followed by x and y; "cb_" by x
    assert context_needed(text, 8) == 4  # "ab_" is followed by x and y; " ab_" by y alone
    assert context_needed(text, 10) == 2  # " " by a and c; "y " by c alone
    assert context_needed(text, 3) == 4  # all 3 bytes before it are not enough: j + 1


def test_context_needs_gives_context_needed_at_every_byte():
    from speclab.corpus import context_needed, context_needs

    rng = np.random.default_rng(0)
    alphabet = np.frombuffer(b"ab \n", dtype=np.uint8)  # few letters: long matches are common
    for _ in range(200):
        text = rng.choice(alphabet, int(rng.integers(1, 50))).tobytes()
        assert context_needs(text).tolist() == [context_needed(text, j) for j in range(len(text))]


@pytest.mark.parametrize("n_seq", [64, 256])  # 64: most repeats are cut at the row's end
def test_weighted_batches_weigh_exactly_the_hard_bytes_of_verbatim_repeats(n_seq):
    import inspect

    from speclab.corpus import context_needed, copy_document_parts

    sources = sorted(Path(inspect.getfile(batch)).parent.glob("*.py"))  # real code, the same
    text = np.frombuffer(b"".join(p.read_bytes() for p in sources), dtype=np.uint8)  # anywhere
    cfg = TrainConfig(copy_fraction=1.0, verbatim_fraction=0.7, interleave_fraction=0.5,
                      block_fraction=0.5, hard_copy_weight=4.0, hard_copy_bytes=4)  # fmt: skip
    weighted = 0
    for seed in range(1, 41):  # batches until enough weighted bytes were checked (one batch of
        # rows of 64 held 3 or 4 when the text changed, about 5 on average: a poor test alone)
        inputs, targets, weights = batch(text, 24, n_seq, np.random.default_rng(seed), cfg,
                                         weighted=True)  # fmt: skip
        plain = batch(text, 24, n_seq, np.random.default_rng(seed), cfg)
        assert (inputs == plain[0]).all() and (targets == plain[1]).all()  # the same draws
        # the same documents again, each byte of a verbatim repeat judged by context_needed
        rng, expected = np.random.default_rng(seed), np.ones((24, n_seq + 1))
        for row in range(24):
            rng.random()  # a copy row or not: always a copy row here
            data = b""
            while len(data) < n_seq + 1:
                piece, between, again, end = copy_document_parts(text, rng, n_seq // 3 - 8, cfg)
                for j in range(len(again) if again == piece else 0):  # renamed: not weighed
                    at = len(data) + len(piece) + len(between) + j
                    if at <= n_seq and context_needed(piece, j) >= 4:
                        expected[row, at] = 4.0
                data += piece + between + again + end
            assert data.startswith(bytes(inputs[row].astype(np.uint8)))
        assert (weights == expected[:, 1:]).all()
        weighted += int((weights == 4.0).sum())
        if weighted > 40:
            break
    assert weighted > 40
