"""A training run's checkpoints: what one holds, resuming from it, and starting otherwise.

`speclab train` (speclab.train) saves `checkpoint.npz` in its --run-dir at every validation,
for lessons 04–07's weights. A checkpoint holds the whole state of a run: the parameters,
AdamW's two moments, the running sum of the weights when averaging (average_from), and a JSON
record of the step, the state of the run's one seeded np.random.Generator, the recipe and the
training log, so an interrupted run resumes where it was. It is written beside the old one and
then renamed over it: a failed write leaves the last checkpoint whole.

Resuming: a --run-dir that has a checkpoint goes on from it with the same recipe (only `steps`
may differ). A damaged file, or one made with another recipe, is refused with a message before
any array is put together; an unreadable one is not called damaged.

--init-from: a new --run-dir starts from another run's checkpoint (weights, AdamW state, step,
generator and history) and goes on with a changed recipe, only the model's shape fixed; or at
step 0 from a weights file (no optimiser state: AdamW starts empty). A weights file with fewer
layers than the recipe is grown first (`grown`): new blocks go on top, starting as the
identity, so the deeper model computes exactly what the trained one did (docs/model-history.md,
"Deeper"). Either start may sharpen chosen attention heads first (`scale_attention`): their
attention logits are multiplied by a factor, an inverse temperature, and training goes on from
there (docs/model-history.md, "Sharper attention in layer 0").

Left out: older checkpoints (each one replaces the last), and growing anything but depth.
"""

import json
import math
import zipfile
from dataclasses import asdict
from pathlib import Path

import numpy as np

from speclab.gpt import GPTConfig
from speclab.recipe import TrainConfig
from speclab.weights import (
    check_params,
    flatten,
    init_params,
    named,
    temporary_beside,
    unflatten,
)


def save_checkpoint(path: Path, params, state, step, rng, cfg, log):
    flat = flatten(params)
    arrays = {f"param/{k}": v for k, v in flat.items()}
    arrays |= {f"m/{k}": v for k, v in state["m"].items()} | {
        f"v/{k}": v for k, v in state["v"].items()
    }
    arrays |= {f"avg/{k}": v for k, v in state.get("avg", {}).items()}  # average_from's sums
    record = {"step": step, "rng": rng.bit_generator.state, "config": asdict(cfg), "log": log}
    tmp = temporary_beside(path)
    try:
        np.savez(tmp, **arrays, record=np.array(json.dumps(record)))
        tmp.replace(path)  # the old checkpoint stays whole until the new one is
    except OSError as error:  # a full disk: say which file, as the standard output can fill too
        raise named(error, path) from None
    finally:
        tmp.unlink(missing_ok=True)  # a failed write (disk full, Ctrl-C) leaves nothing behind


