import json
import zipfile

import numpy as np
import pytest

from speclab.gpt import GPTConfig, forward
from speclab.weights import flatten, init_params, load, param_shapes, save

CONFIG = GPTConfig(n_layer=2, n_head=2, n_embd=8, n_ctx=16)


@pytest.fixture
def saved(tmp_path):
    params = init_params(CONFIG, np.random.default_rng(0))
    path = tmp_path / "m.npz"
    save(path, params, CONFIG, {"note": "test"})
    return path, params


def test_round_trip_names_and_forward(saved):
    path, params = saved
    with np.load(path, allow_pickle=False) as archive:
        names = set(archive.files)
    assert names == set(param_shapes(CONFIG)) | {"speclab_meta"}
    assert "h.1.attn.c_attn.w" in names and "ln_f.b" in names
    model = load(path)
    assert model.config == CONFIG and model.meta["note"] == "test"
    assert model.params["h"][0]["attn"]["c_attn"]["w"].shape == (8, 24)  # [in, out]
    assert model.params["wte"].dtype == np.float64
    expected = forward({k: v for k, v in params.items()} | {}, CONFIG, [1, 2, 3])  # float32 params
    np.testing.assert_allclose(
        forward(model.params, CONFIG, [1, 2, 3]), expected, rtol=1e-4, atol=1e-5
    )


def rewrite(path, change):
    with np.load(path, allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    change(arrays)
    np.savez(path, **arrays)


def test_missing_extra_and_misshapen_keys(saved):
    path, _ = saved
    rewrite(path, lambda a: a.pop("h.1.mlp.c_fc.b"))
    with pytest.raises(ValueError, match="h.1.mlp.c_fc.b"):
        load(path)


def test_extra_key(saved):
    path, _ = saved
    rewrite(path, lambda a: a.update({"h.2.ln_1.g": np.ones(8)}))
    with pytest.raises(ValueError, match="unexpected parameter 'h.2.ln_1.g'"):
        load(path)


def test_wrong_shape_and_dtype(saved):
    path, _ = saved
    rewrite(path, lambda a: a.update({"wpe": np.ones((15, 8))}))
    with pytest.raises(ValueError, match="'wpe' has shape"):
        load(path)
    rewrite(path, lambda a: a.update({"wpe": np.ones((16, 8), dtype=np.int32)}))
    with pytest.raises(ValueError, match="dtype"):
        load(path)


def test_truncated_and_foreign_files(saved, tmp_path):
    path, _ = saved
    data = path.read_bytes()
    broken = tmp_path / "broken.npz"
    broken.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="not a readable"):
        load(broken)
    text = tmp_path / "text.npz"
    text.write_text("hello")
    with pytest.raises(ValueError, match="not a readable"):
        load(text)
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "nothing.npz")
    no_meta = tmp_path / "no_meta.npz"
    np.savez(no_meta, **flatten(init_params(CONFIG, np.random.default_rng(0))))
    with pytest.raises(ValueError, match="speclab_meta"):
        load(no_meta)


def test_no_pickle_needed(saved):
    path, _ = saved
    with zipfile.ZipFile(path) as archive:
        meta = np.lib.format.read_array(archive.open("speclab_meta.npy"), allow_pickle=False)
    assert json.loads(str(meta))["config"]["n_embd"] == 8
