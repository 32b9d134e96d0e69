"""What the copy test asks of a copier: how many bytes back it must match.

The copy test (benchmarks/model_report.py) gives a target a held-out function, a blank line
and the function's first line, and counts the bytes greedy decoding then reproduces before its
first mistake. Here the same test is taken by a perfect copier with no model at all: prompt
lookup (`speclab.drafters.PromptLookupDrafter`, one byte at a time) that matches the last n
bytes (fewer if n do not occur earlier) and copies what followed their earliest occurrence
(the function itself comes first in the text) or their latest. Code repeats itself (`\\n    `
starts many lines, `self.` many names), so a copier that matches few bytes jumps to the wrong
place; the table shows how many bytes of match the test's goal (a median of 90 % of each
function, half of them whole) needs. Then, for comparison, the targets given.
--all takes every held-out function of 120-400 bytes (89) instead of the test's 8.
Run: .venv/bin/python benchmarks/copy_test_needs.py [--all] [WEIGHTS.npz ...] (default: the shipped target)
"""

import argparse
import sys
from pathlib import Path

from speclab.cli import importing, run_script, text_path_argument

with importing():  # Ctrl-C while numpy loads: one line, not a traceback
    import numpy as np

    from speclab.copy_metrics import copy_score, copy_test_prompts, held_out_functions
    from speclab.corpus import context_needed, load_corpus, other_corpus_note
    from speclab.drafters import MAX_NGRAM, PromptLookupDrafter
    from speclab.paths import weights_dir
    from speclab.student_files import shown
    from speclab.weights import load, steps_label


def lookup_copy(prompt: list[int], rest: bytes, n: int, earliest: bool) -> int:
    """Bytes of `rest` a prompt-lookup copier reproduces before its first mistake."""
    drafter, tokens = PromptLookupDrafter(max_ngram=n, earliest=earliest), list(prompt)
    for right, expected in enumerate(rest):
        if drafter.propose(tokens, 1) != [expected]:
            return right
        tokens.append(expected)
    return len(rest)


def summary(copied: list[int], lengths: list[int]) -> str:
    median = np.median(np.divide(copied, lengths))
    whole = sum(c == n for c, n in zip(copied, lengths, strict=True))
    listed = f"   {copied}" if len(copied) <= 8 else ""  # --all: 89 numbers would bury the line
    return f"median {median:4.0%}, {whole} whole{listed}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "weights",
        nargs="*",
        type=text_path_argument,
        help="weights files (default: the shipped target)",
    )
    parser.add_argument(
        "--all",
        action="store_true",
        help="take every held-out function of 120-400 bytes, not the copy test's 8",
    )
    args = parser.parse_args()
    given = args.weights
    paths = given or [str(weights_dir() / "target.npz")]
    models = [load(path) for path in paths]  # a missing or damaged file stops here, at once
    corpus = load_corpus()
    if note := other_corpus_note(models, corpus["record"]):
        print(f"note: {note}", file=sys.stderr)
    functions = held_out_functions(corpus["val"], corpus["train"], n=None if args.all else 8)
    pairs = copy_test_prompts(functions)
    lengths = [len(rest) for _, rest in pairs]
    sizes = f"{lengths} bytes" if len(lengths) <= 8 else f"{min(lengths)}-{max(lengths)} bytes each"
    print(f"copy test: {len(pairs)} held-out functions, {sizes} to copy after their first line")
    for earliest in (True, False):
        which = "earliest" if earliest else "latest"
        print(f"a perfect copier matching the last n bytes, copying their {which} occurrence:")
        for n in range(2, MAX_NGRAM + 1):
            copied = [lookup_copy(prompt, rest, n, earliest) for prompt, rest in pairs]
            print(f"   n = {n:2d}: {summary(copied, lengths)}")
    for path, model in zip(paths, models, strict=True):
        score = copy_score(model.params, model.config, functions)
        name = Path(path).name if given else "the shipped target"
        if len(score["bytes_copied"]) < len(functions):
            print(f"{name}: the model's context is too short for some of the functions")
            continue
        print(
            f"{shown(name)} ({steps_label(model.meta)}): {summary(score['bytes_copied'], lengths)}"
        )
        for function, right, mistake in zip(
            functions, score["bytes_copied"], score["first_mistakes"], strict=True
        ):
            if mistake is not None and not args.all:
                print("      " + where_it_broke(function, right, mistake))


def where_it_broke(function: bytes, right: int, mistake: dict) -> str:
    """One line on a first mistake: the bytes before it, the byte wanted and the byte chosen
    (with the model's probabilities), and how far back a perfect copier must match there."""
    j = function.index(b"\n") + 1 + right  # the mistake's place in the first copy
    before = function[max(0, j - 24) : j]  # bytes: a cut never splits a character wrongly
    wanted, chose = (bytes([mistake[k]]) for k in ("wanted", "chose"))
    return (
        f"after {before!r}: wanted {wanted!r} (P {mistake['p_wanted']:.2f}), "
        f"chose {chose!r} (P {mistake['p_chose']:.2f}); "
        f"a copier needs {context_needed(function, j)} bytes there"
    )


if __name__ == "__main__":
    run_script(main, "copy_test_needs.py")