def load_checkpoint(path: Path, cfg: TrainConfig, recipe_may_change: bool = False,
                    advice: str = "delete it or use a new --run-dir"):  # fmt: skip
    """Parameters, AdamW state, step, generator and log of a run made with the recipe cfg.

    Raises ValueError naming the problem for a damaged file or one made with another recipe
    (only `steps` may differ, unless recipe_may_change: then only the model's shape must
    match), before any array is put together. Fields a checkpoint predates take their
    defaults, which are the recipe it was made with. A checkpoint to resume (not
    recipe_may_change) made with another recipe is never called damaged: the message gives
    the --set flags that resume it as it was made.
    """
    shape = ("n_layer", "n_head", "n_embd", "n_ctx")
    if path.exists() and not path.is_file():  # a pipe would block, a device read forever
        raise ValueError(f"{path} is not a regular file (a pipe or a device); {advice}")
    try:  # unreadable is not damaged: hours of training must not be deleted on bad advice
        path.open("rb").close()
    except OSError as error:
        raise OSError(
            f"cannot read {path} ({error.strerror or error}); nothing was changed"
        ) from None
    try:
        if not zipfile.is_zipfile(path):  # else numpy suggests loading it "unsafely" with pickle
            raise ValueError("not an .npz archive")
        _check_members(path, None)  # the record, read first
        with np.load(path, allow_pickle=False) as archive:
            record = json.loads(str(archive["record"]))
            _check_recipe(record["log"]["config"], path)
            saved = asdict(TrainConfig()) | record["log"]["config"] | {"steps": cfg.steps}
            if recipe_may_change:
                saved |= {k: v for k, v in asdict(cfg).items() if k not in shape}
            if saved != asdict(cfg):
                changed = sorted(k for k in saved if saved[k] != asdict(cfg).get(k))
                raise RecipeMismatch(_mismatch(path, saved, asdict(cfg), changed,
                                               advice if recipe_may_change else None))  # fmt: skip
            _check_members(path, cfg.model_config)  # then the arrays
            part = {key: {} for key in ("param", "m", "v", "avg")}
            for name in archive.files:
                if "/" in name:
                    kind, key = name.split("/", 1)
                    part[kind][key] = archive[name]
            rng = np.random.default_rng()
            rng.bit_generator.state = record["rng"]
            step, log = int(record["step"]), record["log"]
            _check_log(step, log)
            check_params(part["param"], cfg.model_config)
            params = unflatten(part["param"], cfg.n_layer)
            flat = flatten(params)
            _check_state(part, flat, log)
    except RecipeMismatch as error:
        raise ValueError(str(error)) from None
    except (OSError, EOFError, KeyError, TypeError, ValueError, AttributeError, RecursionError,
            OverflowError, json.JSONDecodeError, zipfile.BadZipFile) as error:  # fmt: skip
        # RecursionError: a record nested deeper than json.loads can follow; OverflowError: a
        # step of 1e400, infinity to json.loads
        raise ValueError(
            f"{path} is damaged or not a speclab training checkpoint ({error}); {advice}"
        ) from None
    state = {"m": part["m"], "v": part["v"]} | ({"avg": part["avg"]} if part["avg"] else {})
    return params, state, step, rng, log


def _check_recipe(recipe, path: Path) -> None:
    """A checkpoint's recipe: fields of TrainConfig, each a number of its field's kind (a
    damaged one would be offered back as --set flags that cannot work)."""
    defaults = asdict(TrainConfig())
    if not isinstance(recipe, dict):
        raise ValueError("its recipe is not a recipe")
    if unknown := sorted(set(recipe) - set(defaults)):  # not damage: never advise deleting it
        raise RecipeMismatch(f"{path} was made with a recipe field this version of speclab does "
                             f"not know, {unknown[0]!r} (by another version?); it is left as it "
                             "is: go on with it in that version, or train in another --run-dir")  # fmt: skip
    for key, value in recipe.items():
        whole = isinstance(defaults[key], int)
        if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)):
            raise ValueError(f"its recipe's {key} is {value!r}, not a "
                             + ("whole number" if whole else "number"))  # fmt: skip


def _check_log(step: int, log: dict) -> None:
    """A checkpoint's step and training log, as a resumed run reads them."""
    if step < 0:
        raise ValueError(f"its step is {step}")
    if not (isinstance(log.get("history"), list) and isinstance(log.get("seconds"), (int, float))
            and all(isinstance(entry, dict) for entry in log["history"])):  # fmt: skip
        raise ValueError("its training log is not a log (history, seconds)")
    running = log.get("running", {})  # the running means a resumed run goes on with
    if not (isinstance(running, dict) and all(
            value is None or type(value) in (int, float) and math.isfinite(value)
            for value in running.values())):  # fmt: skip
        raise ValueError("its running means are not numbers")
    for key in ("recipe_changes", "earlier_teachers"):  # a run going on appends to them
        if not isinstance(log.get(key, []), list):
            raise ValueError(f"its training log's {key} is not a list")


def _check_state(part: dict, flat: dict, log: dict) -> None:
    """AdamW's moments and the running sum of the weights, against the parameters (flat)."""
    for kind in ("m", "v"):
        if set(part[kind]) != set(flat):
            raise ValueError(f"its AdamW state {kind!r} does not match the parameters")
    for name, value in flat.items():
        for kind in ("m", "v"):
            if part[kind][name].shape != value.shape:
                raise ValueError(f"{kind}/{name} has shape {part[kind][name].shape}")
            if part[kind][name].dtype != value.dtype:
                raise ValueError(f"{kind}/{name} has dtype {part[kind][name].dtype}")
            # else the first step's update is NaN, reported as a run that diverged
            if not np.isfinite(part[kind][name]).all():
                raise ValueError(f"{kind}/{name} holds NaN or infinity")
        if (part["v"][name] < 0).any():  # a mean of squares
            raise ValueError(f"v/{name} holds a negative variance")
    count = log.get("average", {}).get("count", 0)
    if (
        bool(part["avg"]) != bool(count)
        or part["avg"]
        and (
            set(part["avg"]) != set(flat)
            or any(part["avg"][k].shape != v.shape for k, v in flat.items())
        )
    ):
        raise ValueError("its running average of the weights does not match the parameters")


