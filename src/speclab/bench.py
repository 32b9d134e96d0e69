"""Benchmarks: what one forward of the model costs, measured honestly (lessons 04, 04b, 06).

Lesson 04 asks why decoding is slow and why verifying k drafted tokens at once costs less
than k steps: `forward_cost` times one cached forward over n_new = 1..16 new positions
after a fixed n_past; `cache_vs_recompute` times the next token with and without the KV
cache. Lesson 04b asks where the time goes: `step_breakdown` splits one decoding step into
matrix products, attention, elementwise work and Python overhead; `width_sweep` repeats the
cost curve for random models up to GPT-2 small's width (768). `roofline_time` is a *model*
of a GPU forward (weights read once per forward at a memory bandwidth, against arithmetic
at a peak rate) whose numbers are assumptions the caller states. `speclab bench forward` runs the measurements and
saves them with a record of the machine.

How it is timed (speclab.timing): every setting in the same run, interleaved, medians with
the interquartile range, ratios paired within a round; the report carries the machine
record. `speclab bench` (speclab.bench_cli) runs this benchmark as `forward` and lesson
06's decoding benchmark (speclab.bench_decode) as `decode`.

Sections: 1. what one forward costs, 2. `speclab bench forward`.
Left out: GPUs (only modelled), batching of several sequences, and float16.
"""

import json
import math
import numbers
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from speclab import gpt
from speclab.gpt import GPTConfig, forward
from speclab.kv_cache import KVCache
from speclab.render import counted
from speclab.student_files import printable, shown
from speclab.timing import (
    Timings,
    blas_threads,
    describe_blas,
    interleaved_times,
    load_text,
    machine_record,
    model_record,
)
from speclab.weights import Model, random_model

# --- 1. lesson 04: what one forward costs ---------------------------------------------------


def filled_cache(model: Model, tokens) -> KVCache:
    """A KV cache holding the given tokens (one forward over all of them)."""
    cache = KVCache(model.config, dtype=model.params["wte"].dtype)
    forward(model.params, model.config, tokens, cache)
    return cache


def _check_fits(config: GPTConfig, n_positions: int):
    if n_positions > config.n_ctx:
        raise ValueError(f"{n_positions} positions do not fit the context window {config.n_ctx}")


def forward_cost(
    model: Model,
    rng: np.random.Generator,
    n_past: int = 256,
    n_new_values: Iterable[int] = range(1, 17),
    repeats: int = 15,
    progress: bool = False,
) -> Timings:
    """Seconds of one cached forward over n_new new positions after n_past cached ones.

    Before each timed forward the cache is truncated back to n_past, so every setting
    sees the same past. Tokens are random bytes: cost does not depend on which tokens.
    """
    n_new_values = [int(n) for n in n_new_values]
    _check_fits(model.config, n_past + max(n_new_values))
    tokens = rng.integers(0, model.config.n_vocab, n_past + max(n_new_values))  # [n_seq]
    cache = filled_cache(model, tokens[: max(n_past, 1)])
    tasks = {
        n_new: (
            partial(cache.truncate, n_past),
            partial(forward, model.params, model.config, tokens[n_past : n_past + n_new], cache),
        )
        for n_new in n_new_values
    }
    return Timings.from_dict("n_new", interleaved_times(tasks, repeats, rng, progress=progress))


def cache_vs_recompute(
    model: Model,
    rng: np.random.Generator,
    seq_lens: Iterable[int] = (16, 64, 128, 256, 512, 1024),
    repeats: int = 5,
    progress: bool = False,
) -> dict[str, Timings]:
    """Seconds to produce the logits of position n_seq: one cached step vs recomputing.

    "with cache": the cache holds n_seq - 1 positions, one forward over the last token.
    "without cache": one forward over all n_seq tokens (what a decoder without a cache
    does at every step). Both are timed in the same interleaved rounds.
    """
    seq_lens = [int(n) for n in seq_lens]
    _check_fits(model.config, max(seq_lens))
    tokens = rng.integers(0, model.config.n_vocab, max(seq_lens))  # [n_seq]
    tasks = {}
    for n_seq in seq_lens:
        cache = filled_cache(model, tokens[: max(n_seq - 1, 1)])  # one cache per length
        step = partial(forward, model.params, model.config, tokens[n_seq - 1 : n_seq], cache)
        tasks["with cache", n_seq] = (partial(cache.truncate, n_seq - 1), step)
        whole = partial(forward, model.params, model.config, tokens[:n_seq])
        tasks["without cache", n_seq] = (lambda: None, whole)
    measured = interleaved_times(tasks, repeats, rng, progress=progress)
    return {
        kind: Timings.from_dict("n_seq", {n: measured[kind, n] for n in seq_lens})
        for kind in ("with cache", "without cache")
    }


