"""speclab.checkpoints: loading the kept checkpoint, refusing damaged or unreadable ones, growing."""

from pathlib import Path

import numpy as np
import pytest

from speclab.gpt import GPTConfig, forward
from speclab.recipe import RECIPES
from speclab.weights import flatten, init_params


def test_the_kept_checkpoint_resumes_with_the_current_recipe():
    """README: data/weights/checkpoints/target.npz goes on with the `speclab train target
    --run-dir runs/more --set ...` command it gives, so the checkpoint must have been made with
    today's target recipe changed by those settings (only the number of steps may differ)."""
    import re

    from speclab.checkpoints import load_checkpoint
    from speclab.paths import repo_root, weights_dir
    from speclab.train_cli import with_overrides

    readme = " ".join((repo_root() / "README.md").read_text(encoding="utf-8").split())
    command = re.search(r"`speclab train target --run-dir runs/more((?: --set \S+)*)`", readme)
    assert command, "README says how to go on from the kept checkpoint"
    cfg = with_overrides(RECIPES["target"], re.findall(r"--set (\S+)", command[1]))
    params, state, step, _, log = load_checkpoint(weights_dir() / "checkpoints" / "target.npz", cfg)
    assert step < cfg.steps, "the README's command trains on beyond the kept step"
    assert params["wpe"].shape == (cfg.n_ctx, cfg.n_embd) and step == log["history"][-1]["step"]
    assert "copy_gap_far" in log["history"][-1]


def test_a_grown_model_computes_what_the_trained_one_did_and_only_depth_may_grow():
    from speclab.checkpoints import grown

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


def test_an_unreadable_checkpoint_is_not_called_damaged(tmp_path, monkeypatch):
    """Permission denied is not damage: the message must not advise deleting hours of work."""
    from speclab.checkpoints import load_checkpoint

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


def test_a_deeply_nested_checkpoint_record_is_called_damaged(tmp_path):
    """json.loads raises RecursionError, not ValueError, on a record nested this deep."""
    from speclab.checkpoints import load_checkpoint

    checkpoint = tmp_path / "checkpoint.npz"
    np.savez(checkpoint, record=np.array("[" * 100_000 + "]" * 100_000))
    with pytest.raises(ValueError, match="damaged or not a speclab training checkpoint"):
        load_checkpoint(checkpoint, RECIPES["smoke"])


def _forward_with_logits_scaled(params, config, tokens, layer_scaled, head_scaled, factor):
    """GPT-2's forward written out, multiplying one head's attention logits by factor: the
    oracle for scale_attention, which changes the weights instead."""
    from speclab.gpt import ffn, layer_norm, softmax

    n_seq, d_head = len(tokens), config.n_embd // config.n_head
    x = params["wte"][tokens] + params["wpe"][:n_seq]
    future = np.triu(np.ones((n_seq, n_seq), dtype=bool), 1)
    for layer, block in enumerate(params["h"]):
        qkv = layer_norm(x, **block["ln_1"]) @ block["attn"]["c_attn"]["w"]
        qkv = qkv + block["attn"]["c_attn"]["b"]
        heads = []
        for head in range(config.n_head):
            q, k, v = (qkv[:, part * config.n_embd + head * d_head :][:, :d_head]
                       for part in range(3))  # fmt: skip
            logits = q @ k.T / np.sqrt(d_head)
            if (layer, head) == (layer_scaled, head_scaled):
                logits = logits * factor
            heads.append(softmax(np.where(future, -np.inf, logits)) @ v)
        proj = block["attn"]["c_proj"]
        x = x + np.concatenate(heads, axis=1) @ proj["w"] + proj["b"]
        x = x + ffn(layer_norm(x, **block["ln_2"]), **block["mlp"])
    return layer_norm(x, **params["ln_f"]) @ params["wte"].T


def test_scale_attention_multiplies_one_heads_logits_and_leaves_the_weights_given_alone():
    from speclab.checkpoints import scale_attention

    config = GPTConfig(n_layer=2, n_head=2, n_embd=16, n_ctx=32)
    rng = np.random.default_rng(5)
    params = init_params(config, rng, dtype=np.float64)
    for block in params["h"]:  # attention that depends on content: not an initial model
        block["attn"]["c_attn"]["w"] += rng.standard_normal((16, 48))
        block["attn"]["c_attn"]["b"] += rng.standard_normal(48)
    before = {k: v.copy() for k, v in flatten(params).items()}
    tokens = rng.integers(0, 256, size=12)
    for layer, head, factor in ((1, 1, 3.0), (0, 0, 0.5)):
        scaled = scale_attention(params, config.n_head, {(layer, head): factor})
        expected = _forward_with_logits_scaled(params, config, tokens, layer, head, factor)
        np.testing.assert_allclose(forward(scaled, config, tokens), expected, atol=1e-10)
        assert not np.allclose(expected, forward(params, config, tokens))  # it did change
    for name, value in flatten(params).items():  # the weights given are not modified
        np.testing.assert_array_equal(value, before[name])
    same = scale_attention(params, config.n_head, {(0, 1): 1.0})
    np.testing.assert_array_equal(forward(same, config, tokens), forward(params, config, tokens))
    for bad, message in (({(2, 0): 2.0}, "does not exist"), ({(0, 2): 2.0}, "does not exist"),
                         ({(0, 0): 0.0}, "above 0"), ({(0, 0): float("nan")}, "above 0")):  # fmt: skip
        with pytest.raises(ValueError, match=message):
            scale_attention(params, config.n_head, bad)


