"""The shipped weights: what they claim to be, and the KV cache checked against recomputation."""

import math
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from speclab.decode_reports import load_report
from speclab.gpt import forward
from speclab.kv_cache import KVCache
from speclab.paths import weights_dir
from speclab.weights import load_draft, load_target, param_shapes


@pytest.fixture(scope="module")
def target():
    return load_target()


def test_files_are_small_and_describe_their_training(target):
    draft = load_draft()
    for name in ("target.npz", "draft.npz"):
        assert (weights_dir() / name).stat().st_size < 10 * 2**20
    assert (target.config.n_layer, target.config.n_embd, target.config.n_ctx) == (4, 128, 1024)
    assert draft.config.n_ctx == target.config.n_ctx and draft.config.n_embd < target.config.n_embd
    for model in (target, draft):
        assert model.meta["corpus"]["sha256"] and model.meta["corpus"]["train_files"]
        assert model.meta["recipe"]["n_embd"] == model.config.n_embd
        assert 0 < model.meta["val_bits_per_byte"] < 8
    assert target.meta["val_bits_per_byte"] < draft.meta["val_bits_per_byte"]


def real_prompts(rng, count):
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    source = b"".join((stdlib / name).read_bytes() for name in ("textwrap.py", "shlex.py"))
    prompts = []
    for _ in range(count):
        start = int(rng.integers(0, len(source) - 64))
        prompts.append(list(source[start : start + int(rng.integers(1, 48))]))
    return prompts


def test_cached_greedy_equals_recomputed_greedy(target):
    """Hundreds of prompts: one-token-at-a-time cached decoding picks the same tokens as
    recomputing the whole sequence from scratch at every step (no cache at all)."""
    rng = np.random.default_rng(0)
    prompts = real_prompts(rng, 100) + [
        list(rng.integers(0, 256, int(rng.integers(1, 40)))) for _ in range(100)
    ]
    for prompt in prompts:
        cache = KVCache(target.config)
        logits = forward(target.params, target.config, prompt, cache)[-1]
        sequence = list(prompt)
        for _ in range(3):
            recomputed = forward(target.params, target.config, sequence)[-1]
            np.testing.assert_allclose(logits, recomputed, atol=1e-9)
            assert int(np.argmax(logits)) == int(np.argmax(recomputed))
            sequence.append(int(np.argmax(logits)))
            logits = forward(target.params, target.config, sequence[-1:], cache)[-1]


def test_float32_cache_agrees_within_float32_tolerance():
    """In float32 the cached and uncached logits differ in the last bits only: about 1e-6
    relative, so 1e-3 absolute on logits of size ~10 is a generous, still failing-capable bound."""
    model = load_target(dtype=np.float32)
    tokens = list(b"def add(a, b):\n    return a + b\n")
    full = forward(model.params, model.config, tokens)
    cache = KVCache(model.config, dtype=np.float32)
    steps = np.concatenate([forward(model.params, model.config, [t], cache) for t in tokens])
    assert full.dtype == np.float32
    np.testing.assert_allclose(steps, full, atol=1e-3)


def test_readme_states_the_shipped_models_figures(target):
    """The README's model section quotes the weights files' own records, not typed-in guesses."""
    from speclab.paths import repo_root

    readme = (repo_root() / "README.md").read_text(encoding="utf-8")
    for model in (target, load_draft()):
        meta = model.meta
        assert f"{meta['val_bits_per_byte']:.2f} bits per byte" in readme, model.name
        assert f"{meta['trained_steps']:,} steps" in readme, model.name
        assert f"{meta['training_seconds'] / 60:.0f} minutes" in readme, model.name
        n_params = sum(int(np.prod(shape)) for shape in param_shapes(model.config).values())
        assert f"({n_params:,} parameters)" in readme, model.name
    recipe = " ".join(readme.split())
    averaged = target.meta["averaged"]  # the shipped target is a mean of checkpoints' weights
    assert (
        f"the shipped target is the mean of its weights at the last {averaged['count']} "
        f"validations, steps {averaged['first_step']:,} to {averaged['last_step']:,}" in recipe
    )
    assert f"--set average_from={target.meta['recipe']['average_from']} " in recipe
    gap = f"is {target.meta['copy_gap']:.2f} near the start of the context and "
    assert gap + f"{target.meta['copy_gap_far']:.2f} at three quarters of it" in recipe
    stage_1 = target.meta["recipe"]
    assert (
        f"rows of {stage_1['n_seq']} bytes at positions 0–{stage_1['n_seq'] - 1} for the first "
        f"{stage_1['short_steps']:,} steps" in recipe
    )


