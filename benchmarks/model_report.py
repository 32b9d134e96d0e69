"""Print what the shipped models are: size, training, validation bits per byte, copying, and a
greedy continuation of a Python prompt. Run: .venv/bin/python benchmarks/model_report.py
"""

import numpy as np

from speclab.decoding import greedy_decode
from speclab.tokenizer import decode, encode
from speclab.train import copy_score, held_out_functions, load_corpus
from speclab.weights import load_draft, load_target

PROMPT = "def is_even(number):\n    "


def main():
    functions = held_out_functions(load_corpus()["val"])
    for model in (load_target(), load_draft()):
        meta, config = model.meta, model.config
        n_params = sum(int(np.prod(v.shape)) for v in _leaves(model.params))
        print(f"== {model.name}: {config}, {n_params:,} parameters")
        print(
            f"   trained {meta['trained_steps']} steps in {meta['training_seconds'] / 60:.1f} min; "
            f"validation {meta['val_bits_per_byte']} bits/byte; numpy {meta['numpy']}"
        )
        copy = copy_score(model.params, config, functions)
        print(
            f"   copy test ({len(functions)} held-out functions, prompt = function + blank line + "
            f"its first line): bytes reproduced before the first mistake {copy['bytes_copied']} "
            f"of {copy['bytes_to_copy']}; whole functions copied: {copy['functions_copied_whole']}"
        )
        out = greedy_decode(model, encode(PROMPT), 80).tokens
        print(f"   greedy after {PROMPT!r}: {decode(out)!r}")


def _leaves(tree):
    if isinstance(tree, dict):
        for value in tree.values():
            yield from _leaves(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from _leaves(value)
    else:
        yield tree


if __name__ == "__main__":
    main()
