"""Where a target fails to copy: teacher-forced, byte by byte, on the copy test's functions.

For each held-out function of `speclab.train.held_out_functions` (the copy test of
benchmarks/model_report.py), the text is function + blank line + the function again; one
forward gives the target's choice (argmax) at every byte of the repeat after its first line.
Printed: the share of those bytes the target would copy right, and its first mistakes
(expected byte, chosen byte). Greedy copying breaks at the first mistake; this shows where.

Also printed, the prior that copying competes with: after a top-level `def ...:` line of a
held-out file (600 bytes of the file before it), the body starts in column 4, never with a
5th space (0 of 4,209 such lines in the training files). The share of those places where the
target's argmax is a space, and its mean probability of a space there; then the same
with the def line alone as the context, as a short prompt gives it.
Run: .venv/bin/python benchmarks/copy_diagnosis.py [WEIGHTS.npz ...] (default: the shipped target)
"""

import re
import sys

import numpy as np

from speclab.gpt import forward
from speclab.paths import weights_dir
from speclab.train import held_out_functions, load_corpus
from speclab.weights import load


def diagnose(model, functions: list[bytes]) -> float:
    right = total = 0
    for function in functions:
        first_line = function[: function.index(b"\n") + 1]
        text = list(function + b"\n" + function)
        if len(text) > model.config.n_ctx:
            continue
        chosen = forward(model.params, model.config, text[:-1]).argmax(axis=-1)  # [n - 1]
        start = len(function) + 1 + len(first_line)  # the repeat, after its first line
        ok = chosen[start - 1 :] == np.array(text[start:])
        right, total = right + int(ok.sum()), total + ok.size
        mistakes = [
            (i, bytes([text[start + i]]), bytes([chosen[start - 1 + i]]))
            for i in np.flatnonzero(~ok).tolist()
        ]
        print(
            f"  {ok.mean():4.0%} of {ok.size} bytes; first mistakes (at, expected, chosen): {mistakes[:4]}"
        )
    return right / max(1, total)


def fifth_space(model, val: bytes, n: int = 60, before: int = 600) -> tuple[float, float]:
    """(share of argmax = space, mean P(space)) right after `def ...:\n    ` in held-out files,
    with `before` bytes of the file as the context (0: the def line alone, as a short prompt)."""
    found = [m for m in re.finditer(rb"\ndef [^\n]*:\n    ", val) if m.end() >= 600][:n]
    chosen, probability = [], []
    for m in found:
        start = m.end() - before if before else m.start() + 1
        logits = forward(model.params, model.config, list(val[start : m.end()]))[-1]
        p = np.exp(logits - logits.max())
        p /= p.sum()
        chosen.append(int(np.argmax(p)) == ord(" "))
        probability.append(float(p[ord(" ")]))
    return float(np.mean(chosen)), float(np.mean(probability))


def main(paths: list[str]) -> None:
    corpus = load_corpus()
    functions = held_out_functions(corpus["val"])
    for path in paths or [str(weights_dir() / "target.npz")]:
        model = load(path)
        print(f"== {path}: step {model.meta.get('trained_steps')}")
        print(f"   copied right, teacher-forced: {diagnose(model, functions):.1%} of the bytes")
        for before, context in ((600, "600 bytes of the file"), (0, "the def line alone")):
            wrong, probability = fifth_space(model, corpus["val"].tobytes(), before=before)
            print(f"   a 5th space after a top-level def line, given {context}: "
                  f"argmax {wrong:.0%}, P(space) {probability:.2f}")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
