"""speclab.train and what it draws on (speclab.recipe, speclab.corpus, speclab.copy_metrics):
the recipe and its stages, copy documents and probes, the copy gap against the inference
forward, checkpoints that resume (or refuse, with a message), the command."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from speclab.copy_metrics import copy_gap, copy_probes
from speclab.corpus import batch, copy_document, small_edit
from speclab.gpt import GPTConfig, forward
from speclab.recipe import RECIPES, TrainConfig
from speclab.train import learning_rate, loop_penalty, own_loops, row_length, with_overrides
from speclab.weights import flatten, init_params, load


def test_schedule_warms_up_and_decays():
    cfg = TrainConfig(steps=100, warmup=10, lr=1.0, min_lr_ratio=0.1)
    assert learning_rate(0, cfg) == pytest.approx(0.1)
    assert learning_rate(9, cfg) == pytest.approx(1.0)
    assert learning_rate(100, cfg) == pytest.approx(0.1)
    assert learning_rate(50, cfg) < learning_rate(20, cfg)


def test_copy_documents_repeat_their_snippet():
    rng = np.random.default_rng(0)
    text = np.frombuffer(b"def f(alpha, beta):\n    return alpha + beta\n" * 50, dtype=np.uint8)
    edited = small_edit(b"total = total + value\n", np.random.default_rng(1))
    assert edited != b"total = total + value\n"
    for _ in range(20):
        document = copy_document(text, rng, max_len=120)
        assert len(document) > 30


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
    assert "another recipe" in result.stderr and "Traceback" not in result.stderr


VAL_TEXT = np.frombuffer(
    b"".join(f"def f_{i}(a, b):\n    return a * {i} + b\n\n".encode() for i in range(400)),
    dtype=np.uint8,
)


@pytest.mark.parametrize("far", [False, True])
def test_copy_probes_repeat_a_snippet_after_a_blank_line(far):
    n_ctx = 256
    for text, first, second in copy_probes(VAL_TEXT, n_ctx, far=far):
        assert len(text) <= n_ctx
        assert text[first] == text[second] and len(text[first]) >= 30
        assert text[first.stop : second.start] == b"\n\n" and second.stop == len(text)
        if far:  # the repeat sits in the last quarter of the context, not near the start
            assert second.start >= n_ctx // 2


def test_copy_gap_matches_the_inference_forward():
    """copy_gap's per-byte surprises, recomputed with speclab.gpt.forward (an independent
    implementation of the same model) over the whole probe."""
    config = GPTConfig(n_layer=2, n_head=2, n_embd=8, n_ctx=256)
    params = init_params(config, np.random.default_rng(2), dtype=np.float64)
    for value in flatten(params).values():
        value += np.random.default_rng(3).standard_normal(value.shape) * 0.3
    probes = copy_probes(VAL_TEXT, config.n_ctx, n=3)
    bits = {"first": [], "second": []}
    for text, first, second in probes:
        logits = forward(params, config, list(text))  # [n, n_vocab]
        log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        for name, part in (("first", first), ("second", second)):
            idx = np.arange(part.start, part.stop)
            bits[name].append(-log_probs[idx - 1, list(text[part])].mean() / np.log(2))
    got = copy_gap(params, config.n_head, probes)
    assert got["first"] == pytest.approx(np.mean(bits["first"]), abs=1e-4)
    assert got["gap"] == pytest.approx(np.mean(bits["first"]) - np.mean(bits["second"]), abs=2e-4)


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
}


@pytest.mark.parametrize(
    "damage",
    [b"", b"not a zip file", "truncated", "no record", *CONTENT_DAMAGE],
)
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


def test_the_kept_checkpoint_resumes_with_the_current_recipe():
    """README: data/weights/checkpoints/target.npz goes on with the `speclab train target
    --run-dir runs/more --set ...` command it gives, so the checkpoint must have been made with
    today's target recipe changed by those settings (only the number of steps may differ)."""
    import re

    from speclab.paths import repo_root, weights_dir
    from speclab.train import load_checkpoint, with_overrides

    readme = " ".join((repo_root() / "README.md").read_text(encoding="utf-8").split())
    command = re.search(r"`speclab train target --run-dir runs/more((?: --set \S+)*)`", readme)
    assert command, "README says how to go on from the kept checkpoint"
    cfg = with_overrides(RECIPES["target"], re.findall(r"--set (\S+)", command[1]))
    params, state, step, _, log = load_checkpoint(weights_dir() / "checkpoints" / "target.npz", cfg)
    assert step < cfg.steps, "the README's command trains on beyond the kept step"
    assert params["wpe"].shape == (cfg.n_ctx, cfg.n_embd) and step == log["history"][-1]["step"]
    assert "copy_gap_far" in log["history"][-1]