# One decoding step, split into what its time is spent on. "Python overhead" is not timed
# directly: it is the plain forward's time minus the sum of the timed pieces.
PARTS = (
    "weight matmuls",  # x @ W + b: qkv, attention output, MLP in and out, the LM head
    "attention matmuls",  # q @ k^T and weights @ v over the cached positions
    "GELU",  # the MLP's tanh GELU
    "LayerNorm",  # two per block and the final one
    "softmax + mask",  # the causal mask and the attention softmax
    "other elementwise",  # embedding lookup and residual adds
    "reshapes + cache",  # splitting heads, writing keys/values into the cache, merging
    "Python overhead",  # everything else: the interpreter, argument checks, loops
)
TIMED_PARTS = PARTS[:-1]  # "Python overhead" is the plain forward minus these


def _timed(seconds: dict, calls: dict, part: str, function, *args, **kwargs):
    """Call function(*args, **kwargs), adding its wall time to seconds[part]."""
    start = time.perf_counter()
    result = function(*args, **kwargs)
    seconds[part] += time.perf_counter() - start
    calls[part] += 1
    return result


def _attention_timed(q, k, v, n_past: int, seconds: dict, calls: dict):
    """gpt.attention's arithmetic, in timed pieces. q [n_head, n_new, d_head] -> same."""
    n_new, n_seq = q.shape[1], k.shape[1]
    t = partial(_timed, seconds, calls)
    scores = t("attention matmuls", lambda: q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1]))
    future = t(
        "softmax + mask",
        lambda: np.arange(n_seq)[None, :] > (n_past + np.arange(n_new))[:, None],
    )  # [n_new, n_seq]
    weights = t("softmax + mask", lambda: gpt.softmax(np.where(future, -np.inf, scores)))
    return t("attention matmuls", lambda: weights @ v)  # [n_head, n_new, d_head]


