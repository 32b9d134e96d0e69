"""`speclab train`: the command line of speclab.train.

Reads the recipe (speclab.recipe) and its --set changes, checks every path before hours of
training (the run folder, --out, --init-from), runs `speclab.train.train` and prints one line:
the steps, the time and the held-out bits per byte. Every problem is one line and status 2
(bad arguments) or 1 (the run failed).
"""

import errno
import math
import os
import sys
from dataclasses import asdict
from pathlib import Path

from speclab.checkpoints import is_weights_file, read_record
from speclab.cli import bad_argument, path_argument, sigterm_stops_cleanly
from speclab.copy_metrics import MIN_N_CTX
from speclab.gpt import GPTConfig
from speclab.paths import weights_dir
from speclab.recipe import RECIPES, TrainConfig
from speclab.render import counted
from speclab.report_files import (
    first_missing,
    leads_into_a_loop,
    remove_empty_folders,
    remove_if_unused,
    writable_folder,
)
from speclab.streams import ClosedOutput
from speclab.student_files import printable
from speclab.train import same_command, train
from speclab.weights import config_problem, temporary_beside

EXIT_STATUS = (
    "0 trained (or exported), 1 a run that cannot go on (it diverged, a file it cannot read "
    "or write, not enough memory), 2 a bad argument or --set"
)


def add_arguments(parser):
    parser.add_argument("recipe", choices=sorted(RECIPES), help="which model to train")
    parser.add_argument("--run-dir", type=path_argument, default=None,
                        help="checkpoint folder (default runs/RECIPE); an existing one resumes")  # fmt: skip
    parser.add_argument("--out", type=path_argument, default=None,
                        help="weights file to write at every checkpoint (default: none)")  # fmt: skip
    parser.add_argument("--steps", type=int, default=None, help="override the recipe's steps")
    parser.add_argument(
        "--max-minutes",
        type=float,
        default=0,
        help="stop (with a checkpoint) after this many minutes of this sitting",
    )
    parser.add_argument(
        "--stop-at", type=int, default=0, metavar="STEP",
        help="stop at this step (the schedule still spans --steps): short runs to compare recipes",
    )  # fmt: skip
    parser.add_argument(
        "--set", action="append", default=[], metavar="FIELD=VALUE",
        help="change one field of the recipe, e.g. --set short_steps=0 (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--init-from", type=path_argument, default=None, metavar="CHECKPOINT",
        help="start a new --run-dir from another run's checkpoint, or at step 0 from a weights "
        "file (one with fewer layers than the recipe grows: new layers on top, starting as the identity)",
    )  # fmt: skip
    parser.add_argument(
        "--scale-attention", action="append", default=[], metavar="LAYER.HEAD=FACTOR",
        help="with --init-from: multiply that head's attention logits by FACTOR before the "
        "first step, e.g. --scale-attention 0.1=2 (repeatable; recorded in the weights)",
    )  # fmt: skip
    parser.add_argument(
        "--smoke", action="store_true", help="the tiny recipe, a few steps (for tests)"
    )


# the largest factor --scale-attention takes, against a slip of the keyboard (1e9): the factors
# measured in docs/model-history.md are 1.5 to 3
MAX_ATTENTION_SCALE = 100.0


def attention_scales(settings: list[str], n_layer: int, n_head: int,
                     option: str = "--scale-attention",
                     model: str = "the model") -> dict[tuple[int, int], float]:  # fmt: skip
    """LAYER.HEAD=FACTOR settings as {(layer, head): factor}; a clear error naming option for a
    bad one (a malformed setting, a head the model lacks, a factor out of range, a head twice).
    model: how the error names the model whose shape it checked against."""
    scales = {}
    for setting in settings:
        where, sep, text = setting.partition("=")
        layer, dot, head = where.strip().partition(".")
        try:  # plain digits only: int() would also read "-0", "+1" and "1_0"
            if not all(part.isascii() and part.isdecimal() for part in (layer, head)):
                raise ValueError
            key, factor = (int(layer), int(head)), float(text)
        except ValueError:
            key = factor = None
        if not sep or not dot or key is None:
            raise ValueError(f"{option} {setting!r}: expected LAYER.HEAD=FACTOR, "
                             "e.g. 0.1=2 (layer 0, head 1, logits times 2)")  # fmt: skip
        if not (0 <= key[0] < n_layer and 0 <= key[1] < n_head):
            raise ValueError(f"{option} {setting!r}: {model} has layers 0-{n_layer - 1} and "
                             f"heads 0-{n_head - 1}")  # fmt: skip
        if not (math.isfinite(factor) and 0 < factor <= MAX_ATTENTION_SCALE):
            raise ValueError(f"{option} {setting!r}: the factor must be above 0 and at most "
                             f"{MAX_ATTENTION_SCALE:g} (1: unchanged)")  # fmt: skip
        if key in scales and scales[key] != factor:
            raise ValueError(f"{option} names head {where.strip()} twice, with "
                             f"{scales[key]} and {factor}; give one")  # fmt: skip
        scales[key] = factor
    return scales


