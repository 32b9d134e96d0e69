"""What one step of a draft model costs, as a share of a target step, for draft shapes.

Times one cached forward of one token (the step a drafter takes k times a round) for the
shipped target (float64) and the shipped draft and untrained models of other draft shapes
(float32, as the draft drafts: speclab.weights.DRAFT_DTYPE), interleaved on one BLAS thread at
the same cached length. Two "skeletons" (1 and 2 layers of width
n_head, so d_head = 1) make every numpy call a real block makes on arrays of almost no
numbers: their step is the fixed cost of those calls, the least any draft of that depth can
cost in this numpy forward, however narrow. A draft must have two layers to copy (one layer
cannot form an induction head), so the 2-layer skeleton's share is the floor on c for a
draft model that can copy.
Writes draft_cost.json to --out (default build/bench); the saved run is data/bench/draft_cost.json.
Run: env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python benchmarks/draft_cost.py
"""

import argparse
import json

from speclab.cli import importing, path_argument, run_script, text_path_argument

with importing():  # Ctrl-C while numpy loads: one line, not a traceback
    import numpy as np

    from speclab.bench import forward_times, matmul_params, skeleton_model
    from speclab.bench_cli import MAX_REPEATS
    from speclab.gpt import GPTConfig
    from speclab.paths import bench_dir, weights_dir
    from speclab.report_files import (
        first_missing,
        remove_empty_folders,
        writable_folder,
        write_together,
    )
    from speclab.student_files import shown
    from speclab.timing import blas_threads, describe_blas, load_text, machine_record, model_record
    from speclab.weights import (
        DRAFT_DTYPE,
        file_sha256,
        load,
        load_draft,
        load_target,
        random_model,
    )

# (layers, heads, width) of the untrained drafts timed beside the shipped two.
SHAPES = [(1, 4, 64), (2, 4, 32), (2, 4, 128), (3, 4, 64)]
SKELETON_DEPTHS = (1, 2)  # the draft's skeleton (speclab.bench.skeleton_model) at these depths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-past", type=int, default=400,
                        help="cached positions before the step (default 400: a copy-heavy prompt)")  # fmt: skip
    parser.add_argument("--repeats", type=int, default=1001, help="interleaved rounds")
    parser.add_argument("--seed", type=int, default=0, help="seed for tokens and task order")
    parser.add_argument("--target", type=text_path_argument, default=None,
                        help="target weights (default: the shipped target)")  # fmt: skip
    parser.add_argument("--draft", type=text_path_argument, default=None,
                        help="draft weights (default: the shipped draft)")  # fmt: skip
    parser.add_argument("--out", type=path_argument, default=None,
                        help="folder for draft_cost.json (default: build/bench)")  # fmt: skip
    args = parser.parse_args()
    if args.n_past < 1 or args.repeats < 1:
        parser.error("--n-past and --repeats must be at least 1")
    if args.repeats > MAX_REPEATS:
        parser.error(f"--repeats must be at most {MAX_REPEATS:,}, got {args.repeats:,}")
    if args.seed < 0:
        parser.error(f"--seed must be at least 0, got {args.seed}")
    files = {"target": args.target or weights_dir() / "target.npz",
             "draft": args.draft or weights_dir() / "draft.npz"}  # fmt: skip
    target = load(args.target) if args.target else load_target()
    draft = load(args.draft, dtype=DRAFT_DTYPE) if args.draft else load_draft()  # float32
    n_ctx = min(target.config.n_ctx, draft.config.n_ctx)
    if args.n_past + 1 > n_ctx:
        short = [f"{name} {files[name]}" for name, model in (("target", target), ("draft", draft))
                 if model.config.n_ctx == n_ctx]  # fmt: skip
        parser.error(f"--n-past {args.n_past} must be below the models' context, {n_ctx} (of the "
                     f"{' and the '.join(short)}): give a smaller --n-past")  # fmt: skip
    # after the models (a bad --target makes no folder), before the timing; a run that fails
    # or is interrupted removes the folders it made
    made = first_missing(args.out or bench_dir())
    try:
        return _measure(args, files, target, draft, n_ctx)
    finally:
        remove_empty_folders(args.out or bench_dir(), made)