def test_interleaved_copies_put_other_text_between_the_repeat():
    """With interleave_fraction=1 every copy document is: piece, other source, piece again
    (verbatim_fraction=1: unchanged), so the repeat's start is not foretold by a separator."""
    words = b"".join(f"value_{i} = compute(item_{i}, {i})\n".encode() for i in range(2000))
    text = np.frombuffer(words, dtype=np.uint8)
    cfg = TrainConfig(verbatim_fraction=1.0, interleave_fraction=1.0)
    rng = np.random.default_rng(3)
    for _ in range(20):
        document = copy_document(text, rng, max_len=120, cfg=cfg)
        lines = document.rstrip(b"\n").split(b"\n")
        first = lines[0]
        assert document.count(first) == 2  # the piece and its verbatim repeat
        start, again = document.index(first), document.rindex(first)
        between = document[start + len(first) : again]
        assert any(line.startswith(b"value_") for line in between.split(b"\n")[1:])


def test_old_checkpoints_load_with_the_fields_they_predate(tmp_path):
    """A checkpoint saved before verbatim_fraction and interleave_fraction existed was made
    with their defaults (0.5 verbatim, no interleaving) and must still resume."""

    from speclab.train import load_checkpoint

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


def test_scrambled_names_are_random_but_the_same_everywhere():
    from speclab.corpus import scramble_names

    piece = b"def moving_average(values, window):\n    return sum(values[:window]) / window\n"
    out = scramble_names(piece, np.random.default_rng(5))
    assert len(out) == len(piece) and out.startswith(b"def ") and b"return " in out
    assert b"moving_average" not in out and b"values" not in out and b"window" not in out
    # one name, one replacement: the text repeats where the original repeated
    old_words, new_words = piece.split(), out.split()
    pairs = {(a, b) for a, b in zip(old_words, new_words, strict=True)}
    assert len({a for a, _ in pairs}) == len(pairs)