@pytest.mark.training_corpus
def test_readme_states_the_copy_test_as_the_shipped_target_takes_it_now(target):
    """The copy test measured afresh (the weights' record holds the earlier test's figures:
    its seventh function was one the training files hold), and on all the held-out functions."""
    from speclab.copy_metrics import copy_score, held_out_functions
    from speclab.corpus import load_corpus
    from speclab.paths import repo_root

    readme = " ".join((repo_root() / "README.md").read_text(encoding="utf-8").split())
    corpus = load_corpus()
    functions = held_out_functions(corpus["val"], corpus["train"])
    eight = copy_score(target.params, target.config, functions)
    copied, lengths = eight["bytes_copied"], eight["bytes_to_copy"]
    assert (
        f"{', '.join(map(str, copied[:-1]))} and {copied[-1]} bytes before the first mistake, "
        f"of functions of {', '.join(map(str, lengths[:-1]))} and {lengths[-1]} bytes; median "
        f"{np.median(np.divide(copied, lengths)):.0%} of a function, "
        f"{NUMBER_WORDS[eight['functions_copied_whole']]} copied whole" in readme.replace(" %", "%")
    )
    every = held_out_functions(corpus["val"], corpus["train"], n=None)
    wide = copy_score(target.params, target.config, every)
    shares = np.divide(wide["bytes_copied"], wide["bytes_to_copy"])
    assert (
        f"On all {len(every)} such functions of 120–400 bytes (the 8 are spread over them): a "
        f"median of {np.median(shares):.0%}, {wide['functions_copied_whole']} copied whole"
        in readme.replace(" %", "%")
    )
    assert f"(a median of {np.median(np.divide(copied, lengths)):.0%} of each function" in (
        readme.replace(" %", "%")
    )


NUMBER_WORDS = dict(enumerate("none one two three four five six seven eight".split()))


def test_saved_benchmark_reports_are_for_the_shipped_weights():
    """data/bench/ must be re-run whenever a weights file changes: lesson 06 reads it."""
    import json

    from speclab.paths import data_dir
    from speclab.weights import file_sha256

    decode = load_report(data_dir() / "bench" / "decode.json")
    for name in ("target", "draft"):
        assert decode["models"][name]["sha256"] == file_sha256(weights_dir() / f"{name}.npz")
    forward_report = json.loads((data_dir() / "bench" / "forward.json").read_text(encoding="utf-8"))
    assert forward_report["model"]["trained_steps"] == load_target().meta["trained_steps"]
    # data/bench/README.md says which reports share a machine
    cost = json.loads((data_dir() / "bench" / "draft_cost.json").read_text(encoding="utf-8"))
    platforms = {name: report["machine"]["platform"] for name, report in
                 (("forward", forward_report), ("decode", decode), ("draft_cost", cost))}  # fmt: skip
    readme = " ".join((data_dir() / "bench" / "README.md").read_text(encoding="utf-8").split())
    assert "All three were last re-run together, in one `make bench`" in readme
    assert len(set(platforms.values())) == 1, platforms
    assert cost["models"]["target"]["sha256"] == decode["models"]["target"]["sha256"]