# --- edges a mutation audit found untested -----------------------------------------------


def a_saved_checkpoint(tmp_path, recipe, running=None):
    from dataclasses import asdict

    from speclab.checkpoints import save_checkpoint
    from speclab.weights import flatten, init_params

    params = init_params(recipe.model_config, np.random.default_rng(0))
    state = {key: {n: np.zeros_like(v) for n, v in flatten(params).items()} for key in "mv"}
    log = {"config": asdict(recipe), "history": [], "seconds": 0.0}
    if running is not None:
        log["running"] = running
    path = tmp_path / "checkpoint.npz"
    save_checkpoint(path, params, state, 3, np.random.default_rng(1), recipe, log)
    return path


def test_a_checkpoint_of_another_context_is_another_recipe_not_a_damaged_file(tmp_path):
    """--init-from a checkpoint of another n_ctx: the message names the recipe's n_ctx and
    does not call the file damaged (whose advice is to delete it)."""
    from dataclasses import replace

    from speclab.checkpoints import load_checkpoint
    from speclab.recipe import RECIPES

    recipe = RECIPES["smoke"]
    path = a_saved_checkpoint(tmp_path, recipe)
    with pytest.raises(ValueError) as refused:
        load_checkpoint(path, replace(recipe, n_ctx=recipe.n_ctx * 2), recipe_may_change=True)
    said = str(refused.value)
    assert "another recipe" in said and "n_ctx" in said and "damaged" not in said


def test_running_means_that_are_not_numbers_are_refused(tmp_path):
    from speclab.checkpoints import load_checkpoint
    from speclab.recipe import RECIPES

    path = a_saved_checkpoint(tmp_path, RECIPES["smoke"], {"loss": float("nan")})
    with pytest.raises(ValueError, match="running means are not numbers"):
        load_checkpoint(path, RECIPES["smoke"])


def test_training_from_a_weights_file_starts_adamw_empty(tmp_path):
    from speclab.checkpoints import start_from_weights
    from speclab.recipe import RECIPES
    from speclab.weights import init_params, save

    recipe = RECIPES["smoke"]
    save(
        tmp_path / "w.npz",
        init_params(recipe.model_config, np.random.default_rng(0)),
        recipe.model_config,
    )
    _, state, step, _, _ = start_from_weights(tmp_path / "w.npz", recipe, recipe.model_config)
    assert step == 0 and all(not v.any() for key in "mv" for v in state[key].values())


def _record_rewritten(path, change):
    """The checkpoint at path with change(text) applied to its JSON record's text."""
    with np.load(path, allow_pickle=False) as archive:
        arrays = {k: archive[k] for k in archive.files if k != "record"}
        text = str(archive["record"])
    np.savez(path, **arrays, record=np.array(change(text)))


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        # json.loads reads 1e400 as infinity: int() raised OverflowError, a traceback
        (lambda t: t.replace('"step": 3', '"step": 1e400'), "cannot convert float infinity"),
        # the run appends to these: AttributeError in record_changes, after the checks
        (lambda t: t.replace('"history": []', '"history": [], "recipe_changes": "x"'),
         "recipe_changes is not a list"),
        (lambda t: t.replace('"history": []', '"history": [], "earlier_teachers": {}'),
         "earlier_teachers is not a list"),
        # offered back as `--set lr='x'`, or as no --set at all for a field no recipe has
        (lambda t: t.replace('"lr": 0.003', '"lr": "x"'), "its recipe's lr is 'x', not a number"),
        (lambda t: t.replace('"n_layer": 1', '"n_layer": 1.5'), "n_layer is 1.5, not a whole"),
        (lambda t: t.replace('"n_layer": 1', '"n_layer": true'), "n_layer is True, not a whole"),
    ],
)  # fmt: skip
def test_a_damaged_record_is_named_as_damage_not_a_traceback_or_a_recipe(tmp_path, change, reason):
    from speclab.checkpoints import load_checkpoint

    recipe = RECIPES["smoke"]
    path = a_saved_checkpoint(tmp_path, recipe)
    load_checkpoint(path, recipe)  # whole before the change
    _record_rewritten(path, change)
    for may_change in (False, True):
        with pytest.raises(ValueError) as refused:
            load_checkpoint(path, recipe, recipe_may_change=may_change)
        said = str(refused.value)
        assert "is damaged or not a speclab training checkpoint" in said and reason in said, said


def test_a_recipe_field_of_another_version_is_not_called_damage(tmp_path):
    """A checkpoint from another version of speclab may be whole: the damaged message's
    advice (delete it) must not reach it."""
    from speclab.checkpoints import load_checkpoint

    recipe = RECIPES["smoke"]
    path = a_saved_checkpoint(tmp_path, recipe)
    _record_rewritten(path, lambda t: t.replace('"n_layer": 1', '"n_layer": 1, "mood": 1'))
    with pytest.raises(ValueError) as refused:
        load_checkpoint(path, recipe)
    said = str(refused.value)
    assert "a recipe field this version of speclab does not know, 'mood'" in said, said
    assert "damaged" not in said and "delete" not in said
