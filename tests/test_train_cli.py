"""speclab.train_cli: the checks `speclab train` makes before hours of training (--set,
--scale-attention, --steps, --out), its closing line and its statuses, called in-process
with a stand-in for speclab.train.train (the real runs are in test_train.py).

Each boundary is taken from the words the messages promise ("at most 100", "at least
4,608", "not negative"): the named value itself passes, the next one is refused."""

import argparse
import io
import json
import re
from dataclasses import replace

import numpy as np
import pytest

from speclab import train_cli
from speclab.gpt import GPTConfig
from speclab.recipe import RECIPES
from speclab.train_cli import attention_scales, with_overrides
from speclab.weights import init_params, save

SMOKE = RECIPES["smoke"]  # n_layer 1, n_head 2, n_ctx 64, batch_tokens 128, steps 6


def parse(*argv):
    """The arguments of `speclab train ARGV`, read by the module's own add_arguments."""
    parser = argparse.ArgumentParser()
    train_cli.add_arguments(parser)
    return parser.parse_args([str(a) for a in argv])


def test_scale_attention_reads_layer_dot_head_equals_factor_up_to_the_last_head():
    scales = attention_scales(["0.1=2", " 1.3 =0.5", "1.0=1e2"], n_layer=2, n_head=4)
    assert scales == {(0, 1): 2.0, (1, 3): 0.5, (1, 0): 100.0}


@pytest.mark.parametrize("setting", ["2.0=2", "0.4=2"])
def test_scale_attention_refuses_a_head_one_past_the_model_and_names_its_range(setting):
    """A model of 2 layers and 4 heads has layers 0 and 1, heads 0 to 3."""
    with pytest.raises(ValueError, match=re.escape("the model has layers 0-1 and heads 0-3")):
        attention_scales([setting], n_layer=2, n_head=4)


@pytest.mark.parametrize("factor", ["0", "-1", "100.001", "nan", "inf"])
def test_scale_attention_takes_factors_above_0_and_at_most_100(factor):
    with pytest.raises(ValueError, match="the factor must be above 0 and at most 100 "):
        attention_scales([f"0.0={factor}"], n_layer=1, n_head=2)
    assert attention_scales(["0.0=100"], n_layer=1, n_head=2) == {(0, 0): 100.0}


def test_scale_attention_refuses_digits_of_other_scripts():
    """int() reads "٠.١" (Arabic-Indic digits) as layer 0, head 1; the module takes plain
    digits only."""
    with pytest.raises(ValueError, match="expected LAYER.HEAD=FACTOR"):
        attention_scales(["\u0660.\u0661=2"], n_layer=1, n_head=2)


def test_scale_attention_given_twice_is_refused_only_with_two_factors():
    assert attention_scales(["0.1=2", "0.1=2.0"], n_layer=1, n_head=2) == {(0, 1): 2.0}
    with pytest.raises(ValueError, match="names head 0.1 twice, with 2.0 and 3.0; give one"):
        attention_scales(["0.1=2", "0.1=3"], n_layer=1, n_head=2)


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ("steps=10000000", None),
        ("steps=10000001", "--set steps=10,000,001: at most 10,000,000"),
        ("warmup=10000000", None),
        ("warmup=10000001", "--set warmup=10,000,001: at most 10,000,000"),
        ("batch_tokens=4194304", None),  # 1 << 22
        ("batch_tokens=4194305", "--set batch_tokens=4,194,305: at most 4,194,304"),
        ("batch_tokens=64", None),  # the smoke recipe's n_ctx: one whole row a step
        ("batch_tokens=63", "batch_tokens=63 is less than n_ctx=64"),
        # 8 x n_ctx + 4,096 = 8 x 64 + 4,096 = 4,608, train.py's floor for the smoke recipe
        ("max_corpus_bytes=4608", None),
        ("max_corpus_bytes=4607", "--set max_corpus_bytes=4,607: this recipe needs at least 4,608"),
        ("loop_rows=64", None),
        ("loop_rows=65", "loop_rows must be 0 to 64"),
        ("loop_weight=0", None),
        ("loop_weight=-0.5", "loop_weight not negative"),
        ("hard_copy_weight=10000", None),
        ("hard_copy_weight=10000.5", "the weight must be above 0 and at most 10,000"),
        ("grad_clip=1e-9", None),
        ("grad_clip=0", "--set grad_clip=0.0: must be above 0"),
    ],
)
def test_each_limit_of_set_takes_its_named_value_and_refuses_the_next(setting, said):
    if said is None:
        name, value = setting.split("=")
        assert getattr(with_overrides(SMOKE, [setting]), name) == float(value)
    else:
        with pytest.raises(ValueError, match=re.escape(said)):
            with_overrides(SMOKE, [setting])


