"""speclab.train: the schedule, the optimiser, the loop penalty, --set, and the command run end
to end: it trains, resumes from its checkpoints (or refuses them, with a message), goes on with
--init-from and exports."""

import errno
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from speclab.copy_metrics import copy_gap, copy_probes
from speclab.gpt import GPTConfig, forward
from speclab.recipe import RECIPES, TrainConfig
from speclab.train import learning_rate, loop_penalty, own_loops, row_length
from speclab.train_cli import with_overrides
from speclab.weights import flatten, init_params, load


def test_schedule_warms_up_and_decays():
    cfg = TrainConfig(steps=100, warmup=10, lr=1.0, min_lr_ratio=0.1)
    assert learning_rate(0, cfg) == pytest.approx(0.1)
    assert learning_rate(9, cfg) == pytest.approx(1.0)
    assert learning_rate(100, cfg) == pytest.approx(0.1)
    assert learning_rate(50, cfg) < learning_rate(20, cfg)
    # a cosine, not a straight line: halfway (step 55) 0.1 + 0.9 * (1 + cos(pi / 2)) / 2, a
    # third of the way (step 40) 0.1 + 0.9 * (1 + cos(pi / 3)) / 2
    assert learning_rate(55, cfg) == pytest.approx(0.55)
    assert learning_rate(40, cfg) == pytest.approx(0.775)


def test_smoke_run_trains_resumes_and_exports(tmp_path):
    run_dir, out = tmp_path / "run", tmp_path / "smoke.npz"
    command = [
        sys.executable,
        "-m",
        "speclab",
        "train",
        "smoke",
        "--smoke",
        "--run-dir",
        str(run_dir),
        "--out",
        str(out),
    ]
    subprocess.run(
        command + ["--steps", "3"],
        check=True,
        capture_output=True,
        env={"TQDM_DISABLE": "1", **__import__("os").environ},
    )
    first = load(out)
    assert first.meta["trained_steps"] == 3
    subprocess.run(command, check=True, capture_output=True)
    model = load(out)
    assert model.meta["trained_steps"] == RECIPES["smoke"].steps
    assert model.config.n_embd == RECIPES["smoke"].n_embd
    assert model.meta["corpus"]["sha256"] and model.meta["val_bits_per_byte"] > 0
    history = model.meta["history"]
    assert [entry["step"] for entry in history] == [3, 6]  # the second run resumed at 3
    # learning: from about 8 bits per byte (a uniform guess over 256 bytes) downwards
    assert 8.1 > history[0]["val_bits_per_byte"] > history[1]["val_bits_per_byte"]
    straight = tmp_path / "straight.npz"  # six steps in one sitting: the same weights, bit for bit
    command[command.index(str(run_dir))] = str(tmp_path / "straight")
    command[command.index(str(out))] = str(straight)
    subprocess.run(command, check=True, capture_output=True)
    resumed, whole = flatten(model.params), flatten(load(straight).params)
    assert all(np.array_equal(resumed[name], whole[name]) for name in whole)


def test_adamw_first_steps_by_hand():
    """Adam's first step moves each weight by lr against the sign of its gradient (m_hat =
    g, v_hat = g * g); then gradients +1 and -1 give m_hat = (0.09 - 0.1) / 0.19 and v_hat =
    (0.0475 + 0.05) / 0.0975 = 1. Weight decay shrinks matrices only."""
    from speclab.train import adamw_step

    cfg = TrainConfig(weight_decay=0.0, grad_clip=1e9)
    params = {"w": np.array([[1.0, 2.0]]), "b": np.array([1.0, 1.0])}
    state = {key: {name: np.zeros_like(v) for name, v in params.items()} for key in "mv"}
    grads = {"w": np.array([[3.0, -0.5]]), "b": np.array([1.0, 1.0])}
    adamw_step(params, grads, state, 0, 0.01, cfg)
    np.testing.assert_allclose(params["w"], [[0.99, 2.01]], rtol=1e-6)
    adamw_step(params, {"w": -grads["w"] / 3.0, "b": -grads["b"]}, state, 1, 0.01, cfg)
    np.testing.assert_allclose(params["b"], 0.99 + 0.01 * 0.01 / 0.19, rtol=1e-6)
    decayed = {"w": np.array([[1.0, 2.0]]), "b": np.array([1.0, 2.0])}
    zero = {name: np.zeros_like(v) for name, v in decayed.items()}
    state = {key: {name: np.zeros_like(v) for name, v in decayed.items()} for key in "mv"}
    adamw_step(decayed, zero, state, 0, 0.1, TrainConfig(weight_decay=0.5))
    np.testing.assert_allclose(decayed["w"], [[0.95, 1.9]])  # times 1 - lr * decay
    np.testing.assert_allclose(decayed["b"], [1.0, 2.0])  # biases and gains are not decayed


def test_adamw_clips_the_gradient_norm_to_grad_clip():
    """A gradient of norm 10 is scaled to norm 1 before it enters the moments; one of norm
    0.1 is not. Adam's first step is lr against the sign whatever the scale, so the second
    step shows it: with g1 = (6, 8) clipped to (0.6, 0.8) and g2 = (0.06, -0.08),
    m = 0.9 * 0.1 * g1' + 0.1 * g2 = (0.06, 0.064), v = 0.95 * 0.05 * g1'^2 + 0.05 * g2^2
    = (0.01728, 0.03072), and the step is lr * (m / 0.19) / sqrt(v / 0.0975)."""
    from speclab.train import adamw_step

    cfg = TrainConfig(weight_decay=0.0, grad_clip=1.0)
    params = {"b": np.array([0.0, 0.0])}
    state = {key: {"b": np.zeros(2)} for key in "mv"}
    assert adamw_step(params, {"b": np.array([6.0, 8.0])}, state, 0, 0.01, cfg) == pytest.approx(10)
    np.testing.assert_allclose(params["b"], [-0.01, -0.01], rtol=1e-6)
    adamw_step(params, {"b": np.array([0.06, -0.08])}, state, 1, 0.01, cfg)
    m_hat, v_hat = np.array([0.06, 0.064]) / 0.19, np.array([0.01728, 0.03072]) / 0.0975
    np.testing.assert_allclose(params["b"], -0.01 - 0.01 * m_hat / np.sqrt(v_hat), rtol=1e-6)


def test_resume_with_another_recipe_is_a_clear_error(tmp_path):
    run_dir = tmp_path / "run"
    base = [sys.executable, "-m", "speclab", "train", "smoke", "--smoke", "--run-dir", str(run_dir)]
    subprocess.run(base + ["--steps", "2"], check=True, capture_output=True)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "speclab",
            "train",
            "draft",
            "--run-dir",
            str(run_dir),
            "--steps",
            "2",
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "made with the smoke recipe" in result.stderr and "Traceback" not in result.stderr


def test_rows_start_short_then_fill_the_context():
    cfg = TrainConfig(n_ctx=1024, n_seq=256, short_steps=10)
    assert [row_length(s, cfg) for s in (0, 9, 10, 500)] == [256, 256, 1024, 1024]


def test_set_changes_a_field_and_names_a_bad_one():
    cfg = with_overrides(RECIPES["target"], ["short_steps=0", "lr=1e-3", "steps=2e3"])
    assert (cfg.short_steps, cfg.lr, cfg.steps) == (0, 1e-3, 2000)
    with pytest.raises(ValueError, match="short_steps"):
        with_overrides(cfg, ["shortsteps=3"])
    with pytest.raises(ValueError, match="not a valid int"):
        with_overrides(cfg, ["n_ctx=big"])
    for bad in ("n_seq=0", "lr=-1", "copy_fraction=1.5", "n_layer=-2", "lr=nan", "lr=inf",
                "grad_clip=0", "weight_decay=-1", "warmup=-1", "min_lr_ratio=-1", "seed=-1",
                "short_steps=-1", "max_corpus_bytes=-5", "loop_weight=nan", "n_layer=1e400",
                "n_seq=1.5e0", "n_layer=300", "average_from=-1"):  # fmt: skip
        with pytest.raises(ValueError, match=bad.split("=")[0] + "|shape"):
            with_overrides(cfg, [bad])
    with pytest.raises(ValueError, match="cannot load a model of this shape"):
        with_overrides(cfg, ["n_layer=300"])  # speclab's loaders refuse it: not after hours
    for said, bad in [  # each as it read before: "'inf' is not a valid float", 301 digits of
        ("lr must be a finite number", "lr=inf"),  # steps, "the train text is 1 bytes" after
        ("--set steps=1e+300: at most 10,000,000", "steps=1e300"),  # the corpus was loaded
        ("--set max_corpus_bytes=1: this recipe needs at least 12,288", "max_corpus_bytes=1"),
    ]:  # (12,288 = 8 x n_ctx 1,024 + 4,096, train.py's floor)
        with pytest.raises(ValueError, match=re.escape(said)):
            with_overrides(cfg, [bad])


