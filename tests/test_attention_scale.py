"""benchmarks/attention_scale.py: the copy gap with one head's attention logits scaled, head by
head, for a small model saved to a file; bad arguments are one line."""

import subprocess
import sys

import numpy as np
from benchmark_scripts import FOLDER

from speclab.checkpoints import scale_attention
from speclab.copy_metrics import copy_gap, copy_probes
from speclab.corpus import load_corpus
from speclab.gpt import GPTConfig
from speclab.weights import flatten, init_params, load, save

SCRIPT = FOLDER / "attention_scale.py"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)],
                          capture_output=True, text=True)  # fmt: skip


def small_model(path):
    config = GPTConfig(n_layer=2, n_head=2, n_embd=8, n_ctx=64)
    params = init_params(config, np.random.default_rng(1), dtype=np.float64)
    for value in flatten(params).values():  # attention that depends on content
        value += np.random.default_rng(2).standard_normal(value.shape) * 0.5
    save(path, params, config)
    return load(path)  # as the script reads it (float32 on disk)


def test_each_head_and_the_heads_together_give_the_gap_of_the_scaled_model(tmp_path):
    model = small_model(tmp_path / "small.npz")
    result = run(tmp_path / "small.npz", "--factor", "2", "--with", "1.1=3", "--with", "0.0=0.5")
    assert result.returncode == 0, result.stderr
    rows = [line.split() for line in result.stdout.splitlines()[2:]]
    probes = copy_probes(load_corpus()["val"], model.config.n_ctx)
    expected = [copy_gap(model.params, 2, probes)]
    expected += [copy_gap(scale_attention(model.params, 2, {(layer, head): 2.0}), 2, probes)
                 for layer in range(2) for head in range(2)]  # fmt: skip
    expected.append(
        copy_gap(scale_attention(model.params, 2, {(1, 1): 3.0, (0, 0): 0.5}), 2, probes)
    )
    assert len(rows) == len(expected) == 6
    assert rows[0][0] == "none" and rows[1][:3] == ["0.0", "x", "2"] and rows[5][0] == "1.1x3"
    for row, gap in zip(rows, expected, strict=True):
        assert [float(x) for x in row[-3:]] == [
            round(gap[k], 3) for k in ("first", "second", "gap")
        ]
    assert len({row[-1] for row in rows}) > 1  # scaling a head changed the gap


def test_bad_arguments_are_one_line(tmp_path):
    small_model(tmp_path / "small.npz")
    for args, message in (
        (["--factor", "0"], "--factor 0.0: must be above 0"),
        (["--factor", "nan"], "must be above 0"),
        (["--with", "3.0=2"], "--with '3.0=2': the model has layers 0-1 and heads 0-1"),
        (["--with", "0.1"], "expected LAYER.HEAD=FACTOR"),
    ):
        result = run(tmp_path / "small.npz", *args)
        assert result.returncode == 2 and message in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
    result = run(tmp_path / "missing.npz")
    assert result.returncode != 0 and "missing.npz" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1