MAX_RECORD_BYTES = 2**28  # the JSON record (recipe, log): a long run's is well under 1 MB


def read_record(path: Path) -> dict:
    """A checkpoint's JSON record alone (step, generator, recipe, log), its size checked
    before numpy reads it; OSError, ValueError or zipfile.BadZipFile if it cannot be."""
    if not zipfile.is_zipfile(path):  # else numpy tries it as a pickle
        raise ValueError("not an .npz archive")
    _check_members(path, None)
    with np.load(path, allow_pickle=False) as archive:
        return json.loads(str(archive["record"]))


def _check_members(path: Path, config: GPTConfig | None) -> None:
    """Each member's .npy header against what a checkpoint of config holds, before numpy
    reads it: numpy allocates what a header claims first, so a damaged header claiming 256
    GiB would be reported as too little memory, or take what it claims. config None: only
    the record (read before the recipe, and so the shapes, are known)."""
    from speclab.weights import _read_header, param_shapes

    expected = param_shapes(config) if config is not None else {}
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            name = info.filename.removesuffix(".npy")
            kind, _, key = name.partition("/")
            if config is None and name != "record":
                continue
            if name != "record" and (kind not in ("param", "m", "v", "avg") or key not in expected):
                raise ValueError(
                    f"member {info.filename!r} is not part of a checkpoint of {config}"
                )
            with archive.open(info) as handle:
                shape, _, dtype = _read_header(handle)
            if name == "record":
                if math.prod(shape) * dtype.itemsize > MAX_RECORD_BYTES:
                    raise ValueError(
                        f"its record claims {math.prod(shape) * dtype.itemsize:,} bytes"
                    )
            elif shape != expected[key]:
                raise ValueError(f"{name} has shape {shape}, the recipe's model {expected[key]}")
            elif dtype.itemsize > 8:
                raise ValueError(f"{name} has dtype {dtype}")


def is_weights_file(path: Path) -> bool:
    from speclab.weights import META_KEY

    if not Path(path).is_file():  # a pipe would block, a device read forever
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            return f"{META_KEY}.npy" in archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def start_run(cfg: TrainConfig, checkpoint: Path, init_from: Path | None, stop_at: int | None,
              scale_heads: dict | None):  # fmt: skip
    """Where a run starts, as (params, state, step, rng, log): the run folder's checkpoint
    (resuming), else --init-from's checkpoint or weights file (a new run), else step 0 of the
    recipe; with scale_heads, the chosen attention heads scaled before step one."""
    config = cfg.model_config
    if scale_heads and (checkpoint.exists() or init_from is None):
        raise ValueError("attention heads are scaled only when a new run starts from --init-from "
                         "(this one " + ("resumes)" if checkpoint.exists() else "starts afresh)"))  # fmt: skip
    if checkpoint.exists() and is_weights_file(checkpoint):  # would read as "damaged"
        raise ValueError(f"{checkpoint} is a weights file, not a training checkpoint: move it "
                         "out of the run folder, and start from it with --init-from in a new "
                         "--run-dir")  # fmt: skip
    if checkpoint.exists():
        params, state, step, rng, log = load_checkpoint(checkpoint, cfg)  # only steps may change
        record_changes(log, cfg, step)
    elif init_from is not None and is_weights_file(init_from):
        params, state, step, rng, log = start_from_weights(init_from, cfg, config)
        record_changes(log, cfg, step, new_run=True)  # from the weights' own recipe
    elif init_from is not None:
        params, state, step, rng, log = _new_run_from_checkpoint(init_from, cfg, stop_at)
    else:
        rng = np.random.default_rng(cfg.seed)
        params = init_params(config, rng, dtype=np.float32)
        state = {key: {k: np.zeros_like(v) for k, v in flatten(params).items()} for key in "mv"}
        step, log = 0, {"config": asdict(cfg), "history": [], "seconds": 0.0}
    if scale_heads:  # the trained weights it starts from, sharpened (or blurred) before step one
        params = scale_attention(params, cfg.n_head, scale_heads)
        log["recipe_changes"][-1]["attention_scaled"] = {
            f"{layer}.{head}": factor for (layer, head), factor in sorted(scale_heads.items())
        }
    return params, state, step, rng, log


