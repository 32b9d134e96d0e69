"""Where a target fails to copy: teacher-forced, byte by byte, on the copy test's functions.

For each held-out function of `speclab.copy_metrics.held_out_functions` (the copy test of
benchmarks/model_report.py), the text is function + blank line + the function again; one
forward gives the target's choice (argmax) at every byte of the repeat after its first line.
Printed: the share of those bytes the target would copy right, and its first mistakes
(expected byte, chosen byte). Greedy copying breaks at the first mistake; this shows where.

The repeat's bytes are also grouped by how many bytes of context a copier must match to know
the next byte (code repeats itself: `self.` is followed by many names, `    ` by many lines),
and a repeat of random letters shows copying with no help from what code usually says (of 26
letters, where 2 bytes settle most places; of 2-4 letters, where half need 5 or more).

Then inside the model, over the same repeats: how much attention each layer's heads give the
byte after the source (an induction head's mark: it looks where the copy has got to and
reads the next byte), and the 1, 2 and 3 bytes just before (a previous-byte head, whose
output is what an induction head matches).

Also printed, the prior that copying competes with: after a top-level `def ...:` line of a
held-out file (600 bytes of the file before it), the body starts in column 4, never with a
5th space (0 of 4,209 such lines in the training files). The share of those places where the
target's argmax is a space, and its mean probability of a space there; then the same
with the def line alone as the context, as a short prompt gives it.
Run: .venv/bin/python benchmarks/copy_diagnosis.py [WEIGHTS.npz ...] [--short] (default: the shipped target)
"""

import argparse
import re
import sys

from speclab.cli import importing, run_script, text_path_argument

with importing():  # Ctrl-C while numpy loads: one line, not a traceback
    import numpy as np

    from speclab.backprop import attention_maps
    from speclab.copy_metrics import copy_probes, held_out_functions
    from speclab.corpus import LETTERS, context_needs, few_letters, load_corpus, other_corpus_note
    from speclab.gpt import forward
    from speclab.paths import weights_dir
    from speclab.student_files import shown
    from speclab.weights import load, steps_label


def diagnose(model, pieces: list[bytes], separator: bytes, skip) -> tuple[float, dict]:
    """The share of the repeat's bytes chosen right, overall and by context_needs.

    Each text is piece + separator + piece; skip(piece) bytes of the repeat are given first.
    """
    right = total = 0
    by_need: dict[int, list[bool]] = {}
    for piece in pieces:
        text = list(piece + separator + piece)
        if len(text) > model.config.n_ctx:
            continue
        chosen = forward(model.params, model.config, text[:-1]).argmax(axis=-1)  # [n - 1]
        start = len(piece) + len(separator) + skip(piece)  # the repeat, after what is given
        ok = chosen[start - 1 :] == np.array(text[start:])
        right, total = right + int(ok.sum()), total + ok.size
        needs = np.minimum(8, context_needs(piece)[skip(piece) :])  # one per byte of the repeat
        for need, hit in zip(needs.tolist(), ok.tolist(), strict=True):
            by_need.setdefault(need, []).append(hit)
        mistakes = [
            (i, bytes([text[start + i]]), bytes([chosen[start - 1 + i]]))
            for i in np.flatnonzero(~ok).tolist()
        ]
        print(
            f"  {ok.mean():4.0%} of {ok.size} bytes; first mistakes (at, expected, chosen): {mistakes[:4]}"
        )
    return right / max(1, total), {n: by_need[n] for n in sorted(by_need)}


def heads(model, pieces: list[bytes], separator: bytes) -> np.ndarray:
    """Mean attention of the repeat's bytes [n_layer, n_head, 4]: on the byte after the
    source (the first copy's byte at the same place), on the 1, 2 and 3 bytes before."""
    per_piece = []
    for piece in pieces:  # main() has checked that every repeat fits the model's context
        text = piece + separator + piece
        ids = np.frombuffer(text[:-1], dtype=np.uint8)[None].astype(np.int64)
        maps = attention_maps(model.params, model.config.n_head, ids)[:, 0]  # [L, H, n, n]
        shift = len(piece) + len(separator)  # a repeat byte's source is `shift` bytes back
        t = np.arange(shift + 8, ids.shape[1])  # queries: the repeat, past its start
        backs = (shift - 1, 1, 2, 3)
        per_piece.append(np.stack([maps[..., t, t - back] for back in backs], -1).mean(-2))
    return np.mean(per_piece, axis=0)


