"""Training the target and draft models in numpy, with hand-written backward passes.

Used to make `data/weights/target.npz` and `draft.npz` (lessons 04–07); `speclab train`
runs it (its command line: speclab.train_cli). The gradients come from speclab.backprop (each
layer's forward and backward side by side, as in micrograd); this module holds the loop
penalty, the optimiser, the averaging of the weights and the export. Elsewhere: the recipe
(`TrainConfig`, RECIPES) in speclab.recipe; the corpus, its copy documents and batches in
speclab.corpus; the copy gap and the copy test, measured at every validation, in
speclab.copy_metrics; the checkpoints (what one holds, resuming, --init-from, growing a
model) in speclab.checkpoints.

Two optional parts of a recipe act on what the lessons' prompts look like: rows that start at
a top-level line (short prompts are file tops; speclab.corpus cuts them), and an
unlikelihood penalty on the model's own greedy loops (`loop_rows`).

Optimiser: AdamW (Loshchilov & Hutter 2019) with linear warm-up, cosine decay, and
gradient clipping by global norm. Randomness comes from one seeded np.random.Generator,
saved in every checkpoint (speclab.checkpoints).

Left out: dropout, mixed precision, data parallelism, and BPE (the vocabulary is bytes).
"""

import contextlib
import json
import math
import platform
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from speclab.backprop import (
    loss_and_grads,
    loss_and_grads_forward_only,
    next_byte_probs,
    unlikelihood_and_grads,
)
from speclab.checkpoints import save_checkpoint, start_run
from speclab.cli import Terminated
from speclab.copy_metrics import (
    PROBES,
    SNIPPET_BYTES,
    copy_gap,
    copy_probes,
    copy_score,
    held_out_functions,
)
from speclab.corpus import batch, load_corpus
from speclab.gpt import GPTConfig
from speclab.recipe import TrainConfig
from speclab.report_files import (
    broken_link,
    first_missing,
    one_at_a_time,
    remove_if_unused,
    remove_unless_held,
)
from speclab.weights import file_sha256, flatten, save, unflatten

# --- the loop penalty --------------------------------------------------------------------


