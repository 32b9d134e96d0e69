"""Measuring copying: the copy gap on held-out probes and the copy test on held-out functions.

Prompt-lookup speculation (lessons 04–07) feeds on a target that copies from its context, so
every validation of a training run (speclab.train) measures copying, and
benchmarks/model_report.py reports it for the shipped models. The copy gap: bits per byte on
a held-out snippet's first occurrence minus on its repeat (`copy_probes`, `copy_gap`). The
copy test: how many bytes greedy decoding reproduces when a prompt starts to repeat a
held-out function (`held_out_functions`, `copy_test_prompts`, `copy_score`). Both are cut
from the validation files of speclab.corpus, never from the training text.

Left out: sampling (the copy test is greedy) and edited repeats (every probe and every
prompt repeats its text verbatim).
"""

import re

import numpy as np

from speclab.backprop import token_losses
from speclab.corpus import snippet
from speclab.gpt import GPTConfig
from speclab.kv_cache import KVCache

# The smallest context a recipe may have: copy_probes' snippets are (n_ctx - 4) // 3 bytes at
# most and half that at least, so with n_ctx below 10 they are empty (the copy gaps NaN) or
# cannot be cut at all.
MIN_N_CTX = 10


# The copy gap's probes: snippets of 80..200 bytes, as the issue on a copying target defines
# the gap, and 64 of them, because the gap varies from snippet to snippet (a standard
# deviation of about 0.5 bits per byte for the shipped target): 64 probes measure it to about
# 0.06, the 8 probes of 60..120 bytes that the shipped models' training logged to about 0.17
# (docs/model-history.md, "The copy gap, measured on more probes").
PROBES = 64
SNIPPET_BYTES = (80, 200)
# The probes' seed: a training run's validations, its record and benchmarks/model_report.py
# all measure the gap on the same probes. Pass copy_probes another generator for other ones.
PROBE_SEED = 20261130