@pytest.mark.parametrize(
    "name",
    ["copy_fraction", "verbatim_fraction", "interleave_fraction", "scramble_fraction",
     "block_fraction", "top_level_fraction", "few_letters_fraction", "teacher_share",
     "min_lr_ratio"],
)  # fmt: skip
def test_every_share_of_the_recipe_is_between_0_and_1(name):
    assert getattr(with_overrides(SMOKE, [f"{name}=1"]), name) == 1.0
    with pytest.raises(ValueError, match=f"--set {name}=1.5: must be between 0 and 1"):
        with_overrides(SMOKE, [f"{name}=1.5"])


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--steps", "0"], "--steps must be at least 1"),
        (["--steps", "10000001"], "--steps 10,000,001: at most 10,000,000"),
        (["--stop-at", "-1"], "--stop-at must be a step number"),
        (["--max-minutes", "nan"], "--max-minutes must be positive"),
    ],
)
def test_steps_stop_at_and_max_minutes_out_of_range_are_refused(argv, said):
    with pytest.raises(ValueError, match=re.escape(said)):
        train_cli._recipe(parse("smoke", *argv), "smoke")
    assert train_cli._recipe(parse("smoke", "--steps", "10000000"), "smoke").steps == 10_000_000


def _weights(path, first_validation=None):
    """Smoke-shaped weights at path whose record starts with that validation, as an export's
    (None: weights with no validation yet)."""
    config = SMOKE.model_config
    history = [first_validation] if first_validation else []
    meta = {"history": history, "trained_steps": 6, "val_bits_per_byte": 4.2}
    save(path, init_params(config, np.random.default_rng(0)), config, meta)
    return path


def _checkpoint(path, first_validation):
    """A stand-in for a run's checkpoint: only the record, which _first_validation reads."""
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"log": {"history": [first_validation, {"step": 6}]}}
    np.savez(path, record=np.array(json.dumps(record)))
    return path


FIRST = {"step": 3, "seconds": 1.5, "val_bits_per_byte": 5.25}


def test_weights_of_another_run_with_the_same_loss_at_another_time_are_anothers(tmp_path):
    """Two runs of one recipe and seed reach the same loss at the same step: only the time of
    the first validation tells an earlier export of this run from another run's weights."""
    out = _weights(tmp_path / "w.npz", FIRST | {"copy_gap": 0.5})  # the export drops details
    mine = _checkpoint(tmp_path / "mine" / "checkpoint.npz", FIRST)
    assert train_cli._other_run(out, mine.parent, None) is None
    other = _checkpoint(tmp_path / "other" / "checkpoint.npz", FIRST | {"seconds": 2.5})
    said = train_cli._other_run(out, other.parent, None)
    assert said.startswith(f"--out {out} holds another run's weights (6 steps, 4.2 bits/byte)")
    # a new run folder going on from the checkpoint that made out: its own export
    assert train_cli._other_run(out, tmp_path / "new", init_from=mine) is None
    assert train_cli._other_run(out, tmp_path / "new", init_from=other) == said


def test_a_checkpoint_whose_record_is_too_deep_to_read_has_no_fingerprint(tmp_path):
    """Its own checks name the damage when the run reads it; the fingerprint only says none
    (json.loads had raised RecursionError out of the checks of --out)."""
    out = _weights(tmp_path / "w.npz", FIRST)
    deep = tmp_path / "deep" / "checkpoint.npz"
    deep.parent.mkdir()
    np.savez(deep, record=np.array("[" * 100_000 + "]" * 100_000))
    assert train_cli._first_validation(deep) is None
    assert train_cli._other_run(out, deep.parent, None).startswith(f"--out {out} holds another")


def test_a_checkpoint_whose_record_claims_gigabytes_is_not_read_for_its_fingerprint(tmp_path):
    """numpy allocates what a member's header claims before reading it: a record claiming
    400 GB ended the checks of --out in a MemoryError traceback (load_checkpoint refused it)."""
    import zipfile

    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<U1", "fortran_order": False, "shape": (10**11,)}
    )
    huge = tmp_path / "huge" / "checkpoint.npz"
    huge.parent.mkdir()
    with zipfile.ZipFile(huge, "w") as archive:
        archive.writestr("record.npy", header.getvalue() + b"x" * 100)
    assert train_cli._first_validation(huge) is None
    out = _weights(tmp_path / "w.npz", FIRST)
    assert train_cli._other_run(out, huge.parent, None).startswith(f"--out {out} holds another")


def test_the_shipped_target_counts_as_a_teacher_only_when_the_recipe_learns_from_it(
    tmp_path, monkeypatch
):
    shipped = tmp_path / "weights"
    shipped.mkdir()
    target = _weights(shipped / "target.npz")
    monkeypatch.setattr(train_cli, "weights_dir", lambda: shipped)
    args = parse("smoke", "--out", target)
    assert train_cli._path_problem(args, tmp_path / "run", SMOKE) is None
    distilled = replace(SMOKE, teacher_share=0.5)
    said = train_cli._path_problem(args, tmp_path / "run", distilled)
    assert said.startswith(f"--out {target} is the target this run learns from")