def _block_timed(x, block: dict, n_head: int, layer: int, cache, seconds: dict, calls: dict):
    """gpt.transformer_block in timed pieces: [n_new, n_embd] -> [n_new, n_embd]."""
    t = partial(_timed, seconds, calls)
    n_new, n_embd = x.shape
    h = t("LayerNorm", gpt.layer_norm, x, **block["ln_1"])
    qkv = t("weight matmuls", gpt.linear, h, **block["attn"]["c_attn"])  # [n_new, 3 n_embd]
    q, k, v = t(
        "reshapes + cache",
        lambda: qkv.reshape(n_new, 3, n_head, n_embd // n_head).transpose(1, 2, 0, 3),
    )  # each [n_head, n_new, d_head]
    n_past = len(cache)
    k_all, v_all = t("reshapes + cache", cache.append, layer, k, v)
    out = _attention_timed(q, k_all, v_all, n_past, seconds, calls)
    merged = t("reshapes + cache", lambda: out.transpose(1, 0, 2).reshape(n_new, n_embd))
    attended = t("weight matmuls", gpt.linear, merged, **block["attn"]["c_proj"])
    x = t("other elementwise", lambda: x + attended)
    h = t("LayerNorm", gpt.layer_norm, x, **block["ln_2"])
    hidden = t("weight matmuls", gpt.linear, h, **block["mlp"]["c_fc"])  # [n_new, 4 n_embd]
    hidden = t("GELU", gpt.gelu, hidden)
    projected = t("weight matmuls", gpt.linear, hidden, **block["mlp"]["c_proj"])
    return t("other elementwise", lambda: x + projected)


def instrumented_forward(params: dict, config: GPTConfig, tokens, cache: KVCache):
    """gpt.forward with a cache, timing its pieces: -> (logits [n_new, n_vocab], seconds, calls).

    The same arithmetic in the same order as `speclab.gpt.forward`, so the logits are
    equal; seconds and calls are {part: total seconds} and {part: number of timed calls}.
    """
    seconds = dict.fromkeys(TIMED_PARTS, 0.0)
    calls = dict.fromkeys(TIMED_PARTS, 0)
    tokens = np.asarray(tokens, dtype=np.int64)  # [n_new]
    _check_fits(config, len(cache) + tokens.size)
    positions = np.arange(len(cache), len(cache) + tokens.size)  # [n_new]
    t = partial(_timed, seconds, calls)
    x = t("other elementwise", lambda: params["wte"][tokens] + params["wpe"][positions])
    for layer, block in enumerate(params["h"]):
        x = _block_timed(x, block, config.n_head, layer, cache, seconds, calls)
    x = t("LayerNorm", gpt.layer_norm, x, **params["ln_f"])  # [n_new, n_embd]
    logits = t("weight matmuls", lambda: x @ params["wte"].T)  # [n_new, n_vocab]
    return logits, seconds, calls


@dataclass(frozen=True)
class StepBreakdown:
    """Where one forward's time goes, per part (PARTS order), from interleaved rounds.

    In each round the plain forward and the instrumented one run back to back; the Python
    overhead of a round is the plain forward's time minus the timed parts' total, so a
    round in which the machine was busy stands out whole and the median sets it aside.
    """

    n_new: int
    n_past: int
    parts: tuple[str, ...]
    part_times: np.ndarray  # [repeats, n_parts - 1] seconds of each timed part, per round
    forward_times: np.ndarray  # [repeats] seconds of the plain gpt.forward, same rounds
    calls: np.ndarray  # [n_parts] timed calls per forward, each one to a few numpy operations

    @property
    def seconds(self) -> np.ndarray:  # [n_parts] medians; the last is the Python overhead
        overhead = self.forward_times - self.part_times.sum(axis=1)  # [repeats]
        return np.append(np.median(self.part_times, axis=0), np.median(overhead))

    @property
    def forward_seconds(self) -> float:
        return float(np.median(self.forward_times))

    def rows(self) -> list[dict]:
        return [
            {"n_new": self.n_new, "part": part, "median_s": float(s), "calls": int(c)}
            for part, s, c in zip(self.parts, self.seconds, self.calls, strict=True)
        ]


def step_breakdown(
    model: Model,
    rng: np.random.Generator,
    n_new: int = 1,
    n_past: int = 256,
    repeats: int = 15,
) -> StepBreakdown:
    """Time the plain forward and the instrumented one, interleaved, n_new new positions."""
    _check_fits(model.config, n_past + n_new)
    tokens = rng.integers(0, model.config.n_vocab, n_past + n_new)  # [n_seq]
    cache = filled_cache(model, tokens[: max(n_past, 1)])
    new = tokens[n_past:]  # [n_new]
    pieces: list[tuple] = []
    tasks = {
        "plain": (
            partial(cache.truncate, n_past),
            partial(forward, model.params, model.config, new, cache),
        ),
        "instrumented": (
            partial(cache.truncate, n_past),
            lambda: pieces.append(instrumented_forward(model.params, model.config, new, cache)),
        ),
    }
    measured = interleaved_times(tasks, repeats, rng, warmup=1)
    kept = pieces[-repeats:]  # the warm-up round's pieces are dropped
    part_times = np.array([[p[1][part] for part in TIMED_PARTS] for p in kept])
    calls = np.array([kept[0][2][part] for part in TIMED_PARTS] + [0])
    return StepBreakdown(n_new, n_past, PARTS, part_times, measured["plain"], calls)


def numpy_call_seconds(rng: np.random.Generator, n_calls: int = 500, repeats: int = 7) -> float:
    """Median seconds of one tiny numpy call (adding two 1-element arrays).

    Every numpy call pays at least this much, whatever its size: Python dispatch, type
    checks and allocating the result. The loop's own cost is included (a few per cent).
    """
    a, b = np.ones(1), np.ones(1)  # [1] each

    def calls():
        for _ in range(n_calls):
            np.add(a, b)

    measured = interleaved_times({"tiny": (lambda: None, calls)}, repeats, rng)
    return float(np.median(measured["tiny"]) / n_calls)


def skeleton_model(config: GPTConfig, rng: np.random.Generator, dtype=np.float64) -> Model:
    """A model with the same blocks, heads and context, but width n_head (d_head = 1).

    It makes every numpy call the real model makes, on arrays with almost no numbers:
    its forward time is (nearly) the fixed cost of those calls.
    """
    shape = GPTConfig(config.n_layer, config.n_head, config.n_head, config.n_ctx, config.n_vocab)
    return random_model(shape, rng, dtype=dtype)


def forward_times(
    models: dict[str, Model],
    rng: np.random.Generator,
    n_past: int = 256,
    n_new: int = 1,
    repeats: int = 15,
) -> dict[str, np.ndarray]:
    """Seconds of one cached forward over n_new positions per model, interleaved.

    Returns {name: [repeats]}; every model sees its own random tokens and the same n_past.
    """
    tasks = {}
    for name, model in models.items():
        _check_fits(model.config, n_past + n_new)
        tokens = rng.integers(0, model.config.n_vocab, n_past + n_new)  # [n_seq]
        cache = filled_cache(model, tokens[: max(n_past, 1)])
        work = partial(forward, model.params, model.config, tokens[n_past:], cache)
        tasks[name] = (partial(cache.truncate, n_past), work)
    return interleaved_times(tasks, repeats, rng)


def width_model(n_embd: int, rng: np.random.Generator, n_layer: int = 2, n_ctx: int = 320) -> Model:
    """A random GPT-2-shaped model of the given width: heads of 64 as in GPT-2 (at least 2)."""
    n_head = max(2, n_embd // 64)
    return random_model(GPTConfig(n_layer, n_head, n_embd, n_ctx), rng)


def width_sweep(
    widths: Iterable[int],
    rng: np.random.Generator,
    n_new_values: Iterable[int] = (1, 2, 3, 4, 5, 6, 8, 12, 16),
    n_past: int = 256,
    n_layer: int = 2,
    repeats: int = 7,
    progress: bool = False,
) -> dict[int, Timings]:
    """The forward-cost curve for random models of each width (same depth, same n_past)."""
    n_new_values = list(n_new_values)
    curves = {}
    for n_embd in widths:
        model = width_model(int(n_embd), rng, n_layer=n_layer, n_ctx=n_past + max(n_new_values))
        curves[int(n_embd)] = forward_cost(
            model, rng, n_past, n_new_values, repeats=repeats, progress=progress
        )
    return curves


def against(a: dict, b: dict) -> str:
    """Where the interquartile range a (a dict with q25 and q75, as `Timings.ratio` gives)
    lies against b's: "below", "above" or "overlapping" (the run does not tell them apart)."""
    if a["q75"] < b["q25"]:
        return "below"
    return "above" if a["q25"] > b["q75"] else "overlapping"


def beyond_the_cache(spread: dict[int, dict], fits: dict[int, bool]):
    """Regime (c) of lesson 04b in a width sweep, or None where no width, or every width,
    fits in the cache.

    spread: width -> the ratio's quartiles; fits: width -> do its weights fit in the cache.
    Returns (the widest width that fits, the widths that do not, the verdict): "cheaper" or
    "dearer" where every width outside costs less or more than the widest inside beyond
    both interquartile ranges, "level" where every one's range overlaps it, else "mixed".
    """
    inside = [w for w in spread if fits[w]]
    outside = [w for w in spread if not fits[w]]
    if not inside or not outside:
        return None
    widest = max(inside)
    sides = {against(spread[w], spread[widest]) for w in outside}
    verdict = {frozenset({"below"}): "cheaper", frozenset({"above"}): "dearer",
               frozenset({"overlapping"}): "level"}.get(frozenset(sides), "mixed")  # fmt: skip
    return widest, outside, verdict


def matmul_params(config: GPTConfig) -> int:
    """Weights read by the matrix products of one forward: 12 n_embd^2 per block + LM head."""
    return config.n_layer * 12 * config.n_embd**2 + config.n_vocab * config.n_embd


def roofline_time(
    n_new, n_params: int, bytes_per_param: float, bandwidth: float, peak_flops: float
):
    """A MODEL, not a measurement: seconds of one forward over n_new positions.

    Reading every weight once costs n_params * bytes_per_param / bandwidth; the arithmetic
    costs 2 * n_params * n_new / peak_flops (a multiply and an add per weight per position).
    The slower of the two sets the time. Ignored: attention over the cache, activations,
    launch overheads, and that real kernels reach neither peak.
    """
    n_new = np.asarray(n_new, dtype=np.float64)
    memory = n_params * bytes_per_param / bandwidth
    compute = 2.0 * n_params * n_new / peak_flops
    return np.maximum(memory, compute)


def roofline_free_positions(bytes_per_param: float, bandwidth: float, peak_flops: float) -> float:
    """Under the roofline model, the n_new at which arithmetic time reaches weight-reading time."""
    for name, value in (("bytes_per_param", bytes_per_param), ("bandwidth", bandwidth),
                        ("peak_flops", peak_flops)):  # fmt: skip
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value > 0:
            raise ValueError(f"{name} must be a positive number, got {value!r}")
    return peak_flops * bytes_per_param / (2.0 * bandwidth)


def greedy_seconds(
    model: Model, prompt_tokens, n_tokens: int, repeats: int, rng: np.random.Generator
) -> tuple[np.ndarray, list[int]]:
    """Seconds to greedily decode n_tokens after the prompt (prefill not timed): [repeats].

    A plain loop of cached one-token forwards and argmax (the decoder of lesson 05 does the
    same and more); also returns the tokens of the last run.
    """
    _check_fits(model.config, len(prompt_tokens) + n_tokens)
    prompt_tokens = list(prompt_tokens)
    state: dict = {}

    def prefill():  # untimed: the prompt goes into a fresh cache
        state["cache"] = KVCache(model.config, dtype=model.params["wte"].dtype)
        if len(prompt_tokens) > 1:
            forward(model.params, model.config, prompt_tokens[:-1], state["cache"])

    def decode():
        token, state["produced"] = prompt_tokens[-1], []
        for _ in range(n_tokens):
            logits = forward(model.params, model.config, [token], state["cache"])  # [1, n_vocab]
            token = int(np.argmax(logits[-1]))
            state["produced"].append(token)

    measured = interleaved_times({"greedy": (prefill, decode)}, repeats, rng)
    return measured["greedy"], state["produced"]


# --- 2. `speclab bench forward` ------------------------------------------------------------------------

GREEDY_PROMPT = (
    "def moving_average(values, window):\n"
    '    """The mean of each run of `window` consecutive values."""\n'
    "    totals = []\n"
)
VERIFY_TOKENS = 5  # k + 1 for k = 4 drafts, lesson 03's round
RATIO_GOAL = 1.3  # issue 3: a 5-token forward costs at most 1.3 one-token forwards


def _load_for_bench(args) -> Model:
    from speclab.weights import load, load_target

    dtype = np.dtype(args.dtype)
    return load(args.weights, dtype=dtype) if args.weights else load_target(dtype=dtype)


def forward_report(args, model: Model) -> dict:
    """Measure everything `speclab bench forward` reports; returns the JSON-able record."""
    if args.greedy_tokens >= model.config.n_ctx:  # checked now, not after the curve is timed
        raise ValueError(  # the number may be the default, which the user never typed
            f"{args.greedy_tokens} greedy tokens leave no room for a prompt in the context "
            f"window of {model.config.n_ctx}: give --greedy-tokens below {model.config.n_ctx}"
        )
    n_new_values = [1, 2, VERIFY_TOKENS] if args.quick else list(range(1, 17))
    if args.n_past + max(n_new_values) > model.config.n_ctx:  # named here, not as a sum later
        raise ValueError(
            f"--n-past {args.n_past} leaves no room for {max(n_new_values)} new positions in "
            f"the context window of {model.config.n_ctx}: give --n-past of at most "
            f"{model.config.n_ctx - max(n_new_values)}"
        )
    rng = np.random.default_rng(args.seed)
    repeats = args.repeats or (3 if args.quick else 31)
    curve = forward_cost(model, rng, args.n_past, n_new_values, repeats, progress=True)
    prompt = list(GREEDY_PROMPT.encode("utf-8"))
    room = model.config.n_ctx - args.greedy_tokens
    prompt = prompt[-room:] if room > 0 else prompt
    greedy_runs = 1 if args.quick else 5
    seconds, tokens = greedy_seconds(model, prompt, args.greedy_tokens, greedy_runs, rng)
    ratio = curve.ratio(VERIFY_TOKENS, 1)
    return {
        "benchmark": "forward",
        "ratio_5_to_1": ratio | {"goal_at_most": RATIO_GOAL, "met": ratio["median"] <= RATIO_GOAL},
        "greedy": {
            "tokens_per_second": float(args.greedy_tokens / np.median(seconds)),
            "seconds": seconds.tolist(),
            "tokens": tokens,
            "text": bytes(tokens).decode("utf-8", errors="replace"),
        },
        "forward_cost": curve.rows(base=1),
        "settings": {
            "n_past": args.n_past,
            "n_new": n_new_values,
            "repeats": repeats,
            "greedy_tokens": args.greedy_tokens,
            "greedy_runs": greedy_runs,
            "greedy_prompt": bytes(prompt).decode("utf-8", errors="replace"),
            "seed": args.seed,
            "blas_threads": args.blas_threads,
            "quick": args.quick,
        },  # fmt: skip
        "model": model_record(model),
        "machine": machine_record(),
    }


def save_report(report: dict, out: Path) -> tuple[Path, Path]:
    """forward.json (everything) and forward.csv (the cost curve) in the folder out, together.

    A `--quick` run goes to forward-partial.json and .csv where forward.json holds a full run
    (or one that cannot be read): a quick look never replaces the class's `make bench`, as
    speclab.decode_reports does for decode.json."""
    from speclab.report_files import csv_text, write_together

    out.mkdir(parents=True, exist_ok=True)
    name = "forward"
    if report.get("settings", {}).get("quick") and (out / "forward.json").exists():
        try:
            kept = json.loads((out / "forward.json").read_text(encoding="utf-8"))
            full = not kept["settings"]["quick"]
        except (OSError, ValueError, KeyError, TypeError, RecursionError):  # not ours: keep it
            full = True
        name = "forward-partial" if full else name
    json_path, csv_path = out / f"{name}.json", out / f"{name}.csv"
    rows = report["forward_cost"]
    files = {
        json_path: json.dumps(report, indent=2) + "\n",
        csv_path: csv_text(rows, list(rows[0])),
    }
    write_together(files)
    return json_path, csv_path


def run_forward(args) -> int:
    """`speclab bench forward`, its options already checked by speclab.bench_cli.run."""
    try:
        model = _load_for_bench(args)
        with blas_threads(args.blas_threads):
            report = forward_report(args, model)
    except (FileNotFoundError, ValueError) as error:
        print(printable(f"speclab bench forward: {error}"), file=sys.stderr)
        return 1
    try:  # --out was writable a moment ago; a full disk can still fail (and leaves the old pair)
        json_path, csv_path = save_report(report, args.out)
        args.saved = (json_path, csv_path)  # speclab's main names them if stdout then fails
    except OSError as error:
        json_path = csv_path = None
        unsaved = error
    ratio, greedy = report["ratio_5_to_1"], report["greedy"]
    config, machine = model.config, report["machine"]
    verdict = "met" if ratio["met"] else "not met on this machine"
    print(
        f"model {shown(model.name)}: {config.n_layer} layers, width {config.n_embd}, "
        f"{report['model']['dtype']}; n_past {args.n_past}, "
        f"{counted(report['settings']['repeats'], 'interleaved round')}\n"
        f"{VERIFY_TOKENS}-token / 1-token cached forward: {ratio['median']:.2f} "
        f"(interquartile {ratio['q25']:.2f}-{ratio['q75']:.2f}); speclab's engineering goal, at "
        f"most {RATIO_GOAL}: {verdict} (lesson 04b: where the time goes)\n"
        f"greedy decoding: {greedy['tokens_per_second']:.0f} tokens/s "
        f"({args.greedy_tokens} tokens, median of {counted(len(greedy['seconds']), 'run')})\n"
        f"machine: {machine['cpu']}, Python {machine['python']}, numpy {machine['numpy']}, "
        f"load average {load_text(machine)} (other work running makes timings noisy)\n"
        f"{describe_blas(machine)}"
    )
    if json_path is None:  # the figures above are printed: the run's timings are not lost
        print(printable(f"speclab bench forward: {not_saved(unsaved, args.out)}"), file=sys.stderr)
        return 1
    if json_path.name != "forward.json":  # as `bench decode` says of decode.json
        print(f"kept {shown(str(args.out / 'forward.json'))}: it holds a full run (or one that "
              "cannot be read), so this --quick run is saved beside it")  # fmt: skip
    print(f"saved {shown(str(json_path))} and {shown(str(csv_path))}")
    return 0


def not_saved(error: OSError, out) -> str:
    """Why a report printed above could not be saved, and that --out is as it was."""
    return (f"cannot save the report ({error.strerror or error}): its figures are the ones "
            f"printed above, and the reports in {shown(str(out))} are as they were")  # fmt: skip
