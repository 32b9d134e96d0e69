"""benchmarks/draft_cost.py: a draft step's cost per shape (tests check the report, not speed)."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from benchmark_scripts import FOLDER, load

from speclab.gpt import GPTConfig
from speclab.weights import init_params

SCRIPT = FOLDER / "draft_cost.py"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=600)  # fmt: skip


def test_the_report_times_every_shape_against_the_target_in_the_same_rounds(tmp_path):
    result = run("--repeats", "2", "--n-past", "8", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "draft_cost.json").read_text(encoding="utf-8"))
    rows = {row["model"]: row for row in report["rows"]}
    script = load("draft_cost")
    shapes = {(r["n_layer"], r["n_head"], r["n_embd"]) for r in rows.values()}
    assert set(script.SHAPES) <= shapes
    assert {(n, 4, 4) for n in script.SKELETON_DEPTHS} <= shapes  # the shipped draft's 4 heads
    assert rows["target"]["cost_of_target_step"] == 1.0  # paired by round: exactly 1
    assert rows["target"]["weights_share"] == 1.0
    skeletons = [r for r in rows.values() if r["kind"] == "skeleton"]
    assert {r["n_embd"] for r in skeletons} == {r["n_head"] for r in skeletons}  # d_head 1
    assert all(r["weights_share"] < 0.01 for r in skeletons)
    two = next(r for r in skeletons if r["n_layer"] == 2)
    assert report["floor_two_layers"] == two["cost_of_target_step"] > 0
    assert report["settings"]["n_past"] == 8 and report["machine"]["blas"] is not None
    assert "the least a 2-layer draft can cost here" in result.stdout


def test_bad_arguments_end_in_one_line(tmp_path):
    file = tmp_path / "a-file"
    file.write_text("x", encoding="utf-8")
    for args, message in (
        (["--out", str(file)], "is a file, not a folder"),
        (["--draft", str(tmp_path / "none.npz")], "no weights file at"),
        (["--n-past", "99999"], "--n-past 99999 must be below the models' context, 1024"),
        (["--repeats", "0"], "must be at least 1"),
        (["--repeats", str(10**12)], "--repeats must be at most 10,000"),  # not terabytes of times
        (["--seed", "-1"], "--seed must be at least 0, got -1"),
    ):
        result = run(*args)
        assert result.returncode in (1, 2) and message in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr
    assert not (Path(tmp_path) / "draft_cost.json").exists()
    from speclab.weights import save

    short = tmp_path / "short.npz"  # the model whose context is short is named, not --n-past
    config = GPTConfig(n_layer=1, n_head=2, n_embd=8, n_ctx=64)
    save(short, init_params(config, np.random.default_rng(0)), config)
    result = run("--draft", str(short))
    assert result.returncode == 2 and f"(of the draft {short})" in result.stderr, result.stderr


def test_a_closed_pipe_keeps_the_report_and_an_interrupted_run_leaves_no_folder(tmp_path):
    """`| head -1` closed stdout after the timing: the report was lost, an empty folder left."""
    out = tmp_path / "piped" / "deeper"
    command = f"{sys.executable} {SCRIPT} --repeats 2 --n-past 8 --out {out} | head -1"
    done = subprocess.run(["bash", "-c", f"set -o pipefail; {command}"], capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    assert done.returncode in (0, 141) and "Traceback" not in done.stderr, done.stderr
    assert json.loads((out / "draft_cost.json").read_text("utf-8"))["rows"]
    import signal
    import time

    made = tmp_path / "interrupted" / "deeper"
    process = subprocess.Popen([sys.executable, str(SCRIPT), "--repeats", "10000", "--out", str(made)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    for _ in range(600):  # until the timing has begun (its first line is printed)
        if made.exists():
            break
        time.sleep(0.05)
    time.sleep(1.0)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert not (tmp_path / "interrupted").exists()  # the folders it made, removed


def test_a_full_disk_keeps_the_figures_on_screen(tmp_path, monkeypatch, capsys):
    """The report could not be written (a full disk): the minutes of timing were lost, and the
    error blamed the standard output."""
    import pytest

    script = load("draft_cost")

    def full(files):
        raise OSError(28, "No space left on device", str(next(iter(files))))

    monkeypatch.setattr(script, "write_together", full)
    argv = ["draft_cost.py", "--repeats", "2", "--n-past", "8", "--out", str(tmp_path)]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(OSError):
        script.main()
    assert "the least a 2-layer draft can cost here" in capsys.readouterr().out