def with_overrides(cfg: TrainConfig, settings: list[str]) -> TrainConfig:
    """The recipe with --set FIELD=VALUE changes applied; a clear error for a bad one."""
    fields = asdict(cfg)
    changes = {}
    for setting in settings:
        name, sep, text = setting.partition("=")
        name = name.strip()
        if not sep or name not in fields:
            raise ValueError(
                f"--set {setting!r}: expected FIELD=VALUE with FIELD one of {', '.join(fields)}"
            )
        kind = type(fields[name])
        try:
            value = (
                float(text) if kind is float or "e" in text.lower() or "." in text else int(text)
            )
        except ValueError:
            value = None
        if value is not None and not math.isfinite(value):
            raise ValueError(f"--set {setting!r}: {name} must be a finite number")
        if value is None or kind is int and value != int(value):
            raise ValueError(f"--set {setting!r}: {text.strip()!r} is not a valid {kind.__name__}"
                             + (" (a whole number)" if kind is int else ""))  # fmt: skip
        if name in changes and changes[name] != kind(value):
            raise ValueError(f"--set {name} is given twice, as {changes[name]} and {kind(value)}; "
                             "give it once")  # fmt: skip
        changes[name] = kind(value)
    cfg = TrainConfig(**(fields | changes))
    positive = ("n_layer", "n_head", "n_embd", "n_ctx", "steps", "batch_tokens", "n_seq",
                "val_every", "lr")  # fmt: skip
    for name in positive:
        if getattr(cfg, name) <= 0:
            raise ValueError(f"--set {name}={getattr(cfg, name)}: must be above 0")
    for name in ("steps", "warmup"):  # a typo such as 1e12: an ETA of millions of hours
        if getattr(cfg, name) > MAX_STEPS:
            given = (
                f"{getattr(cfg, name):,}"
                if getattr(cfg, name) < 10**21
                else f"{getattr(cfg, name):.3g}"
            )
            raise ValueError(f"--set {name}={given}: at most {MAX_STEPS:,} (months on a CPU)")
    if cfg.batch_tokens > MAX_BATCH_TOKENS:  # 1e20 reached numpy as "array is too big"
        raise ValueError(f"--set batch_tokens={cfg.batch_tokens:,}: at most "
                         f"{MAX_BATCH_TOKENS:,} (the recipes take 4,096)")  # fmt: skip
    if cfg.batch_tokens < cfg.n_ctx:  # else a step silently takes a whole row of n_ctx
        raise ValueError(f"--set: batch_tokens={cfg.batch_tokens:,} is less than n_ctx="
                         f"{cfg.n_ctx:,}; a step takes whole rows, and stage 2's rows are the "
                         f"whole context: --set batch_tokens={cfg.n_ctx:,} or more, or a smaller "
                         "n_ctx")  # fmt: skip
    least = 8 * cfg.n_ctx + 4096  # train.py's floor: the rows and copy documents must fit
    if 0 < cfg.max_corpus_bytes < least:  # (validation takes a quarter: 2 * n_ctx + 1024)
        raise ValueError(f"--set max_corpus_bytes={cfg.max_corpus_bytes:,}: this recipe needs "
                         f"at least {least:,} (0: the whole standard library)")  # fmt: skip
    if cfg.n_ctx < MIN_N_CTX:
        raise ValueError(f"--set n_ctx={cfg.n_ctx}: must be at least {MIN_N_CTX}, the room "
                         "a copy probe needs (text, a snippet, a blank line, the snippet "
                         "again)")  # fmt: skip
    if cfg.n_seq > cfg.n_ctx:  # else stage 1 would silently train on rows of n_ctx
        raise ValueError(f"--set: n_seq={cfg.n_seq} (stage 1's row length) is longer than "
                         f"the context, n_ctx={cfg.n_ctx}; --set n_seq={cfg.n_ctx} "
                         "or less")  # fmt: skip
    fractions = ("copy_fraction", "verbatim_fraction", "interleave_fraction", "scramble_fraction",
                 "block_fraction", "top_level_fraction", "few_letters_fraction",
                 "teacher_share")  # fmt: skip
    if not 0 <= cfg.loop_rows <= 64 or cfg.loop_weight < 0:
        raise ValueError(f"--set loop_rows={cfg.loop_rows}, loop_weight={cfg.loop_weight}: "
                         "loop_rows must be 0 to 64 (each is a greedy continuation, every step), "
                         "loop_weight not negative")  # fmt: skip
    for name in (*fractions, "min_lr_ratio"):
        if not 0 <= getattr(cfg, name) <= 1:
            raise ValueError(f"--set {name}={getattr(cfg, name)}: must be between 0 and 1")
    if not 0 < cfg.hard_copy_weight <= 10_000 or cfg.hard_copy_bytes < 1:
        raise ValueError(f"--set hard_copy_weight={cfg.hard_copy_weight}, hard_copy_bytes="
                         f"{cfg.hard_copy_bytes}: the weight must be above 0 and at most "
                         "10,000 (1: off), the bytes at least 1")  # fmt: skip
    for name in (
        "weight_decay",
        "warmup",
        "short_steps",
        "max_corpus_bytes",
        "seed",
        "average_from",
    ):
        if getattr(cfg, name) < 0:
            raise ValueError(f"--set {name}={getattr(cfg, name)}: must not be negative")
    if cfg.grad_clip <= 0:
        raise ValueError(f"--set grad_clip={cfg.grad_clip}: must be above 0 (the largest "
                         "gradient norm let through; 1.0 in every recipe)")  # fmt: skip
    problem = config_problem(cfg.model_config)
    if problem:  # trained for hours, then refused by every loader: say so before the first step
        raise ValueError(f"--set: speclab cannot load a model of this shape ({problem})")
    return cfg


