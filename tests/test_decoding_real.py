"""Speculative decoding with the shipped models returns exactly greedy decoding's bytes.

tests/test_decoding.py proves the loop on small random models; this file runs the real
target and draft models (data/weights/) on real prompts: the lesson's examples, standard
library source and a repetitive pattern, with both drafters and several k. The fast test
runs in `make test`; the full sweep (every prompt x every k 1..8 x both drafters x fixed
and adaptive k, longer generations) is marked slow and runs in `make test-slow`. One test
checks the premise of that equality (notebook 05): the two best logits lie much further apart
than a batched and a single-position forward differ.
"""

import sysconfig
from pathlib import Path

import numpy as np
import pytest

from speclab.decoding import greedy_decode, speculative_decode
from speclab.demo import EXAMPLES
from speclab.drafters import ModelDrafter, PromptLookupDrafter
from speclab.gpt import KVCache, forward
from speclab.tokenizer import encode
from speclab.weights import load_draft, load_target


def stdlib_snippet(module: str, start_text: str, length: int) -> str:
    source = (Path(sysconfig.get_paths()["stdlib"]) / f"{module}.py").read_text(encoding="utf-8")
    start = source.index(start_text)
    return source[start : start + length]


PROMPTS = {
    **EXAMPLES,
    "textwrap": stdlib_snippet("textwrap", "def dedent", 400),
    "bisect": stdlib_snippet("bisect", "def insort_right", 300),
    "counting": "".join(f"point {i}: check the value of item {i}\n" for i in range(1, 6)),
}


@pytest.fixture(scope="module")
def models():
    target, draft = load_target(), load_draft()
    # as every decoder uses them: the target in float64, the draft (which only proposes) in
    # float32, so these runs check that a float32 draft leaves the output greedy's
    assert target.params["wte"].dtype == np.float64 and draft.params["wte"].dtype == np.float32
    return target, draft


def drafter(name: str, draft_model):
    return PromptLookupDrafter(3, 1) if name == "lookup" else ModelDrafter(draft_model)


def check_all(models, prompts, ks, max_new_tokens, adaptive_values):
    target, draft_model = models
    checked = 0
    for name, text in prompts.items():
        prompt = encode(text)
        reference = greedy_decode(target, prompt, max_new_tokens).tokens
        for k in ks:
            for drafter_name in ("lookup", "model"):
                for adaptive in adaptive_values:
                    result = speculative_decode(
                        target, drafter(drafter_name, draft_model), prompt, max_new_tokens, k,
                        adaptive=adaptive,
                    )  # fmt: skip
                    assert result.tokens == reference, (name, k, drafter_name, adaptive)
                    assert result.target_forwards == len(result.rounds)
                    checked += 1
    return checked


def test_shipped_models_speculative_equals_greedy(models):
    checked = check_all(models, PROMPTS, ks=(1, 3, 8), max_new_tokens=24,
                        adaptive_values=(False,))  # fmt: skip
    assert checked == len(PROMPTS) * 3 * 2


def test_shipped_models_adaptive_and_a_long_prompt(models):
    target = models[0]
    long_prompt = {"near the window": (EXAMPLES["repeat"] * 4)[: target.config.n_ctx - 16]}
    check_all(models, long_prompt, ks=(4,), max_new_tokens=16, adaptive_values=(True,))


def test_the_margin_argument_holds_on_these_prompts(models):
    """Why speculative output can equal greedy's in floating point (notebook 05's argument).

    A verify forward computes many positions at once; greedy computes one per forward. The
    logits differ in the last bits; the argmax is safe while the two best logits are much
    further apart than that. Checked here on every new token of each prompt's greedy run:
    one forward over the whole text against one cached forward per position.
    """
    target = models[0]
    for name, text in PROMPTS.items():
        prompt = encode(text)
        tokens = greedy_decode(target, prompt, 24).tokens
        text_tokens = prompt + tokens
        cache = KVCache(target.config, np.float64)
        forward(target.params, target.config, prompt[:-1], cache)
        single = np.concatenate(
            [
                forward(target.params, target.config, [t], cache)
                for t in text_tokens[len(prompt) - 1 : -1]
            ]
        )  # [24, n_vocab]: greedy's way, one position per forward
        batched = forward(target.params, target.config, text_tokens[:-1])[len(prompt) - 1 :]
        assert np.argmax(single, axis=-1).tolist() == tokens, name
        top_two = np.sort(single, axis=-1)[:, -2:]
        closest = float((top_two[:, 1] - top_two[:, 0]).min())
        rounding = float(np.abs(batched - single).max())
        assert rounding < 1e-9, (name, rounding)  # double precision: last bits only
        assert closest > 1e6 * rounding, (name, closest, rounding)


@pytest.mark.slow
def test_shipped_models_full_sweep(models):
    checked = check_all(models, PROMPTS, ks=range(1, 9), max_new_tokens=200,
                        adaptive_values=(False, True))  # fmt: skip
    assert checked == len(PROMPTS) * 8 * 2 * 2
