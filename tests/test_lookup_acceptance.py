"""benchmarks/lookup_acceptance.py: a prompt a model's context cannot hold is named before any
decoding (it stopped partway, after the earlier models' results)."""

import subprocess
import sys

import numpy as np
from benchmark_scripts import FOLDER

from speclab.gpt import GPTConfig
from speclab.weights import init_params, save

SCRIPT = FOLDER / "lookup_acceptance.py"


def test_a_context_too_short_for_a_prompt_is_named_before_any_decoding(tmp_path):
    small = tmp_path / "small.npz"
    config = GPTConfig(n_layer=1, n_head=2, n_embd=8, n_ctx=300)
    save(small, init_params(config, np.random.default_rng(0)), config)
    done = subprocess.run([sys.executable, str(SCRIPT), str(small), "--max-new-tokens", "96"],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "small.npz: its context of 300 cannot hold" in done.stderr
    assert "lower --max-new-tokens or --prompts" in done.stderr
    assert done.stdout == ""  # nothing decoded, nothing printed