MAX_STEPS = 10_000_000  # about four months at a second a step
MAX_BATCH_TOKENS = 1 << 22  # 4,194,304 bytes a step: gigabytes of activations already


def _out_problem(out: Path, run_dir: Path, init_from: Path | None,
                 teacher: Path | None = None) -> str | None:  # fmt: skip
    """Why the weights cannot be written to out (checked before hours of training), or None."""
    if teacher is not None and out.exists() and teacher.exists() and out.samefile(teacher):
        return (f"--out {out} is the target this run learns from (teacher_share); the new "
                "weights need a file of their own (the first checkpoint would replace it)")  # fmt: skip
    if out.resolve() == (run_dir / "checkpoint.npz").resolve():
        return f"--out {out} is the run's checkpoint; the weights need a file of their own"
    if init_from is not None and out.resolve() == init_from.resolve():
        return (f"--out {out} is the file --init-from starts from; the new weights need a file "
                "of their own (the first checkpoint would replace the old ones)")  # fmt: skip
    if out.is_file() and not out.stat().st_mode & 0o222:
        return f"--out {out} is read-only; it is left as it is (make it writable, or give another)"
    if out.is_dir() or out.resolve() == run_dir.resolve():
        return f"--out {out} is a folder; give a file name, e.g. {out / 'target.npz'}"
    if out.exists() and not out.is_file():
        return f"--out {out} is a pipe or a device; give a weights file name ending in .npz"
    if out.suffix != ".npz":
        like = out.with_suffix(".npz")  # a name that is free: x.npz may be another file
        like = next(
            name
            for name in [like] + [like.with_stem(f"{like.stem}-{i}") for i in range(2, 1000)]
            if not name.exists()
        )
        return f"--out {out}: a weights file's name ends in .npz, e.g. {like}"
    if out.exists() and not is_weights_file(out):
        return f"--out {out} exists and is not a speclab weights file; it is left as it is"
    try:
        writable_folder(out.parent, name=f"--out {out}: its folder {out.parent}")
        temporary_beside(out).unlink()  # the export's own temporary name (too long a name?)
    except OSError as error:
        return str(error) if not error.strerror else f"--out {out}: {error.strerror}"
    return None


