"""The training text and its rows: the Python standard library, copy documents, batches.

Used by speclab.train to make `data/weights/target.npz` and `draft.npz` (lessons 04–07).

Corpus: the Python standard library source of the running interpreter (every Python
install has it; PSF licence), split into training and validation by file. Plain source
alone does not teach a model this small to copy from its context, and copying is what
prompt-lookup speculation feeds on, so a share of the training rows are "copy documents":
a snippet, a separator, then the snippet again, verbatim or with one identifier renamed.
Plain rows may start at a top-level line instead of a random byte (short prompts are file
tops). `context_needs` says how many bytes back a copier must match at each byte of a
piece; `batch` can weigh a verbatim repeat's hard bytes by it (hard_copy_weight), and the
copy benchmarks read the copy test (speclab.copy_metrics) with it.

Every random choice takes the caller's np.random.Generator (the run's, saved in each of its
checkpoints). Left out: BPE (the vocabulary is bytes), and epochs: each row is cut from a
random place, so a run sees some text more than once and some never.
"""

import hashlib
import keyword
import platform
import re
import sysconfig
from pathlib import Path

import numpy as np

from speclab.recipe import TrainConfig


def stdlib_files() -> tuple[Path, list[Path]]:
    """The standard library's .py files (no site-packages), sorted for a fixed order."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts)
    return root, files


def is_validation(relative_name: str) -> bool:
    """About 1 file in 20 goes to validation, by a hash of its name (stable across runs)."""
    return hashlib.sha256(relative_name.encode()).digest()[0] % 20 == 0


def load_corpus(max_bytes: int = 0) -> dict:
    """Train and validation byte arrays, and the record of what went in."""
    root, files = stdlib_files()
    parts = {"train": [], "val": []}
    names = {"train": [], "val": []}
    digest = hashlib.sha256()
    for path in files:
        name = path.relative_to(root).as_posix()
        data = path.read_bytes()
        digest.update(name.encode() + b"\0" + data)
        split = "val" if is_validation(name) else "train"
        parts[split].append(data + b"\n")
        names[split].append(name)
    corpus = {s: np.frombuffer(b"".join(parts[s]), dtype=np.uint8) for s in parts}
    if max_bytes:
        corpus = {s: corpus[s][: max_bytes if s == "train" else max_bytes // 4] for s in corpus}
    corpus["record"] = {
        "source": f"Python {platform.python_version()} standard library, {root.name}/**/*.py",
        "sha256": digest.hexdigest(),
        "train_files": names["train"],
        "val_files": names["val"],
        "train_bytes": int(corpus["train"].size),
        "val_bytes": int(corpus["val"].size),
    }
    return corpus


def other_corpus_note(models, corpus_record: dict) -> str | None:
    """Why this Python's standard library is not the text the models were trained and measured
    on (None if it is, or if their records do not say). The corpus is the running
    interpreter's: on another Python version the held-out functions and copy probes differ,
    and so every copy figure differs from the ones the README quotes."""
    for model in models:
        trained = model.meta.get("corpus") if isinstance(model.meta, dict) else None
        if isinstance(trained, dict) and trained.get("sha256") not in (
            None,
            corpus_record["sha256"],
        ):
            break
    else:
        return None
    return (
        f"this Python's standard library ({corpus_record['source']}) is not the text the "
        f"model was trained and measured on ({trained.get('source', 'another')}): the held-out "
        "functions and copy probes differ, and so do the figures (run with that Python to "
        "compare with the README's)"
    )


SEPARATORS = [b"\n\n", b"\n", b"\n\n\n", b"\n\n# again:\n", b"\n# copy\n", b"\n\n# edited:\n"]
IDENTIFIER = re.compile(rb"\b[A-Za-z_][A-Za-z0-9_]{2,}\b")


def snippet(text: np.ndarray, rng: np.random.Generator, max_len: int) -> bytes:
    """Whole lines of source, 30..max_len bytes, from a random place."""
    start = int(rng.integers(0, text.size - max_len - 1))
    chunk = text[start : start + max_len].tobytes()
    first = chunk.find(b"\n") + 1
    length = int(rng.integers(min(30, max_len // 2), max_len))
    last = chunk.rfind(b"\n", first, first + length) + 1
    piece = chunk[first:last] if last > first else chunk[:length]
    return piece or chunk[:length]


def block(text: np.ndarray, rng: np.random.Generator, max_len: int) -> bytes:
    """A block of source as it stands in a file: from a random line, the lines indented at
    least as deep (and blank lines), up to max_len bytes, dedented so that it starts in column
    0. Its indentation is consistent, as at the top of a file, unlike a cut-out snippet's."""
    start = int(rng.integers(0, text.size - 4 * max_len - 1))
    chunk = text[start : start + 4 * max_len].tobytes()
    lines = chunk[chunk.find(b"\n") + 1 :].split(b"\n")[:-1]
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return snippet(text, rng, max_len)
    indent = len(lines[first]) - len(lines[first].lstrip(b" "))
    kept, size = [], 0
    for line in lines[first:]:
        deep = len(line) - len(line.lstrip(b" "))
        if line.strip() and deep < indent or size + len(line) + 1 > max_len:
            break
        kept.append(line[indent:] if line.strip() else b"")
        size += len(kept[-1]) + 1
    while kept and not kept[-1]:
        kept.pop()
    return b"\n".join(kept) + b"\n" if kept else snippet(text, rng, max_len)


