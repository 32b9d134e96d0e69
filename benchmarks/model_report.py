"""Print what the shipped models are: size, training, validation bits per byte, copying (the
copy gap and the copy test), agreement with the shipped target, and a greedy continuation of
a Python prompt.
Run: .venv/bin/python benchmarks/model_report.py [WEIGHTS.npz ...] (default: the shipped two)
"""

import argparse
import sys

from speclab.cli import importing, run_script, text_path_argument

with importing():  # Ctrl-C while numpy loads: one line, not a traceback
    import numpy as np

    from speclab.copy_metrics import (
        PROBES,
        SNIPPET_BYTES,
        copy_gap,
        copy_probes,
        copy_score,
        held_out_functions,
    )
    from speclab.corpus import load_corpus, other_corpus_note
    from speclab.decoding import greedy_decode
    from speclab.student_files import printable, shown
    from speclab.tokenizer import decode, encode
    from speclab.train import agreement
    from speclab.weights import (
        flatten,
        load,
        load_draft,
        load_target,
        parameter_count,
        steps_label,
    )

PROMPT = "def is_even(number):\n    "


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _shown_number(value, spec: str) -> str:
    """A number of the record formatted; anything else a hand-made record holds, as it is."""
    return format(value, spec) if _is_number(value) else repr(value)


def main():
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\nRun:")[0].split()))
    parser.add_argument(
        "weights",
        nargs="*",
        type=text_path_argument,
        help="weights files (default: the shipped target and draft)",
    )
    args = parser.parse_args()
    corpus = load_corpus()
    val = corpus["val"]
    functions = held_out_functions(val, corpus["train"])
    all_functions = held_out_functions(val, corpus["train"], n=None)  # 8 functions are few
    # measured in float64, as they were trained to be measured (the draft drafts in float32)
    models = [load(path) for path in args.weights] or [load_target(), load_draft(np.float64)]
    target = load_target(np.float32)
    if note := other_corpus_note(models, corpus["record"]):
        print(f"note: {note}", file=sys.stderr)
    for model in models:
        meta, config = model.meta, model.config
        n_params = parameter_count(config)
        print(f"== {shown(model.name)}: {config}, {n_params:,} parameters")
        if "trained_steps" in meta:
            seconds = meta.get("training_seconds") or 0
            minutes = _shown_number(seconds / 60, ".1f") if _is_number(seconds) else repr(seconds)
            print(printable(  # the record is the file's: escape codes in it are shown, not obeyed
                f"   trained {meta['trained_steps']} steps in {minutes} min"
                + (f" ({steps_label(meta)})" if "in all" in steps_label(meta) else "")
                + "; validation "
                f"{meta.get('val_bits_per_byte')} bits/byte; numpy {meta.get('numpy')}"
            ))  # fmt: skip
            averaged = meta.get("averaged")
            if isinstance(averaged, dict) and "count" in averaged:
                print(f"   the mean of its weights at {averaged['count']} validations, steps "
                      f"{_shown_number(averaged.get('first_step'), ',')} to "
                      f"{_shown_number(averaged.get('last_step'), ',')}")  # fmt: skip
        else:
            print("   no training record in the file (saved without `speclab train`)")
        snippets = ""  # their lengths, once measured (copy_probes cuts them to fit n_ctx)
        for where, far in (("near the start", False), ("at 3/4 of the context", True)):
            try:
                probes = copy_probes(val, config.n_ctx, far=far)
            except ValueError:  # a toy model's window holds no snippet and its repeat
                print(f"   copy gap: a context of {config.n_ctx} is too short for the probes")
                break
            gap = copy_gap(model.params, config.n_head, probes)
            sizes = [first.stop - first.start for _, first, _ in probes]  # cut to fit n_ctx
            print(
                f"   copy gap, repeat {where}: {gap['gap']:.2f} ± {gap['se']:.2f} bits/byte over "
                f"{gap['probes']} probes (first occurrence {gap['first']:.2f}, repeat {gap['second']:.2f}: the repeat "
                f"removes {1 - gap['second'] / gap['first']:.0%} of the first's surprise; "
                f"{gap['missed_bits']:.0%} of the repeat's bits lie on the {gap['missed']:.1%} of its "
                "bytes given less than one chance in ten)"
            )
            snippets = f"{min(sizes)}-{max(sizes)} bytes"
        if snippets:
            print("   (a copy gap can be no larger than the first occurrence's bits per byte; ± "
                  f"one standard error over the held-out snippets of {snippets})")  # fmt: skip
        logged = meta.get("copy_gap_probes", {"n": 8, "bytes": [60, 120]})  # before the record
        if logged != {"n": PROBES, "bytes": list(SNIPPET_BYTES)} and "copy_gap" in meta:
            try:  # a hand-made record may hold anything here
                on = f"{logged['n']} probes of {logged['bytes'][0]}-{logged['bytes'][1]} bytes"
            except (KeyError, IndexError, TypeError):
                on = f"other probes ({logged!r})"
            print(f"   (its training logged {meta['copy_gap']} near and "
                  f"{meta.get('copy_gap_far')} far on {on})")  # fmt: skip
        if not _same_weights(model, target):
            share = agreement(model.params, config, target, val)
            print(f"   agreement with the shipped target on held-out text: {share:.1%} of the "
                  "positions give the target's most likely next byte (a greedy draft's "
                  "acceptance rate, fed the true text)")  # fmt: skip
        copy = copy_score(model.params, config, functions)
        shares = np.divide(copy["bytes_copied"], copy["bytes_to_copy"])
        if len(shares):
            if len(shares) < len(functions):
                print(f"   (only {len(shares)} of the copy test's {len(functions)} functions fit a "
                      f"context of {config.n_ctx}: the lines below are of those)")  # fmt: skip
            print(
                f"   copy test ({len(shares)} held-out functions, prompt = function + blank line + "
                f"its first line): bytes reproduced before the first mistake "
                f"{copy['bytes_copied']} of {copy['bytes_to_copy']}; whole functions copied: "
                f"{copy['functions_copied_whole']}; median share reproduced {np.median(shares):.0%}"
            )
            wide = copy_score(model.params, config, all_functions)
            shares = np.divide(wide["bytes_copied"], wide["bytes_to_copy"])
            which = f"all {len(all_functions)} held-out functions of 120-400 bytes (the "
            which += f"{len(functions)} are spread over them)"
            if len(shares) < len(all_functions):
                which = (f"the {len(shares)} of the {len(all_functions)} held-out functions of "
                         "120-400 bytes that fit its context")  # fmt: skip
            print(
                f"   the same on {which}: median share reproduced "
                f"{np.median(shares):.0%}, whole functions copied: {wide['functions_copied_whole']}"
            )
        else:
            print(f"   copy test: none of the held-out functions fits a context of {config.n_ctx}")
        n_new = min(80, config.n_ctx - len(encode(PROMPT)))  # a tiny model's window may be short
        if n_new < 1:
            print(f"   greedy: a context of {config.n_ctx} is too short for {PROMPT!r}")
            continue
        out = greedy_decode(model, encode(PROMPT), n_new).tokens
        print(f"   greedy after {PROMPT!r}: {decode(out)!r}")


def _same_weights(model, other) -> bool:
    if model.config != other.config:
        return False
    mine, theirs = flatten(model.params), flatten(other.params)
    return all(np.array_equal(mine[name].astype(np.float32), theirs[name]) for name in mine)


if __name__ == "__main__":
    run_script(main, "model_report.py")