def test_out_that_cannot_take_the_weights_is_refused_before_training(tmp_path):
    run_dir = tmp_path / "run"
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("x")
    cases = {
        run_dir / "checkpoint.npz": "is the run's checkpoint",
        tmp_path / "folder": "is a folder",
        tmp_path / "file" / "w.npz": "its folder "
        + str(tmp_path / "file")
        + " is a file, not a folder",
        tmp_path / "file" / "sub" / "w.npz": "cannot write there",
    }
    for out, message in cases.items():
        result = run_train("smoke", "--smoke", "--run-dir", run_dir, "--out", out)
        assert result.returncode == 2 and message in result.stderr, result.stderr
        assert not (run_dir / "checkpoint.npz").exists(), "refused before the first step"


def test_out_that_is_the_init_from_file_or_read_only_is_refused_and_left_alone(tmp_path):
    start = tmp_path / "start.npz"
    assert (
        run_train("smoke", "--smoke", "--run-dir", tmp_path / "a", "--out", start).returncode == 0
    )
    before = start.read_bytes()
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "b", "--init-from", start,
                       "--out", start)  # fmt: skip
    assert result.returncode == 2 and "is the file --init-from starts from" in result.stderr
    start.chmod(0o444)
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "c", "--out", start)
    assert result.returncode == 2 and "is read-only; it is left as it is" in result.stderr
    assert start.read_bytes() == before and not (start.stat().st_mode & 0o222)
    assert not (tmp_path / "b" / "checkpoint.npz").exists()
    assert not (tmp_path / "c" / "checkpoint.npz").exists()


def test_init_from_a_checkpoint_at_the_recipes_last_step_is_refused(tmp_path):
    """It used to print "nothing to train" and exit 0, leaving the new run folder without a
    checkpoint, so the next command there trained from step 0 without a word."""
    assert run_train("smoke", "--smoke", "--run-dir", tmp_path / "done").returncode == 0
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "new", "--init-from",
                       tmp_path / "done" / "checkpoint.npz")  # fmt: skip
    assert result.returncode != 0 and "give --steps above 6" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "new", "--steps", "8",
                       "--init-from", tmp_path / "done" / "checkpoint.npz")  # fmt: skip
    assert result.returncode == 0 and (tmp_path / "new" / "checkpoint.npz").exists()


def test_stop_at_stops_early_and_resumes_on_the_same_schedule(tmp_path):
    run_dir, out = tmp_path / "run", tmp_path / "smoke.npz"
    base = [sys.executable, "-m", "speclab", "train", "smoke", "--smoke"]
    base += ["--run-dir", str(run_dir), "--out", str(out)]
    subprocess.run(base + ["--stop-at", "3"], check=True, capture_output=True)
    early = load(out)
    assert early.meta["trained_steps"] == 3 and early.meta["recipe"]["steps"] == 6
    assert "copy_gap" in early.meta and "copy_gap_far" in early.meta["history"][-1]
    subprocess.run(base, check=True, capture_output=True)
    assert [e["step"] for e in load(out).meta["history"]] == [3, 6]


def test_average_from_exports_the_mean_of_the_weights_at_each_validation(tmp_path):
    """The oracle: a plain run's exports at steps 3 and 6, averaged by hand. The averaged run
    is stopped at step 3 and resumed, so its running sum must live in the checkpoint; its own
    weights must train exactly as the plain run's do."""
    plain, mean = tmp_path / "plain", tmp_path / "mean"
    assert run_train("smoke", "--smoke", "--run-dir", plain, "--out", tmp_path / "w.npz",
                     "--stop-at", "3").returncode == 0  # fmt: skip
    at_3 = load(tmp_path / "w.npz", dtype=np.float32)
    assert (
        run_train("smoke", "--smoke", "--run-dir", plain, "--out", tmp_path / "w.npz").returncode
        == 0
    )
    at_6 = load(tmp_path / "w.npz", dtype=np.float32)
    args = (
        "smoke",
        "--smoke",
        "--run-dir",
        mean,
        "--out",
        tmp_path / "m.npz",
        "--set",
        "average_from=3",
    )
    assert run_train(*args, "--stop-at", "3").returncode == 0
    result = run_train(*args)
    assert result.returncode == 0, result.stderr
    assert "the mean of the weights at 2 validations from step 3 on" in result.stdout
    averaged = load(tmp_path / "m.npz", dtype=np.float32)
    a, b, m = flatten(at_3.params), flatten(at_6.params), flatten(averaged.params)
    for name in a:
        expected = ((a[name].astype(np.float64) + b[name]) / 2).astype(np.float32)
        assert np.array_equal(m[name], expected), name
    assert not np.array_equal(m["wte"], b["wte"])  # the mean is not the last step's weights
    with np.load(mean / "checkpoint.npz") as archive:  # averaging does not change the training
        assert all(np.array_equal(archive[f"param/{k}"], v) for k, v in b.items())
    meta = averaged.meta
    assert meta["averaged"] == {"first_step": 3, "count": 2, "last_step": 6, "every": 3}
    history = meta["history"]
    first, last = history  # at step 3 the mean is of one: the weights themselves
    assert first["average"]["val_bits_per_byte"] == first["val_bits_per_byte"]
    assert last["average"]["val_bits_per_byte"] == meta["val_bits_per_byte"]
    assert meta["val_bits_per_byte"] != last["val_bits_per_byte"]
    assert at_6.meta["averaged"] is None and "average" not in at_6.meta["history"][-1]
    late = run_train("smoke", "--smoke", "--run-dir", tmp_path / "late", "--set", "average_from=99")
    assert (
        late.returncode == 0
        and "no mean yet: no validation at or after average_from=99" in late.stdout
    )


def run_train(*args):
    command = [sys.executable, "-m", "speclab", "train", *map(str, args)]
    env = {**__import__("os").environ, "TQDM_DISABLE": "1"}
    return subprocess.run(command, capture_output=True, text=True, env=env)


def _rewritten(checkpoint, change):
    """The checkpoint with change(arrays, record) applied: a valid zip with damaged contents."""
    import json

    with np.load(checkpoint) as archive:
        arrays = {k: archive[k] for k in archive.files if k != "record"}
        record = json.loads(str(archive["record"]))
    change(arrays, record)
    np.savez(checkpoint, **arrays, record=np.array(json.dumps(record)))


CONTENT_DAMAGE = {
    "no history": lambda a, r: r["log"].pop("history"),
    "history a dict": lambda a, r: r["log"].update(history={}),
    "seconds a string": lambda a, r: r["log"].update(seconds="x"),
    "integer weights": lambda a, r: a.update({"param/wte": a["param/wte"].astype(np.int64)}),
    "wrong shape": lambda a, r: a.update({"param/wte": a["param/wte"][:-1]}),
    "a missing part": lambda a, r: [a.pop(k) for k in list(a) if k.startswith("param/h.0.ln_1")],
    "negative step": lambda a, r: r.update(step=-5),
    "an average without a count": lambda a, r: a.update({"avg/wte": a["param/wte"] * 1.0}),
    "a count without an average": lambda a, r: r["log"].update(average={"count": 2}),
    # the first step's update would be NaN: reported as a run that diverged, "lower lr"
    "NaN in AdamW's state": lambda a, r: a.update({"m/wte": a["m/wte"] * np.nan}),
    "a negative variance": lambda a, r: a.update({"v/wte": a["v/wte"] - 1.0}),
    "running means not a dict": lambda a, r: r["log"].update(running=None),
    "a running mean a string": lambda a, r: r["log"].update(running={"train_loss_ema": "x"}),
}


def _claiming_more_than_it_holds(checkpoint, suffix=".npy"):
    """param/wte's .npy header rewritten to claim 2**36 floats (256 GiB), its data kept,
    under the name param/wte + suffix (numpy reads a member without .npy too)."""
    import io
    import zipfile

    with zipfile.ZipFile(checkpoint) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f4", "fortran_order": False, "shape": (2**36,)}
    )
    members["param/wte" + suffix] = header.getvalue() + members.pop("param/wte.npy")[128:]
    with zipfile.ZipFile(checkpoint, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)


@pytest.mark.parametrize(
    "damage",
    [b"", b"not a zip file", "truncated", "no record", "a header claiming 256 GiB",
     "a member named without .npy", *CONTENT_DAMAGE],
)  # fmt: skip
def test_a_damaged_checkpoint_is_refused_with_a_message(tmp_path, damage):
    run_dir = tmp_path / "run"
    assert run_train("smoke", "--smoke", "--run-dir", run_dir, "--stop-at", "3").returncode == 0
    checkpoint = run_dir / "checkpoint.npz"
    if damage == "truncated":
        checkpoint.write_bytes(checkpoint.read_bytes()[:5000])
    elif damage == "no record":
        with np.load(checkpoint) as archive:
            arrays = {k: archive[k] for k in archive.files if k != "record"}
        np.savez(checkpoint, **arrays)
    elif damage in CONTENT_DAMAGE:
        _rewritten(checkpoint, CONTENT_DAMAGE[damage])
    elif damage == "a header claiming 256 GiB":  # not "not enough memory", and no 256 GiB taken
        _claiming_more_than_it_holds(checkpoint)
    elif damage == "a member named without .npy":  # numpy reads it all the same
        _claiming_more_than_it_holds(checkpoint, suffix="")
    else:
        checkpoint.write_bytes(damage)
    result = run_train("smoke", "--smoke", "--run-dir", run_dir)
    assert result.returncode == 1, result.stderr
    assert "damaged or not a speclab training checkpoint" in result.stderr
    assert "Traceback" not in result.stderr