def own_loops(params, config: GPTConfig, text: np.ndarray, rng, n_rows: int,
              n_prompt: int = 256, n_new: int = 128):  # fmt: skip
    """The model's own greedy continuations of training text, and where they loop.

    Each row is a prompt of n_prompt / 8 .. n_prompt bytes of training text from a line's
    start (short prompts loop most) and the model's greedy continuation, to n_prompt + n_new
    bytes in all. Returns inputs, targets [n_rows, n_prompt + n_new - 1], penalize, True at
    each byte of a continuation that repeats its own earlier output for 16 bytes or more (a
    "loop" in speclab.scenarios.output_provenance, as `speclab bench` counts it), and the
    prompts' lengths. Copying the prompt is not penalised: prompt lookup feeds on it.
    """
    from speclab.decoding import greedy_decode
    from speclab.scenarios import output_provenance
    from speclab.weights import Model

    model = Model(config, params)
    rows = np.empty((n_rows, n_prompt + n_new), dtype=np.int64)
    penalize = np.zeros((n_rows, n_prompt + n_new - 1), dtype=bool)
    lengths = rng.integers(max(1, n_prompt // 8), n_prompt + 1, size=n_rows)
    for row, length in enumerate(lengths):
        start = int(rng.integers(0, text.size - 2 * n_prompt))
        start += text[start : start + n_prompt].tobytes().find(b"\n") + 1  # a line's start
        prompt = [int(t) for t in text[start : start + length]]
        new = greedy_decode(model, prompt, n_prompt + n_new - length).tokens
        rows[row] = prompt + new
        labels = output_provenance(prompt, new)
        penalize[row, length - 1 :] = [label == "loop" for label in labels]  # targets are shifted
    return rows[:, :-1], rows[:, 1:], penalize, lengths


def loop_penalty(params, config: GPTConfig, cfg: TrainConfig, text: np.ndarray, rng):
    """The loop penalty's gradients (flat, weighted) and the share of the new bytes that loop.

    Near-certain loops give gradients tens of times the cross-entropy's, which would swamp
    it under the shared clip, so the penalty is clipped to cfg.grad_clip on its own first.
    """
    n_prompt, n_new = min(256, cfg.n_ctx // 2), min(128, cfg.n_ctx // 4)  # as the bench's
    inputs, targets, penalize, lengths = own_loops(params, config, text, rng, cfg.loop_rows,
                                                   n_prompt, n_new)  # fmt: skip
    _, grads = unlikelihood_and_grads(params, cfg.n_head, inputs, targets,
                                      np.arange(inputs.shape[1]), penalize)  # fmt: skip
    grads = flatten(grads)
    scale = cfg.loop_weight * min(1.0, cfg.grad_clip / (global_norm(grads) + 1e-6))
    new_bytes = cfg.loop_rows * (n_prompt + n_new) - int(lengths.sum())
    return {name: scale * grad for name, grad in grads.items()}, penalize.sum() / new_bytes


# --- optimiser --------------------------------------------------------------------------


def row_length(step: int, cfg: TrainConfig) -> int:
    """Stage 1 trains on rows of n_seq bytes, stage 2 on rows of the whole context."""
    return min(cfg.n_seq, cfg.n_ctx) if step < cfg.short_steps else cfg.n_ctx


def learning_rate(step: int, cfg: TrainConfig) -> float:
    """Linear warm-up to cfg.lr, then a cosine down to cfg.lr * cfg.min_lr_ratio."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = min(1.0, (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup))
    cosine = 0.5 * (1 + np.cos(np.pi * progress))
    return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * cosine)


def global_norm(flat_grads: dict) -> float:
    return float(
        np.sqrt(sum(float((g.astype(np.float64) ** 2).sum()) for g in flat_grads.values()))
    )


def adamw_step(flat_params, flat_grads, state, step, lr, cfg: TrainConfig):
    """One AdamW update in place; returns the gradient norm before clipping."""
    norm = global_norm(flat_grads)
    clip = min(1.0, cfg.grad_clip / (norm + 1e-6))
    beta1, beta2, eps = 0.9, 0.95, 1e-8
    for name, param in flat_params.items():
        grad = flat_grads[name] * clip
        m, v = state["m"][name], state["v"][name]
        m *= beta1
        m += (1 - beta1) * grad
        v *= beta2
        v += (1 - beta2) * grad * grad
        m_hat = m / (1 - beta1 ** (step + 1))
        v_hat = v / (1 - beta2 ** (step + 1))
        if param.ndim == 2:
            param *= 1 - lr * cfg.weight_decay
        param -= lr * m_hat / (np.sqrt(v_hat) + eps)
    return norm


# --- evaluation -------------------------------------------------------------------------


def validation_rows(n_ctx: int, val: np.ndarray, n_rows: int = 16) -> np.ndarray:
    """The same fixed windows of the validation files at every validation: [n_rows, n_seq + 1]
    bytes, n_seq = min(n_ctx, 512) (inputs are a row's first n_seq, targets its last)."""
    n_seq = min(n_ctx, 512)
    starts = np.linspace(0, val.size - n_seq - 2, n_rows).astype(np.int64)
    return np.stack([val[s : s + n_seq + 1] for s in starts]).astype(np.int64)


def validation_bits_per_byte(params, cfg: TrainConfig, val: np.ndarray, n_rows: int = 16):
    """Mean cross-entropy in bits per byte on fixed windows of the validation files."""
    rows = validation_rows(cfg.n_ctx, val, n_rows)
    positions = np.arange(rows.shape[1] - 1)
    losses = [
        loss_and_grads_forward_only(
            params, cfg.n_head, rows[i : i + 4, :-1], rows[i : i + 4, 1:], positions
        )
        for i in range(0, n_rows, 4)
    ]
    return float(np.mean(losses) / np.log(2))


# --- the run: training, resuming (speclab.checkpoints), export ---------------------------


def train(cfg: TrainConfig, run_dir: Path, out: Path | None = None, max_minutes: float = 0,
          progress: bool = True, stop_at: int = 0, init_from: Path | None = None,
          scale_heads: dict[tuple[int, int], float] | None = None) -> dict:  # fmt: skip
    """Train (or resume) in run_dir; write the weights to out. Returns the training record.

    stop_at: stop after this step (with a checkpoint) although the schedule spans cfg.steps,
    so that two recipes can be compared at equal steps and either run resumed later.
    init_from: a new run_dir starts from another run's checkpoint (weights, AdamW state,
    step, generator and history) and goes on with this recipe; the log records what changed.
    Given a weights file instead (no optimiser state), the run starts at step 0 from them;
    a model with fewer layers than the recipe is grown first (speclab.checkpoints.grown).
    scale_heads: with init_from, {(layer, head): factor} multiplies those heads' attention
    logits before the first step (speclab.checkpoints.scale_attention); the log records it.
    """
    made = first_missing(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        with one_at_a_time(
            run_dir,
            f"another training is running in {run_dir}; wait for it to "
            "end, or give another --run-dir",
            "--run-dir",
        ), _out_held(out):  # fmt: skip
            return _train(
                cfg, run_dir, out, max_minutes, progress, stop_at, init_from, scale_heads or {}
            )
    except BaseException:
        remove_if_unused(run_dir, made, ".lock", *([_out_lock(out)] if out is not None else []))
        raise


def _out_lock(out: Path) -> str:
    """The name of the lock file `_out_held` keeps beside `out`."""
    return f".{out.name}.speclab-train.lock"


@contextlib.contextmanager
def _out_held(out: Path | None):
    """One training at a time writing `out`: two runs started together with the same --out
    (and other run folders) both passed the check for another run's weights, and the later
    one's weights silently replaced the earlier one's. The lock file sits beside `out` while
    the run lasts, and is removed after it (the folder may be a student's own)."""
    if out is None or not out.parent.is_dir():
        yield
        return
    busy = (f"another training is writing its weights to {out}; wait for it to end, or give "
            "another --out")  # fmt: skip
    try:
        with one_at_a_time(out.parent, busy, "--out", _out_lock(out)):
            yield
    finally:
        with contextlib.suppress(OSError):  # gone already, or not ours; held by another run: kept
            remove_unless_held(out.parent / _out_lock(out))


# A loss (nats per byte) no training that learns reaches: guessing uniformly costs ln 256 = 5.5;
# 50 means the bytes that came were given e^-50 on average. lr=1e3 reached 8e15 bits per byte
# with finite weights and "finished" with exit status 0.
DIVERGED_NATS = 50.0
RUNNING = ("train_loss_ema", "own_loop_share_ema")  # running means a checkpoint carries on


def _train(cfg, run_dir, out, max_minutes, progress, stop_at, init_from, scale_heads) -> dict:
    from tqdm.auto import tqdm

    checkpoint = run_dir / "checkpoint.npz"
    if checkpoint.is_symlink() and not checkpoint.exists():  # else read as no checkpoint: step 0
        raise ValueError(f"{checkpoint} {broken_link(checkpoint)}: remove the link to start "
                         "afresh, or point it at the checkpoint to resume")  # fmt: skip
    config = cfg.model_config
    corpus = load_corpus(cfg.max_corpus_bytes)
    for split, least in (("train", 8 * cfg.n_ctx + 4096), ("val", 2 * cfg.n_ctx + 1024)):
        if corpus[split].size < least:  # rows, copy documents and probes cut from it must fit
            raise ValueError(f"the {split} text is {corpus[split].size:,} bytes; this recipe needs "
                             f"at least {least:,} (raise max_corpus_bytes)")  # fmt: skip
    functions = held_out_functions(corpus["val"], corpus["train"])
    probes = {
        "near": copy_probes(corpus["val"], cfg.n_ctx),
        "far": copy_probes(corpus["val"], cfg.n_ctx, far=True),
    }
    params, state, step, rng, log = start_run(cfg, checkpoint, init_from, stop_at, scale_heads)
    teacher = _teacher(cfg, log) if cfg.teacher_share else None
    flat_params = flatten(params)  # views into params: updates in place reach both
    started_at_step = step
    started = time.perf_counter()
    seconds_before = log["seconds"]
    # disable only to turn the bar off: an explicit disable=False would override TQDM_DISABLE=1
    quiet = {} if progress else {"disable": True}
    bar = tqdm(total=cfg.steps, initial=step, desc="train", unit="step", **quiet)
    # running means of the training loss and (loop_ema) of the share of its own new bytes that
    # loop; a resumed run goes on with the checkpoint's, as if it had never stopped
    loss_ema, loop_ema = (log.get("running", {}).get(key) for key in RUNNING)

    def keep_running_means() -> None:  # in the log, so in the checkpoint saved next
        means = (None if mean is None else float(mean) for mean in (loss_ema, loop_ema))
        log["running"] = dict(zip(RUNNING, means, strict=True))

    last_step = min(cfg.steps, stop_at) if stop_at else cfg.steps
    weighted = cfg.hard_copy_weight != 1.0  # 1: the plain mean, as before the option

    def validate(step: int, elapsed: float, training: dict) -> None:
        """Measure, log, checkpoint and export the run at step (a validation)."""
        entry = {"step": step, "seconds": round(elapsed, 1)} | training
        bar.set_postfix_str(f"validating step {step}: held-out text, copy probes, copy test")
        entry |= measure(params, cfg, config, corpus["val"], probes, functions, teacher)
        bar.set_postfix_str("")  # the next step shows its loss again
        if not entry["val_bits_per_byte"] < DIVERGED_NATS / math.log(2):  # a useless model
            bar.close()
            what = f"the held-out loss became {entry['val_bits_per_byte']}"
            raise ValueError(_diverged(step - 1, what, learning_rate(step - 1, cfg), checkpoint))
        if loop_ema is not None:
            entry["own_loop_share_ema"] = round(float(loop_ema), 3)
        if cfg.average_from and step >= cfg.average_from:
            add_to_average(state, log, flat_params, step)
            mean = averaged(state, log, cfg.n_layer)
            entry["average"] = measure(mean, cfg, config, corpus["val"], probes, functions,
                                       teacher)  # fmt: skip
        log["history"].append(entry)
        log["seconds"] = elapsed
        keep_running_means()
        save_checkpoint(checkpoint, params, state, step, rng, cfg, log)
        if out is not None:  # before the line below: a closed pipe must not cost the export
            export(params, config, cfg, corpus["record"], log, out, state)
        shown = {k: v for k, v in entry.items() if k not in ("copy", "average")}
        shown["copied"] = entry["copy"]["bytes_copied"]
        if "average" in entry:
            shown["average_copied"] = entry["average"]["copy"]["bytes_copied"]
        bar.write(json.dumps(shown))

    ctrl_c, restore_ctrl_c, stop = _ctrl_c_after_the_step()
    try:  # the bar closed on the way out, Ctrl-C too: not redrawn after "interrupted"
        while step < last_step:
            loss, norm, lr, looped = _step(params, flat_params, state, step, rng, cfg,
                                           corpus["train"], teacher, weighted, checkpoint)  # fmt: skip
            if looped is not None:
                loop_ema = looped if loop_ema is None else 0.9 * loop_ema + 0.1 * looped
            step += 1
            loss_ema = loss if loss_ema is None else 0.95 * loss_ema + 0.05 * loss
            bar.update(1)
            bar.set_postfix(loss=f"{loss_ema:.3f}", lr=f"{lr:.1e}")
            elapsed = seconds_before + time.perf_counter() - started
            out_of_time = max_minutes and time.perf_counter() - started > max_minutes * 60
            if step % cfg.val_every == 0 or step == last_step or out_of_time:
                validate(step, elapsed, {"train_loss_ema": round(loss_ema, 4),
                                         "grad_norm": round(norm, 3)})  # fmt: skip
            if out_of_time:
                break
            if ctrl_c() and step == last_step:  # nothing left to stop: the run ends as planned
                bar.write(f"the stop came in the last step ({step}); it is done and saved, so "
                          "the run ends as it would have", file=sys.stderr)  # fmt: skip
            elif ctrl_c():  # a whole step done: save it, so that the run resumes from here
                log["seconds"] = elapsed
                keep_running_means()
                save_checkpoint(checkpoint, params, state, step, rng, cfg, log)
                bar.write(f"stopped: step {step} saved in {checkpoint}; "
                          f"{same_command(init_from, scale_heads)} goes on from there",
                          file=sys.stderr)  # beside the Ctrl-C notice  # fmt: skip
                raise stop()
    finally:
        restore_ctrl_c()
        bar.close()
    if step == started_at_step and step > 0:
        # the checkpoint was already at or past the last step: export it as it is
        until = f"--stop-at {stop_at}" if stop_at and stop_at < cfg.steps else f"steps={cfg.steps}"
        bar.write(f"checkpoint already at step {step} ({until}): nothing to train")
        if not log["history"] or log["history"][-1]["step"] != step:
            # saved by a Ctrl-C between validations: the validation a run ending here makes
            validate(step, log["seconds"], {})  # which exports to out, if given
        elif out is not None:
            export(params, config, cfg, corpus["record"], log, out, state)
        if out is not None:
            bar.write(f"exported to {out}")  # said once it is so (a full disk can stop it)
    return log


def _step(params, flat_params, state, step, rng, cfg, text, teacher, weighted, checkpoint):
    """One optimiser step at `step`: a batch of rows from text, its loss and gradients (with
    the teacher's distribution and the loop penalty where the recipe asks for them), AdamW.
    Returns (loss, gradient norm, learning rate, share of own new bytes that loop or None)."""
    n_seq = row_length(step, cfg)
    n_batch = max(1, cfg.batch_tokens // n_seq)
    inputs, targets, *weights = batch(text, n_batch, n_seq, rng, cfg, weighted)
    positions = np.arange(n_seq)  # always from 0: no offsets (see speclab.recipe)
    soft = {}
    if teacher is not None:  # distillation: the target's own next-byte distribution
        soft["teacher"] = next_byte_probs(teacher.params, teacher.config.n_head, inputs, positions)
        soft["teacher_share"] = cfg.teacher_share
    with np.errstate(over="ignore", invalid="ignore"):  # a diverged run is stopped below
        loss, grads = loss_and_grads(params, cfg.n_head, inputs, targets, positions, *weights,
                                     **soft)  # fmt: skip
    lr = learning_rate(step, cfg)
    if not loss < DIVERGED_NATS:  # inf, NaN, or a finite loss no learner reaches
        raise ValueError(_diverged(step, f"the loss became {loss}", lr, checkpoint))
    flat_grads, looped = flatten(grads), None
    if cfg.loop_rows:  # unlikelihood on the model's own loops (Welleck et al. 2019)
        loop_grads, looped = loop_penalty(params, cfg.model_config, cfg, text, rng)
        for name, grad in loop_grads.items():
            flat_grads[name] = flat_grads[name] + grad
    with np.errstate(over="ignore", invalid="ignore"):
        norm = adamw_step(flat_params, flat_grads, state, step, lr, cfg)
    if not all(np.isfinite(value).all() for value in flat_params.values()):
        raise ValueError(_diverged(step, "the weights became infinite or NaN", lr, checkpoint))
    return loss, norm, lr, looped


def _ctrl_c_after_the_step():
    """A Ctrl-C during a training step takes effect when the step is done: AdamW updates the
    weights in place, and a step cut in the middle would be saved half done. Returns
    (pressed, restore): pressed() says whether Ctrl-C came; restore() puts the old handlers
    back. A second Ctrl-C stops at once (the work since the last checkpoint is then lost).
    SIGTERM, what `kill` and `timeout` send, is taken as a Ctrl-C."""
    pressed = []

    def note(signum, frame):
        if pressed:
            raise Terminated if signum != signal.SIGINT else KeyboardInterrupt
        pressed.append(signum)
        what = "Ctrl-C" if signum == signal.SIGINT else "stop signal (SIGTERM)"
        print(f"\n{what}: stopping when this step is done, and its validation if one is "
              "running (up to a minute); Ctrl-C again: at once, unsaved", file=sys.stderr)  # fmt: skip

    previous = {}
    for signum in (signal.SIGINT, getattr(signal, "SIGTERM", None)):
        if signum is None:
            continue
        try:
            before = signal.signal(signum, note)
        except (ValueError, OSError):  # not the main thread (signals go to that one): as always
            continue
        # a handler not set from Python: put Python's own back (SIGTERM's default ends it)
        previous[signum] = (
            before
            if before is not None
            else (signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL)
        )

    def restore():
        for signum, handler in previous.items():
            signal.signal(signum, handler)

    def stop():  # how the run stops once the step is saved
        return Terminated() if pressed and pressed[0] != signal.SIGINT else KeyboardInterrupt()

    return (lambda: bool(pressed)), restore, stop


def same_command(init_from: Path | None = None, scale_heads=None, without: tuple = ()) -> str:
    """How a stopped run with a checkpoint goes on: the same command, less the flags that
    start a new run from another (refused once the run folder has a checkpoint) and any
    others given in `without` ("--stop-at")."""
    flags = [*without] + ["--init-from"] * (init_from is not None)
    flags += ["--scale-attention"] * bool(scale_heads)
    if not flags:
        return "the same command"
    listed = flags[0] if len(flags) == 1 else ", ".join(flags[:-1]) + " and " + flags[-1]
    return f"the same command without {listed}"


def _diverged(step: int, what: str, lr: float, checkpoint: Path) -> str:
    kept = (
        f"{checkpoint} (the last validation's) is kept"
        if checkpoint.exists()
        else "no checkpoint was saved"
    )
    return (
        f"training diverged at step {step + 1}: {what} "
        f"(learning rate {lr:.3g}); {kept}; try a lower --set lr, or undo another --set change"
    )


def measure(params, cfg: TrainConfig, config: GPTConfig, val, probes, functions,
            teacher=None) -> dict:  # fmt: skip
    """What each validation records: held-out bits per byte, copy gaps and the copy test;
    distilling, also the agreement with the teacher."""
    entry = {
        "val_bits_per_byte": round(validation_bits_per_byte(params, cfg, val), 4),
        "copy_gap": copy_gap(params, cfg.n_head, probes["near"])["gap"],
        "copy_gap_far": copy_gap(params, cfg.n_head, probes["far"])["gap"],
        "copy": copy_score(params, config, functions),
    }
    if teacher is not None:
        entry["agreement"] = round(agreement(params, cfg, teacher, val), 4)
    return entry


def agreement(params, cfg, teacher, val: np.ndarray, n_rows: int = 16) -> float:
    """The share of held-out positions where the model's most likely next byte is the
    teacher's: a draft's acceptance rate in greedy speculative decoding, fed the true text.

    cfg: the model's n_head and n_ctx (a TrainConfig or the model's GPTConfig); the windows
    are validation_bits_per_byte's.
    """
    rows = validation_rows(cfg.n_ctx, val, n_rows)[:, :-1]
    positions = np.arange(rows.shape[1])
    mine = next_byte_probs(params, cfg.n_head, rows, positions).argmax(axis=-1)
    theirs = next_byte_probs(teacher.params, teacher.config.n_head, rows, positions)
    return float((mine == theirs.argmax(axis=-1)).mean())


def _teacher(cfg: TrainConfig, log: dict):
    """The shipped target, which a distilled run learns from; the log records its file's hash,
    and a run resumed with another target is refused."""
    from speclab.paths import weights_dir
    from speclab.weights import load

    path = weights_dir() / "target.npz"
    teacher = load(path, dtype=np.float32)
    if teacher.config.n_ctx < cfg.n_ctx:
        raise ValueError(f"teacher_share: the target's context ({teacher.config.n_ctx}) is "
                         f"shorter than this recipe's (n_ctx={cfg.n_ctx})")  # fmt: skip
    record = {"file": "data/weights/target.npz", "sha256": file_sha256(path)}
    if log.setdefault("teacher", record)["sha256"] != record["sha256"]:
        raise ValueError(f"this run learns from a target with sha256 {log['teacher']['sha256'][:12]}"
                         f"…; {path} is now another ({record['sha256'][:12]}…): resume it with "
                         "that target, or start a new --run-dir")  # fmt: skip
    return teacher


# Averaging the weights (Polyak averaging; "stochastic weight averaging", Izmailov et al.
# 2018): with average_from, each validation from that step on adds the weights to a running
# sum, kept in the checkpoint, and the export is their mean. Late in a schedule the weights
# wander around a minimum; their mean sits nearer its middle. For the shipped target it was
# the mean that copied whole functions (docs/model-history.md, "Averaging the weights").


def add_to_average(state: dict, log: dict, flat_params: dict, step: int):
    """Add the weights at this step to the running sum (float64) and count them in the log."""
    sums = state.setdefault(
        "avg", {k: np.zeros(v.shape, np.float64) for k, v in flat_params.items()}
    )
    for name, value in flat_params.items():
        sums[name] += value
    average = log.setdefault("average", {"first_step": step, "count": 0})
    average["count"] += 1
    average["last_step"] = step


def averaged(state: dict, log: dict, n_layer: int) -> dict:
    """The mean of the weights added so far, in the weights' own dtype."""
    count = log["average"]["count"]
    dtype = state["m"][next(iter(state["m"]))].dtype
    return unflatten({k: (s / count).astype(dtype) for k, s in state["avg"].items()}, n_layer)


def export(params, config, cfg, corpus_record, log, out: Path, state: dict | None = None):
    """Save the weights with their record; with a running average (average_from), its mean
    and the mean's measurements instead of the last step's."""
    last = log["history"][-1] if log["history"] else {}
    averaging = state is not None and "avg" in state and "average" in last
    if averaging:
        params = averaged(state, log, cfg.n_layer)
        last = last | last["average"]
    meta = {
        "recipe": asdict(cfg),
        "corpus": corpus_record | {"licence": "PSF License (Python standard library source)"},
        "trained_steps": last.get("step", 0),
        "training_seconds": round(log["seconds"], 1),
        "val_bits_per_byte": last.get("val_bits_per_byte"),
        "copy_gap": last.get("copy_gap"),
        "copy_gap_far": last.get("copy_gap_far"),
        # the probes this run's copy gaps were measured on (the shipped models' runs: 8 of 60-120)
        "copy_gap_probes": {"n": PROBES, "bytes": list(SNIPPET_BYTES)},
        "copy": last.get("copy"),
        "history": [
            {k: v for k, v in e.items() if k != "copy"}
            | (
                {"average": {k: v for k, v in e["average"].items() if k != "copy"}}
                if "average" in e
                else {}
            )
            for e in log["history"]
        ],
        "averaged": log["average"] | {"every": cfg.val_every} if averaging else None,
        "recipe_changes": log.get("recipe_changes", []),
        "started_from": log.get("started_from"),
        "teacher": log.get("teacher"),
        "earlier_teachers": log.get("earlier_teachers", []),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "command": "speclab train " + " ".join(sys.argv[2:]) if sys.argv[1:2] == ["train"] else "",
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    save(out, params, config, meta)