def _new_run_from_checkpoint(init_from: Path, cfg: TrainConfig, stop_at: int | None):
    """A new run from another run's checkpoint: its weights, AdamW state, step, generator and
    history, under a recipe that may change (only the model's shape is fixed)."""
    params, state, step, rng, log = load_checkpoint(
        init_from, cfg, recipe_may_change=True,
        advice="give --init-from a run's checkpoint.npz or a weights file of this shape",
    )  # fmt: skip
    if step >= cfg.steps:  # nothing to train: the new run folder would stay empty
        raise ValueError(f"--init-from {init_from} is at step {step}, where this recipe ends "
                         f"(steps={cfg.steps}): give --steps above {step} to train on from it")  # fmt: skip
    if stop_at and step >= stop_at:  # the same: nothing would be trained or saved here
        raise ValueError(f"--init-from {init_from} is at step {step}, so --stop-at {stop_at} "
                         f"stops before it starts: give --stop-at above {step}")  # fmt: skip
    record_changes(log, cfg, step, new_run=True)
    state.pop("avg", None)  # a new run keeps its own average of the weights, if any
    log.pop("average", None)
    log.pop("running", None)  # and its own running means of the loss
    if "teacher" in log:  # and may learn from another target; the record keeps both
        log.setdefault("earlier_teachers", []).append(log.pop("teacher"))
    return params, state, step, rng, log


def record_changes(log: dict, cfg: TrainConfig, step: int, new_run: bool = False) -> None:
    """The run goes on at step with cfg: the log's recipe becomes cfg, and what changed is
    appended to its "recipe_changes" (a resumed run's new --steps too; a new run started with
    --init-from always, even with nothing changed), so that the weights' record gives every
    recipe the model was trained with."""
    before = asdict(TrainConfig()) | log["config"]
    changed = {k: [before[k], v] for k, v in asdict(cfg).items() if before[k] != v}
    if changed or new_run:
        log.setdefault("recipe_changes", []).append({"at_step": step, "changed": changed})
    log["config"] = asdict(cfg)


def start_from_weights(path: Path, cfg: TrainConfig, config: GPTConfig):
    """Step 0 of this recipe from a model's weights (no optimiser state: AdamW starts empty)."""
    from speclab.weights import load

    model = load(path, dtype=np.float32)
    params = model.params
    if model.config != config:
        params = grown(params, model.config, config, np.random.default_rng(cfg.seed), path)
    state = {key: {k: np.zeros_like(v) for k, v in flatten(params).items()} for key in "mv"}
    start = {"weights": str(path), "trained_steps": model.meta.get("trained_steps"),
             "val_bits_per_byte": model.meta.get("val_bits_per_byte"),
             "n_layer": model.config.n_layer}  # fmt: skip
    for key in ("teacher", "started_from"):  # how those weights were made, back to the first
        if model.meta.get(key):
            start[key] = model.meta[key]
    # the recipe the weights were trained with, where they record it: the caller records
    # what this run changes (record_changes), so the record gives every recipe
    before = model.meta.get("recipe") if isinstance(model.meta.get("recipe"), dict) else None
    log = {"config": before or asdict(cfg), "history": [], "seconds": 0.0, "started_from": start}
    if isinstance(model.meta.get("recipe_changes"), list) and model.meta["recipe_changes"]:
        # theirs first (their at_step counts their own run's steps), then this run's
        log["recipe_changes"] = [{**change, "earlier_run": True} if isinstance(change, dict)
                                 else change for change in model.meta["recipe_changes"]]  # fmt: skip
    return params, state, 0, np.random.default_rng(cfg.seed), log