def test_contradicting_options_are_refused(tmp_path):
    result = run_train("target", "--smoke", "--run-dir", tmp_path / "run")
    assert result.returncode == 2 and "--smoke trains the tiny smoke recipe" in result.stderr
    for minutes in ("-1", "nan"):  # nan compares false with everything: no limit at all
        result = run_train(
            "smoke", "--smoke", "--max-minutes", minutes, "--run-dir", tmp_path / "r"
        )
        assert result.returncode == 2 and "--max-minutes" in result.stderr
    assert not (tmp_path / "run").exists() and not (tmp_path / "r").exists()


def test_steps_at_or_below_the_checkpoint_export_it_as_it_is(tmp_path):
    run_dir, out = tmp_path / "run", tmp_path / "out.npz"
    assert run_train("smoke", "--smoke", "--run-dir", run_dir, "--stop-at", "3").returncode == 0
    result = run_train("smoke", "--smoke", "--run-dir", run_dir, "--steps", "2", "--out", out)
    assert result.returncode == 0, result.stderr
    assert load(out).meta["trained_steps"] == 3 and "nothing to train" in result.stdout
    assert not list(run_dir.glob("*.tmp.npz"))


def test_old_checkpoints_load_with_the_fields_they_predate(tmp_path):
    """A checkpoint saved before verbatim_fraction and interleave_fraction existed was made
    with their defaults (0.5 verbatim, no interleaving) and must still resume."""

    from speclab.checkpoints import load_checkpoint

    run_dir = tmp_path / "run"
    assert run_train("smoke", "--smoke", "--run-dir", run_dir, "--steps", "2").returncode == 0
    path = run_dir / "checkpoint.npz"

    def forget_the_new_fields(record):
        for name in ("verbatim_fraction", "interleave_fraction"):
            del record["log"]["config"][name]

    edit_record(path, forget_the_new_fields)
    *_, step, _, _ = load_checkpoint(path, RECIPES["smoke"])
    assert step == 2


def test_init_from_goes_on_with_a_changed_recipe_and_records_it(tmp_path):
    first, second, out = tmp_path / "first", tmp_path / "second", tmp_path / "out.npz"
    assert run_train("smoke", "--smoke", "--run-dir", first, "--stop-at", "3").returncode == 0
    result = run_train(
        "smoke", "--smoke", "--run-dir", second, "--init-from", first / "checkpoint.npz",
        "--set", "interleave_fraction=0.5", "--set", "copy_fraction=0.8", "--out", out,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    meta = load(out).meta
    assert [entry["step"] for entry in meta["history"]] == [3, 6]  # went on from step 3
    (change,) = meta["recipe_changes"]
    assert change["at_step"] == 3
    assert change["changed"] == {"copy_fraction": [0.5, 0.8], "interleave_fraction": [0.0, 0.5]}
    assert meta["recipe"]["interleave_fraction"] == 0.5
    # the first run is untouched and still resumes with its own recipe
    assert run_train("smoke", "--smoke", "--run-dir", first).returncode == 0


def test_a_resumed_run_records_its_new_number_of_steps(tmp_path):
    """Going on in the same --run-dir with more steps (the README's way on from the kept
    checkpoint) changes the schedule: the weights' record says so, and when."""
    run_dir, out = tmp_path / "run", tmp_path / "out.npz"
    assert run_train("smoke", "--smoke", "--run-dir", run_dir, "--steps", "3").returncode == 0
    result = run_train("smoke", "--smoke", "--run-dir", run_dir, "--steps", "6", "--out", out)
    assert result.returncode == 0, result.stderr
    meta = load(out).meta
    assert meta["recipe_changes"] == [{"at_step": 3, "changed": {"steps": [3, 6]}}]
    assert meta["recipe"]["steps"] == 6 == meta["trained_steps"]


def test_init_from_refuses_a_missing_file_a_used_run_dir_and_another_shape(tmp_path):
    first = tmp_path / "first"
    assert run_train("smoke", "--smoke", "--run-dir", first, "--steps", "2").returncode == 0
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "x", "--init-from",
                       tmp_path / "nothing.npz")  # fmt: skip
    assert result.returncode == 2 and "no such checkpoint" in result.stderr
    result = run_train("smoke", "--smoke", "--run-dir", first, "--init-from",
                       first / "checkpoint.npz")  # fmt: skip
    assert result.returncode == 2 and "already has a checkpoint" in result.stderr
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "y", "--init-from",
                       first / "checkpoint.npz", "--set", "n_embd=32")  # fmt: skip
    assert result.returncode == 1 and "another recipe" in result.stderr
    assert "Traceback" not in result.stderr
    damaged = tmp_path / "damaged.npz"
    damaged.write_bytes(b"not a zip file")
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "z", "--init-from", damaged)
    assert result.returncode == 1 and "give --init-from a run's checkpoint" in result.stderr
    assert "delete it" not in result.stderr  # the advice is not to delete someone's file
    assert "allow_pickle" not in result.stderr  # nor to load a stranger's file with pickle
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "w", "--init-from", first)
    assert (
        result.returncode == 2 and f"its checkpoint is {first / 'checkpoint.npz'}" in result.stderr
    )


def test_init_from_a_weights_file_starts_at_step_0_from_those_weights(tmp_path):
    first, out, second = tmp_path / "first", tmp_path / "w.npz", tmp_path / "second"
    assert run_train("smoke", "--smoke", "--run-dir", first, "--out", out).returncode == 0
    result = run_train("smoke", "--smoke", "--run-dir", second, "--init-from", out,
                       "--stop-at", "1", "--set", "val_every=1")  # fmt: skip
    assert result.returncode == 0, result.stderr
    log = load_checkpoint_log(second / "checkpoint.npz")
    (entry,) = log["history"]
    assert entry["step"] == 1
    # the record gives the recipe the weights were made with and what this run changed
    assert log["recipe_changes"] == [{"at_step": 0, "changed": {"val_every": [3, 1]}}]
    # one small step from the given weights: validation near theirs, far from a fresh model's
    fresh = tmp_path / "fresh"
    assert run_train("smoke", "--smoke", "--run-dir", fresh, "--stop-at", "1",
                     "--set", "val_every=1").returncode == 0  # fmt: skip
    given = load(out).meta["val_bits_per_byte"]
    after = entry["val_bits_per_byte"]
    fresh_bits = load_checkpoint_log(fresh / "checkpoint.npz")["history"][0]["val_bits_per_byte"]
    assert abs(after - given) < abs(fresh_bits - given)


def load_checkpoint_log(path):
    import json

    with np.load(path) as archive:
        return json.loads(str(archive["record"]))["log"]


def test_max_minutes_counts_this_sitting_not_the_run_so_far(tmp_path):
    """A resumed run whose record holds many hours must still train when given --max-minutes."""

    run_dir = tmp_path / "run"
    assert run_train("smoke", "--smoke", "--run-dir", run_dir, "--stop-at", "2").returncode == 0
    path = run_dir / "checkpoint.npz"
    edit_record(path, lambda record: record["log"].update(seconds=100 * 3600.0))
    result = run_train("smoke", "--smoke", "--run-dir", run_dir, "--max-minutes", "5")
    assert result.returncode == 0, result.stderr
    assert load_checkpoint_log(path)["history"][-1]["step"] == RECIPES["smoke"].steps


def edit_record(path, change):
    """Rewrite a checkpoint with change(record) applied to its JSON record."""
    import json

    with np.load(path) as archive:
        arrays = dict(archive)
    record = json.loads(str(arrays["record"]))
    change(record)
    arrays["record"] = np.array(json.dumps(record))
    np.savez(path, **arrays)


def test_own_loops_are_greedy_continuations_with_their_loops_marked():
    from speclab.scenarios import output_provenance

    config = GPTConfig(n_layer=1, n_head=2, n_embd=16, n_ctx=64)
    params = init_params(config, np.random.default_rng(0), dtype=np.float64)
    text = np.frombuffer(b"".join(b"line %d of some text\n" % i for i in range(200)), np.uint8)
    rng = np.random.default_rng(1)
    inputs, targets, penalize, lengths = own_loops(params, config, text, rng, 4, 24, 30)
    assert inputs.shape == targets.shape == penalize.shape == (4, 24 + 30 - 1)
    np.testing.assert_array_equal(inputs[:, 1:], targets[:, :-1])
    assert all(3 <= n <= 24 for n in lengths) and len(set(lengths)) > 1
    for row, n in enumerate(lengths):
        prompt, new = list(inputs[row, :n]), list(targets[row, n - 1 :])
        assert bytes(prompt).decode().startswith("line ")  # a line's start
        sequence = list(prompt)  # greedy by recomputing everything at each step: no cache
        for _ in range(24 + 30 - n):
            sequence.append(int(np.argmax(forward(params, config, sequence)[-1])))
        assert new == sequence[n:]
        assert not penalize[row, : n - 1].any()  # the prompt's bytes are never penalised
        looped = [label == "loop" for label in output_provenance(prompt, new)]
        assert list(penalize[row, n - 1 :]) == looped
    assert penalize.any()  # an untrained model's greedy text loops, so the test tests something


