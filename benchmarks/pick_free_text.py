"""Rank the free-text candidates by how much of the shipped target's greedy output is a loop.

Issue 5 asks for free-text prompts on which the model does not simply loop. This decodes every
prompt in data/prompts/candidates/free_text.toml greedily with the shipped target, labels each
output token as copied from the prompt, a loop of the model's own text, or new (the labels
`speclab bench` reports), and prints the candidates from least to most looping. The free-text
scenario (data/prompts/04_free_text.toml) takes the least looping ones.

Run: .venv/bin/python benchmarks/pick_free_text.py [--weights W.npz] [--candidates FILE.toml]
     [--out FILE.csv] (default: the clone's build/bench/free_text_candidates.csv, wherever
     you run it, as `speclab bench` writes there)
"""

import argparse
from pathlib import Path

from speclab.cli import importing, path_argument, run_script

with importing():  # Ctrl-C while numpy loads: one line, not a traceback
    from speclab.decoding import greedy_decode
    from speclab.paths import bench_dir, prompts_dir
    from speclab.report_files import (
        csv_text,
        first_missing,
        remove_empty_folders,
        writable_folder,
        writable_name,
        write_together,
    )
    from speclab.scenarios import load_scenario, output_provenance, provenance_fractions
    from speclab.tokenizer import decode, encode
    from speclab.weights import load, load_target, steps_label


def rank(model, scenario) -> list[dict]:
    rows = []
    for prompt in scenario.prompts:
        tokens = encode(prompt.text)
        output = greedy_decode(model, tokens, prompt.max_new_tokens).tokens
        shares = provenance_fractions(output_provenance(tokens, output))
        rows.append({"id": prompt.id, **shares, "output": decode(output)})
    return sorted(rows, key=lambda row: (row["loop"], row["id"]))


FIELDS = ["id", "prompt", "loop", "new", "output"]  # the CSV's columns, its first line


def out_problem(out: Path, candidates: Path) -> str | None:
    """Why --out must not be written (checked before decoding), or None.

    Only a file this script wrote is replaced: never the candidates, another file, or
    whatever a link points to.
    """
    if out.is_symlink():
        return f"--out {out} is a symbolic link; give the file itself"
    if out.is_dir():
        return f"--out {out} is a folder; give a .csv file name, e.g. {out / 'ranking.csv'}"
    if out.exists() and not out.is_file():  # reading its first line would wait forever
        return f"--out {out} is a pipe or a device; give a .csv file name"
    if out.suffix.lower() != ".csv":
        return f"--out {out}: the ranking is a CSV file; give a name ending in .csv"
    if out.exists() and candidates.exists() and out.samefile(candidates):
        return f"--out {out} is the --candidates file; give the ranking a file of its own"
    if out.exists():
        try:
            with out.open(encoding="utf-8", newline="") as file:
                first = file.readline(200).rstrip("\r\n")
        except (OSError, UnicodeDecodeError):
            first = None
        if first != ",".join(FIELDS):
            return f"--out {out} exists and is not a ranking this script wrote; it is left as it is"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--candidates", type=path_argument, default=prompts_dir() / "candidates" / "free_text.toml",
        help="the TOML scenario of candidate prompts (default: data/prompts/candidates/free_text.toml)",
    )  # fmt: skip
    parser.add_argument(
        "--out", type=path_argument, default=bench_dir() / "free_text_candidates.csv",
        help="the ranking, a CSV file (default: the clone's build/bench/free_text_candidates.csv)",
    )  # fmt: skip
    parser.add_argument(
        "--weights", type=path_argument, default=None, help="default: the shipped target"
    )
    args = parser.parse_args()
    if problem := out_problem(args.out, args.candidates):
        parser.error(problem)
    scenario = load_scenario(args.candidates)
    model = load(args.weights) if args.weights else load_target()
    scenario.check_fits(model.config.n_ctx)  # every prompt, before the first is decoded
    made = first_missing(args.out.parent)  # a failed or interrupted run removes what it made
    try:
        writable_folder(
            args.out.parent, name=f"--out {args.out}: its folder {args.out.parent}"
        )  # now, not after decoding, and only once the inputs are known to be good
        writable_name(args.out, f"--out {args.out}")
        rows = rank(model, scenario)
        try:
            write_together({args.out: csv_text(rows, FIELDS)})  # whole, or the old file as it was
        except OSError:  # a full disk: the ranking is printed, then the error names the file
            print_rows(model, rows)
            raise
    finally:
        remove_empty_folders(args.out.parent, made)
    print_rows(model, rows)
    print(f"written: {args.out}")
    return 0


def print_rows(model, rows: list[dict]) -> None:
    print(f"target: {steps_label(model.meta)}, {model.meta.get('val_bits_per_byte')} bits/byte")
    print(f"{'candidate':18} {'loop':>5} {'prompt':>6} {'new':>5}  greedy output (start)")
    for row in rows:
        print(
            f"{row['id']:18} {row['loop']:5.0%} {row['prompt']:6.0%} {row['new']:5.0%}  "
            f"{row['output'][:60]!r}"
        )


if __name__ == "__main__":
    run_script(main, "pick_free_text.py")