def grown(params, old: GPTConfig, new: GPTConfig, rng, path: Path = Path("the weights")):
    """A deeper model that computes exactly what params compute: new blocks go on top.

    Each new block starts as GPT-2 initialises one, except that its two output projections
    (attention and MLP) are zero, so it adds nothing to the residual stream until training
    moves them. Only n_layer may grow; the width, heads and context must match.
    """
    same_but_depth = (old.n_head, old.n_embd, old.n_ctx, old.n_vocab) == (
        new.n_head, new.n_embd, new.n_ctx, new.n_vocab)  # fmt: skip
    if not same_but_depth or new.n_layer < old.n_layer:
        raise ValueError(f"{path} holds a model of another shape ({old}); this recipe trains "
                         f"{new} (only more layers can be added to a trained model)")  # fmt: skip
    fresh = init_params(new, rng, dtype=params["wte"].dtype)
    for block in fresh["h"][old.n_layer :]:
        for part in ("attn", "mlp"):
            block[part]["c_proj"]["w"][:] = 0
    return {**params, "h": list(params["h"]) + fresh["h"][old.n_layer :]}


def scale_attention(params, n_head: int, scales: dict[tuple[int, int], float]) -> dict:
    """The same weights with the attention logits of some heads multiplied by a factor.

    scales maps (layer, head) to a factor s > 0. A head's logits are q . k / sqrt(d_head); its
    queries are the head's d_head columns of c_attn (weights and bias), so multiplying those
    by s multiplies every logit of that head by s: s > 1 sharpens where it looks, s < 1 blurs
    it. Nothing else changes. Returns new arrays for the changed layers; params is untouched.
    """
    blocks = list(params["h"])
    for (layer, head), factor in sorted(scales.items()):
        if not 0 <= layer < len(blocks) or not 0 <= head < n_head:
            raise ValueError(f"attention head {layer}.{head} does not exist: the model has "
                             f"layers 0-{len(blocks) - 1} and heads 0-{n_head - 1}")  # fmt: skip
        if not (math.isfinite(factor) and factor > 0):
            raise ValueError(f"attention head {layer}.{head}: the factor must be above 0, "
                             f"got {factor}")  # fmt: skip
        c_attn = blocks[layer]["attn"]["c_attn"]
        d_head = c_attn["w"].shape[0] // n_head  # the queries are c_attn's first n_embd columns
        queries = slice(head * d_head, (head + 1) * d_head)
        w, b = c_attn["w"].copy(), c_attn["b"].copy()  # [n_embd, 3 * n_embd], [3 * n_embd]
        w[:, queries] *= factor
        b[queries] *= factor
        attn = {**blocks[layer]["attn"], "c_attn": {"w": w, "b": b}}
        blocks[layer] = {**blocks[layer], "attn": attn}
    return {**params, "h": blocks}


def _mismatch(path: Path, saved: dict, wanted: dict, changed: list[str], advice: str | None) -> str:
    """The message for a checkpoint made with another recipe, and (advice None: a run to
    resume) how to go on with it as it was made: with the recipe it was made with, when that
    is one of speclab's own, else with the --set values that make it (each field's two
    values are given)."""
    from speclab.recipe import RECIPES

    named = [name for name, recipe in RECIPES.items()
             if asdict(recipe) | {"steps": saved["steps"]} == saved]  # fmt: skip
    if advice is None and named:  # e.g. `speclab train draft` in a smoke run's folder
        differ = "differs" if len(changed) == 1 else "differ"
        return (f"{path} was made with the {named[0]} recipe ({', '.join(changed)} {differ} "
                f"in this command's); to go on with it, give `speclab train {named[0]}` with the same "
                "--run-dir; to train this recipe instead, give another --run-dir")  # fmt: skip
    values = "; ".join(f"{k} {saved[k]!r} there, {wanted.get(k)!r} here" for k in changed)
    if advice is None:
        flags = " ".join(f"--set {k}={saved[k]!r}" for k in changed if k in wanted)
        advice = (f"to go on with it, give the command with {flags} (in place of any --set of "
                  "the same fields in it); to train this recipe instead, give another --run-dir")  # fmt: skip
    return f"{path} was made with another recipe ({values or 'its fields differ'}); {advice}"


class RecipeMismatch(Exception):
    """A checkpoint made with another recipe (kept apart from damage in load_checkpoint)."""