def test_the_loop_penalty_is_clipped_on_its_own_and_counts_new_bytes_only():
    config = GPTConfig(n_layer=1, n_head=2, n_embd=16, n_ctx=64)
    params = init_params(config, np.random.default_rng(0), dtype=np.float64)
    text = np.frombuffer(b"".join(b"line %d of some text\n" % i for i in range(200)), np.uint8)
    cfg = TrainConfig(n_layer=1, n_head=2, n_embd=16, n_ctx=64, loop_rows=3, loop_weight=0.5,
                      grad_clip=1e-3)  # fmt: skip
    grads, share = loop_penalty(params, config, cfg, text, np.random.default_rng(7))
    _, _, penalize, lengths = own_loops(params, config, text, np.random.default_rng(7), 3, 32, 16)
    new = [penalize[row, n - 1 :] for row, n in enumerate(lengths)]  # the continuations' bytes
    assert share == pytest.approx(sum(part.sum() for part in new) / sum(part.size for part in new))
    norm = np.sqrt(sum((g**2).sum() for g in grads.values()))
    assert norm == pytest.approx(0.5 * 1e-3, rel=1e-3)  # weight x its own clip


def test_loop_rows_add_the_penalty_and_log_the_loop_share(tmp_path):
    run_dir = tmp_path / "run"
    result = run_train("smoke", "--smoke", "--run-dir", run_dir, "--set", "loop_rows=2")
    assert result.returncode == 0, result.stderr
    history = load_checkpoint_log(run_dir / "checkpoint.npz")["history"]
    assert all(0 <= entry["own_loop_share_ema"] <= 1 for entry in history)
    assert all(np.isfinite(entry["val_bits_per_byte"]) for entry in history)
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "x", "--set", "loop_rows=-1")
    assert result.returncode == 2 and "loop_rows=-1" in result.stderr
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "y", "--set", "loop_rows=65")
    assert result.returncode == 2 and "loop_rows must be 0 to 64" in result.stderr


def test_a_corpus_slice_too_small_for_the_recipe_is_a_message(tmp_path, monkeypatch):
    result = run_train(
        "smoke", "--smoke", "--run-dir", tmp_path / "r", "--set", "max_corpus_bytes=100"
    )
    assert result.returncode == 2  # a bad --set, refused with the others
    assert result.stderr == (
        "speclab train: --set max_corpus_bytes=100: this recipe needs at least 4,608 "
        "(0: the whole standard library)\n"
    )
    # a standard library too small for the recipe (a stripped Python install) is named too
    import speclab.train as train_module

    small = {"train": np.zeros(100, np.uint8), "val": np.zeros(25, np.uint8), "record": {}}
    monkeypatch.setattr(train_module, "load_corpus", lambda max_bytes: small)
    with pytest.raises(ValueError, match="the train text is 100 bytes; this recipe needs at"):
        train_module.train(RECIPES["smoke"], tmp_path / "r")


def test_init_from_weights_that_went_on_from_others_records_the_whole_chain(tmp_path):
    """The shipped draft went on from a draft that went on from another: the record keeps
    every run's steps, so describe() counts them all (it used to count only the last two)."""
    a, b, c = (tmp_path / f"{name}.npz" for name in "abc")
    assert run_train("smoke", "--smoke", "--run-dir", tmp_path / "ra", "--out", a).returncode == 0
    for start, out, run, lr in ((a, b, "rb", "0.002"), (b, c, "rc", "0.001")):
        result = run_train("smoke", "--smoke", "--run-dir", tmp_path / run, "--init-from", start,
                           "--out", out, "--set", f"lr={lr}")  # fmt: skip
        assert result.returncode == 0, result.stderr
    meta = load(c).meta
    # every recipe the weights were trained with, oldest first (tests/test_recipe.py replays it)
    lrs = [change["changed"].get("lr") for change in meta["recipe_changes"]]
    assert lrs == [[RECIPES["smoke"].lr, 0.002], [0.002, 0.001]]
    assert (
        meta["recipe_changes"][0]["earlier_run"] and "earlier_run" not in meta["recipe_changes"][1]
    )
    assert meta["started_from"]["weights"] == str(b)
    assert meta["started_from"]["started_from"]["weights"] == str(a)
    assert "started_from" not in meta["started_from"]["started_from"]
    assert "; 18 training steps (6 of the first model, then 6 + 6)" in load(c).describe()


def test_init_from_a_shallower_weights_file_trains_the_grown_model(tmp_path):
    first, out, second = tmp_path / "first", tmp_path / "w.npz", tmp_path / "second"
    assert run_train("smoke", "--smoke", "--run-dir", first, "--out", out).returncode == 0
    deeper = tmp_path / "deeper.npz"
    result = run_train("smoke", "--smoke", "--run-dir", second, "--init-from", out,
                       "--set", "n_layer=3", "--out", deeper)  # fmt: skip
    assert result.returncode == 0, result.stderr
    model = load(deeper)
    assert model.config.n_layer == 3
    assert model.meta["started_from"]["n_layer"] == 1
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "third", "--init-from", out,
                       "--set", "n_embd=32")  # fmt: skip
    assert result.returncode == 1 and "only more layers" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "setting",
    ["hard_copy_weight=0", "hard_copy_weight=-2", "hard_copy_weight=1e38", "hard_copy_bytes=0"],
)
def test_a_bad_hard_copy_setting_is_refused(setting):
    with pytest.raises(ValueError, match="hard_copy"):
        with_overrides(TrainConfig(), [setting])


@pytest.mark.parametrize(
    ("lr", "what"),
    [
        ("1e308", "at step 1: the weights became infinite"),
        ("1e6", "at step 2: the loss became"),
        ("1e3", "at step 2: the loss became"),
    ],  # fmt: skip
)  # 1e6: the weights stay finite, the model's predictions do not (the held-out loss was nan
# before a finite loss above DIVERGED_NATS stopped it); 1e3: every number finite, validation
# 8e15 bits per byte, and the run ended with exit status 0
def test_a_diverging_run_stops_with_a_message_and_saves_no_broken_checkpoint(tmp_path, lr, what):
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "run", "--set", f"lr={lr}")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "training diverged" in result.stderr and what in result.stderr, result.stderr
    assert "lower --set lr" in result.stderr
    assert not (tmp_path / "run" / "checkpoint.npz").exists()


def test_out_must_be_a_weights_file_name_and_a_students_file_is_left_alone(tmp_path):
    notes = tmp_path / "notes.csv"
    notes.write_text("precious,data\n")
    other = tmp_path / "other.npz"
    np.savez(other, x=np.zeros(3))  # an .npz, but not speclab weights
    before = other.read_bytes()
    for out, problem in (
        (notes, "a weights file's name ends in .npz"),
        (other, "is not a speclab weights file"),
        (tmp_path / "run", "is a folder"),  # --out the run folder itself
    ):
        result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "run", "--out", out)
        assert result.returncode == 2 and problem in result.stderr, result.stderr
    assert notes.read_text() == "precious,data\n" and other.read_bytes() == before
    assert not (tmp_path / "run").exists()  # refused before any training
    (tmp_path / "notes.npz").write_text("an .npz of the student's")  # x.txt: x.npz is taken
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "run", "--out", notes)
    assert f"ends in .npz, e.g. {tmp_path / 'notes-2.npz'}" in result.stderr, result.stderr
    (tmp_path / "a-file").write_text("")
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "a-file")
    assert result.returncode == 2 and "is a file; give a folder" in result.stderr


def test_weights_of_another_shape_at_out_are_not_replaced_in_silence(tmp_path):
    """A smoke run overwrote another model's weights given as --out; the same shape (an
    earlier export of the same run, say) is still replaced."""
    from speclab.weights import save

    other = tmp_path / "tiny.npz"
    config = GPTConfig(n_layer=1, n_head=2, n_embd=8, n_ctx=32)
    save(other, init_params(config, np.random.default_rng(0)), config)
    before = other.read_bytes()
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "run", "--out", other)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "holds weights of another shape (1 layer of width 8, context 32)" in result.stderr
    assert other.read_bytes() == before and not (tmp_path / "run").exists()
    same = tmp_path / "same.npz"
    assert run_train("smoke", "--smoke", "--run-dir", tmp_path / "a", "--out", same).returncode == 0


