"""Training the target and draft models in numpy, with hand-written backward passes.

Used to make `data/weights/target.npz` and `draft.npz` (lessons 04–07); `speclab train`
runs it. The gradients come from speclab.backprop (each layer's forward and backward side
by side, as in micrograd); this module holds the recipe, the corpus, the optimiser, the
copy metrics, the checkpoints and the command.

Corpus: the Python standard library source of the running interpreter (every Python
install has it; PSF licence), split into training and validation by file. Plain source
alone does not teach a model this small to copy from its context, and copying is what
prompt-lookup speculation feeds on, so a share of the training rows are "copy documents":
a snippet, a separator, then the snippet again, verbatim or with one identifier renamed.

Two optional parts of a recipe act on what the lessons' prompts look like: rows that start at
a top-level line (short prompts are file tops), and an unlikelihood penalty on the model's
own greedy loops (`loop_rows`).

Optimiser: AdamW (Loshchilov & Hutter 2019) with linear warm-up, cosine decay, and
gradient clipping by global norm. Randomness comes from one seeded np.random.Generator
whose state is saved in every checkpoint, so an interrupted run resumes where it was.

Left out: dropout, mixed precision, data parallelism, and BPE (the vocabulary is bytes).
"""

import contextlib
import errno
import hashlib
import json
import keyword
import math
import os
import platform
import re
import sys
import sysconfig
import time
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from speclab.backprop import (
    loss_and_grads,
    loss_and_grads_forward_only,
    token_losses,
    unlikelihood_and_grads,
)
from speclab.cli import path_argument
from speclab.gpt import GPTConfig
from speclab.kv_cache import KVCache
from speclab.report_files import writable_folder
from speclab.student_files import printable
from speclab.weights import check_params, config_problem, flatten, init_params, save, unflatten

# --- the recipe -------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainConfig:
    n_layer: int = 4  # model shape, as in GPTConfig
    n_head: int = 4
    n_embd: int = 128
    n_ctx: int = 1024
    steps: int = 6000  # optimiser steps planned (the schedule spans them)
    batch_tokens: int = 4096  # tokens per step: n_batch * n_seq
    n_seq: int = 256  # stage 1: rows of n_seq bytes, always at positions 0 .. n_seq - 1
    short_steps: int = 2000  # stage 1 length; after it, rows of n_ctx at positions 0 .. n_ctx - 1
    lr: float = 3e-3  # peak learning rate
    min_lr_ratio: float = 0.1  # the cosine ends at lr * min_lr_ratio
    warmup: int = 200  # linear warm-up steps
    weight_decay: float = 0.1  # AdamW decay on matrices (not biases or gains)
    grad_clip: float = 1.0  # global gradient norm limit
    copy_fraction: float = 0.5  # share of rows made of copy documents
    verbatim_fraction: float = 0.5  # share of copies repeated verbatim (the rest: one rename)
    interleave_fraction: float = 0.0  # share of copies with other text between the two
    scramble_fraction: float = 0.0  # share of copies whose names are random letters
    block_fraction: float = 0.0  # share of copied pieces that are whole blocks, dedented
    few_letters_fraction: float = 0.0  # share of copied pieces that are random, of 2-4 letters
    top_level_fraction: float = 0.0  # share of plain rows that start at a top-level line
    loop_rows: int = 0  # rows a step of the model's own greedy text, its loops penalised
    loop_weight: float = 1.0  # the loop penalty's weight beside the cross-entropy
    hard_copy_weight: float = 1.0  # loss weight of a verbatim repeat's hard bytes (1: off)
    hard_copy_bytes: int = 5  # hard: a copier must match this many bytes back or more
    val_every: int = 250  # steps between validation and checkpoint
    average_from: int = 0  # export the mean of the weights at each validation from here (0: off)
    seed: int = 0
    max_corpus_bytes: int = 0  # 0: the whole standard library (smoke runs use a slice)


# Why two stages and no position offsets: a model this small learns to copy (an induction
# head) only after a plateau of about a thousand steps, and the plateau ends sooner when the
# same position ids recur in every row. Rows placed at random offsets over the whole context
# (an earlier recipe) spread the position embeddings thin and showed no copying after 12,000
# steps; rows of 256 always at positions 0..255 copy after about 1,200-1,600 steps, and the
# skill carries over to the full context within a few hundred steps of full-length rows.
# The copy documents of the shipped models: whole blocks (dedented) copied 9 times in 10
# verbatim, half of them with other text between the two, and plain rows that start at a
# top-level line (docs/model-history.md: what each of these changed, measured). The shipped
# target went on from step 9,000 to 13,000 with --set hard_copy_weight=32 (README).
COPYING = dict(copy_fraction=0.5, verbatim_fraction=0.9, interleave_fraction=0.5,
               block_fraction=1.0, top_level_fraction=1.0)  # fmt: skip
RECIPES = {
    "target": TrainConfig(steps=6000, **COPYING),
    "draft": TrainConfig(n_layer=2, n_head=4, n_embd=64, steps=5000, lr=4e-3, **COPYING),
    "smoke": TrainConfig(
        n_layer=1, n_head=2, n_embd=16, n_ctx=64, steps=6, batch_tokens=128, n_seq=32,
        short_steps=3, warmup=2, val_every=3, max_corpus_bytes=200_000,
    ),
}  # fmt: skip


# --- corpus -----------------------------------------------------------------------------


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