def _measure(args, files, target, draft, n_ctx) -> int:
    out = writable_folder(args.out or bench_dir(), files=("draft_cost.json",))
    rng = np.random.default_rng(args.seed)
    models = {"target": target, "draft": draft}
    kinds = {"target": "trained", "draft": "trained"}
    for n_layer, n_head, n_embd in SHAPES:
        models[f"{n_layer} layer{'s' * (n_layer > 1)} x {n_embd}"] = random_model(
            GPTConfig(n_layer, n_head, n_embd, n_ctx), rng, dtype=DRAFT_DTYPE
        )
    for n_layer in SKELETON_DEPTHS:
        shape = GPTConfig(n_layer, draft.config.n_head, draft.config.n_embd, n_ctx)
        skeleton = skeleton_model(shape, rng, dtype=DRAFT_DTYPE)  # width n_head: d_head = 1
        name = f"{n_layer} layer{'s' * (n_layer > 1)} x {skeleton.config.n_embd}"
        models[name], kinds[name] = skeleton, "skeleton"
    with blas_threads(1):  # threads cost more than they give on matrices this small
        machine = machine_record()  # in here: it records the BLAS threads the timing used
        print(f"one cached step at position {args.n_past}, {args.repeats} interleaved rounds; "
              f"{describe_blas(machine)}; load {load_text(machine)}")  # fmt: skip
        times = forward_times(models, rng, n_past=args.n_past, repeats=args.repeats)
    target_step = np.median(times["target"])
    rows = []
    for name, model in models.items():
        config = model.config
        row = {
            "model": name,
            "kind": kinds.get(name, "untrained"),
            "n_layer": config.n_layer,
            "n_head": config.n_head,
            "n_embd": config.n_embd,
            "matmul_params": matmul_params(config),
            "step_ms": float(np.median(times[name]) * 1e3),
            "q25_ms": float(np.quantile(times[name], 0.25) * 1e3),
            "q75_ms": float(np.quantile(times[name], 0.75) * 1e3),
            # paired by round: the draft's step over the target's step in the same round
            "cost_of_target_step": float(np.median(times[name] / times["target"])),
            "weights_share": matmul_params(config) / matmul_params(target.config),
        }
        rows.append(row)
    floor = next(r for r in rows if r["kind"] == "skeleton" and r["n_layer"] == 2)
    report = {
        "benchmark": "draft_cost",
        "settings": {
            "n_past": args.n_past,
            "repeats": args.repeats,
            "seed": args.seed,
            "blas_threads": 1,
        },
        "models": {
            name: model_record(model) | {"sha256": file_sha256(files[name])}
            for name, model in (("target", target), ("draft", draft))
        },
        "rows": rows,
        "floor_two_layers": floor["cost_of_target_step"],
        "machine": machine,
    }
    path = out / "draft_cost.json"
    try:  # before printing: a closed pipe (| head -1) must not lose the minutes of timing
        write_together({path: json.dumps(report, indent=1) + "\n"})
    except OSError:  # nor a full disk: the figures are printed, then the error names the file
        print_rows(rows, floor, target_step)
        raise
    print_rows(rows, floor, target_step)
    print(f"wrote {shown(str(path))}")
    return 0


def print_rows(rows: list[dict], floor: dict, target_step: float) -> None:
    for row in rows:
        print(f"  {row['model']:14} ({row['kind']:9}) {row['step_ms']:.3f} ms  "
              f"c = {row['cost_of_target_step']:.2f} of a target step "
              f"({row['weights_share']:.1%} of its multiply-adds)")  # fmt: skip
    print(f"the least a 2-layer draft can cost here: c = {floor['cost_of_target_step']:.2f} "
          f"(target step {target_step * 1e3:.3f} ms)")  # fmt: skip


if __name__ == "__main__":
    run_script(main, "draft_cost.py")
