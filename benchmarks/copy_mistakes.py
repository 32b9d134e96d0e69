"""Where a target's repeat loses its bits: the copy gap's probes, byte by byte.

The copy gap (`speclab.copy_metrics.copy_gap`) is bits per byte on a held-out snippet's
first occurrence minus on its repeat, 64 probes near the context's start and 64 at three
quarters of it. Here the repeat's bits are taken apart:
- by the byte's place in the repeat (its first 8 bytes one by one, then bands): a model
  that copies only once a repeat has begun pays at its start, and nowhere else;
- the missed bytes (given less than one chance in ten, as copy_gap's `missed`) by place;
- the missed bytes by how many bytes of context a copier must match to know them
  (`speclab.corpus.context_needs` of the first occurrence): a miss where 1-4 bytes would
  do is the model's prior overriding the copy, a miss where 17 or more are needed is a
  copier that lost its place.
Run: .venv/bin/python benchmarks/copy_mistakes.py [WEIGHTS.npz ...] (default: the shipped target)
"""

import argparse
import sys

from speclab.cli import importing, run_script, text_path_argument

with importing():  # Ctrl-C while numpy loads: one line, not a traceback
    import numpy as np

    from speclab.backprop import token_losses
    from speclab.copy_metrics import copy_probes
    from speclab.corpus import context_needs, load_corpus, other_corpus_note
    from speclab.paths import weights_dir
    from speclab.student_files import shown
    from speclab.weights import load, steps_label

MISSED_BITS = np.log2(10)  # less than one chance in ten, as copy_gap's `missed`
PLACES = [(0, 4), (4, 20), (20, None)]  # bands of a byte's place in the repeat
NEEDS = [(1, 2), (2, 5), (5, 9), (9, 17), (17, None)]  # bands of context_needs


def repeat_bytes(params, n_head: int, probes: list[tuple]) -> dict:
    """Every repeat byte of the probes: its bits, its place in the repeat and its need, each
    [total repeat bytes]."""
    bits, places, needs = [], [], []
    for text, first, second in probes:
        tokens = np.frombuffer(text, dtype=np.uint8).astype(np.int64)
        losses = token_losses(params, n_head, tokens[None, :-1], tokens[None, 1:],
                              np.arange(tokens.size - 1))[0] / np.log(2)  # fmt: skip
        bits.append(losses[second.start - 1 : second.stop - 1])  # losses[i]: byte i + 1
        places.append(np.arange(second.stop - second.start))
        needs.append(context_needs(text[first]))
    return {
        key: np.concatenate(v) for key, v in (("bits", bits), ("place", places), ("need", needs))
    }


def band(values: np.ndarray, low: int, high: int | None) -> np.ndarray:
    return (values >= low) & (values < high if high is not None else True)


def label(low: int, high: int | None) -> str:
    return f"{low}+" if high is None else (f"{low}" if high == low + 1 else f"{low}-{high - 1}")


def report(name: str, found: dict) -> None:
    bits, place, need = found["bits"], found["place"], found["need"]
    missed = bits > MISSED_BITS
    print(f"   {name}: {bits.mean():.3f} bits a byte over {bits.size:,} repeat bytes, "
          f"{bits[place >= 4].mean():.3f} past the first 4; {missed.sum()} missed ({missed.mean():.1%})")  # fmt: skip
    print("     mean bits at the repeat's bytes 0-7: "
          + " ".join(f"{bits[place == i].mean():.2f}" if (place == i).any() else "-"
                     for i in range(8)))  # fmt: skip
    print("     missed by place in the repeat: " + ", ".join(
        f"bytes {label(lo, hi)}: {missed[band(place, lo, hi)].sum()}" for lo, hi in PLACES))  # fmt: skip
    print("     missed by the bytes of context a copier needs: " + ", ".join(
        f"{label(lo, hi)}: {share(missed[band(need, lo, hi)])} of {band(need, lo, hi).sum():,}"
        for lo, hi in NEEDS))  # fmt: skip


def share(flags: np.ndarray) -> str:
    """The share of True as a percentage; a dash for no bytes at all (short probes)."""
    return f"{flags.mean():.1%}" if flags.size else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "weights", nargs="*", type=text_path_argument, default=[str(weights_dir() / "target.npz")]
    )
    args = parser.parse_args()
    models = [load(path) for path in args.weights]  # a missing or damaged file stops here, at once
    corpus = load_corpus()
    if note := other_corpus_note(models, corpus["record"]):
        print(f"note: {note}", file=sys.stderr)
    val = corpus["val"]
    for path, model in zip(args.weights, models, strict=True):
        print(f"== {shown(str(path))}: {steps_label(model.meta)}")
        for far in (False, True):
            probes = copy_probes(val, model.config.n_ctx, far=far)
            found = repeat_bytes(model.params, model.config.n_head, probes)
            report("far (at 3/4 of the context)" if far else "near", found)


if __name__ == "__main__":
    run_script(main, "copy_mistakes.py")