def own_loops(params, config: GPTConfig, text: np.ndarray, rng, n_rows: int,
              n_prompt: int = 256, n_new: int = 128):  # fmt: skip
    """The model's own greedy continuations of training text, and where they loop.

    Each row is a prompt of n_prompt / 8 .. n_prompt bytes of training text from a line's
    start (short prompts loop most) and the model's greedy continuation, to n_prompt + n_new
    bytes in all. Returns inputs, targets [n_rows, n_prompt + n_new - 1], penalize, True at
    each byte of a continuation that repeats its own earlier output for 16 bytes or more (a
    "loop" in speclab.scenarios.output_provenance, as `speclab bench` counts it), and the
    prompts' lengths. Copying the prompt is not penalised: prompt lookup feeds on it.
    """
    from speclab.decoding import greedy_decode
    from speclab.scenarios import output_provenance
    from speclab.weights import Model

    model = Model(config, params)
    rows = np.empty((n_rows, n_prompt + n_new), dtype=np.int64)
    penalize = np.zeros((n_rows, n_prompt + n_new - 1), dtype=bool)
    lengths = rng.integers(max(1, n_prompt // 8), n_prompt + 1, size=n_rows)
    for row, length in enumerate(lengths):
        start = int(rng.integers(0, text.size - 2 * n_prompt))
        start += text[start : start + n_prompt].tobytes().find(b"\n") + 1  # a line's start
        prompt = [int(t) for t in text[start : start + length]]
        new = greedy_decode(model, prompt, n_prompt + n_new - length).tokens
        rows[row] = prompt + new
        labels = output_provenance(prompt, new)
        penalize[row, length - 1 :] = [label == "loop" for label in labels]  # targets are shifted
    return rows[:, :-1], rows[:, 1:], penalize, lengths


def loop_penalty(params, config: GPTConfig, cfg: TrainConfig, text: np.ndarray, rng):
    """The loop penalty's gradients (flat, weighted) and the share of the new bytes that loop.

    Near-certain loops give gradients tens of times the cross-entropy's, which would swamp
    it under the shared clip, so the penalty is clipped to cfg.grad_clip on its own first.
    """
    n_prompt, n_new = min(256, cfg.n_ctx // 2), min(128, cfg.n_ctx // 4)  # as the bench's
    inputs, targets, penalize, lengths = own_loops(params, config, text, rng, cfg.loop_rows,
                                                   n_prompt, n_new)  # fmt: skip
    _, grads = unlikelihood_and_grads(params, cfg.n_head, inputs, targets,
                                      np.arange(inputs.shape[1]), penalize)  # fmt: skip
    grads = flatten(grads)
    scale = cfg.loop_weight * min(1.0, cfg.grad_clip / (global_norm(grads) + 1e-6))
    new_bytes = cfg.loop_rows * (n_prompt + n_new) - int(lengths.sum())
    return {name: scale * grad for name, grad in grads.items()}, penalize.sum() / new_bytes


# --- optimiser --------------------------------------------------------------------------


def row_length(step: int, cfg: TrainConfig) -> int:
    """Stage 1 trains on rows of n_seq bytes, stage 2 on rows of the whole context."""
    return min(cfg.n_seq, cfg.n_ctx) if step < cfg.short_steps else cfg.n_ctx


def learning_rate(step: int, cfg: TrainConfig) -> float:
    """Linear warm-up to cfg.lr, then a cosine down to cfg.lr * cfg.min_lr_ratio."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = min(1.0, (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup))
    cosine = 0.5 * (1 + np.cos(np.pi * progress))
    return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * cosine)


def global_norm(flat_grads: dict) -> float:
    return float(
        np.sqrt(sum(float((g.astype(np.float64) ** 2).sum()) for g in flat_grads.values()))
    )


def adamw_step(flat_params, flat_grads, state, step, lr, cfg: TrainConfig):
    """One AdamW update in place; returns the gradient norm before clipping."""
    norm = global_norm(flat_grads)
    clip = min(1.0, cfg.grad_clip / (norm + 1e-6))
    beta1, beta2, eps = 0.9, 0.95, 1e-8
    for name, param in flat_params.items():
        grad = flat_grads[name] * clip
        m, v = state["m"][name], state["v"][name]
        m *= beta1
        m += (1 - beta1) * grad
        v *= beta2
        v += (1 - beta2) * grad * grad
        m_hat = m / (1 - beta1 ** (step + 1))
        v_hat = v / (1 - beta2 ** (step + 1))
        if param.ndim == 2:
            param *= 1 - lr * cfg.weight_decay
        param -= lr * m_hat / (np.sqrt(v_hat) + eps)
    return norm


# --- evaluation -------------------------------------------------------------------------


def validation_bits_per_byte(params, cfg: TrainConfig, val: np.ndarray, n_rows: int = 16):
    """Mean cross-entropy in bits per byte on fixed windows of the validation files."""
    n_seq = min(cfg.n_ctx, 512)
    starts = np.linspace(0, val.size - n_seq - 2, n_rows).astype(np.int64)
    rows = np.stack([val[s : s + n_seq + 1] for s in starts]).astype(np.int64)
    positions = np.arange(n_seq)
    losses = [
        loss_and_grads_forward_only(
            params, cfg.n_head, rows[i : i + 4, :-1], rows[i : i + 4, 1:], positions
        )
        for i in range(0, n_rows, 4)
    ]
    return float(np.mean(losses) / np.log(2))


# The smallest context a recipe may have: copy_probes' snippets are (n_ctx - 4) // 3 bytes at
# most and half that at least, so with n_ctx below 10 they are empty (the copy gaps NaN) or
# cannot be cut at all.
MIN_N_CTX = 10


def copy_probes(val: np.ndarray, n_ctx: int, n: int = 8, far: bool = False) -> list[tuple]:
    """Held-out copy probes: (bytes, first, second), the slices of the two occurrences.

    Each probe is some validation text, a 60..120-byte snippet of whole lines, a blank
    line, and the snippet again. Near probes start the snippet at byte 64; far probes put
    enough text before it that the second occurrence starts at about 3/4 of n_ctx, so a
    model trained on short rows shows whether its copying reaches the whole context.
    """
    rng = np.random.default_rng(20261130)  # fixed: the same probes at every validation
    longest = min(120, (n_ctx - 4) // 3)  # small test models have a small context
    shortest = min(60, longest // 2)
    probes = []
    for _ in range(100 * n):
        if len(probes) == n:
            break
        piece = snippet(val, rng, longest)
        if not shortest <= len(piece) <= longest:
            continue
        lead = min(64, longest) if not far else 3 * n_ctx // 4 - len(piece) - 2
        lead = max(1, min(lead, n_ctx - 2 * len(piece) - 2))
        start = int(rng.integers(0, val.size - lead))
        text = val[start : start + lead].tobytes() + piece + b"\n\n" + piece
        first = slice(lead, lead + len(piece))
        second = slice(len(text) - len(piece), len(text))
        probes.append((text, first, second))
    return probes


def copy_gap(params, n_head: int, probes: list[tuple]) -> dict:
    """Bits per byte on a snippet's first occurrence minus on its repeat (0: no copying).

    Each byte's loss is the model's surprise predicting it from everything before it; a
    model that copies finds the repeat far less surprising than the first occurrence.
    """
    first_bits, second_bits = [], []
    for text, first, second in probes:
        tokens = np.frombuffer(text, dtype=np.uint8).astype(np.int64)
        losses = token_losses(params, n_head, tokens[None, :-1], tokens[None, 1:],
                              np.arange(tokens.size - 1))[0] / np.log(2)  # fmt: skip
        # losses[i] is the surprise of byte i + 1
        first_bits.append(losses[first.start - 1 : first.stop - 1].mean())
        second_bits.append(losses[second.start - 1 : second.stop - 1].mean())
    first, second = float(np.mean(first_bits)), float(np.mean(second_bits))
    return {"first": round(first, 4), "second": round(second, 4), "gap": round(first - second, 4)}


def held_out_functions(
    val: np.ndarray, train: np.ndarray, n: int | None = 8, max_len: int = 400
) -> list[bytes]:
    """Top-level functions from validation files, 120..max_len bytes, unseen in training.

    A held-out file can hold a function that training files hold too, word for word (test
    boilerplate such as `setUpModule`): such a function is left out, since a model may know
    it by heart. n of them, spread evenly over the rest (the copy test); n=None: all.
    """
    text, seen = val.tobytes(), train.tobytes()
    found = re.findall(rb"\ndef [^\n]*\n(?:(?:    [^\n]*|)\n)+", text)
    found = [f[1:].rstrip(b"\n") + b"\n" for f in found if 120 <= len(f) <= max_len]
    found = [f for f in found if f not in seen]
    if n is None:
        return found
    step = max(1, len(found) // n)
    return found[::step][:n]


def copy_test_prompts(functions: list[bytes]) -> list[tuple[list[int], bytes]]:
    """(prompt, what a copier should write next) for each function of the copy test: the
    function, a blank line and its first line; then the rest of the function."""
    pairs = []
    for function in functions:
        first_line = function[: function.index(b"\n") + 1]
        pairs.append((list(function + b"\n" + first_line), function[len(first_line) :]))
    return pairs


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


def copy_score(params, config: GPTConfig, functions: list[bytes]) -> dict:
    """Greedy bytes reproduced when a prompt starts to repeat a function it has just seen.

    Prompt: the function, a blank line, and the function's first line. Counted: how many of
    the remaining bytes greedy decoding reproduces before its first mistake.
    """
    from speclab.gpt import forward, softmax

    copied, lengths, mistakes = [], [], []
    for prompt, rest in copy_test_prompts(functions):
        if len(prompt) + len(rest) > config.n_ctx:
            continue
        cache = KVCache(config, dtype=params["wte"].dtype)
        logits = forward(params, config, prompt, cache)
        n_right, mistake = 0, None
        for expected in rest:
            token = int(np.argmax(logits[-1]))
            if token != expected:
                p = softmax(logits[-1])
                mistake = {"chose": token, "p_chose": round(float(p[token]), 3),
                           "wanted": int(expected), "p_wanted": round(float(p[expected]), 3)}  # fmt: skip
                break
            n_right += 1
            logits = forward(params, config, [token], cache)
        copied.append(n_right)
        lengths.append(len(rest))
        mistakes.append(mistake)
    return {
        "bytes_copied": copied,
        "bytes_to_copy": lengths,
        "first_mistakes": mistakes,  # per function: what greedy chose and wanted, or None
        "fraction_copied": float(np.sum(copied) / max(1, np.sum(lengths))),
        "functions_copied_whole": int(sum(c == n for c, n in zip(copied, lengths, strict=True))),
    }


# --- the run: checkpoints, resume, export -------------------------------------------------


def save_checkpoint(path: Path, params, state, step, rng, cfg, log):
    flat = flatten(params)
    arrays = {f"param/{k}": v for k, v in flat.items()}
    arrays |= {f"m/{k}": v for k, v in state["m"].items()} | {
        f"v/{k}": v for k, v in state["v"].items()
    }
    arrays |= {f"avg/{k}": v for k, v in state.get("avg", {}).items()}  # average_from's sums
    record = {"step": step, "rng": rng.bit_generator.state, "config": asdict(cfg), "log": log}
    tmp = path.with_name(path.name + ".tmp.npz")
    try:
        np.savez(tmp, **arrays, record=np.array(json.dumps(record)))
        tmp.replace(path)  # the old checkpoint stays whole until the new one is
    finally:
        tmp.unlink(missing_ok=True)  # a failed write (disk full, Ctrl-C) leaves nothing behind


def load_checkpoint(path: Path, cfg: TrainConfig, recipe_may_change: bool = False,
                    advice: str = "delete it or use a new --run-dir"):  # fmt: skip
    """Parameters, AdamW state, step, generator and log of a run made with the recipe cfg.

    Raises ValueError naming the problem for a damaged file or one made with another recipe
    (only `steps` may differ, unless recipe_may_change: then only the model's shape must
    match), before any array is put together. Fields a checkpoint predates take their
    defaults, which are the recipe it was made with.
    """
    shape = ("n_layer", "n_head", "n_embd", "n_ctx")
    try:  # unreadable is not damaged: hours of training must not be deleted on bad advice
        path.open("rb").close()
    except OSError as error:
        raise OSError(
            f"cannot read {path} ({error.strerror or error}); nothing was changed"
        ) from None
    try:
        if not zipfile.is_zipfile(path):  # else numpy suggests loading it "unsafely" with pickle
            raise ValueError("not an .npz archive")
        with np.load(path, allow_pickle=False) as archive:
            record = json.loads(str(archive["record"]))
            saved = asdict(TrainConfig()) | record["log"]["config"] | {"steps": cfg.steps}
            if recipe_may_change:
                saved |= {k: v for k, v in asdict(cfg).items() if k not in shape}
            if saved != asdict(cfg):
                changed = sorted(k for k in saved if saved[k] != asdict(cfg).get(k))
                raise RecipeMismatch(
                    f"{path} was made with another recipe (differs in {', '.join(changed) or 'its fields'}); "
                    f"{advice}"
                )
            part = {key: {} for key in ("param", "m", "v", "avg")}
            for name in archive.files:
                if "/" in name:
                    kind, key = name.split("/", 1)
                    part[kind][key] = archive[name]
            rng = np.random.default_rng()
            rng.bit_generator.state = record["rng"]
            step, log = int(record["step"]), record["log"]
            if step < 0:
                raise ValueError(f"its step is {step}")
            if not (isinstance(log.get("history"), list) and isinstance(log.get("seconds"), (int, float))
                    and all(isinstance(entry, dict) for entry in log["history"])):  # fmt: skip
                raise ValueError("its training log is not a log (history, seconds)")
            check_params(part["param"], GPTConfig(*(cfg.__dict__[k] for k in shape)))
            params = unflatten(part["param"], cfg.n_layer)
            flat = flatten(params)
            for kind in ("m", "v"):
                if set(part[kind]) != set(flat):
                    raise ValueError(f"its AdamW state {kind!r} does not match the parameters")
            for name, value in flat.items():
                for kind in ("m", "v"):
                    if part[kind][name].shape != value.shape:
                        raise ValueError(f"{kind}/{name} has shape {part[kind][name].shape}")
                    if part[kind][name].dtype != value.dtype:
                        raise ValueError(f"{kind}/{name} has dtype {part[kind][name].dtype}")
            count = log.get("average", {}).get("count", 0)
            if (
                bool(part["avg"]) != bool(count)
                or part["avg"]
                and (
                    set(part["avg"]) != set(flat)
                    or any(part["avg"][k].shape != v.shape for k, v in flat.items())
                )
            ):
                raise ValueError("its running average of the weights does not match the parameters")
    except RecipeMismatch as error:
        raise ValueError(str(error)) from None
    except (OSError, EOFError, KeyError, TypeError, ValueError, AttributeError, RecursionError,
            json.JSONDecodeError, zipfile.BadZipFile) as error:  # fmt: skip
        # RecursionError: a record nested deeper than json.loads can follow
        raise ValueError(
            f"{path} is damaged or not a speclab training checkpoint ({error}); {advice}"
        ) from None
    state = {"m": part["m"], "v": part["v"]} | ({"avg": part["avg"]} if part["avg"] else {})
    return params, state, step, rng, log


def _is_weights_file(path: Path) -> bool:
    from speclab.weights import META_KEY

    try:
        with zipfile.ZipFile(path) as archive:
            return f"{META_KEY}.npy" in archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def _start_from_weights(path: Path, cfg: TrainConfig, config: GPTConfig):
    """Step 0 of this recipe from a model's weights (no optimiser state: AdamW starts empty)."""
    from speclab.weights import load

    model = load(path, dtype=np.float32)
    params = model.params
    if model.config != config:
        params = grown(params, model.config, config, np.random.default_rng(cfg.seed), path)
    state = {key: {k: np.zeros_like(v) for k, v in flatten(params).items()} for key in "mv"}
    start = {"weights": str(path), "trained_steps": model.meta.get("trained_steps"),
             "val_bits_per_byte": model.meta.get("val_bits_per_byte"),
             "n_layer": model.config.n_layer}  # fmt: skip
    log = {"config": asdict(cfg), "history": [], "seconds": 0.0, "started_from": start}
    return params, state, 0, np.random.default_rng(cfg.seed), log


def grown(params, old: GPTConfig, new: GPTConfig, rng, path: Path = Path("the weights")):
    """A deeper model that computes exactly what params compute: new blocks go on top.

    Each new block starts as GPT-2 initialises one, except that its two output projections
    (attention and MLP) are zero, so it adds nothing to the residual stream until training
    moves them. Only n_layer may grow; the width, heads and context must match.
    """
    same_but_depth = (old.n_head, old.n_embd, old.n_ctx, old.n_vocab) == (
        new.n_head, new.n_embd, new.n_ctx, new.n_vocab)  # fmt: skip
    if not same_but_depth or new.n_layer < old.n_layer:
        raise ValueError(f"{path} holds a model of another shape ({old}); this recipe trains "
                         f"{new} (only more layers can be added to a trained model)")  # fmt: skip
    fresh = init_params(new, rng, dtype=params["wte"].dtype)
    for block in fresh["h"][old.n_layer :]:
        for part in ("attn", "mlp"):
            block[part]["c_proj"]["w"][:] = 0
    return {**params, "h": list(params["h"]) + fresh["h"][old.n_layer :]}


class RecipeMismatch(Exception):
    """A checkpoint made with another recipe (kept apart from damage in load_checkpoint)."""


def train(cfg: TrainConfig, run_dir: Path, out: Path | None = None, max_minutes: float = 0,
          progress: bool = True, stop_at: int = 0, init_from: Path | None = None) -> dict:  # fmt: skip
    """Train (or resume) in run_dir; write the weights to out. Returns the training record.

    stop_at: stop after this step (with a checkpoint) although the schedule spans cfg.steps,
    so that two recipes can be compared at equal steps and either run resumed later.
    init_from: a new run_dir starts from another run's checkpoint (weights, AdamW state,
    step, generator and history) and goes on with this recipe; the log records what changed.
    Given a weights file instead (no optimiser state), the run starts at step 0 from them;
    a model with fewer layers than the recipe is grown first (`grown`).
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    with _only_run_in(run_dir):
        return _train(cfg, run_dir, out, max_minutes, progress, stop_at, init_from)


@contextlib.contextmanager
def _only_run_in(run_dir: Path):
    """One training at a time in run_dir: a second one would overwrite the first's checkpoints.
    The lock (an flock on run_dir/.lock) ends with the process, however it ends. On systems
    without fcntl (Windows) nothing is locked."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    lock = run_dir / ".lock"
    try:  # no O_TRUNC, O_NOFOLLOW: a file or link put there is left as it is, and so is its
        # target; O_NONBLOCK: a FIFO put there fails at once instead of waiting for a reader
        fd = os.open(lock, os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK, 0o666)
    except OSError:
        if lock.is_symlink() or lock.exists() and not lock.is_file():
            kind = "a symbolic link" if lock.is_symlink() else "not a file"
            raise ValueError(f"{lock} is {kind}; training keeps its lock file there: remove it, "
                             "or give another --run-dir") from None  # fmt: skip
        yield  # a read-only folder: nothing can write checkpoints there either
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno not in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES):
                yield  # a file system without locks (some network or FUSE mounts)
                return
            raise ValueError(
                f"another training is running in {run_dir}; wait for it to end, or give "
                "another --run-dir"
            ) from None
        yield
    finally:
        os.close(fd)


def _train(cfg, run_dir, out, max_minutes, progress, stop_at, init_from) -> dict:
    from tqdm.auto import tqdm

    checkpoint = run_dir / "checkpoint.npz"
    config = GPTConfig(cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.n_ctx)
    corpus = load_corpus(cfg.max_corpus_bytes)
    for split, least in (("train", 8 * cfg.n_ctx + 4096), ("val", 2 * cfg.n_ctx + 1024)):
        if corpus[split].size < least:  # rows, copy documents and probes cut from it must fit
            raise ValueError(f"the {split} text is {corpus[split].size:,} bytes; this recipe needs "
                             f"at least {least:,} (raise max_corpus_bytes)")  # fmt: skip
    functions = held_out_functions(corpus["val"], corpus["train"])
    probes = {
        "near": copy_probes(corpus["val"], cfg.n_ctx),
        "far": copy_probes(corpus["val"], cfg.n_ctx, far=True),
    }
    if checkpoint.exists():
        params, state, step, rng, log = load_checkpoint(checkpoint, cfg)  # only steps may change
        log["config"] = asdict(cfg)
    elif init_from is not None and _is_weights_file(init_from):
        params, state, step, rng, log = _start_from_weights(init_from, cfg, config)
    elif init_from is not None:
        params, state, step, rng, log = load_checkpoint(
            init_from, cfg, recipe_may_change=True,
            advice="give --init-from a run's checkpoint.npz or a weights file of this shape",
        )  # fmt: skip
        before = asdict(TrainConfig()) | log["config"]
        changed = {k: [before[k], v] for k, v in asdict(cfg).items() if before[k] != v}
        log.setdefault("recipe_changes", []).append({"at_step": step, "changed": changed})
        log["config"] = asdict(cfg)
        state.pop("avg", None)  # a new run keeps its own average of the weights, if any
        log.pop("average", None)
    else:
        rng = np.random.default_rng(cfg.seed)
        params = init_params(config, rng, dtype=np.float32)
        state = {key: {k: np.zeros_like(v) for k, v in flatten(params).items()} for key in "mv"}
        step, log = 0, {"config": asdict(cfg), "history": [], "seconds": 0.0}
    flat_params = flatten(params)  # views into params: updates in place reach both
    started_at_step = step
    started = time.perf_counter()
    seconds_before = log["seconds"]
    # disable only to turn the bar off: an explicit disable=False would override TQDM_DISABLE=1
    quiet = {} if progress else {"disable": True}
    bar = tqdm(total=cfg.steps, initial=step, desc="train", unit="step", **quiet)
    loss_ema = loop_ema = None  # loop_ema: the share of its own new bytes that loop
    last_step = min(cfg.steps, stop_at) if stop_at else cfg.steps
    weighted = cfg.hard_copy_weight != 1.0  # 1: the plain mean, as before the option
    try:  # the bar closed on the way out, Ctrl-C too: not redrawn after "interrupted"
        while step < last_step:
            n_seq = row_length(step, cfg)
            n_batch = max(1, cfg.batch_tokens // n_seq)
            inputs, targets, *weights = batch(corpus["train"], n_batch, n_seq, rng, cfg, weighted)
            positions = np.arange(n_seq)  # always from 0: no offsets (see RECIPES)
            with np.errstate(over="ignore", invalid="ignore"):  # a diverged run is stopped below
                loss, grads = loss_and_grads(
                    params, cfg.n_head, inputs, targets, positions, *weights
                )
            if not math.isfinite(loss):
                bar.close()  # the message on a line of its own
                raise ValueError(
                    _diverged(step, f"the loss became {loss}", learning_rate(step, cfg), checkpoint)
                )
            flat_grads = flatten(grads)
            if cfg.loop_rows:  # unlikelihood on the model's own loops (Welleck et al. 2019)
                loop_grads, looped = loop_penalty(params, config, cfg, corpus["train"], rng)
                for name, grad in loop_grads.items():
                    flat_grads[name] = flat_grads[name] + grad
                loop_ema = looped if loop_ema is None else 0.9 * loop_ema + 0.1 * looped
            lr = learning_rate(step, cfg)
            with np.errstate(over="ignore", invalid="ignore"):
                norm = adamw_step(flat_params, flat_grads, state, step, lr, cfg)
            if not all(np.isfinite(value).all() for value in flat_params.values()):
                bar.close()
                raise ValueError(
                    _diverged(step, "the weights became infinite or NaN", lr, checkpoint)
                )
            step += 1
            loss_ema = loss if loss_ema is None else 0.95 * loss_ema + 0.05 * loss
            bar.update(1)
            bar.set_postfix(loss=f"{loss_ema:.3f}", lr=f"{lr:.1e}")
            elapsed = seconds_before + time.perf_counter() - started
            out_of_time = max_minutes and time.perf_counter() - started > max_minutes * 60
            if step % cfg.val_every == 0 or step == last_step or out_of_time:
                entry = {
                    "step": step,
                    "seconds": round(elapsed, 1),
                    "train_loss_ema": round(loss_ema, 4),
                    "grad_norm": round(norm, 3),
                } | measure(params, cfg, config, corpus["val"], probes, functions)
                if loop_ema is not None:
                    entry["own_loop_share_ema"] = round(float(loop_ema), 3)
                if cfg.average_from and step >= cfg.average_from:
                    add_to_average(state, log, flat_params, step)
                    mean = averaged(state, log, cfg.n_layer)
                    entry["average"] = measure(mean, cfg, config, corpus["val"], probes, functions)
                log["history"].append(entry)
                log["seconds"] = elapsed
                save_checkpoint(checkpoint, params, state, step, rng, cfg, log)
                shown = {k: v for k, v in entry.items() if k not in ("copy", "average")}
                shown["copied"] = entry["copy"]["bytes_copied"]
                if "average" in entry:
                    shown["average_copied"] = entry["average"]["copy"]["bytes_copied"]
                bar.write(json.dumps(shown))
                if out is not None:
                    export(params, config, cfg, corpus["record"], log, out, state)
            if out_of_time:
                break
    finally:
        bar.close()
    if step == started_at_step and log["history"]:
        # the checkpoint was already at or past the last step: export it as it is
        until = f"--stop-at {stop_at}" if stop_at and stop_at < cfg.steps else f"steps={cfg.steps}"
        exported = f", exported to {out}" if out is not None else ""
        bar.write(f"checkpoint already at step {step} ({until}): nothing to train{exported}")
        if out is not None:
            export(params, config, cfg, corpus["record"], log, out, state)
    return log


def _diverged(step: int, what: str, lr: float, checkpoint: Path) -> str:
    kept = (
        f"{checkpoint} (the last validation's) is kept"
        if checkpoint.exists()
        else "no checkpoint was saved"
    )
    return (
        f"training diverged at step {step + 1}: {what} "
        f"(learning rate {lr:.3g}); {kept}; try a lower --set lr"
    )


def measure(params, cfg: TrainConfig, config: GPTConfig, val, probes, functions) -> dict:
    """What each validation records: held-out bits per byte, copy gaps and the copy test."""
    return {
        "val_bits_per_byte": round(validation_bits_per_byte(params, cfg, val), 4),
        "copy_gap": copy_gap(params, cfg.n_head, probes["near"])["gap"],
        "copy_gap_far": copy_gap(params, cfg.n_head, probes["far"])["gap"],
        "copy": copy_score(params, config, functions),
    }


# Averaging the weights (Polyak averaging; "stochastic weight averaging", Izmailov et al.
# 2018): with average_from, each validation from that step on adds the weights to a running
# sum, kept in the checkpoint, and the export is their mean. Late in a schedule the weights
# wander around a minimum; their mean sits nearer its middle. For the shipped target it was
# the mean that copied whole functions (docs/model-history.md, "Averaging the weights").


def add_to_average(state: dict, log: dict, flat_params: dict, step: int):
    """Add the weights at this step to the running sum (float64) and count them in the log."""
    sums = state.setdefault(
        "avg", {k: np.zeros(v.shape, np.float64) for k, v in flat_params.items()}
    )
    for name, value in flat_params.items():
        sums[name] += value
    average = log.setdefault("average", {"first_step": step, "count": 0})
    average["count"] += 1
    average["last_step"] = step


def averaged(state: dict, log: dict, n_layer: int) -> dict:
    """The mean of the weights added so far, in the weights' own dtype."""
    count = log["average"]["count"]
    dtype = state["m"][next(iter(state["m"]))].dtype
    return unflatten({k: (s / count).astype(dtype) for k, s in state["avg"].items()}, n_layer)


def export(params, config, cfg, corpus_record, log, out: Path, state: dict | None = None):
    """Save the weights with their record; with a running average (average_from), its mean
    and the mean's measurements instead of the last step's."""
    last = log["history"][-1] if log["history"] else {}
    averaging = state is not None and "avg" in state and "average" in last
    if averaging:
        params = averaged(state, log, cfg.n_layer)
        last = last | last["average"]
    meta = {
        "recipe": asdict(cfg),
        "corpus": corpus_record | {"licence": "PSF License (Python standard library source)"},
        "trained_steps": last.get("step", 0),
        "training_seconds": round(log["seconds"], 1),
        "val_bits_per_byte": last.get("val_bits_per_byte"),
        "copy_gap": last.get("copy_gap"),
        "copy_gap_far": last.get("copy_gap_far"),
        "copy": last.get("copy"),
        "history": [
            {k: v for k, v in e.items() if k != "copy"}
            | (
                {"average": {k: v for k, v in e["average"].items() if k != "copy"}}
                if "average" in e
                else {}
            )
            for e in log["history"]
        ],
        "averaged": log["average"] | {"every": cfg.val_every} if averaging else None,
        "recipe_changes": log.get("recipe_changes", []),
        "started_from": log.get("started_from"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "command": "speclab train " + " ".join(sys.argv[2:]) if sys.argv[1:2] == ["train"] else "",
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    save(out, params, config, meta)


# --- command line -------------------------------------------------------------------------


def add_arguments(parser):
    parser.add_argument("recipe", choices=sorted(RECIPES), help="which model to train")
    parser.add_argument("--run-dir", type=path_argument, default=None,
                        help="checkpoint folder (default runs/RECIPE); an existing one resumes")  # fmt: skip
    parser.add_argument("--out", type=path_argument, default=None,
                        help="weights file to write at every checkpoint (default: none)")  # fmt: skip
    parser.add_argument("--steps", type=int, default=None, help="override the recipe's steps")
    parser.add_argument(
        "--max-minutes",
        type=float,
        default=0,
        help="stop (with a checkpoint) after this many minutes of this sitting",
    )
    parser.add_argument(
        "--stop-at", type=int, default=0, metavar="STEP",
        help="stop at this step (the schedule still spans --steps): short runs to compare recipes",
    )  # fmt: skip
    parser.add_argument(
        "--set", action="append", default=[], metavar="FIELD=VALUE",
        help="change one field of the recipe, e.g. --set short_steps=0 (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--init-from", type=path_argument, default=None, metavar="CHECKPOINT",
        help="start a new --run-dir from another run's checkpoint, or at step 0 from a weights "
        "file (one with fewer layers than the recipe grows: new layers on top, starting as the identity)",
    )  # fmt: skip
    parser.add_argument(
        "--smoke", action="store_true", help="the tiny recipe, a few steps (for tests)"
    )


def with_overrides(cfg: TrainConfig, settings: list[str]) -> TrainConfig:
    """The recipe with --set FIELD=VALUE changes applied; a clear error for a bad one."""
    fields = asdict(cfg)
    changes = {}
    for setting in settings:
        name, sep, text = setting.partition("=")
        name = name.strip()
        if not sep or name not in fields:
            raise ValueError(
                f"--set {setting!r}: expected FIELD=VALUE with FIELD one of {', '.join(fields)}"
            )
        kind = type(fields[name])
        try:
            value = float(text) if kind is float or "e" in text.lower() else int(text)
        except ValueError:
            value = None
        if value is None or not math.isfinite(value) or kind is int and value != int(value):
            raise ValueError(f"--set {setting!r}: {text.strip()!r} is not a valid {kind.__name__}"
                             + (" (a whole number)" if kind is int else ""))  # fmt: skip
        changes[name] = kind(value)
    cfg = TrainConfig(**(fields | changes))
    positive = ("n_layer", "n_head", "n_embd", "n_ctx", "steps", "batch_tokens", "n_seq",
                "val_every", "lr")  # fmt: skip
    for name in positive:
        if getattr(cfg, name) <= 0:
            raise ValueError(f"--set {name}={getattr(cfg, name)}: must be above 0")
    if cfg.n_ctx < MIN_N_CTX:
        raise ValueError(f"--set n_ctx={cfg.n_ctx}: must be at least {MIN_N_CTX}, the room "
                         "a copy probe needs (text, a snippet, a blank line, the snippet "
                         "again)")  # fmt: skip
    if cfg.n_seq > cfg.n_ctx:  # else stage 1 would silently train on rows of n_ctx
        raise ValueError(f"--set: n_seq={cfg.n_seq} (stage 1's row length) is longer than "
                         f"the context, n_ctx={cfg.n_ctx}; --set n_seq={cfg.n_ctx} "
                         "or less")  # fmt: skip
    fractions = ("copy_fraction", "verbatim_fraction", "interleave_fraction", "scramble_fraction",
                 "block_fraction", "top_level_fraction", "few_letters_fraction")  # fmt: skip
    if not 0 <= cfg.loop_rows <= 64 or cfg.loop_weight < 0:
        raise ValueError(f"--set loop_rows={cfg.loop_rows}, loop_weight={cfg.loop_weight}: "
                         "loop_rows must be 0 to 64 (each is a greedy continuation, every step), "
                         "loop_weight not negative")  # fmt: skip
    for name in (*fractions, "min_lr_ratio"):
        if not 0 <= getattr(cfg, name) <= 1:
            raise ValueError(f"--set {name}={getattr(cfg, name)}: must be between 0 and 1")
    if not 0 < cfg.hard_copy_weight <= 10_000 or cfg.hard_copy_bytes < 1:
        raise ValueError(f"--set hard_copy_weight={cfg.hard_copy_weight}, hard_copy_bytes="
                         f"{cfg.hard_copy_bytes}: the weight must be above 0 and at most "
                         "10,000 (1: off), the bytes at least 1")  # fmt: skip
    for name in (
        "weight_decay",
        "warmup",
        "short_steps",
        "max_corpus_bytes",
        "seed",
        "average_from",
    ):
        if getattr(cfg, name) < 0:
            raise ValueError(f"--set {name}={getattr(cfg, name)}: must not be negative")
    if cfg.grad_clip <= 0:
        raise ValueError(f"--set grad_clip={cfg.grad_clip}: must be above 0 (the largest "
                         "gradient norm let through; 1.0 in every recipe)")  # fmt: skip
    problem = config_problem(GPTConfig(cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.n_ctx))
    if problem:  # trained for hours, then refused by every loader: say so before the first step
        raise ValueError(f"--set: speclab cannot load a model of this shape ({problem})")
    return cfg


def _leads_into_a_loop(path: Path) -> bool:
    """Whether path is, or goes through, a symbolic link loop. Such a path neither exists nor
    can be made: mkdir says only "File exists", and pathlib's resolve() raises RuntimeError."""
    try:
        path.stat()
    except OSError as error:
        return error.errno == errno.ELOOP
    return False


def _out_problem(out: Path, run_dir: Path) -> str | None:
    """Why the weights cannot be written to out (checked before hours of training), or None."""
    if out.resolve() == (run_dir / "checkpoint.npz").resolve():
        return f"--out {out} is the run's checkpoint; the weights need a file of their own"
    if out.is_dir() or out.resolve() == run_dir.resolve():
        return f"--out {out} is a folder; give a file name, e.g. {out / 'target.npz'}"
    if out.suffix != ".npz":
        return f"--out {out}: a weights file's name ends in .npz, e.g. {out.with_suffix('.npz')}"
    if out.exists() and not _is_weights_file(out):
        return f"--out {out} exists and is not a speclab weights file; it is left as it is"
    try:
        writable_folder(out.parent, name=f"--out {out}: its folder {out.parent}")
    except OSError as error:
        return str(error)
    return None


def run(args) -> int:
    name = "smoke" if args.smoke else args.recipe
    cfg = RECIPES[name]
    if args.steps is not None:
        if args.steps < 1:
            print("speclab train: --steps must be at least 1", file=sys.stderr)
            return 2
        cfg = TrainConfig(**(asdict(cfg) | {"steps": args.steps}))
    if args.smoke and args.recipe != "smoke":
        print(printable(f"speclab train: --smoke trains the tiny smoke recipe, not {args.recipe!r}; "
              "drop --smoke or name the recipe 'smoke'"), file=sys.stderr)  # fmt: skip
        return 2
    if not args.max_minutes >= 0:  # also nan
        print("speclab train: --max-minutes must be positive (0: no limit)", file=sys.stderr)
        return 2
    if args.stop_at < 0:
        print("speclab train: --stop-at must be a step number (0: no early stop)", file=sys.stderr)
        return 2
    try:
        cfg = with_overrides(cfg, args.set)
    except ValueError as error:
        print(printable(f"speclab train: {error}"), file=sys.stderr)
        return 2
    run_dir = args.run_dir or Path("runs") / name
    for path in (run_dir, run_dir / "checkpoint.npz", args.out, args.init_from):
        if path is not None and _leads_into_a_loop(path):
            loop = f"{path} leads into a symbolic link loop (a link that points back to itself)"
            print(printable(f"speclab train: {loop}; remove the link or give another path"),
                  file=sys.stderr)  # fmt: skip
            return 2
    if run_dir.is_symlink() and not run_dir.exists():  # mkdir would say only "File exists"
        print(printable(f"speclab train: --run-dir {run_dir} is a symbolic link to "
              f"{os.readlink(run_dir)}, which does not exist; make that folder or give another "
              "--run-dir"), file=sys.stderr)  # fmt: skip
        return 2
    if run_dir.exists() and not run_dir.is_dir():
        print(
            printable(f"speclab train: --run-dir {run_dir} is a file; give a folder"),
            file=sys.stderr,
        )
        return 2
    if args.init_from is not None and args.init_from.is_dir():
        inside = args.init_from / "checkpoint.npz"
        hint = f"; its checkpoint is {inside}" if inside.is_file() else ""
        print(printable(f"speclab train: --init-from {args.init_from} is a folder; give a checkpoint.npz "
              f"or a weights file{hint}"), file=sys.stderr)  # fmt: skip
        return 2
    if args.init_from is not None and not args.init_from.is_file():
        print(
            printable(f"speclab train: --init-from {args.init_from}: no such checkpoint"),
            file=sys.stderr,
        )
        return 2
    if args.init_from is not None and (run_dir / "checkpoint.npz").exists():
        print(printable(f"speclab train: {run_dir} already has a checkpoint, which resumes; "
              "--init-from starts a new --run-dir"), file=sys.stderr)  # fmt: skip
        return 2
    if args.out is not None:
        problem = _out_problem(args.out, run_dir)
        if problem:
            print(printable(f"speclab train: {problem}"), file=sys.stderr)
            return 2
    try:
        log = train(cfg, run_dir, out=args.out, max_minutes=args.max_minutes, stop_at=args.stop_at,
                    init_from=args.init_from)  # fmt: skip
    except BrokenPipeError:
        raise  # the command line's own handling: a closed pipe ends quietly
    except (ValueError, OSError) as error:
        print(printable(f"speclab train: {error}"), file=sys.stderr)
        return 1
    except MemoryError as error:  # a recipe too big for this machine, e.g. --set batch_tokens=1e12
        print(
            printable(f"speclab train: not enough memory for this recipe ({error})"),
            file=sys.stderr,
        )
        return 1
    last = log["history"][-1] if log["history"] else {}
    mean = ""
    if "average" in last:
        count, first = log["average"]["count"], log["average"]["first_step"]
        mean = (f"; the mean of the weights at {count} validations from step {first} on: "
                f"{last['average']['val_bits_per_byte']} bits/byte")  # fmt: skip
    elif cfg.average_from:  # asked for a mean, got the last weights: say so
        mean = f"; no mean yet: no validation at or after average_from={cfg.average_from}"
    print(f"{name}: {last.get('step', 0)} steps, {log['seconds']:.0f} s, "
          f"validation {last.get('val_bits_per_byte')} bits/byte{mean}")  # fmt: skip
    return 0