@pytest.mark.parametrize("name", ["target", "draft"])
def test_out_onto_either_shipped_model_is_allowed_though_another_run_made_it(
    name, tmp_path, monkeypatch
):
    """Shipping a model replaces one made by another run: a note, not a refusal; the same
    weights anywhere else are refused as another run's."""
    import speclab.paths

    shipped = tmp_path / "weights"
    shipped.mkdir()
    monkeypatch.setattr(speclab.paths, "weights_dir", lambda: shipped)
    out = _weights(shipped / f"{name}.npz", FIRST)
    assert train_cli._is_shipped(out) and not train_cli._is_shipped(tmp_path / f"{name}.npz")
    assert train_cli._path_problem(parse("smoke", "--out", out), tmp_path / "run", SMOKE) is None
    elsewhere = _weights(tmp_path / f"{name}.npz", FIRST)
    said = train_cli._path_problem(parse("smoke", "--out", elsewhere), tmp_path / "run", SMOKE)
    assert said.startswith(f"--out {elsewhere} holds another run's weights")


def test_a_run_stopped_by_stop_at_and_max_minutes_names_both_ways_on():
    """The advice reads as one sentence: without the flag that stopped it, and with more
    time (the same --max-minutes again might stop it at once)."""
    args = parse("smoke", "--stop-at", "2", "--max-minutes", "5")
    log = {"history": [{"step": 2, "val_bits_per_byte": 3.5}], "seconds": 12.0}
    assert train_cli._summary("smoke", SMOKE, log, args) == (
        "smoke: 2 steps, 12 s, validation 3.5 bits/byte; stopped at step 2 of the recipe's 6: "
        "the same command without --stop-at and with more --max-minutes (or none) goes on "
        "from its checkpoint"
    )


def test_a_recipe_too_big_for_the_memory_is_one_line_and_status_1(tmp_path, monkeypatch, capsys):
    def too_big(cfg, run_dir, **kwargs):
        raise MemoryError("Unable to allocate 8.00 TiB")

    monkeypatch.setattr(train_cli, "train", too_big)
    status = train_cli.run(parse("smoke", "--smoke", "--run-dir", tmp_path / "run"))
    assert status == 1
    assert capsys.readouterr().err == (
        "speclab train: not enough memory for this recipe (Unable to allocate 8.00 TiB)\n"
    )
    assert not (tmp_path / "run").exists()  # a failed start leaves no empty folder


def test_a_finished_run_prints_its_line_and_status_0(tmp_path, monkeypatch, capsys):
    def trained(cfg, run_dir, **kwargs):
        assert cfg == SMOKE and kwargs["stop_at"] == 0 and kwargs["scale_heads"] == {}
        return {"history": [{"step": 6, "val_bits_per_byte": 4.0}], "seconds": 3.4}

    monkeypatch.setattr(train_cli, "train", trained)
    status = train_cli.run(parse("smoke", "--smoke", "--run-dir", tmp_path / "run"))
    assert status == 0
    assert capsys.readouterr().out == "smoke: 6 steps, 3 s, validation 4.0 bits/byte\n"


def test_shapes_in_the_other_shape_message_are_layers_width_and_context(tmp_path):
    config = GPTConfig(n_layer=3, n_head=2, n_embd=24, n_ctx=48)
    out = tmp_path / "w.npz"
    save(out, init_params(config, np.random.default_rng(0)), config)
    assert train_cli._other_shape(out, SMOKE) == (
        f"--out {out} holds weights of another shape (3 layers of width 24, context 48) that "
        "this run (1 layer of width 16, context 64) would replace; give another --out, or "
        "move that file away"
    )
    assert train_cli._other_shape(_weights(tmp_path / "same.npz", FIRST), SMOKE) is None


def test_a_failed_start_leaves_no_empty_folder_made_for_out(tmp_path, monkeypatch):
    def too_big(cfg, run_dir, **kwargs):
        raise MemoryError("Unable to allocate 8.00 TiB")

    monkeypatch.setattr(train_cli, "train", too_big)
    argv = ["smoke", "--smoke", "--run-dir", tmp_path / "run", "--out", tmp_path / "new" / "w.npz"]
    assert train_cli.run(parse(*argv)) == 1
    assert not (tmp_path / "run").exists()
    assert not (tmp_path / "new").exists()
    inside = ["smoke", "--smoke", "--run-dir", tmp_path / "run", "--out", tmp_path / "run/x/w.npz"]
    assert train_cli.run(parse(*inside)) == 1  # --out's folder inside the run folder: both go
    assert not (tmp_path / "run").exists()
    (tmp_path / "mine").mkdir()  # a folder that was there before is the student's: it stays
    argv = ["smoke", "--smoke", "--run-dir", tmp_path / "run", "--out", tmp_path / "mine/w.npz"]
    assert train_cli.run(parse(*argv)) == 1
    assert (tmp_path / "mine").is_dir() and not (tmp_path / "run").exists()


def test_a_whole_number_with_a_decimal_point_is_taken_as_e_notation_is():
    assert with_overrides(SMOKE, ["steps=2e3"]).steps == 2000
    assert with_overrides(SMOKE, ["steps=2000.0"]).steps == 2000
    with pytest.raises(ValueError, match=r"'2000\.5' is not a valid int \(a whole number\)"):
        with_overrides(SMOKE, ["steps=2000.5"])