def test_another_runs_weights_at_out_are_not_replaced_in_silence(tmp_path):
    """A fresh run with another --run-dir and the same --out replaced a finished run's weights
    at its first validation, with no word: a student's best model, lost. An earlier export of
    the same run (it resumes, or goes on with --init-from) is still replaced."""
    out = tmp_path / "best.npz"
    first = ["--smoke", "--run-dir", tmp_path / "a", "--out", out]
    assert run_train("smoke", *first, "--stop-at", "3").returncode == 0
    assert run_train("smoke", *first).returncode == 0  # resumes: its own export, replaced
    before = out.read_bytes()
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "b", "--out", out)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"--out {out} holds another run's weights (6 steps" in result.stderr
    assert out.read_bytes() == before and not (tmp_path / "b").exists()
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "c", "--out", out,
                       "--init-from", tmp_path / "a" / "checkpoint.npz", "--steps", "9")  # fmt: skip
    assert result.returncode == 0, result.stderr  # goes on from the run that made it


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "steps=1e12"], "--set steps=1,000,000,000,000: at most 10,000,000"),
        (["--set", "warmup=1e18"], "--set warmup=1,000,000,000,000,000,000: at most 10,000,000"),
        (["--steps", "20000000"], "--steps 20,000,000: at most 10,000,000"),
        # a step of 1 byte trained on a whole row of the context in silence
        (["--set", "batch_tokens=1"], "--set: batch_tokens=1 is less than n_ctx=64; a step takes"),
        (["--set", "n_ctx=256"], "--set batch_tokens=256 or more, or a smaller n_ctx"),
        (["--set", "batch_tokens=1e20"], "batch_tokens=100,000,000,000,000,000,000: at most"),
    ],
)
def test_a_run_of_months_or_of_1_byte_steps_is_refused_before_it_starts(tmp_path, args, message):
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "run", *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert not (tmp_path / "run").exists()


def test_a_second_training_in_the_same_run_dir_is_refused(tmp_path):
    fcntl = pytest.importorskip("fcntl")
    from speclab.train import train

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with (run_dir / ".lock").open("w") as held:  # as a first training holds it
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(ValueError, match="another training is running in"):
            train(RECIPES["smoke"], run_dir, progress=False)
    assert not (run_dir / "checkpoint.npz").exists()


def test_a_second_training_writing_the_same_out_is_refused(tmp_path):
    """Two runs started together with other run folders and one --out both passed the check
    for another run's weights, and the later one's weights replaced the earlier one's without
    a word. Another --out in the same folder is not held up."""
    fcntl = pytest.importorskip("fcntl")
    from speclab.train import train

    out, other = tmp_path / "shared.npz", tmp_path / "other.npz"
    with (tmp_path / ".shared.npz.speclab-train.lock").open("w") as held:  # as run A holds it
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(ValueError, match=f"another training is writing its weights to {out}"):
            train(RECIPES["smoke"], tmp_path / "b", out=out, progress=False)
        assert not out.exists() and not (tmp_path / "b").exists()
        assert (tmp_path / ".shared.npz.speclab-train.lock").exists()  # run A's, kept
        train(replace(RECIPES["smoke"], steps=2), tmp_path / "c", out=other, progress=False)
    assert other.is_file()
    train(replace(RECIPES["smoke"], steps=2), tmp_path / "b", out=out, progress=False)
    assert out.is_file()  # the lock ends with the run that held it
    # and no lock file is left in the folder of --out, which may be a student's own
    assert [p.name for p in tmp_path.glob(".*.speclab-train.lock")] == []


def test_a_failed_start_with_out_in_its_new_run_folder_leaves_no_folder(tmp_path):
    """The --out lock beside weights inside the run folder kept a failed start's folder."""
    from speclab.train import train

    run_dir = tmp_path / "new"
    with pytest.raises(OSError, match="cannot read"):
        train(RECIPES["smoke"], run_dir, out=run_dir / "w.npz", init_from=tmp_path / "no.npz",
              progress=False)  # fmt: skip
    assert not run_dir.exists()


@pytest.mark.parametrize("failure", ["no-locks", "read-only"])
def test_a_folder_that_cannot_be_locked_still_trains(tmp_path, monkeypatch, failure):
    """Only a lock held by another training refuses: a file system without locks (ENOLCK),
    or a folder where no lock file can be made, trains (or exports) as before."""
    import errno
    import os

    fcntl = pytest.importorskip("fcntl")
    from speclab.train import train

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    if failure == "no-locks":

        def no_locks(handle, operation):
            raise OSError(errno.ENOLCK, "No locks available")

        monkeypatch.setattr(fcntl, "flock", no_locks)
    else:
        real_open = os.open

        def read_only(path, *args, **kwargs):
            if Path(os.fsdecode(path)).name == ".lock":
                raise PermissionError(errno.EACCES, "Permission denied")
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr(os, "open", read_only)
    log = train(RECIPES["smoke"], run_dir, progress=False)
    assert log["history"][-1]["step"] == RECIPES["smoke"].steps


def test_tqdm_disable_silences_the_progress_bar(tmp_path):
    """TQDM_DISABLE=1 (as `make test` sets it) hides the bar; the validation lines stay."""
    quiet = run_train("smoke", "--smoke", "--run-dir", tmp_path / "quiet")
    assert quiet.returncode == 0 and "train:" not in quiet.stderr
    assert '"step": 6' in quiet.stderr + quiet.stdout
    env = {k: v for k, v in __import__("os").environ.items() if k != "TQDM_DISABLE"}
    command = [sys.executable, "-m", "speclab", "train", "smoke", "--smoke", "--run-dir"]
    shown = subprocess.run(
        [*command, str(tmp_path / "shown")], capture_output=True, text=True, env=env
    )
    assert shown.returncode == 0 and "train:" in shown.stderr


def test_the_lock_file_is_neither_emptied_nor_followed(tmp_path):
    """A file already at run_dir/.lock keeps its bytes; a link there is refused, and the file
    it points to is left as it is (it was once emptied)."""
    pytest.importorskip("fcntl")
    from dataclasses import replace

    from speclab.train import train

    one_step = replace(RECIPES["smoke"], steps=1)
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / ".lock").write_text("kept\n")
    train(one_step, plain, progress=False)
    assert (plain / ".lock").read_text() == "kept\n"
    essay = tmp_path / "essay.txt"
    essay.write_text("my essay\n")
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".lock").symlink_to(essay)
    (tmp_path / "dangling").mkdir()
    (tmp_path / "dangling" / ".lock").symlink_to(tmp_path / "nowhere.txt")
    for run_dir in (linked, tmp_path / "dangling"):
        with pytest.raises(ValueError, match=r"\.lock is a symbolic link; .* remove it"):
            train(one_step, run_dir, progress=False)
        assert not (run_dir / "checkpoint.npz").exists()
    assert essay.read_text() == "my essay\n" and not (tmp_path / "nowhere.txt").exists()


@pytest.mark.parametrize("n_ctx", [1, 2, 4, 8, 9])
def test_a_context_too_small_for_the_copy_probes_is_refused_up_front(n_ctx):
    """Below MIN_N_CTX the copy probes were empty (copy_gap NaN) or numpy failed inside them
    ("high <= 0"), after the corpus was loaded; at MIN_N_CTX every probe has room."""
    from speclab.copy_metrics import MIN_N_CTX, PROBES

    with pytest.raises(ValueError, match=f"n_ctx={n_ctx}: must be at least {MIN_N_CTX}"):
        with_overrides(RECIPES["smoke"], [f"n_ctx={n_ctx}", "n_seq=1"])
    cfg = with_overrides(RECIPES["smoke"], [f"n_ctx={MIN_N_CTX}", f"n_seq={MIN_N_CTX}"])
    val = np.frombuffer(Path(__file__).read_bytes() * 4, dtype=np.uint8)
    params = init_params(GPTConfig(1, 2, 16, cfg.n_ctx), np.random.default_rng(0))
    for far in (False, True):
        probes = copy_probes(val, cfg.n_ctx, far=far)
        assert len(probes) == PROBES and all(len(text) <= cfg.n_ctx for text, _, _ in probes)
        assert np.isfinite(copy_gap(params, cfg.n_head, probes)["gap"])


def test_stage_1_rows_longer_than_the_context_are_refused():
    with pytest.raises(ValueError, match="n_seq=256 .* longer than the context, n_ctx=128"):
        with_overrides(RECIPES["target"], ["n_ctx=128"])
    assert with_overrides(RECIPES["target"], ["n_ctx=128", "n_seq=128"]).n_seq == 128


def test_a_symbolic_link_loop_or_a_dangling_link_as_a_path_is_one_line(tmp_path):
    loop = tmp_path / "loop.npz"
    loop.symlink_to(loop)
    (tmp_path / "loop-dir").symlink_to(tmp_path / "loop-dir")
    (tmp_path / "dangling").symlink_to(tmp_path / "missing")
    cases = [
        (["--run-dir", tmp_path / "run", "--out", loop], "leads into a symbolic link loop"),
        (["--run-dir", tmp_path / "loop-dir"], "leads into a symbolic link loop"),
        (["--run-dir", tmp_path / "loop-dir" / "sub"], "leads into a symbolic link loop"),
        (["--run-dir", tmp_path / "dangling"], "which does not exist; make that folder"),
    ]
    for args, message in cases:
        result = run_train("smoke", "--smoke", *args)
        assert result.returncode == 2 and message in result.stderr, result.stderr
        assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "run").exists() and not (tmp_path / "missing").exists()
    assert loop.is_symlink()


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc, where no one can write")
def test_a_run_folder_that_cannot_take_checkpoints_is_refused_before_training(tmp_path):
    """The first checkpoint comes after hundreds of steps: a folder it cannot go to is said
    at once (here one inside /proc, which even root cannot make), and --out is left alone."""
    result = run_train("smoke", "--smoke", "--run-dir", "/proc/self/speclab-run",
                       "--out", tmp_path / "w.npz")  # fmt: skip
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .endswith(
            "--run-dir /proc/self/speclab-run: cannot write there (No such file or directory)"
        )
    )
    assert not list(tmp_path.iterdir())


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
def test_init_from_a_pipe_is_named_as_such_not_missing(tmp_path):
    pipe = tmp_path / "fifo.npz"
    os.mkfifo(pipe)
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "run", "--init-from", pipe)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert f"--init-from {pipe} is not a file (a pipe or a device)" in result.stderr