def random_letters(model, rng, n: int = 6, length: int = 150, few: bool = False) -> float:
    """Teacher-forced share copied right of 150 random letters repeated after a blank line:
    copying with no help from what code usually says. few: text in 2-4 letters instead
    (`speclab.corpus.few_letters`, `length` / 2 to `length` bytes), where half the bytes need
    5 or more bytes of context to be known."""
    shares = []
    for _ in range(n):
        piece = few_letters(rng, length) if few else rng.choice(LETTERS, length).tobytes()
        text = list(piece + b"\n\n" + piece)
        chosen = forward(model.params, model.config, text[:-1]).argmax(axis=-1)
        start = len(piece) + 2 + 3  # the repeat, after its first 3 letters
        shares.append(float((chosen[start - 1 :] == np.array(text[start:])).mean()))
    return float(np.mean(shares))


def fifth_space(model, val: bytes, n: int = 60, before: int = 600) -> tuple[float, float]:
    """(share of argmax = space, mean P(space)) right after `def ...:\n    ` in held-out files,
    with `before` bytes of the file as the context (0: the def line alone, as a short prompt)."""
    far_enough = max(before, 600)  # the same 60 places whatever the context
    found = [m for m in re.finditer(rb"\ndef [^\n]*:\n    ", val) if m.end() >= far_enough][:n]
    chosen, probability = [], []
    for m in found:
        start = m.end() - before if before else m.start() + 1
        logits = forward(model.params, model.config, list(val[start : m.end()]))[-1]
        p = np.exp(logits - logits.max())
        p /= p.sum()
        chosen.append(int(np.argmax(p)) == ord(" "))
        probability.append(float(p[ord(" ")]))
    return float(np.mean(chosen)), float(np.mean(probability))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "weights", nargs="*", type=text_path_argument, default=[str(weights_dir() / "target.npz")]
    )
    parser.add_argument(
        "--short", action="store_true",
        help="40 held-out snippets of 60-120 bytes instead of the copy test's functions, all within "
        "256 positions: compares models still in stage 1 (rows of 256 bytes)",
    )  # fmt: skip
    args = parser.parse_args()
    corpus = load_corpus()
    if args.short:
        pieces = [
            text[first]
            for text, first, _ in copy_probes(corpus["val"], 1024, n=40, lengths=(60, 120))
        ]
        separator, skip, letters_length = b"\n\n", lambda piece: 3, 100
    else:
        pieces = held_out_functions(corpus["val"], corpus["train"])
        separator, skip, letters_length = b"\n", lambda piece: piece.index(b"\n") + 1, 150
    longest = max([2 * len(p) + len(separator) for p in pieces] + [2 * letters_length + 2])
    longest = max(longest, 0 if args.short else 600)  # the 5th space with the file before it
    models = [load(path) for path in args.weights]  # a missing or damaged file stops here, at once
    if note := other_corpus_note(models, corpus["record"]):
        print(f"note: {note}", file=sys.stderr)
    # every model checked before any work
    for path, model in zip(args.weights, models, strict=True):
        if model.config.n_ctx < longest:  # every repeat, letter text and context must fit
            hint = "" if args.short else "; --short needs fewer"
            raise ValueError(f"{path}: this diagnosis needs {longest} positions and the model "
                             f"has {model.config.n_ctx}{hint}")  # fmt: skip
    for path, model in zip(args.weights, models, strict=True):
        print(f"== {shown(str(path))}: {steps_label(model.meta)}")
        share, by_need = diagnose(model, pieces, separator, skip)
        print(f"   copied right, teacher-forced: {share:.1%} of the bytes")
        print("   by the bytes of context that tell the next byte: " + ", ".join(
            f"{n}{'+' if n == 8 else ''}: {np.mean(hits):.0%} of {len(hits)}" for n, hits in by_need.items()
        ))  # fmt: skip
        weights = heads(model, pieces, separator)  # [n_layer, n_head, 4]
        print("   attention of the repeat's bytes, per layer: the most any head gives the byte after"
              " the source | the 1, 2, 3 bytes before (the head most on the byte before):")  # fmt: skip
        for layer, per_head in enumerate(weights):
            induction, previous = per_head[:, 0].max(), per_head[per_head[:, 1].argmax(), 1:]
            print(
                f"     layer {layer}: {induction:.2f} | " + " ".join(f"{w:.2f}" for w in previous)
            )
        letters = random_letters(model, np.random.default_rng(0), length=letters_length)
        print(f"   copied right, teacher-forced, of {letters_length} random letters: {letters:.1%}")
        few = random_letters(model, np.random.default_rng(0), length=letters_length, few=True)
        print(
            f"   ... of random text in 2-4 letters (half its bytes need 5+ bytes of context): {few:.1%}"
        )
        contexts = [(600, "600 bytes of the file")] * (not args.short) + [(0, "the def line alone")]
        for before, context in contexts:  # 600 bytes reach past a stage-1 model's 256 positions
            wrong, probability = fifth_space(model, corpus["val"].tobytes(), before=before)
            print(f"   a 5th space after a top-level def line, given {context}: "
                  f"argmax {wrong:.0%}, P(space) {probability:.2f}")  # fmt: skip


if __name__ == "__main__":
    run_script(main, "copy_diagnosis.py")