def test_few_letter_pieces_cannot_be_copied_from_the_last_few_bytes():
    from speclab.corpus import copy_document, few_letters
    from speclab.recipe import TrainConfig

    rng = np.random.default_rng(4)
    needs_five = []
    for _ in range(20):
        piece = few_letters(rng, max_len=200)
        assert 100 <= len(piece) <= 200 and piece.endswith(b"\n")
        assert 2 <= len(set(piece) - {ord("\n")}) <= 4
        # a byte needs 5+ bytes of context if some 4 bytes before it recur with another byte after
        for j in range(4, len(piece)):
            key = piece[j - 4 : j]
            after = {piece[k] for k in range(4, len(piece)) if piece[k - 4 : k] == key}
            needs_five.append(len(after) > 1)
    assert np.mean(needs_five) > 0.35  # in code's repeats: 19 % (benchmarks/copy_diagnosis.py)
    text = np.frombuffer(b"def f(x):\n    return x\n" * 200, dtype=np.uint8)
    cfg = TrainConfig(few_letters_fraction=1.0, verbatim_fraction=1.0)
    document = copy_document(text, np.random.default_rng(1), max_len=100, cfg=cfg)
    assert b"return" not in document  # the piece replaced the source
    n = len(document)  # piece, separator, the same piece, a blank line
    assert any(document[:i] == document[n - 2 - i : n - 2] for i in range(50, n // 2))


def test_blocks_are_whole_dedented_lines_with_consistent_indentation():
    from speclab.corpus import block

    source = b"".join(
        f"class C{i}:\n    def m(self, x):\n        y = x * {i}\n        return y\n\n".encode()
        for i in range(300)
    )
    text = np.frombuffer(source, dtype=np.uint8)
    rng = np.random.default_rng(2)
    for _ in range(30):
        piece = block(text, rng, max_len=120)
        lines = piece.rstrip(b"\n").split(b"\n")
        assert lines[0] and not lines[0].startswith(b" ")  # starts in column 0
        assert all(line.startswith(b" ") or not line or line.startswith(b"class")
                   or line.startswith(b"def") or line[:1].isalpha() for line in lines)  # fmt: skip
        # every line is a line of the source, dedented by the first line's indentation
        indent = len(source.split(lines[0])[0].rsplit(b"\n", 1)[-1])
        assert all(b" " * indent + line in source for line in lines if line)
        assert len(piece) <= 120


def test_init_from_a_weights_file_starts_at_step_0_from_those_weights(tmp_path):
    first, out, second = tmp_path / "first", tmp_path / "w.npz", tmp_path / "second"
    assert run_train("smoke", "--smoke", "--run-dir", first, "--out", out).returncode == 0
    result = run_train("smoke", "--smoke", "--run-dir", second, "--init-from", out,
                       "--stop-at", "1", "--set", "val_every=1")  # fmt: skip
    assert result.returncode == 0, result.stderr
    (entry,) = load_checkpoint_log(second / "checkpoint.npz")["history"]
    assert entry["step"] == 1
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


def test_a_corpus_slice_too_small_for_the_recipe_is_a_message(tmp_path):
    result = run_train(
        "smoke", "--smoke", "--run-dir", tmp_path / "r", "--set", "max_corpus_bytes=100"
    )
    assert result.returncode == 1
    assert "the train text is 100 bytes" in result.stderr and "Traceback" not in result.stderr


def test_top_level_rows_start_at_a_line_in_column_0():
    source = b"".join(
        b"class C%d:\n    def f(self):\n        return %d\n\n" % (i, i) for i in range(900)
    )
    text = np.frombuffer(source, dtype=np.uint8)
    cfg = TrainConfig(copy_fraction=0.0, top_level_fraction=1.0)
    inputs, _ = batch(text, 50, 40, np.random.default_rng(0), cfg)
    assert all(row.astype(np.uint8).tobytes().startswith(b"class C") for row in inputs)
    inputs, _ = batch(text, 50, 40, np.random.default_rng(0), TrainConfig(copy_fraction=0.0))
    assert sum(row.astype(np.uint8).tobytes().startswith(b"class C") for row in inputs) < 25


def test_a_grown_model_computes_what_the_trained_one_did_and_only_depth_may_grow():
    from speclab.train import grown

    old = GPTConfig(n_layer=2, n_head=2, n_embd=16, n_ctx=32)
    rng = np.random.default_rng(3)
    params = init_params(old, rng, dtype=np.float64)
    for value in (params["wte"], params["h"][1]["mlp"]["c_proj"]["b"]):  # not an initial model
        value += rng.standard_normal(value.shape)
    new = GPTConfig(n_layer=5, n_head=2, n_embd=16, n_ctx=32)
    deeper = grown(params, old, new, np.random.default_rng(0))
    assert len(deeper["h"]) == 5 and deeper["h"][:2] == params["h"]
    assert np.abs(deeper["h"][4]["attn"]["c_attn"]["w"]).max() > 0  # new blocks can learn
    assert deeper["h"][4]["attn"]["c_attn"]["w"].dtype == np.float64  # the model's own dtype
    tokens = rng.integers(0, 256, size=20)
    np.testing.assert_array_equal(forward(deeper, new, tokens), forward(params, old, tokens))
    for other in (GPTConfig(1, 2, 16, 32), GPTConfig(3, 2, 32, 32), GPTConfig(3, 4, 16, 32),
                  GPTConfig(3, 2, 16, 64)):  # fmt: skip
        with pytest.raises(ValueError, match="only more layers"):
            grown(params, old, other, np.random.default_rng(0))


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


def test_copy_score_counts_to_the_first_mistake_of_plain_uncached_greedy():
    """The copy test against an uncached forward: the bytes counted are those plain argmax
    reproduces, and the recorded first mistake is that forward's argmax and probabilities."""
    from speclab.copy_metrics import copy_score, copy_test_prompts, held_out_functions
    from speclab.corpus import load_corpus
    from speclab.gpt import softmax
    from speclab.weights import load_target

    model = load_target()
    params, config = model.params, model.config
    corpus = load_corpus()
    functions = held_out_functions(corpus["val"], corpus["train"])[
        2:5:2
    ]  # short right runs, mistakes
    score = copy_score(params, config, functions)
    pairs = copy_test_prompts(functions)
    for (prompt, rest), right, mistake in zip(
        pairs, score["bytes_copied"], score["first_mistakes"], strict=True
    ):
        p = softmax(forward(params, config, prompt + list(rest[:right]))[-1])
        assert all(  # every byte before it was the argmax
            int(np.argmax(forward(params, config, prompt + list(rest[:i]))[-1])) == rest[i]
            for i in range(right)
        )
        assert 0 < right < len(rest)
        assert mistake["chose"] == int(np.argmax(p)) != rest[right] == mistake["wanted"]
        assert mistake["p_chose"] == pytest.approx(p[mistake["chose"]], abs=1e-3)
        assert mistake["p_wanted"] == pytest.approx(p[rest[right]], abs=1e-3)


def test_the_copy_tests_eight_functions_are_spread_over_all_the_held_out_ones():
    """model_report's wider copy test (n=None) holds the 8 at an even stride, and only
    top-level functions of 120-400 bytes from the validation files, none from training."""
    from speclab.copy_metrics import held_out_functions
    from speclab.corpus import load_corpus

    corpus = load_corpus()
    val, train = corpus["val"], corpus["train"]
    every, eight = held_out_functions(val, train, n=None), held_out_functions(val, train)
    assert len(eight) == 8 and len(every) > 8
    assert eight == every[:: len(every) // 8][:8]
    assert all(f.startswith(b"def ") and 120 <= len(f) <= 401 for f in every)
    seen = train.tobytes()
    assert not any(f in seen for f in every)  # held-out files repeat some training functions
    assert len(held_out_functions(val, val[:0], n=None)) > len(every)  # and this finds them


def test_context_needed_is_the_shortest_match_that_settles_the_next_byte():
    from speclab.corpus import context_needed

    text = b"ab_x ab_y cb_x"
    assert context_needed(text, 13) == 3  # "_" and "b_" are followed by x and y; "cb_" by x
    assert context_needed(text, 8) == 4  # "ab_" is followed by x and y; " ab_" by y alone
    assert context_needed(text, 10) == 2  # " " by a and c; "y " by c alone
    assert context_needed(text, 3) == 4  # all 3 bytes before it are not enough: j + 1


def test_context_needs_gives_context_needed_at_every_byte():
    from speclab.corpus import context_needed, context_needs

    rng = np.random.default_rng(0)
    alphabet = np.frombuffer(b"ab \n", dtype=np.uint8)  # few letters: long matches are common
    for _ in range(200):
        text = rng.choice(alphabet, int(rng.integers(1, 50))).tobytes()
        assert context_needs(text).tolist() == [context_needed(text, j) for j in range(len(text))]


@pytest.mark.parametrize("n_seq", [64, 256])  # 64: most repeats are cut at the row's end
def test_weighted_batches_weigh_exactly_the_hard_bytes_of_verbatim_repeats(n_seq):
    import inspect

    from speclab.corpus import context_needed, copy_document_parts

    text = np.frombuffer(Path(inspect.__file__).read_bytes(), dtype=np.uint8)  # real code
    cfg = TrainConfig(copy_fraction=1.0, verbatim_fraction=0.7, interleave_fraction=0.5,
                      block_fraction=0.5, hard_copy_weight=4.0, hard_copy_bytes=4)  # fmt: skip
    inputs, targets, weights = batch(text, 24, n_seq, np.random.default_rng(1), cfg, weighted=True)
    plain = batch(text, 24, n_seq, np.random.default_rng(1), cfg)
    assert (inputs == plain[0]).all() and (targets == plain[1]).all()  # the same draws
    # the same documents again, each byte of a verbatim repeat judged by context_needed
    rng, expected = np.random.default_rng(1), np.ones((24, n_seq + 1))
    for row in range(24):
        rng.random()  # a copy row or not: always a copy row here
        data = b""
        while len(data) < n_seq + 1:
            piece, between, again, end = copy_document_parts(text, rng, n_seq // 3 - 8, cfg)
            for j in range(len(again) if again == piece else 0):  # renamed: not weighed
                at = len(data) + len(piece) + len(between) + j
                if at <= n_seq and context_needed(piece, j) >= 4:
                    expected[row, at] = 4.0
            data += piece + between + again + end
        assert data.startswith(bytes(inputs[row].astype(np.uint8)))
    assert (weights == expected[:, 1:]).all() and (weights == 4.0).sum() > 10


@pytest.mark.parametrize(
    "setting",
    ["hard_copy_weight=0", "hard_copy_weight=-2", "hard_copy_weight=1e38", "hard_copy_bytes=0"],
)
def test_a_bad_hard_copy_setting_is_refused(setting):
    with pytest.raises(ValueError, match="hard_copy"):
        with_overrides(TrainConfig(), [setting])


def test_a_diverging_run_stops_with_a_message_and_saves_no_broken_checkpoint(tmp_path):
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "run", "--set", "lr=1e308")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "training diverged at step 1" in result.stderr and "lower --set lr" in result.stderr
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
    (tmp_path / "a-file").write_text("")
    result = run_train("smoke", "--smoke", "--run-dir", tmp_path / "a-file")
    assert result.returncode == 2 and "is a file; give a folder" in result.stderr


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


def test_an_unreadable_checkpoint_is_not_called_damaged(tmp_path, monkeypatch):
    """Permission denied is not damage: the message must not advise deleting hours of work."""
    from speclab.train import load_checkpoint

    checkpoint = tmp_path / "checkpoint.npz"
    checkpoint.write_bytes(b"PK")
    real_open = Path.open

    def denied(self, *args, **kwargs):
        if self == checkpoint:
            raise PermissionError(13, "Permission denied")
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", denied)
    with pytest.raises(OSError, match="cannot read .*Permission denied.*nothing was changed"):
        load_checkpoint(checkpoint, RECIPES["smoke"])


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
    from speclab.copy_metrics import MIN_N_CTX

    with pytest.raises(ValueError, match=f"n_ctx={n_ctx}: must be at least {MIN_N_CTX}"):
        with_overrides(RECIPES["smoke"], [f"n_ctx={n_ctx}", "n_seq=1"])
    cfg = with_overrides(RECIPES["smoke"], [f"n_ctx={MIN_N_CTX}", f"n_seq={MIN_N_CTX}"])
    val = np.frombuffer(Path(__file__).read_bytes() * 4, dtype=np.uint8)
    params = init_params(GPTConfig(1, 2, 16, cfg.n_ctx), np.random.default_rng(0))
    for far in (False, True):
        probes = copy_probes(val, cfg.n_ctx, far=far)
        assert len(probes) == 8 and all(len(text) <= cfg.n_ctx for text, _, _ in probes)
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


def test_a_deeply_nested_checkpoint_record_is_called_damaged(tmp_path):
    """json.loads raises RecursionError, not ValueError, on a record nested this deep."""
    from speclab.train import load_checkpoint

    checkpoint = tmp_path / "checkpoint.npz"
    np.savez(checkpoint, record=np.array("[" * 100_000 + "]" * 100_000))
    with pytest.raises(ValueError, match="damaged or not a speclab training checkpoint"):
        load_checkpoint(checkpoint, RECIPES["smoke"])