def test_teacher_share_learns_from_the_shipped_target_and_records_it(tmp_path):
    from speclab.paths import weights_dir
    from speclab.weights import file_sha256

    out, plain = tmp_path / "distilled.npz", tmp_path / "plain.npz"
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "a", "--out", out,
                       "--set", "teacher_share=1")  # fmt: skip
    assert result.returncode == 0, result.stderr
    model = load(out)
    assert model.meta["teacher"]["sha256"] == file_sha256(weights_dir() / "target.npz")
    assert all(0 <= entry["agreement"] <= 1 for entry in model.meta["history"])
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "b", "--out", plain)
    assert result.returncode == 0, result.stderr
    untaught = load(plain)
    assert untaught.meta["teacher"] is None and "agreement" not in untaught.meta["history"][-1]
    # same seed, same rows: only the wanted distribution differs, so the weights do too
    assert not np.array_equal(model.params["wte"], untaught.params["wte"])
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "c", "--set", "teacher_share=2")
    assert result.returncode == 2 and "teacher_share=2" in result.stderr


def test_a_distilled_run_resumed_with_another_target_is_refused(tmp_path, monkeypatch):
    import shutil

    from speclab import paths
    from speclab.train import train
    from speclab.weights import file_sha256

    shipped = paths.weights_dir()
    weights = tmp_path / "weights"
    weights.mkdir()
    shutil.copy(shipped / "target.npz", weights / "target.npz")
    monkeypatch.setattr(paths, "weights_dir", lambda: weights)
    cfg = TrainConfig(**(RECIPES["smoke"].__dict__ | {"teacher_share": 0.5}))
    train(cfg, tmp_path / "run", progress=False, stop_at=3)
    first = file_sha256(weights / "target.npz")
    shutil.copy(shipped / "draft.npz", weights / "target.npz")  # another target
    with pytest.raises(ValueError, match="resume it with that target"):
        train(cfg, tmp_path / "run", progress=False)
    # a new run started from that checkpoint may learn from it; the record names both
    out = tmp_path / "next.npz"
    train(
        cfg,
        tmp_path / "next",
        out=out,
        progress=False,
        init_from=tmp_path / "run" / "checkpoint.npz",
    )
    meta = load(out).meta
    assert meta["teacher"]["sha256"] == file_sha256(weights / "target.npz") != first
    assert [teacher["sha256"] for teacher in meta["earlier_teachers"]] == [first]


def test_agreement_is_the_share_of_positions_where_both_pick_the_same_byte():
    from speclab.corpus import load_corpus
    from speclab.train import agreement
    from speclab.weights import load_draft, load_target

    target, draft = load_target(np.float32), load_draft(np.float32)
    val = load_corpus(200_000)["val"]
    cfg = TrainConfig(n_head=4, n_ctx=64)  # both models' heads; rows of 64 bytes
    assert agreement(target.params, cfg, target, val, n_rows=3) == 1.0
    starts = np.linspace(0, val.size - 64 - 2, 3).astype(np.int64)
    same = [
        forward(draft.params, draft.config, val[s : s + 64]).argmax(axis=-1)
        == forward(target.params, target.config, val[s : s + 64]).argmax(axis=-1)
        for s in starts
    ]  # speclab.gpt's forward, one row at a time
    got = agreement(draft.params, cfg, target, val, n_rows=3)
    assert got == pytest.approx(np.mean(same))


def ctrl_c_in_step(monkeypatch, step: int) -> tuple[list, object]:
    """Send Ctrl-C (SIGINT) in the middle of training step `step` (from 1), inside its loss
    computation; returns the calls counted and the real loss function, to put back."""
    import signal

    import speclab.train as train_module

    real, calls = train_module.loss_and_grads, []

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == step:
            os.kill(os.getpid(), signal.SIGINT)
        return real(*args, **kwargs)

    monkeypatch.setattr(train_module, "loss_and_grads", interrupted)
    return calls, real


@pytest.mark.skipif(sys.platform == "win32", reason="os.kill(SIGINT) ends the process on Windows")
def test_ctrl_c_saves_the_step_it_came_in_and_the_run_resumes_as_if_never_stopped(
    tmp_path, monkeypatch
):
    """Ctrl-C during a step: the step is finished and saved (not only the last validation's
    checkpoint), and resuming gives the weights of a run that was never stopped."""
    import signal

    import speclab.train as train_module

    cfg = RECIPES["smoke"]
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    train_module.train(cfg, whole, out=tmp_path / "whole.npz", progress=False)

    _, real = ctrl_c_in_step(monkeypatch, 2)  # between validations (every 3 steps)
    with pytest.raises(KeyboardInterrupt):
        train_module.train(cfg, cut, out=tmp_path / "cut.npz", progress=False)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
    from speclab.checkpoints import load_checkpoint

    assert load_checkpoint(cut / "checkpoint.npz", cfg)[2] == 2
    monkeypatch.setattr(train_module, "loss_and_grads", real)
    train_module.train(cfg, cut, out=tmp_path / "cut.npz", progress=False)
    a, b = load(tmp_path / "whole.npz"), load(tmp_path / "cut.npz")
    for name, value in flatten(a.params).items():
        np.testing.assert_array_equal(value, flatten(b.params)[name], err_msg=name)
    assert b.meta["trained_steps"] == cfg.steps

    def logged(meta):  # the training record as logged, the clock's readings aside
        return [{k: v for k, v in entry.items() if k != "seconds"} for entry in meta["history"]]

    # the running mean of the loss too: it started over after a resume (5.29 for 5.46)
    assert logged(b.meta) == logged(a.meta)
    assert all("train_loss_ema" in entry for entry in logged(b.meta))


@pytest.mark.skipif(sys.platform == "win32", reason="os.kill(SIGINT) ends the process on Windows")
def test_ctrl_c_in_a_run_started_from_another_says_to_go_on_without_init_from(
    tmp_path, monkeypatch, capsys
):
    """The stop's own line named "the same command", which the run folder's new checkpoint
    then refuses with --init-from in it."""

    import speclab.train as train_module

    cfg = RECIPES["smoke"]
    train_module.train(cfg, tmp_path / "first", progress=False, stop_at=2)
    _, real = ctrl_c_in_step(monkeypatch, 1)
    with pytest.raises(KeyboardInterrupt):
        train_module.train(cfg, tmp_path / "b", progress=False,
                           init_from=tmp_path / "first" / "checkpoint.npz")  # fmt: skip
    err = capsys.readouterr().err
    assert "stopped: step 3 saved in" in err
    assert "the same command without --init-from goes on from there" in err
    monkeypatch.setattr(train_module, "loss_and_grads", real)
    log = train_module.train(cfg, tmp_path / "b", progress=False)  # as advised: it goes on
    assert log["history"][-1]["step"] == cfg.steps


@pytest.mark.skipif(sys.platform == "win32", reason="os.kill(SIGINT) ends the process on Windows")
def test_ctrl_c_in_the_last_step_ends_the_run_as_planned(tmp_path, monkeypatch, capsys):
    """Nothing is left to stop after the last step: the run ends normally, its weights
    exported, instead of reporting an interruption that a rerun would call nothing to do."""

    import speclab.train as train_module

    cfg = RECIPES["smoke"]
    train_module.train(cfg, tmp_path / "whole", out=tmp_path / "whole.npz", progress=False)
    calls, _ = ctrl_c_in_step(monkeypatch, cfg.steps)
    try:
        log = train_module.train(cfg, tmp_path / "cut", out=tmp_path / "cut.npz", progress=False)
    except KeyboardInterrupt:
        pytest.fail("a Ctrl-C in the last step was reported as an interrupted run")
    assert len(calls) == cfg.steps  # the interrupt really came, in the last step
    assert log["history"][-1]["step"] == cfg.steps
    assert "the stop came in the last step" in capsys.readouterr().err
    a, b = load(tmp_path / "whole.npz"), load(tmp_path / "cut.npz")
    for name, value in flatten(a.params).items():
        np.testing.assert_array_equal(value, flatten(b.params)[name], err_msg=name)


