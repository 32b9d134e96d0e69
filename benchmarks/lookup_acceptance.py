"""Tokens per target forward with prompt lookup, and where greedy output comes from, per scenario.

Deterministic (no timing): for the first prompts of each scenario in data/prompts/, greedy
speculative decoding with the prompt-lookup drafter at a fixed k, then
`speclab.scenarios.output_provenance` of the output (copied from the prompt, a loop on the
model's own text, or new). Use it to compare candidate weights before a full `make bench`:
a target that copies raises tokens per forward on copy-heavy prompts *by copying the
prompt*, not by looping. Also printed: how much of the looping is runs of spaces (a byte
model that cannot count how deep it has indented goes on writing spaces).
Run: .venv/bin/python benchmarks/lookup_acceptance.py [WEIGHTS.npz ...] [--k 4] [--prompts 3] [--max-new-tokens 96]
"""

import argparse

from speclab.cli import importing, run_script, text_path_argument

with importing():  # Ctrl-C while numpy loads: one line, not a traceback
    import numpy as np

    from speclab.decoding import context_overflow, speculative_decode
    from speclab.demo import MAX_K
    from speclab.drafters import PromptLookupDrafter
    from speclab.paths import weights_dir
    from speclab.scenarios import load_scenarios, output_provenance, provenance_fractions
    from speclab.student_files import printable, shown
    from speclab.weights import load, steps_label


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "weights", nargs="*", type=text_path_argument, default=[str(weights_dir() / "target.npz")],
        help="weights files to compare (default: the shipped target)",
    )  # fmt: skip
    parser.add_argument("--k", type=int, default=4, help="drafts per round (default 4)")
    parser.add_argument("--prompts", type=int, default=3, help="prompts per scenario")
    parser.add_argument(
        "--max-new-tokens", type=int, default=96, help="at most this many new tokens a prompt"
    )
    args = parser.parse_args()
    if args.prompts < 1 or args.max_new_tokens < 1:
        parser.error("--prompts and --max-new-tokens must be at least 1")
    if not 1 <= args.k <= MAX_K:  # checked before any model loads, as `speclab bench` does
        parser.error(f"--k must be from 1 to {MAX_K}, got {args.k}")
    models = [load(path) for path in args.weights]  # a missing or damaged file stops here, at once
    scenarios = load_scenarios()
    for path, model in zip(args.weights, models, strict=True):  # every prompt fits, or say so now
        for scenario in scenarios:
            for index, prompt in enumerate(scenario.prompts[: args.prompts]):
                stuck = (  # the prompt alone fills the context: only leaving it out helps
                    f"give --prompts {index} to leave it out" if index
                    else "give weights of a model with a longer context"
                )  # fmt: skip
                problem = context_overflow(
                    len(prompt.tokens), min(prompt.max_new_tokens, args.max_new_tokens),
                    model.config.n_ctx, f"{scenario.name} prompt {prompt.id!r}",
                    window=f"the context window of {shown(str(path))}",
                    fewer="give --max-new-tokens of at most {}", shorter="", stuck=stuck,
                )  # fmt: skip
                if problem:
                    raise ValueError(problem)
    for path, model in zip(args.weights, models, strict=True):
        bits = model.meta.get("val_bits_per_byte")
        print(printable(f"== {path}: {steps_label(model.meta)}, {bits} bits/byte"))
        for scenario in scenarios:
            per_forward, shares, looping_bytes = [], [], []
            for prompt in scenario.prompts[: args.prompts]:
                n_new = min(prompt.max_new_tokens, args.max_new_tokens)
                run = speculative_decode(
                    model, PromptLookupDrafter(), prompt.tokens, n_new, args.k, adaptive=False
                )
                per_forward.append(run.tokens_per_target_forward)
                labels = output_provenance(prompt.tokens, run.tokens)
                shares.append(provenance_fractions(labels))
                looping_bytes += [
                    t for t, label in zip(run.tokens, labels, strict=True) if label == "loop"
                ]
            prompt_share = np.mean([s["prompt"] for s in shares])
            loop_share = np.mean([s["loop"] for s in shares])
            spaces = looping_bytes.count(ord(" ")) / max(1, len(looping_bytes))
            of_it = f" (spaces: {spaces:.0%} of the looping bytes)" if looping_bytes else ""
            n = len(per_forward)  # --prompts may ask for more than the scenario has
            print(f"   {scenario.name:12} ({n} prompt{'s' * (n != 1)}) "
                  f"tokens/forward at k={args.k}: {np.mean(per_forward):.2f}; "
                  f"output copied from the prompt {prompt_share:.0%}, looping {loop_share:.0%}"
                  f"{of_it}")  # fmt: skip


if __name__ == "__main__":
    run_script(main, "lookup_acceptance.py")
