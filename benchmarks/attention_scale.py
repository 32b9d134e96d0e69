"""Which attention heads copy better when they look more sharply: the copy gap, head by head.

A head's attention logits multiplied by a factor s (`speclab.checkpoints.scale_attention`:
its queries times s) make it look more sharply (s > 1) or more vaguely (s < 1); nothing else
in the model changes. For each head in turn, and then for the heads given with --with, this
prints the copy gap's 64 near probes (`speclab.copy_metrics.copy_gap`): the first occurrence's
bits per byte, the repeat's and the gap. A head whose sharpening lowers the repeat and leaves
the first occurrence alone is one whose softness costs copying; `speclab train
--scale-attention` starts a run from weights with such heads sharpened
(docs/model-history.md, "Sharper attention in layer 0").
Run: .venv/bin/python benchmarks/attention_scale.py [WEIGHTS.npz] [--factor 1.5]
     [--with 0.1=2 --with 0.0=1.5] [--far]   (default: the shipped target)
"""

import argparse
import math
import sys

from speclab.cli import importing, run_script, text_path_argument

with importing():  # Ctrl-C while numpy loads: one line, not a traceback
    from speclab.checkpoints import scale_attention
    from speclab.copy_metrics import copy_gap, copy_probes
    from speclab.corpus import load_corpus, other_corpus_note
    from speclab.paths import weights_dir
    from speclab.student_files import shown
    from speclab.train_cli import MAX_ATTENTION_SCALE, attention_scales
    from speclab.weights import load


def row(label: str, gap: dict) -> str:
    return f"   {label:<22} {gap['first']:>6.3f} {gap['second']:>7.3f} {gap['gap']:>6.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "weights", nargs="?", type=text_path_argument, default=str(weights_dir() / "target.npz")
    )
    parser.add_argument("--factor", type=float, default=1.5,
                        help="the factor tried on each head alone (default 1.5)")  # fmt: skip
    parser.add_argument("--with", dest="together", action="append", default=[],
                        metavar="LAYER.HEAD=FACTOR", help="heads scaled together, at the end")  # fmt: skip
    parser.add_argument("--far", action="store_true",
                        help="the probes at 3/4 of the context, not near its start")  # fmt: skip
    args = parser.parse_args()
    # checked before the model loads: a bad factor is found at once
    if not (math.isfinite(args.factor) and 0 < args.factor <= MAX_ATTENTION_SCALE):
        parser.error(f"--factor {args.factor}: must be above 0 and at most "
                     f"{MAX_ATTENTION_SCALE:g} (1: unchanged)")  # fmt: skip
    model = load(args.weights)
    config = model.config
    try:
        together = attention_scales(args.together, config.n_layer, config.n_head, option="--with")
    except ValueError as error:
        parser.error(str(error))
    corpus = load_corpus()
    if note := other_corpus_note([model], corpus["record"]):
        print(f"note: {note}", file=sys.stderr)
    probes = copy_probes(corpus["val"], config.n_ctx, far=args.far)
    where = "at 3/4 of the context" if args.far else "near the start"
    print(f"== {shown(str(args.weights))}: copy gap on {len(probes)} probes {where}")
    print(f"   {'heads scaled':<22} {'first':>6} {'repeat':>7} {'gap':>6}")
    print(row("none", copy_gap(model.params, config.n_head, probes)), flush=True)
    for layer in range(config.n_layer):
        for head in range(config.n_head):
            params = scale_attention(model.params, config.n_head, {(layer, head): args.factor})
            gap = copy_gap(params, config.n_head, probes)
            print(row(f"{layer}.{head} x {args.factor:g}", gap), flush=True)
    if together:
        params = scale_attention(model.params, config.n_head, together)
        label = " ".join(f"{layer}.{head}x{factor:g}" for (layer, head), factor in together.items())
        print(row(label, copy_gap(params, config.n_head, probes)))


if __name__ == "__main__":
    run_script(main, "attention_scale.py")