def copy_probes(val: np.ndarray, n_ctx: int, n: int = PROBES, far: bool = False,
                lengths: tuple[int, int] = SNIPPET_BYTES,
                rng: np.random.Generator | None = None) -> list[tuple]:  # fmt: skip
    """Held-out copy probes: (bytes, first, second), the slices of the two occurrences.

    Each probe is some validation text, a snippet of whole lines (`lengths` bytes, at most a
    third of the context), a blank
    line, and the snippet again. Near probes start the snippet at byte 64; far probes put
    enough text before it that the second occurrence starts at about 3/4 of n_ctx, so a
    model trained on short rows shows whether its copying reaches the whole context. With no
    `rng`, the probes are cut with PROBE_SEED, the same probes at every call.
    """
    if n_ctx < MIN_N_CTX:  # numpy would say only "low >= high"
        raise ValueError(f"a context of {n_ctx} is too short for the copy probes "
                         f"(they need at least {MIN_N_CTX} positions)")  # fmt: skip
    if rng is None:
        rng = np.random.default_rng(PROBE_SEED)
    longest = min(lengths[1], (n_ctx - 4) // 3)  # small test models have a small context
    shortest = min(lengths[0], longest // 2)
    probes = []
    for _ in range(100 * n):
        if len(probes) == n:
            break
        piece = snippet(val, rng, longest)
        if not shortest <= len(piece) <= longest:
            continue
        lead = min(64, longest) if not far else 3 * n_ctx // 4 - len(piece) - 2
        lead = max(1, min(lead, n_ctx - 2 * len(piece) - 2))
        start = int(rng.integers(0, val.size - lead))
        text = val[start : start + lead].tobytes() + piece + b"\n\n" + piece
        first = slice(lead, lead + len(piece))
        second = slice(len(text) - len(piece), len(text))
        probes.append((text, first, second))
    return probes


def copy_gap(params, n_head: int, probes: list[tuple]) -> dict:
    """Bits per byte on a snippet's first occurrence minus on its repeat (0: no copying).

    Each byte's loss is the model's surprise predicting it from everything before it; a
    model that copies finds the repeat far less surprising than the first occurrence. Each
    probe counts once (the mean of its bits per byte); `se` is the gap's standard error over
    the probes. `missed` is the share of the repeats' bytes given less than one chance in ten
    (more than log2(10) bits), `missed_bits` the share of the repeats' bits on those bytes.
    """
    first_bits, second_bits, repeats = [], [], []
    for text, first, second in probes:
        tokens = np.frombuffer(text, dtype=np.uint8).astype(np.int64)
        losses = token_losses(params, n_head, tokens[None, :-1], tokens[None, 1:],
                              np.arange(tokens.size - 1))[0] / np.log(2)  # fmt: skip
        # losses[i] is the surprise of byte i + 1
        first_bits.append(losses[first.start - 1 : first.stop - 1].mean())
        second_bits.append(losses[second.start - 1 : second.stop - 1].mean())
        repeats.append(losses[second.start - 1 : second.stop - 1])
    repeat = np.concatenate(repeats) if repeats else np.zeros(0)
    missed = repeat > np.log2(10)
    gaps = np.subtract(first_bits, second_bits)
    se = float(np.std(gaps, ddof=1) / np.sqrt(gaps.size)) if gaps.size > 1 else float("nan")
    first, second = float(np.mean(first_bits)), float(np.mean(second_bits))
    return {"first": round(first, 4), "second": round(second, 4), "gap": round(first - second, 4),
            "se": round(se, 4), "probes": len(probes),
            "missed": round(float(missed.mean()), 4) if repeat.size else float("nan"),
            "missed_bits": round(float(repeat[missed].sum() / max(repeat.sum(), 1e-12)), 4)}  # fmt: skip


def held_out_functions(
    val: np.ndarray, train: np.ndarray, n: int | None = 8, max_len: int = 400
) -> list[bytes]:
    """Top-level functions from validation files, 120..max_len bytes, unseen in training.

    A held-out file can hold a function that training files hold too, word for word (test
    boilerplate such as `setUpModule`): such a function is left out, since a model may know
    it by heart. n of them, spread evenly over the rest (the copy test); n=None: all.
    """
    text, seen = val.tobytes(), train.tobytes()
    found = re.findall(rb"\ndef [^\n]*\n(?:(?:    [^\n]*|)\n)+", text)
    found = [f[1:].rstrip(b"\n") + b"\n" for f in found if 120 <= len(f) <= max_len]
    found = [f for f in found if f not in seen]
    if n is None:
        return found
    step = max(1, len(found) // n)
    return found[::step][:n]


def copy_test_prompts(functions: list[bytes]) -> list[tuple[list[int], bytes]]:
    """(prompt, what a copier should write next) for each function of the copy test: the
    function, a blank line and its first line; then the rest of the function."""
    pairs = []
    for function in functions:
        first_line = function[: function.index(b"\n") + 1]
        pairs.append((list(function + b"\n" + first_line), function[len(first_line) :]))
    return pairs


def copy_score(params, config: GPTConfig, functions: list[bytes]) -> dict:
    """Greedy bytes reproduced when a prompt starts to repeat a function it has just seen.

    Prompt: the function, a blank line, and the function's first line. Counted: how many of
    the remaining bytes greedy decoding reproduces before its first mistake.
    """
    from speclab.gpt import forward, softmax

    copied, lengths, mistakes = [], [], []
    for prompt, rest in copy_test_prompts(functions):
        if len(prompt) + len(rest) > config.n_ctx:
            continue
        cache = KVCache(config, dtype=params["wte"].dtype)
        logits = forward(params, config, prompt, cache)
        n_right, mistake = 0, None
        for expected in rest:
            token = int(np.argmax(logits[-1]))
            if token != expected:
                p = softmax(logits[-1])
                mistake = {"chose": token, "p_chose": round(float(p[token]), 3),
                           "wanted": int(expected), "p_wanted": round(float(p[expected]), 3)}  # fmt: skip
                break
            n_right += 1
            logits = forward(params, config, [token], cache)
        copied.append(n_right)
        lengths.append(len(rest))
        mistakes.append(mistake)
    return {
        "bytes_copied": copied,
        "bytes_to_copy": lengths,
        "first_mistakes": mistakes,  # per function: what greedy chose and wanted, or None
        "fraction_copied": float(np.sum(copied) / max(1, np.sum(lengths))),
        "functions_copied_whole": int(sum(c == n for c, n in zip(copied, lengths, strict=True))),
    }