def small_edit(piece: bytes, rng: np.random.Generator) -> bytes:
    """Rename one identifier everywhere in the snippet (a typical edit of code)."""
    names = sorted(set(IDENTIFIER.findall(piece)))
    if not names:
        return piece
    old = names[int(rng.integers(len(names)))]
    new = [old + b"_2", b"new_" + old, old.upper(), old[:1] + b"x" + old[1:]][int(rng.integers(4))]
    return re.sub(rb"\b" + re.escape(old) + rb"\b", new, piece)


LETTERS = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)  # for random names and text
KEEP = {name.encode() for name in keyword.kwlist} | {b"self", b"cls", b"len", b"str", b"int"}


def scramble_names(piece: bytes, rng: np.random.Generator) -> bytes:
    """Every name (but keywords and a few builtins) replaced by random letters, the same
    length and the same everywhere: a text whose names can only be known by copying."""
    names = sorted(set(IDENTIFIER.findall(piece)) - KEEP)
    new = {name: LETTERS[rng.integers(0, 26, len(name))].tobytes() for name in names}
    return IDENTIFIER.sub(lambda match: new.get(match.group(), match.group()), piece)


def few_letters(rng: np.random.Generator, max_len: int) -> bytes:
    """Random lines of 2 to 4 letters (max_len / 2 .. max_len bytes): every short stretch
    recurs many times inside one piece, so the last few bytes do not tell where a copy has
    got to; only a longer match, or keeping one's place, copies it right."""
    letters = rng.choice(LETTERS, int(rng.integers(2, 5)), replace=False)
    length = int(rng.integers(max_len // 2, max_len + 1))
    text = letters[rng.integers(0, len(letters), length)]
    text[rng.random(text.size) < 1 / 24] = ord("\n")
    return text.tobytes()[:-1] + b"\n"


def copy_document(text: np.ndarray, rng: np.random.Generator, max_len: int,
                  cfg: "TrainConfig | None" = None) -> bytes:  # fmt: skip
    """A piece of source, a separator and the piece again (verbatim or with one rename).

    The piece is a snippet cut from anywhere or, with cfg.block_fraction, a block dedented
    to column 0 (its indentation as consistent as a file's). Scrambled copies have random
    names, which only copying can predict; few-letter pieces (cfg.few_letters_fraction) are
    random text of 2-4 letters, which a match of a few bytes cannot copy. Interleaved
    copies put other source between the two, so the repeat's start cannot be foretold from
    the separator: the model learns to copy once a repeat has begun, rather than to repeat
    the last block after every blank line (a loop on free text).
    """
    return b"".join(copy_document_parts(text, rng, max_len, cfg))


def copy_document_parts(text: np.ndarray, rng: np.random.Generator, max_len: int,
                        cfg: "TrainConfig | None" = None) -> tuple[bytes, bytes, bytes, bytes]:  # fmt: skip
    """copy_document's parts: (piece, what stands between, the repeat, the blank line after)."""
    cfg = cfg or TrainConfig()
    use_block = cfg.block_fraction and rng.random() < cfg.block_fraction
    piece = (block if use_block else snippet)(text, rng, max_len)
    if cfg.scramble_fraction and rng.random() < cfg.scramble_fraction:
        piece = scramble_names(piece, rng)
    if cfg.few_letters_fraction and rng.random() < cfg.few_letters_fraction:
        piece = few_letters(rng, max_len)
    again = piece if rng.random() < cfg.verbatim_fraction else small_edit(piece, rng)
    between = SEPARATORS[int(rng.integers(len(SEPARATORS)))]
    if cfg.interleave_fraction and rng.random() < cfg.interleave_fraction:
        between = b"\n" + (block if use_block else snippet)(text, rng, max_len) + between
    return piece, between, again, b"\n\n"


def top_level_line(chunk: bytes) -> int:
    """Where the first line that starts in column 0 begins in chunk (0 if none does).

    Rows that start there see at position 0 what a file's top looks like, as the lessons'
    prompts do; a row cut at a random byte usually starts inside a class or a function, so
    a model trained only on those indents a short prompt's function body one level too deep.
    """
    found = re.search(rb"\n[^\s]", chunk)
    return found.start() + 1 if found else 0


def context_needed(first: bytes, j: int) -> int:
    """How many bytes just before first[j] a copier must match to be sure of first[j]: the
    least n for which every place in first that follows those n bytes holds the same byte.
    The definition, for one byte; `context_needs` gives every byte of first at once."""
    for n in range(1, j + 1):
        key = first[j - n : j]
        following = {first[k] for k in range(n, len(first)) if first[k - n : k] == key}
        if len(following) == 1:
            return n
    return j + 1


def context_needs(first: bytes) -> np.ndarray:
    """context_needed(first, j) for every j at once, [len(first)] int.

    A copier that matched n bytes goes wrong at j only if some place k holds another byte
    after the same n bytes; so it needs one byte more than the longest common ending of
    first[:j] and first[:k] over every k with first[k] != first[j]. suffix[k] carries that
    common length from one j to the next (it grows by one where the bytes before agree).
    """
    data = np.frombuffer(first, dtype=np.uint8)
    suffix = np.zeros(data.size, dtype=np.int64)  # common ending of first[:j] and first[:k]
    needs = np.empty(data.size, dtype=np.int64)
    for j in range(data.size):
        if j:
            suffix[1:] = np.where(data[j - 1] == data[:-1], suffix[:-1] + 1, 0)
            suffix[0] = 0
        other = suffix[data != data[j]]
        needs[j] = 1 + (int(other.max()) if other.size else 0)
    return needs


def batch(text: np.ndarray, n_batch: int, n_seq: int, rng, cfg: "TrainConfig", weighted=False):
    """Inputs and next-byte targets, both [n_batch, n_seq] int64.

    weighted: also each target's loss weight [n_batch, n_seq] float32: cfg.hard_copy_weight
    on the bytes of a verbatim repeat that need cfg.hard_copy_bytes or more bytes of context
    to copy (`context_needs`), 1 elsewhere. The random draws are the same either way.
    """
    rows = np.empty((n_batch, n_seq + 1), dtype=np.int64)
    weights = np.ones((n_batch, n_seq + 1), dtype=np.float32)
    for row in range(n_batch):
        if rng.random() < cfg.copy_fraction:
            data = b""
            max_len = max(8, min(600, n_seq // 2 - 8))
            if cfg.interleave_fraction:
                max_len = max(8, min(400, n_seq // 3 - 8))  # three pieces must fit a row
            while len(data) < n_seq + 1:
                piece, between, again, end = copy_document_parts(text, rng, max_len, cfg)
                start = len(data) + len(piece) + len(between)
                data += piece + between + again + end
                if weighted and again == piece and start < n_seq + 1:
                    hard = context_needs(piece) >= cfg.hard_copy_bytes
                    hard = hard[: n_seq + 1 - start]
                    weights[row, start : start + hard.size][hard] = cfg.hard_copy_weight
            rows[row] = np.frombuffer(data[: n_seq + 1], dtype=np.uint8)
        else:
            start = int(rng.integers(0, text.size - n_seq - 1))
            if cfg.top_level_fraction and rng.random() < cfg.top_level_fraction:
                start += top_level_line(text[start : start + 4096].tobytes())
                start = min(start, text.size - n_seq - 1)
            rows[row] = text[start : start + n_seq + 1]
    if weighted:  # weights[:, i] belongs to the byte rows[:, i], the target of column i - 1
        return rows[:, :-1], rows[:, 1:], weights[:, 1:]
    return rows[:, :-1], rows[:, 1:]