def _other_shape(out: Path, cfg: TrainConfig) -> str | None:
    """Why out holds another model's weights that this run would replace in silence, or None.
    (Weights of this run's own shape may be an earlier export of the same run: replaced.)"""
    import numpy as np

    from speclab.weights import load

    if not out.is_file():
        return None
    try:
        config = load(out, dtype=np.float32).config
    except (OSError, ValueError):
        return None  # not weights: _out_problem has said so already
    shape = cfg.model_config
    if config == shape:
        return None

    def described(c: GPTConfig) -> str:
        return f"{counted(c.n_layer, 'layer')} of width {c.n_embd}, context {c.n_ctx}"

    return (f"--out {out} holds weights of another shape ({described(config)}) that this run "
            f"({described(shape)}) would replace; give another --out, or move that file away")  # fmt: skip


def _first_validation(path: Path) -> dict | None:
    """The first validation a weights file or a checkpoint records (its step, time and held-out
    bits per byte): a run's fingerprint, kept when it resumes or goes on in a new --run-dir
    with --init-from. None if it has none."""
    import zipfile

    import numpy as np

    from speclab.weights import load

    try:
        if is_weights_file(path):
            history = load(path, dtype=np.float32).meta.get("history")
        else:  # the record alone, its size checked first: numpy allocates what a header claims
            history = read_record(path)["log"]["history"]
    except (OSError, ValueError, KeyError, TypeError, RecursionError, zipfile.BadZipFile):
        return None  # unreadable (RecursionError: too deep): the checks of the run say why
    return _fingerprint(history)


def _fingerprint(history) -> dict | None:
    """The first entry of a validation history, reduced to what an export keeps; None if none."""
    if not isinstance(history, list) or not history or not isinstance(history[0], dict):
        return None
    # the export leaves out the copy test's details, so compare what both keep
    return {k: history[0].get(k) for k in ("step", "seconds", "val_bits_per_byte")}


def _other_run(out: Path, run_dir: Path, init_from: Path | None) -> str | None:
    """Why out holds another run's trained weights that this run would replace, or None.

    A run exports its weights to --out at every validation. Weights whose first validation
    is the one of this run's checkpoint (or of --init-from's, for a new run going on from it)
    are an earlier export of this run; any other trained weights are another run's result,
    which a fresh run with the same --out replaced at its first validation, without a word.
    """
    import numpy as np

    from speclab.weights import load

    if not out.is_file() or not is_weights_file(out):
        return None
    try:
        meta = load(out, dtype=np.float32).meta  # read once: the fingerprint and the message
    except (OSError, ValueError):
        return None  # not weights: _out_problem has said so already
    theirs = _fingerprint(meta.get("history"))
    if theirs is None:  # weights with no validation yet: nothing measured is lost
        return None
    source = run_dir / "checkpoint.npz"
    if not source.is_file():
        source = init_from
    if source is not None and _first_validation(source) == theirs:
        return None
    made = f", made by `{meta['command']}`" if meta.get("command") else ""
    return (f"--out {out} holds another run's weights ({meta.get('trained_steps')} steps, "
            f"{meta.get('val_bits_per_byte')} bits/byte{made}), which this run would replace at "
            "its first validation; give another --out, or move that file away")  # fmt: skip


def _recipe(args, name: str) -> TrainConfig:
    """The recipe the arguments ask for; ValueError naming the first bad argument."""
    cfg = RECIPES[name]
    if args.steps is not None:
        if args.steps < 1:
            raise ValueError("--steps must be at least 1")
        if args.steps > MAX_STEPS:
            raise ValueError(f"--steps {args.steps:,}: at most {MAX_STEPS:,} (months on a CPU)")
        cfg = TrainConfig(**(asdict(cfg) | {"steps": args.steps}))
    if args.smoke and args.recipe != "smoke":
        raise ValueError(f"--smoke trains the tiny smoke recipe, not {args.recipe!r}; "
                         "drop --smoke or name the recipe 'smoke'")  # fmt: skip
    if not args.max_minutes >= 0:  # also nan
        raise ValueError("--max-minutes must be positive (0: no limit)")
    if args.stop_at < 0:
        raise ValueError("--stop-at must be a step number (0: no early stop)")
    cfg = with_overrides(cfg, args.set)
    if args.steps is not None and cfg.steps != args.steps:
        raise ValueError(f"--steps {args.steps} and --set steps={cfg.steps} disagree; give one")
    if args.scale_attention and args.init_from is None:
        raise ValueError("--scale-attention changes the weights a run starts from: give "
                         "--init-from a checkpoint or a weights file")  # fmt: skip
    return cfg