def test_readme_quotes_the_draft_models_figures_from_the_saved_report():
    """README, "The draft model": the share of drafts kept at k = 4, drafting's cost per
    drafted token, where it pays best and how often the adaptive policy switches it off; its
    bits per byte and copy gap, as the weights record them."""

    from speclab.paths import data_dir, repo_root

    report = load_report(data_dir() / "bench" / "decode.json")
    kept = [r["accepted_over_drafted"] for r in report["results"] if r["method"] == "model k=4"]
    costs = [
        r["draft_cost_per_token"]
        for r in report["results"]
        if r["drafter"] == "model" and r["draft_cost_per_token"]
    ]
    readme = " ".join((repo_root() / "README.md").read_text(encoding="utf-8").split())
    assert f"the target keeps {100 * min(kept):.0f}–{100 * max(kept):.0f} % of its drafts" in readme
    assert (
        f"Drafting costs {min(costs):.2f} to {max(costs):.2f} of a target step per drafted"
        in readme
    )
    rows = [r for r in report["results"] if r["drafter"] == "model"]
    best = max(rows, key=lambda r: r["speedup"])
    kind = "adaptive" if best["adaptive"] else f"k = {best['k']}"
    assert f"at best {best['speedup']:.2f}× ({best['scenario']}, {kind})" in readme
    scenarios = {r["scenario"] for r in rows}
    fixed = [r for r in rows if not r["adaptive"]]
    slow = [r for r in fixed if r["speedup"] < 1]
    named = "; ".join(
        f"{s}, k = " + " and ".join(str(r["k"]) for r in slow if r["scenario"] == s)
        for s in dict.fromkeys(r["scenario"] for r in slow)
    )
    if slow:
        assert (
            f"slower than greedy in {len(slow)} of its {len(fixed)} fixed-k rows ({named})"
            in readme
        )
    else:
        assert f"faster than greedy in all {len(fixed)} of its fixed-k rows" in readme
        lookup = next(r for r in report["results"] if r["scenario"] == best["scenario"]
                      and r["method"] == f"lookup {kind.replace(' ', '')}")  # fmt: skip
        assert f"where prompt lookup gives {lookup['speedup']:.2f}×" in readme
    off = [s["model"]["share_off"] for s in report["adaptive"].values()]
    assert f"switches it off in {100 * min(off):.0f}–{100 * max(off):.0f} % of its rounds" in readme
    adaptive = {r["scenario"]: r["speedup"] for r in rows if r["adaptive"]}
    best_fixed = {s: max(r["speedup"] for r in fixed if r["scenario"] == s) for s in scenarios}
    ahead = [s for s in adaptive if adaptive[s] > best_fixed[s]]
    lo, hi = min(adaptive.values()), max(adaptive.values())
    if not ahead:
        assert (f"and gives {lo:.2f}–{hi:.2f}×; it falls behind the best fixed k in every "
                "scenario") in readme  # fmt: skip
    else:
        passed = "; ".join(f"{s}: {adaptive[s]:.2f}× against {best_fixed[s]:.2f}×" for s in ahead)
        assert (f"and gives {lo:.2f}–{hi:.2f}×; it falls behind the best fixed k in "
                f"{len(adaptive) - len(ahead)} of the {len(adaptive)} scenarios and passes it "
                f"in {len(ahead)} ({passed};") in readme  # fmt: skip
    meta = load_draft(np.float32).meta
    assert (
        f"{meta['val_bits_per_byte']:.2f} bits per byte, from "
        f"{meta['started_from']['val_bits_per_byte']:.2f}. Its copy gap is {meta['copy_gap']:.2f}"
    ) in readme


@pytest.mark.training_corpus
def test_readme_quotes_the_draft_models_agreement_with_the_target():
    """README, "The draft model": its agreement with the target, measured on held-out text."""
    from speclab.corpus import load_corpus
    from speclab.paths import repo_root
    from speclab.recipe import RECIPES
    from speclab.train import agreement

    readme = " ".join((repo_root() / "README.md").read_text(encoding="utf-8").split())
    draft = load_draft(np.float32)
    share = agreement(draft.params, RECIPES["draft"], load_target(np.float32), load_corpus()["val"])
    assert f"agrees at {share:.1%} with the target shipped now".replace("%", " %") in readme