def test_a_pipe_or_device_as_checkpoint_or_out_is_refused_not_read_forever(tmp_path):
    """Reading /dev/zero as a zip never ends (and fills the memory); a pipe blocks."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    os.symlink(os.devnull, run_dir / "checkpoint.npz")
    result = run_train("smoke", "--smoke", "--run-dir", run_dir)
    assert result.returncode == 2 and "is not a regular file" in result.stderr, result.stderr
    fifo = tmp_path / "fifo.npz"
    os.mkfifo(fifo)
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "r2", "--out", fifo)
    assert result.returncode == 2 and f"--out {fifo} is a pipe or a device" in result.stderr


def test_out_that_is_the_target_a_distilled_run_learns_from_is_refused(tmp_path):
    from speclab.paths import weights_dir

    teacher = weights_dir() / "target.npz"
    before = teacher.stat().st_mtime_ns
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "run",
                       "--set", "teacher_share=0.5", "--out", teacher)  # fmt: skip
    assert result.returncode == 2 and "is the target this run learns from" in result.stderr
    assert teacher.stat().st_mtime_ns == before and not (tmp_path / "run").exists()


def test_the_same_field_given_twice_with_two_values_is_refused():
    with pytest.raises(ValueError, match="--set steps is given twice, as 3 and 5"):
        with_overrides(RECIPES["smoke"], ["steps=3", "steps=5"])
    assert with_overrides(RECIPES["smoke"], ["steps=3", "steps=3"]).steps == 3
    result = run_train("smoke", "--smoke", "--steps", "2", "--set", "steps=5")
    assert result.returncode == 2 and "--steps 2 and --set steps=5 disagree" in result.stderr


def test_stop_at_before_the_step_init_from_starts_at_is_refused(tmp_path):
    first = tmp_path / "first"
    assert run_train("smoke", "--smoke", "--run-dir", first, "--stop-at", "3").returncode == 0
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "new", "--init-from",
                       first / "checkpoint.npz", "--stop-at", "2", "--out", tmp_path / "w.npz")  # fmt: skip
    assert result.returncode == 1 and "--stop-at 2 stops before it starts" in result.stderr
    assert not (tmp_path / "w.npz").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="os.kill(SIGINT) ends the process on Windows")
def test_a_run_stopped_between_validations_then_ended_there_is_validated_and_exported(
    tmp_path, monkeypatch
):
    """Ctrl-C at step 2 (validations every 3), then --stop-at 2: the weights of step 2 are
    exported with a validation, as an uninterrupted --stop-at 2 run exports them."""

    import speclab.train as train_module

    cfg = RECIPES["smoke"]
    train_module.train(cfg, tmp_path / "whole", out=tmp_path / "whole.npz", stop_at=2,
                       progress=False)  # fmt: skip
    _, real = ctrl_c_in_step(monkeypatch, 2)
    with pytest.raises(KeyboardInterrupt):
        train_module.train(cfg, tmp_path / "cut", out=tmp_path / "cut.npz", progress=False)
    assert not (tmp_path / "cut.npz").exists()  # no validation yet: nothing exported
    monkeypatch.setattr(train_module, "loss_and_grads", real)
    log = train_module.train(cfg, tmp_path / "cut", out=tmp_path / "cut.npz", stop_at=2,
                             progress=False)  # fmt: skip
    assert log["history"][-1]["step"] == 2
    a, b = load(tmp_path / "whole.npz"), load(tmp_path / "cut.npz")
    assert b.meta["trained_steps"] == 2
    assert b.meta["val_bits_per_byte"] == a.meta["val_bits_per_byte"]
    for name, value in flatten(a.params).items():
        np.testing.assert_array_equal(value, flatten(b.params)[name], err_msg=name)


@pytest.mark.skipif(sys.platform == "win32", reason="no SIGTERM to send on Windows")
def test_sigterm_saves_the_step_like_ctrl_c(tmp_path):
    """`timeout` and `kill` send SIGTERM: the step under way is finished and saved."""
    import signal
    import time

    from speclab.checkpoints import load_checkpoint

    run_dir, changes = tmp_path / "run", ["steps=100000", "val_every=50"]
    command = [sys.executable, "-m", "speclab", "train", "smoke", "--smoke", "--run-dir",
               str(run_dir), *(a for c in changes for a in ("--set", c))]  # fmt: skip
    env = {**os.environ, "TQDM_DISABLE": "1"}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env)  # fmt: skip
    deadline = time.monotonic() + 120
    while not (run_dir / "checkpoint.npz").exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # the first validation's checkpoint: the training loop is running
    time.sleep(0.2)
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 143 and "Traceback" not in err, err  # SIGTERM's own status
    assert "stop signal (SIGTERM): stopping when this step is done" in err
    step = load_checkpoint(run_dir / "checkpoint.npz", with_overrides(RECIPES["smoke"], changes))[2]
    assert f"stopped: step {step} saved in" in err and step > 0  # beside the notice


def test_a_failed_start_leaves_no_empty_run_folder_and_a_bad_out_name_is_found_first(tmp_path):
    """The run folder the command made is removed when the run fails before saving anything;
    an --out name too long for the file system is refused before training."""
    (tmp_path / "zero.npz").write_bytes(b"")
    run_dir = tmp_path / "runs" / "new"
    result = run_train("smoke", "--smoke", "--run-dir", run_dir, "--init-from",
                       tmp_path / "zero.npz")  # fmt: skip
    assert result.returncode == 1 and "damaged or not a speclab" in result.stderr
    assert not run_dir.exists()
    nested = tmp_path / "a" / "b" / "c"  # every folder the command made goes, not only the last
    result = run_train(
        "smoke", "--smoke", "--run-dir", nested, "--init-from", tmp_path / "zero.npz"
    )
    assert result.returncode == 1 and not (tmp_path / "a").exists()
    (tmp_path / "mine").mkdir()  # a folder the user made stays, empty or not
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "mine", "--init-from",
                       tmp_path / "zero.npz")  # fmt: skip
    assert result.returncode == 1 and (tmp_path / "mine").is_dir()
    long_name = tmp_path / ("w" * 250 + ".npz")
    result = run_train("smoke", "--smoke", "--run-dir", run_dir, "--out", long_name)
    assert result.returncode == 2 and "File name too long" in result.stderr, result.stderr
    assert not run_dir.exists()


def test_scale_attention_starts_a_run_from_sharpened_weights_and_records_it(tmp_path):
    from speclab.checkpoints import scale_attention
    from speclab.weights import unflatten

    first, second, out = tmp_path / "first", tmp_path / "second", tmp_path / "out.npz"
    assert run_train("smoke", "--smoke", "--run-dir", first, "--stop-at", "3").returncode == 0
    result = run_train(
        "smoke", "--smoke", "--run-dir", second, "--init-from", first / "checkpoint.npz",
        "--scale-attention", "0.1=2.5", "--set", "lr=1e-12", "--stop-at", "4",
        "--set", "val_every=1", "--out", out,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    n_layer, n_head = RECIPES["smoke"].n_layer, RECIPES["smoke"].n_head

    def params_of(path):
        with np.load(path) as archive:
            flat = {k[6:]: archive[k] for k in archive.files if k.startswith("param/")}
        return unflatten(flat, n_layer)

    # one step at a learning rate of 1e-12 from the first run's weights, sharpened
    expected = flatten(scale_attention(params_of(first / "checkpoint.npz"), n_head, {(0, 1): 2.5}))
    for name, value in flatten(params_of(second / "checkpoint.npz")).items():
        np.testing.assert_allclose(value, expected[name], rtol=1e-6, atol=1e-9)
    (change,) = load(out).meta["recipe_changes"]
    assert change["at_step"] == 3 and change["attention_scaled"] == {"0.1": 2.5}


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--scale-attention", "0.1=2"], "give --init-from"),
        (["--init-from", "x.npz", "--scale-attention", "0.1"], "expected LAYER.HEAD=FACTOR"),
        (["--init-from", "x.npz", "--scale-attention", "a.b=2"], "expected LAYER.HEAD=FACTOR"),
        # int() alone would read these as layer 0 head 1, or layer 0 head 10
        (["--init-from", "x.npz", "--scale-attention=-0.1=2"], "expected LAYER.HEAD=FACTOR"),
        (["--init-from", "x.npz", "--scale-attention", "0.+1=2"], "expected LAYER.HEAD=FACTOR"),
        (["--init-from", "x.npz", "--scale-attention", "0.1_0=2"], "expected LAYER.HEAD=FACTOR"),
        (["--init-from", "x.npz", "--scale-attention", "5.0=2"],
         "the smoke recipe's model has layers 0-0 and heads 0-1"),  # fmt: skip
        (["--init-from", "x.npz", "--scale-attention", "0.0=0"], "above 0 and at most 100"),
        (["--init-from", "x.npz", "--scale-attention", "0.0=inf"], "above 0 and at most 100"),
        (["--init-from", "x.npz", "--scale-attention", "0.0=2", "--scale-attention", "0.0=3"],
         "twice"),
    ],
)  # fmt: skip
def test_a_bad_scale_attention_is_one_line_before_anything_is_read(tmp_path, arguments, message):
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "run", *arguments)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "run").exists()


def test_a_full_disk_is_named_and_the_checkpoint_kept(tmp_path, monkeypatch, capsys):
    import speclab.train
    import speclab.weights
    from speclab import cli

    run_dir, out = tmp_path / "run", tmp_path / "out.npz"
    assert run_train("smoke", "--smoke", "--run-dir", run_dir, "--stop-at", "3").returncode == 0
    before = (run_dir / "checkpoint.npz").read_bytes()

    def full_disk(*args, **kwargs):  # np.savez's own error: no file named
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(speclab.weights.np, "savez_compressed", full_disk)  # the export's
    status = cli.main(["train", "smoke", "--smoke", "--run-dir", str(run_dir), "--steps", "2",
                       "--out", str(out)])  # fmt: skip
    printed = capsys.readouterr()
    assert status == 1 and "exported to" not in printed.out + printed.err  # it was not
    assert f"no space left on the disk of {out}; " in printed.err and "kept whole" in printed.err
    assert (run_dir / "checkpoint.npz").read_bytes() == before and not out.exists()
    left = [p.name for p in tmp_path.iterdir()]
    assert left == ["run"]  # no temporary file left, and no --out lock either


def test_a_full_standard_output_is_not_blamed_on_the_run_folder(tmp_path, monkeypatch, capsys):
    """`speclab train ... > train.log` on a full disk said the run folder's disk was full."""
    import io

    from speclab import cli

    class FullDisk(io.StringIO):  # standard output on a full disk: `> /dev/full`
        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(sys, "stdout", FullDisk())
    status = cli.main(["train", "smoke", "--smoke", "--run-dir", str(tmp_path / "run"),
                       "--steps", "2"])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 1 and "cannot write the standard output (No space left on device" in err
    assert "no space left on the disk of" not in err


