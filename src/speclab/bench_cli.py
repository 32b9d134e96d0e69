"""`speclab bench`: the command that runs both benchmarks (lessons 04 and 06).

`speclab bench forward` times one forward against its number of new positions
(speclab.bench); `speclab bench decode` times speculative decoding per scenario
(speclab.bench_decode). This module holds what they share: the options, their checks
(every numeric option and --out, before any model is loaded or timed) and the dispatch.
Neither benchmark imports this module.
"""

import os
import sys
from dataclasses import asdict

import numpy as np

from speclab import bench, bench_decode, decode_reports
from speclab.cli import as_typed, bad_argument, path_argument, sigterm_stops_cleanly
from speclab.demo import MAX_K
from speclab.paths import bench_dir, weights_dir
from speclab.report_files import first_missing, one_at_a_time, remove_if_unused, writable_folder
from speclab.scenarios import load_scenarios
from speclab.student_files import printable, shown
from speclab.timing import describe_blas, load_average
from speclab.weights import DRAFT_DTYPE, load

EXIT_STATUS = (
    "0 done, 1 a file or setting that cannot be used, 2 a bad argument, 3 decode: a "
    "speculative output differed from greedy decoding (a bug: please report it)"
)


def add_arguments(parser):
    parser.add_argument(
        "what", nargs="?", default="decode", choices=["forward", "decode"],
        help="forward: cost of one forward vs new positions (lesson 04); "
        "decode (the default): speedup per scenario (lesson 06)",
    )  # fmt: skip
    parser.add_argument("--weights", type=path_argument, default=None,
                        help="weights file to time (default: the shipped target)")  # fmt: skip
    parser.add_argument("--dtype", choices=["float64", "float32"], default="float64",
                        help="the target's compute dtype (default float64, as decoding uses; the draft model drafts in float32)")  # fmt: skip
    parser.add_argument("--n-past", type=int, default=None,
                        help="forward: cached positions before the new ones (default 256)")  # fmt: skip
    parser.add_argument(
        "--repeats", type=int, default=None, help="interleaved rounds (forward 31, decode 7)"
    )
    parser.add_argument("--greedy-tokens", type=int, default=None,
                        help="forward: tokens per greedy run (default 128)")  # fmt: skip
    parser.add_argument("--blas-threads", type=int, default=None,
                        help="limit BLAS threads (default: forward the library's choice, decode 1)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="seed for tokens and task order")
    parser.add_argument("--quick", action="store_true", help="few settings and rounds (for tests)")
    parser.add_argument("--out", type=path_argument, default=None,
                        help="folder for forward.json/.csv and decode.json/.csv "
                        "(default: build/bench in the clone, where lesson 06 looks)")  # fmt: skip
    add_decode_arguments(parser)


# The smallest value of each numeric option (None, an option's default, means "not given").
LEAST = {"n_past": 0, "repeats": 1, "greedy_tokens": 1, "blas_threads": 1, "seed": 0,
         "max_new_tokens": 1, "k": 1}  # fmt: skip


MAX_REPEATS = 10_000

# The largest: drafts per round as in `speclab demo` (the adaptive policy's planning and
# Leviathan's formula take O(k), so a mistyped 10**9 would hang after the timing).
# BLAS threads: more than cores only wait for each other, and OpenBLAS silently ignores a
# number beyond the one it was built for (the report would record threads that never ran).
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
# Rounds: ten thousand are hours of decoding and far more than a stable median needs; the
# timings of every round are kept, so a mistyped 10**12 would ask for terabytes.
MOST = {"k": MAX_K, "blas_threads": CORES or 1, "repeats": MAX_REPEATS}


# Options of one benchmark only (given to the other, they would be silently ignored).
FORWARD_ONLY = {"n_past": 256, "greedy_tokens": 128}  # with their defaults
DECODE_ONLY = ("draft_weights", "scenario", "prompts_dir", "max_new_tokens", "drafter", "k")


def option_problem(args) -> str | None:
    """What is wrong with the numeric options or --out (None if nothing), found before any
    model is loaded or timed; --out is made and written to once (see report_files)."""
    for name, least in LEAST.items():
        given = getattr(args, name, None)
        for value in given if isinstance(given, list) else [given]:  # --k repeats
            if value is not None and value < least:
                return f"--{name.replace('_', '-')} must be at least {least}, got {value}"
            if value is not None and value > MOST.get(name, value):
                return f"--{name.replace('_', '-')} must be at most {MOST[name]}, got {value}"
    theirs = DECODE_ONLY if args.what == "forward" else FORWARD_ONLY
    if given := [name for name in theirs if getattr(args, name, None) is not None]:
        other = "decode" if args.what == "forward" else "forward"
        return f"--{given[0].replace('_', '-')} is an option of `speclab bench {other}`, not of {args.what}"
    for name, default in FORWARD_ONLY.items():
        if getattr(args, name, None) is None:
            setattr(args, name, default)
    try:
        names = (f"{args.what}.json", f"{args.what}.csv")  # the pair it writes there
        # or beside a full report (decode_reports.save_decode_report, bench.save_report)
        names += (f"{args.what}-partial.json", f"{args.what}-partial.csv")
        # with no --out, the message names the default folder as what it is, not as an option
        name = (
            None if args.out else f"the report folder {bench_dir()} (give --out to choose another)"
        )
        args.out = writable_folder(args.out or bench_dir(), name, files=names)
    except OSError as error:
        return str(error)
    return None


LOCK = ".speclab-bench.lock"  # in --out: held while a benchmark runs and writes there


class BenchBusy(Exception):
    """Another benchmark holds --out's lock."""


def _reports_in(folder) -> dict:
    """The report files in folder, each with its size and time: what a run changed."""
    try:
        files = [path for path in folder.iterdir() if path.suffix in (".json", ".csv")]
        return {path.name: (path.stat().st_size, path.stat().st_mtime_ns) for path in files}
    except OSError:  # no folder yet, or one that cannot be listed: nothing to compare
        return {}


def run(args) -> int:
    made = first_missing(args.out or bench_dir())  # the checks make --out: gone if it stays empty
    restore = sigterm_stops_cleanly()  # `kill` or `timeout` cleans up as Ctrl-C does
    before = _reports_in(args.out or bench_dir())
    try:
        if problem := option_problem(args):
            return bad_argument(f"speclab bench {args.what}: {problem}")
        busy = (f"another speclab bench is running with --out {args.out}; wait for it to end "
                "(two benchmarks at once also time each other's work), or give another --out")  # fmt: skip
        with one_at_a_time(args.out, busy, "--out", LOCK, BenchBusy):
            if args.what == "decode":
                return run_decode(args)
            return bench.run_forward(args)
    except BenchBusy as error:
        print(printable(f"speclab bench {args.what}: {error}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: say what became of the measurements
        out = args.out or bench_dir()
        if _reports_in(out) == before and (made is not None or not before):
            said = "stopped before the end: nothing saved"  # (a folder it made goes, below)
        elif _reports_in(out) == before:
            said = f"stopped before the end: nothing saved, the reports in {out} are as they were"
        else:
            said = f"stopped after its report was saved in {out}"
        print(printable(f"speclab bench {args.what}: {said}"), file=sys.stderr)
        raise  # the command line says "interrupted" and ends with 130 (143: SIGTERM)
    finally:
        restore()
        remove_if_unused(args.out or bench_dir(), made, LOCK)


def add_decode_arguments(parser):
    """Options of `speclab bench decode` only."""
    group = parser.add_argument_group("decode (lesson 06)")
    group.add_argument("--draft-weights", type=path_argument, default=None,
                       help="draft model file (default: the shipped draft)")  # fmt: skip
    group.add_argument("--scenario", action="append", default=None, metavar="NAME",
                       help="only this scenario (repeatable; default: all)")  # fmt: skip
    group.add_argument("--prompts-dir", type=path_argument, default=None,
                       help="folder of scenario files (default: data/prompts)")  # fmt: skip
    group.add_argument("--max-new-tokens", type=int, default=None,
                       help="tokens per decode (default: each prompt's own budget)")  # fmt: skip
    group.add_argument("--drafter", action="append", choices=bench_decode.DRAFTERS, default=None,
                       help="only this drafter (repeatable; default: both)")  # fmt: skip
    group.add_argument("--k", type=int, action="append", default=None,
                       help="fixed k to time (repeatable; default 1 2 4 8; at most 64)")  # fmt: skip


def settings_from_args(args) -> bench_decode.Settings:
    base = bench_decode.QUICK if args.quick else bench_decode.Settings()
    changes = {"seed": args.seed}
    if args.blas_threads is not None:
        changes["blas_threads"] = args.blas_threads
    if args.repeats is not None:
        changes["repeats"] = args.repeats
    if args.max_new_tokens is not None:
        changes["max_new_tokens"] = args.max_new_tokens
    if args.drafter:
        changes["drafters"] = tuple(dict.fromkeys(args.drafter))
    if args.k:
        changes["k_values"] = tuple(sorted(set(args.k)))
    return bench_decode.Settings(**(asdict(base) | changes))


def _load_model(path, dtype, which: str):
    """load(path), a refused file named with its role: two files both called target.npz, one
    of them the draft, read alike."""
    try:
        return load(path, dtype=dtype)
    except FileNotFoundError as error:
        raise FileNotFoundError(f"the {which}: {error}") from None
    except ValueError as error:
        raise ValueError(f"the {which}: {error}") from None


def run_decode(args) -> int:
    """`speclab bench decode`, its options already checked by `run`."""
    try:
        settings = settings_from_args(args)
        names = args.scenario and [as_typed(name) for name in args.scenario]  # a name in UTF-8
        scenarios = load_scenarios(args.prompts_dir, names)
        dtype = np.dtype(args.dtype)
        target_path = args.weights or weights_dir() / "target.npz"
        draft_path = args.draft_weights or weights_dir() / "draft.npz"
        target = _load_model(target_path, dtype, "target model (--weights)")
        # the draft in float32 whatever --dtype says: it only proposes (speclab.weights)
        draft = (_load_model(draft_path, DRAFT_DTYPE, "draft model (--draft-weights)")
                 if "model" in settings.drafters else None)  # fmt: skip
        if args.draft_weights is not None and draft is None:
            print(printable(f"note: --draft-weights {args.draft_weights} is not used: only the "
                            "lookup drafter runs (add --drafter model)"), file=sys.stderr)  # fmt: skip
        for model, which in ((target, "target model"), (draft, "draft model")):
            if model is not None:
                bench_decode.check_fits(model, which, scenarios, settings)
        load_now = load_average()
        if load_now and load_now[0] > 1.0:
            print(printable(f"warning: load average {load_now[0]:.1f}: another job shares the cores, "
                  "timings are contaminated"), file=sys.stderr)  # fmt: skip
        report = bench_decode.decode_report(target, draft, scenarios, settings,
                               (target_path, draft_path), progress=True)  # fmt: skip
    except (FileNotFoundError, ValueError) as error:
        print(printable(f"speclab bench decode: {error}"), file=sys.stderr)
        return 1
    try:  # --out was writable a moment ago; a full disk can still fail (and leaves the old pair)
        json_path, csv_path = decode_reports.save_decode_report(report, args.out)
        args.saved = (json_path, csv_path)  # speclab's main names them if stdout then fails
    except OSError as error:
        print(
            bench_decode.describe_report(report, full=decode_reports.is_full_run(report))
        )  # the run's figures are not lost
        print(printable(describe_blas(report["machine"])))
        print(printable(f"speclab bench decode: {bench.not_saved(error, args.out)}"), file=sys.stderr)  # fmt: skip
        return 1
    print(bench_decode.describe_report(report, full=decode_reports.is_full_run(report)))
    if json_path.name != "decode.json":
        print(printable(f"kept {args.out / 'decode.json'}: this run is not a full one of the "
                        "shipped models (or data/prompts/ could not be read to tell), so it is "
                        "saved beside it"))  # fmt: skip
    print(printable(describe_blas(report["machine"])))
    print(f"saved {shown(str(json_path))} and {shown(str(csv_path))}")
    return 0 if report["equal_to_greedy"]["all_equal"] else 3