def test_readme_quotes_the_saved_benchmark_of_the_target():
    """README, "What the target does": the copy-heavy and free-text figures of data/bench/."""

    from speclab.paths import data_dir, repo_root

    report = load_report(data_dir() / "bench" / "decode.json")
    readme = " ".join((repo_root() / "README.md").read_text(encoding="utf-8").split())
    speedup = {(r["scenario"], r["method"]): r["speedup"] for r in report["results"]}
    shares = report["provenance"]
    fixed = {
        m: v for (s, m), v in speedup.items() if s == "copy-heavy" and m.startswith("lookup k=")
    }
    best = max(fixed, key=fixed.get)
    heavy, free = speedup["copy-heavy", "lookup adaptive"], speedup["free text", "lookup adaptive"]
    assert (
        f"greedy output is {shares['copy-heavy']['prompt']:.0%} copied from the prompt and "
        f"{shares['copy-heavy']['loop']:.0%} a loop on its own text. Prompt lookup makes decoding "
        f"{fixed[best]:.2f}× faster at its best fixed k ({best.removeprefix('lookup ').replace('=', ' = ')}) "
        f"and {heavy:.2f}× with the default adaptive policy"
    ).replace("%", " %") in readme
    assert (
        f"output is {shares['free text']['prompt']:.0%} copied from the prompt (it writes the "
        f"prompt's own lines again) and {shares['free text']['loop']:.0%} a loop, so prompt lookup "
        f"speeds free text up as well ({free:.2f}× adaptive)"
    ).replace("%", " %") in readme
    assert (
        f"copy-heavy prompts {fixed[best]:.2f}× at the best fixed k (goal: at least "
        f"2.5×{'' if fixed[best] >= 2.5 else ', not met'}) and "
        f"{heavy:.2f}× adaptive (the issue's goal for the default policy: at least 2.2×"
        f"{'' if heavy >= 2.2 else ', not met'}), free text {free:.2f}× (at least 0.97×"
        f"{'' if free >= 0.97 else ', not met'}), free-text output "
        f"{shares['free text']['loop']:.0%} loop"
    ).replace("%", " %") in readme
    # the benchmark's own check: prediction from the measured alpha and costs within 10 %
    rows = [r for r in report["results"] if math.isfinite(r["predicted_with_costs"])]
    gaps = [abs(r["speedup"] / r["predicted_with_costs"] - 1) for r in rows]
    worst = rows[gaps.index(max(gaps))]
    within = sum(gap <= 0.10 for gap in gaps)
    check = report["goals"]["prediction within 10 %"]
    assert check["value"] == within / len(rows) and check["largest_gap"] == max(gaps)
    assert (
        f"10 % of the one predicted from its measured α and costs in {within} of {len(rows)} rows "
        f"(the largest gap {100 * max(gaps):.1f} % of the prediction, {worst['scenario']}, "
        f"{worst['method'].replace('=', ' = ')})"
    ) in readme
    misses = {0: "does not miss", 1: "misses once", 2: "misses twice", 3: "misses three times"}
    assert f"The benchmark also checks itself, and {misses[len(rows) - within]}:" in readme


def test_readme_quotes_the_saved_draft_cost_report():
    """README, "The draft model": each cost is the saved benchmarks/draft_cost.py run's, for
    the shipped weights (data/bench/draft_cost.json)."""
    import json

    from speclab.paths import data_dir, repo_root
    from speclab.weights import file_sha256

    report = json.loads((data_dir() / "bench" / "draft_cost.json").read_text(encoding="utf-8"))
    for name in ("target", "draft"):
        assert report["models"][name]["sha256"] == file_sha256(weights_dir() / f"{name}.npz")
    c = {row["model"]: f"{row['cost_of_target_step']:.2f}" for row in report["rows"]}
    assert c["2 layers x 4"] == f"{report['floor_two_layers']:.2f}"
    readme = " ".join((repo_root() / "README.md").read_text(encoding="utf-8").split())
    assert (
        f"on arrays of almost no numbers, at {c['2 layers x 4']} of a target step; the shipped "
        f"draft's step costs {c['draft']} there, 2 layers of width 32 cost {c['2 layers x 32']} "
        f"and 1 layer of width 64 {c['1 layer x 64']}." in readme
    )


def test_lesson_07_key_quotes_the_saved_draft_cost_report():
    import json

    from speclab.paths import data_dir, repo_root

    report = json.loads((data_dir() / "bench" / "draft_cost.json").read_text(encoding="utf-8"))
    c = {row["model"]: f"{row['cost_of_target_step']:.2f}" for row in report["rows"]}
    key = repo_root() / "lessons" / "answers" / "07_speculative_sampling.md"
    text = " ".join(key.read_text(encoding="utf-8").split())
    assert (
        f"it costs {c['2 layers x 4']} of a target step by itself, the draft {c['draft']}." in text
    )