def _path_problem(args, run_dir: Path, cfg: TrainConfig | None = None) -> str | None:
    """Why the run folder, --init-from or --out cannot be used (before hours of training)."""
    for path in (run_dir, run_dir / "checkpoint.npz", args.out, args.init_from):
        if path is not None and leads_into_a_loop(path):
            return (f"{path} leads into a symbolic link loop (a link that points back to "
                    "itself); remove the link or give another path")  # fmt: skip
    if run_dir.is_symlink() and not run_dir.exists():  # mkdir would say only "File exists"
        return (f"--run-dir {run_dir} is a symbolic link to {os.readlink(run_dir)}, which does "
                "not exist; make that folder or give another --run-dir")  # fmt: skip
    if run_dir.exists() and not run_dir.is_dir():
        return f"--run-dir {run_dir} is a file; give a folder"
    checkpoint = run_dir / "checkpoint.npz"
    if checkpoint.exists() and not checkpoint.is_file():
        return (f"{checkpoint} is not a regular file (a folder, a pipe or a device); move it "
                "away or give another --run-dir")  # fmt: skip
    if args.init_from is not None and args.init_from.is_dir():
        inside = args.init_from / "checkpoint.npz"
        hint = f"; its checkpoint is {inside}" if inside.is_file() else ""
        return f"--init-from {args.init_from} is a folder; give a checkpoint.npz or a weights file{hint}"
    if args.init_from is not None and not args.init_from.exists():
        return f"--init-from {args.init_from}: no such checkpoint"
    if args.init_from is not None and not args.init_from.is_file():
        return f"--init-from {args.init_from} is not a file (a pipe or a device); give a checkpoint"
    if args.init_from is not None and (run_dir / "checkpoint.npz").exists():
        return (f"{run_dir} already has a checkpoint, which resumes; --init-from starts a new "
                f"--run-dir. To go on with the run in {run_dir}, give "
                f"{same_command(args.init_from, args.scale_attention)}")  # fmt: skip
    teacher = weights_dir() / "target.npz" if cfg is not None and cfg.teacher_share else None
    if args.out is not None and (
        problem := _out_problem(args.out, run_dir, args.init_from, teacher)
    ):
        return problem
    if args.out is not None and cfg is not None and (problem := _other_shape(args.out, cfg)):
        return problem
    if (args.out is not None and not _is_shipped(args.out)  # shipping a model: a note, below
            and (problem := _other_run(args.out, run_dir, args.init_from))):  # fmt: skip
        return problem
    try:  # the checkpoints go there: a folder that cannot take them would cost the run
        writable_folder(run_dir, name=f"--run-dir {run_dir}")
    except OSError as error:
        return str(error)
    return None


def _summary(name: str, cfg: TrainConfig, log: dict, args=None) -> str:
    """The run in one line: steps, seconds, held-out bits per byte (and of the mean)."""
    last = log["history"][-1] if log["history"] else {}
    mean = ""
    if "average" in last:
        count, first = log["average"]["count"], log["average"]["first_step"]
        mean = (f"; the mean of the weights at {count} validations from step {first} on: "
                f"{last['average']['val_bits_per_byte']} bits/byte")  # fmt: skip
    elif cfg.average_from:  # asked for a mean, got the last weights: say so
        mean = f"; no mean yet: no validation at or after average_from={cfg.average_from}"
    step = last.get("step", 0)
    unfinished = ""
    if step < cfg.steps:  # --stop-at or --max-minutes: it looked finished
        again = same_command(
            getattr(args, "init_from", None),
            getattr(args, "scale_attention", None),
            without=("--stop-at",) if getattr(args, "stop_at", None) else (),
        )
        if getattr(args, "max_minutes", None):  # the same time again might stop it at once
            again += " and" * (" without " in again) + " with more --max-minutes (or none)"
        unfinished = (f"; stopped at step {step:,} of the recipe's {cfg.steps:,}: {again} "
                      "goes on from its checkpoint")  # fmt: skip
    return (f"{name}: {counted(step, 'step')}, {log['seconds']:.0f} s, "
            f"validation {last.get('val_bits_per_byte')} bits/byte{mean}{unfinished}")  # fmt: skip


