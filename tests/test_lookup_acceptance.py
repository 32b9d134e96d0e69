"""benchmarks/lookup_acceptance.py: a prompt a model's context cannot hold is named before any
decoding (it stopped partway, after the earlier models' results)."""

import subprocess
import sys

import numpy as np
from benchmark_scripts import FOLDER

from speclab.gpt import GPTConfig
from speclab.weights import init_params, save

SCRIPT = FOLDER / "lookup_acceptance.py"


def run_on_a_model_of(tmp_path, n_ctx: int) -> tuple[subprocess.CompletedProcess, str]:
    """The script on a random model with n_ctx positions, 96 new tokens a prompt; and the
    model's path. Every shipped prompt that does not fit makes it stop with status 1."""
    small = tmp_path / "small.npz"
    config = GPTConfig(n_layer=1, n_head=2, n_embd=8, n_ctx=n_ctx)
    save(small, init_params(config, np.random.default_rng(0)), config)
    done = subprocess.run([sys.executable, str(SCRIPT), str(small), "--max-new-tokens", "96"],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    return done, str(small)


def test_a_context_too_short_for_a_prompt_is_named_before_any_decoding(tmp_path):
    done, small = run_on_a_model_of(tmp_path, n_ctx=300)
    assert (
        "copy-heavy prompt 'rename-variable' (432 tokens) + 96 new tokens exceeds the context "
        f"window of {small} of 300 tokens: give weights of a model with a longer context"
    ) in done.stderr, done.stderr  # the prompt alone fills it: fewer new tokens cannot help
    assert done.stdout == ""  # nothing decoded, nothing printed


def test_a_prompt_that_fits_without_its_new_tokens_gets_the_new_tokens_that_fit(tmp_path):
    done, _ = run_on_a_model_of(tmp_path, n_ctx=500)
    assert "+ 96 new tokens exceeds the context window of" in done.stderr
    assert done.stderr.rstrip().endswith("give --max-new-tokens of at most 68"), done.stderr