def test_out_onto_a_shipped_model_says_how_to_get_it_back(tmp_path, monkeypatch, capsys):
    import speclab.paths
    from speclab import cli

    monkeypatch.setattr(speclab.paths, "weights_dir", lambda: tmp_path / "weights")
    (tmp_path / "weights").mkdir()
    for out, noted in ((tmp_path / "weights" / "target.npz", True), (tmp_path / "t.npz", False)):
        status = cli.main(["train", "smoke", "--smoke", "--run-dir", str(tmp_path / out.stem),
                           "--out", str(out)])  # fmt: skip
        err = capsys.readouterr().err
        assert status == 0 and out.is_file()
        assert ("replaces the shipped weights" in err) == noted and ("git checkout" in err) == noted


def test_the_advice_to_go_on_after_a_stop_is_a_command_that_goes_on(tmp_path):
    """A run started with --init-from and stopped said "the same command goes on", which was
    then refused (the run folder has a checkpoint); a resume that forgot a --set was told to
    delete hours of training. Each message's advice, followed as written, resumes the run."""
    first = tmp_path / "first"
    assert run_train("smoke", "--smoke", "--run-dir", first, "--stop-at", "2").returncode == 0
    started = ["smoke", "--smoke", "--run-dir", tmp_path / "b", "--init-from",
               first / "checkpoint.npz"]  # fmt: skip
    stopped = run_train(*started, "--stop-at", "4")
    assert stopped.returncode == 0, stopped.stderr
    assert "the same command without --stop-at and --init-from" in stopped.stdout
    refused = run_train(*started)
    assert refused.returncode == 2 and "give the same command without --init-from" in refused.stderr
    goes_on = run_train(*started[:4])  # as advised: no --init-from
    assert goes_on.returncode == 0 and "smoke: 6 steps" in goes_on.stdout, goes_on.stderr

    run = ["smoke", "--smoke", "--run-dir", tmp_path / "c"]
    assert run_train(*run, "--set", "lr=1e-3", "--stop-at", "2").returncode == 0
    forgot = run_train(*run, "--set", "lr=2e-3")  # another value than the run's
    assert forgot.returncode == 1 and "lr 0.001 there, 0.002 here" in forgot.stderr
    assert "delete" not in forgot.stderr
    flags = forgot.stderr.split("give the command with ", 1)[1].split(" (in place of")[0].split()
    assert flags == ["--set", "lr=0.001"]
    resumed = run_train(*run, *flags)  # in place of the --set lr the command had
    assert resumed.returncode == 0 and "smoke: 6 steps" in resumed.stdout, resumed.stderr

    # the other way round: a run of the recipe as it is, resumed with a --set it did not
    # have, or with another recipe's name, is told the recipe's name ("add --set lr=0.003"
    # clashed with the command's own --set lr)
    plain = ["--smoke", "--run-dir", tmp_path / "d"]
    assert run_train("smoke", *plain, "--stop-at", "2").returncode == 0
    for wrong in (["smoke", *plain, "--set", "lr=1e-3"], ["draft", *plain[1:]]):
        told = run_train(*wrong)
        assert told.returncode == 1 and "made with the smoke recipe" in told.stderr, told.stderr
        assert "give `speclab train smoke` with the same --run-dir" in told.stderr
    resumed = run_train("smoke", *plain)
    assert resumed.returncode == 0 and "smoke: 6 steps" in resumed.stdout, resumed.stderr


def test_weights_put_where_a_checkpoint_goes_are_named_not_called_damaged(tmp_path):
    weights = tmp_path / "w.npz"
    assert (
        run_train("smoke", "--smoke", "--run-dir", tmp_path / "a", "--out", weights).returncode == 0
    )
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "checkpoint.npz").write_bytes(weights.read_bytes())
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "b")
    assert (
        result.returncode == 1 and "is a weights file, not a training checkpoint" in result.stderr
    )
    assert "damaged" not in result.stderr and "delete" not in result.stderr


def test_a_run_stopped_before_the_recipe_ends_says_so_and_how_to_go_on(tmp_path):
    """--stop-at and --max-minutes ended with the same line as a finished run."""
    stopped = run_train("smoke", "--smoke", "--run-dir", tmp_path / "run", "--stop-at", "1")
    assert stopped.returncode == 0, stopped.stderr
    assert "smoke: 1 step, " in stopped.stdout
    assert (
        "stopped at step 1 of the recipe's 6: the same command without --stop-at" in stopped.stdout
    )
    done = run_train("smoke", "--smoke", "--run-dir", tmp_path / "run")
    assert done.returncode == 0 and "smoke: 6 steps, " in done.stdout
    assert "stopped at" not in done.stdout
    # --max-minutes alone: it said "the same command without --stop-at (or with more
    # --max-minutes)", a flag never given, and the same time again could stop it at once
    timed = run_train("smoke", "--smoke", "--run-dir", tmp_path / "timed", "--max-minutes", "1e-9")
    assert timed.returncode == 0, timed.stderr
    assert (
        "stopped at step 1 of the recipe's 6: the same command with more --max-minutes (or none) "
        "goes on from its checkpoint" in timed.stdout
    )


def test_a_run_started_without_stdout_trains_to_its_end(tmp_path):
    """Started with stdout closed (`>&-`, as a launcher may), a run stopped at its first
    validation with "[Errno 9] standard output is closed"; what it prints is in its record."""
    import os

    command = [sys.executable, "-m", "speclab", "train", "smoke", "--run-dir", str(tmp_path / "r"),
               "--out", str(tmp_path / "w.npz")]  # fmt: skip
    env = {**os.environ, "TQDM_DISABLE": "1"}
    result = subprocess.run(command, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=lambda: os.close(1))  # fmt: skip  # `>&-`
    assert result.returncode == 0 and result.stderr == ""
    from speclab.weights import load

    meta = load(tmp_path / "w.npz").meta
    assert meta["trained_steps"] == meta["recipe"]["steps"] == 6


def test_a_closed_pipe_stops_the_run_and_says_what_is_kept(tmp_path):
    """`speclab train ... | head -1` stopped after the first validation's line with status 141
    and not a word: the run had ended, which a user reading only stdout could not tell."""
    import os

    command = [sys.executable, "-m", "speclab", "train", "smoke", "--smoke", "--run-dir",
               str(tmp_path / "run")]  # fmt: skip
    env = {**os.environ, "TQDM_DISABLE": "1"}
    reader, writer = os.pipe()
    os.close(reader)  # the reader gone before the first line, as `| true` does: no race
    with subprocess.Popen(
        command, stdout=writer, stderr=subprocess.PIPE, text=True, env=env
    ) as run:
        os.close(writer)
        err = run.stderr.read()
    assert run.returncode == 141, err
    assert err.strip() == (
        "speclab train: stopped, as its output's reader went away (a closed pipe: | head); the "
        f"last validation's checkpoint is kept in {tmp_path / 'run'}, and the same command goes "
        "on from it"
    )
    assert (tmp_path / "run" / "checkpoint.npz").is_file()


def test_a_checkpoint_link_that_leads_nowhere_is_named_not_read_as_a_fresh_start(tmp_path):
    """A broken checkpoint.npz link read as no checkpoint: the run started again at step 0,
    with no word, and replaced the link (a hostile review)."""
    from speclab.train import train

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "checkpoint.npz").symlink_to(tmp_path / "moved-away.npz")
    with pytest.raises(ValueError, match="checkpoint.npz goes through a link that leads nowhere"):
        train(replace(RECIPES["smoke"], steps=2), run_dir, progress=False)
    assert (run_dir / "checkpoint.npz").is_symlink()  # left as it was