def run(args) -> int:
    name = "smoke" if args.smoke else args.recipe
    run_dir = args.run_dir or Path("runs") / name
    made = first_missing(run_dir)  # the outermost folder the checks below will make
    try:  # --out's too; a name too long for the file system is named by _run's check of --out
        out_made = first_missing(args.out.parent) if args.out is not None else None
    except OSError:
        out_made = None
    restore = sigterm_stops_cleanly()  # until training takes it over: a stop in start-up
    try:
        return _run(args, name, run_dir)
    finally:
        restore()
        if args.out is not None:  # first: its folder may be inside the run folder
            remove_empty_folders(args.out.parent, out_made)
        remove_if_unused(run_dir, made)  # a failed start: no empty folders left behind


def _is_shipped(out: Path) -> bool:
    """Whether `out` is one of the weights files shipped in data/weights/."""
    from speclab.paths import weights_dir

    try:
        return any(out.resolve() == (weights_dir() / f"{name}.npz").resolve()
                   for name in ("target", "draft"))  # fmt: skip
    except OSError:
        return False


def _run(args, name: str, run_dir: Path) -> int:
    if isinstance(sys.stdout, ClosedOutput):  # started with no stdout (`>&-`, a launcher):
        # what a run prints is in its checkpoint's record too, so the run goes on, where a
        # first validation's line stopped it
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (for the run)
    try:
        cfg = _recipe(args, name)
        # checked against the recipe's shape, which --init-from's weights must have too
        scales = attention_scales(args.scale_attention, cfg.n_layer, cfg.n_head,
                                  model=f"the {name} recipe's model")  # fmt: skip
        problem = _path_problem(args, run_dir, cfg)
    except ValueError as error:
        problem = str(error)
    if problem:
        return bad_argument(f"speclab train: {problem}")
    if args.out is not None and _is_shipped(args.out):  # allowed: how a new model is shipped
        print(printable(f"speclab train: note: --out {args.out} replaces the shipped weights the "
                        f"lessons use, at every validation; `git checkout -- {args.out}` brings "
                        "them back"), file=sys.stderr)  # fmt: skip
    try:
        log = train(cfg, run_dir, out=args.out, max_minutes=args.max_minutes, stop_at=args.stop_at,
                    init_from=args.init_from, scale_heads=scales)  # fmt: skip
    except BrokenPipeError:  # `speclab train ... | head -1`: the run stops with its reader
        if (run_dir / "checkpoint.npz").is_file():
            again = same_command(args.init_from, args.scale_attention)
            said = f"the last validation's checkpoint is kept in {run_dir}, and {again} goes on from it"
        else:
            said = "nothing was saved yet"
        try:  # on stderr, which the pipe leaves to the terminal
            print(printable(f"speclab train: stopped, as its output's reader went away (a closed "
                            f"pipe: | head); {said}"), file=sys.stderr)  # fmt: skip
        except OSError:
            pass
        raise  # the command line's own handling: status 141, no traceback
    except OSError as error:
        saved = (run_dir / "checkpoint.npz").is_file()  # then --init-from would be refused
        again = same_command(args.init_from, args.scale_attention) if saved else "the same command"
        kept = (f"any checkpoint already in {run_dir} is kept whole, and {again} goes "
                "on once there is room")  # fmt: skip
        if error.errno in (errno.ENOSPC, errno.EDQUOT) and error.filename is None:
            # checkpoints and weights name their file (weights.named): this was the log's line
            print(printable(f"speclab train: cannot write the standard output ({error.strerror}: "
                            f"the disk it goes to is full); {kept}"), file=sys.stderr)  # fmt: skip
        elif error.errno in (errno.ENOSPC, errno.EDQUOT):
            print(printable(f"speclab train: no space left on the disk of {error.filename}; "
                            f"{kept}"), file=sys.stderr)  # fmt: skip
        else:
            print(printable(f"speclab train: {error}"), file=sys.stderr)
        return 1
    except ValueError as error:
        print(printable(f"speclab train: {error}"), file=sys.stderr)
        return 1
    except MemoryError as error:  # a recipe too big for this machine, e.g. --set batch_tokens=1e12
        print(printable(f"speclab train: not enough memory for this recipe ({error})"),
              file=sys.stderr)  # fmt: skip
        return 1
    print(_summary(name, cfg, log, args))
    return 0
