import io
import json
import os
import time
import tracemalloc
import zipfile
import zlib

import numpy as np
import pytest

from speclab.gpt import GPTConfig, forward
from speclab.weights import Model, flatten, init_params, load, param_shapes, random_model, save

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
    with pytest.raises(FileNotFoundError, match="no weights file at"):
        load(tmp_path / "nothing.npz")
    loop = tmp_path / "loop.npz"  # a loop of links was "no weights file", where there is one
    loop.symlink_to(loop)
    with pytest.raises(FileNotFoundError, match="is a link that leads to no file"):
        load(loop)
    no_meta = tmp_path / "no_meta.npz"
    np.savez(no_meta, **flatten(init_params(CONFIG, np.random.default_rng(0))))
    with pytest.raises(ValueError, match="speclab_meta"):
        load(no_meta)


def test_no_pickle_needed(saved):
    path, _ = saved
    with zipfile.ZipFile(path) as archive:
        meta = np.lib.format.read_array(archive.open("speclab_meta.npy"), allow_pickle=False)
    assert json.loads(str(meta))["config"]["n_embd"] == 8


# --- hostile files (issue 13, item 6): refused from the zip directory and the .npy headers,
# before any array is read, fast and in bounded memory ---------------------------------------


def rewrite_members(path, members: dict):
    """Replace or add raw zip members {"name.npy": bytes}, keeping the others as they are."""
    with zipfile.ZipFile(path) as archive:
        kept = {info.filename: archive.read(info) for info in archive.infolist()}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in (kept | members).items():
            archive.writestr(name, data)


def npy_header(shape, descr="<f4") -> bytes:
    """The bytes of a version 1.0 .npy header that claims an array of this shape."""
    buffer = io.BytesIO()
    header = {"descr": descr, "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue()


def with_config(path, **changes):
    """Rewrite only the config in speclab_meta (the arrays stay as they are)."""
    with np.load(path, allow_pickle=False) as archive:
        record = json.loads(str(archive["speclab_meta"]))
    record["config"] |= changes
    buffer = io.BytesIO()
    np.save(buffer, np.array(json.dumps(record)))
    rewrite_members(path, {"speclab_meta.npy": buffer.getvalue()})


def load_quickly(path, match):
    """load(path) must raise ValueError matching `match` within a second, using little memory."""
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(ValueError, match=match):
            load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < 1.0
    assert peak < 8 * 2**20, f"peak {peak / 2**20:.0f} MB"


def test_a_plain_npy_file_is_named(tmp_path):
    path = tmp_path / "wte.npy"
    np.save(path, np.ones((256, 8), dtype=np.float32))
    load_quickly(path, "a single .npy array, not an .npz")
    renamed = tmp_path / "model.npz"  # the name does not matter, the contents do
    path.rename(renamed)
    load_quickly(renamed, "a single .npy array")


@pytest.mark.parametrize("member", ["wpe", "speclab_meta"])
def test_an_absurd_header_is_refused_before_reading(saved, member):
    path, _ = saved
    rewrite_members(path, {f"{member}.npy": npy_header((2**37,)) + b"\0" * 64})
    load_quickly(path, member)


@pytest.mark.skipif(np.dtype(np.longdouble).itemsize <= 8, reason="longdouble is float64 here")
@pytest.mark.parametrize("n_ctx", [16, 1024])  # wpe within the size check's slack, or beyond it
def test_weights_in_long_double_are_named_by_their_dtype(tmp_path, n_ctx):
    """np.longdouble weights (16 bytes a number on x86) were refused as "a config that does
    not match the arrays, a damaged file or a zip bomb" by the size check, or loaded where
    they were small enough to pass it."""
    config = GPTConfig(n_layer=1, n_head=2, n_embd=8, n_ctx=n_ctx)
    path = tmp_path / "m.npz"
    save(path, init_params(config, np.random.default_rng(0)), config, {})
    rewrite(path, lambda a: a.update({"wpe": a["wpe"].astype(np.longdouble)}))
    with pytest.raises(ValueError, match="'wpe' has dtype float128 \\(16 bytes a number\\)"):
        load(path)


def test_a_header_with_the_wrong_dtype_or_a_pickle_is_refused(saved):
    path, _ = saved
    rewrite_members(path, {"wpe.npy": npy_header((16, 8), descr="|O") + b"\0" * 64})
    load_quickly(path, "'wpe' has dtype object")
    rewrite_members(path, {"speclab_meta.npy": npy_header((3,), descr="<f8") + b"\0" * 24})
    load_quickly(path, "speclab_meta")


@pytest.fixture(scope="module")
def zeros_deflated():
    """64 MB of zero bytes, deflated to about 64 KB: the payload of a zip bomb."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    chunk = bytes(2**20)
    data = b"".join(compressor.compress(chunk) for _ in range(64)) + compressor.flush()
    return data, 64 * 2**20, zlib.crc32(bytes(64 * 2**20))


def add_bomb(path, name, zeros):
    """Add a member `name` that inflates to 64 MB of zeros (written without inflating it)."""
    data, size, crc = zeros
    info = zipfile.ZipInfo(name)
    info.compress_type = zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(path, "a") as archive:
        info.CRC, info.compress_size, info.file_size = crc, len(data), size
        archive.fp.seek(archive.start_dir)
        info.header_offset = archive.fp.tell()
        archive.fp.write(info.FileHeader())
        archive.fp.write(data)
        archive.start_dir = archive.fp.tell()
        archive.filelist.append(info)
        archive.NameToInfo[name] = info
        archive._didModify = True


def test_a_zip_bomb_under_an_extra_key_is_never_inflated(saved, zeros_deflated):
    path, _ = saved
    add_bomb(path, "bomb.npy", zeros_deflated)
    load_quickly(path, "unexpected parameter 'bomb'")


@pytest.mark.parametrize("member", ["wpe.npy", "speclab_meta.npy"])
def test_a_zip_bomb_under_a_real_key_is_refused_by_its_size(saved, zeros_deflated, member):
    path, _ = saved
    with zipfile.ZipFile(path) as archive:
        kept = {i.filename: archive.read(i) for i in archive.infolist() if i.filename != member}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in kept.items():
            archive.writestr(name, data)
    add_bomb(path, member, zeros_deflated)
    load_quickly(path, f"{member.removesuffix('.npy')}.*MB")


def test_members_that_are_not_arrays_are_refused(saved):
    path, _ = saved
    rewrite_members(path, {"notes.txt": b"hello"})
    load_quickly(path, "'notes.txt'")


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"n_layer": 10**8}, "n_layer = 100000000"),
        ({"n_embd": 10**9, "n_head": 1}, "n_embd = 1000000000"),
        ({"n_ctx": 10**9}, "n_ctx = 1000000000"),
        ({"n_vocab": 300}, "n_vocab is 300.*256"),
        ({"n_vocab": 255}, "n_vocab is 255"),
        ({"n_layer": 2.5}, "n_layer must be a positive integer"),
        ({"n_layer": "2"}, "n_layer must be a positive integer"),
        ({"n_heads": 2}, "config"),
    ],
)
def test_an_absurd_config_is_refused_before_any_array(saved, changes, match):
    path, _ = saved
    with_config(path, **changes)
    load_quickly(path, match)


def test_a_meta_that_is_not_a_record_is_refused(saved):
    path, _ = saved
    for record, match in (
        ("[1, 2]", "speclab_meta holds no config"),  # no Python internals in the message
        ('"text"', "speclab_meta holds no config"),
        ('{"config": null}', "speclab_meta holds no config"),
        ("{", "speclab_meta is not a JSON record"),
        ("[" * 100_000, "speclab_meta is not a JSON record"),
    ):
        buffer = io.BytesIO()
        np.save(buffer, np.array(record))
        rewrite_members(path, {"speclab_meta.npy": buffer.getvalue()})
        load_quickly(path, match)


def test_a_damaged_member_names_itself(saved):
    path, _ = saved
    with zipfile.ZipFile(path) as archive:
        data = archive.read("wpe.npy")
    rewrite_members(path, {"wpe.npy": data[:-8]})  # the header says more than there is
    load_quickly(path, "'wpe'.*truncated")
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("wpe.npy")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    raw[start + 40 : start + 48] = bytes(8)  # compressed bytes changed: a CRC or inflate error
    path.write_bytes(bytes(raw))
    load_quickly(path, "'wpe'")


def test_what_is_not_a_regular_file_is_named(tmp_path):
    fifo = tmp_path / "pipe.npz"
    os.mkfifo(fifo)
    load_quickly(fifo, "not a regular file")
    load_quickly(tmp_path, "not a regular file")


def test_the_shipped_models_still_load():
    from speclab.weights import load_draft, load_target

    for model in (load_target(), load_draft()):
        assert model.config.n_vocab == 256 and model.meta["config"]["n_layer"] >= 1


def test_parameter_count_is_what_param_shapes_holds():
    from speclab.weights import parameter_count

    for config in (CONFIG, GPTConfig(4, 4, 128, 1024), GPTConfig(1, 2, 64, 32)):
        assert parameter_count(config) == sum(np.prod(s) for s in param_shapes(config).values())


def test_describe_says_shape_training_and_loss():
    config = GPTConfig(n_layer=2, n_head=2, n_embd=8, n_ctx=16)
    model = random_model(config, np.random.default_rng(0))
    assert model.describe() == (
        "2 layers of width 8 (2 heads), context 16 bytes, vocabulary 256 bytes; untrained"
    )
    trained = Model(config, model.params, {"trained_steps": 12, "val_bits_per_byte": 1.736})
    assert trained.describe().endswith("; 12 training steps, 1.74 bits per byte on held-out files")
    went_on = Model(config, model.params, trained.meta | {"started_from": {"trained_steps": 50},
                                                          "teacher": {"sha256": "0" * 64}})  # fmt: skip
    assert went_on.describe().endswith(
        "; 62 training steps (50 of the model it started from, then 12 learning from a "
        "target), 1.74 bits per byte on held-out files"
    )
    chain = {"trained_steps": 30, "teacher": {"sha256": "0" * 64},
             "started_from": {"trained_steps": 50}}  # fmt: skip
    went_on_again = Model(config, model.params, went_on.meta | {"started_from": chain})
    assert went_on_again.describe().endswith(
        "; 92 training steps (50 of the first model, then 30 + 12 learning from a target), "
        "1.74 bits per byte on held-out files"
    )
    # runs learning from different targets, or from none, stay apart
    other = {"trained_steps": 30, "teacher": {"sha256": "1" * 64}, "started_from": {
        "trained_steps": 20, "started_from": {"trained_steps": 50}}}  # fmt: skip
    went_on_elsewhere = Model(config, model.params, went_on.meta | {"started_from": other})
    assert went_on_elsewhere.describe().endswith(
        "; 112 training steps (50 of the first model, then 20, then 30 learning from a target, "
        "then 12 learning from another target), 1.74 bits per byte on held-out files"
    )


def test_weights_with_nan_name_the_file(tmp_path):
    """Two files given (a target and a draft): the message must say which one is broken."""
    params = init_params(CONFIG, np.random.default_rng(0))
    params["wpe"][0, 0] = np.nan
    path = tmp_path / "broken-draft.npz"
    with pytest.raises(ValueError, match="contains NaN"):
        save(path, params, CONFIG)  # save refuses it too, so write one by hand below
    good = tmp_path / "good.npz"
    save(good, init_params(CONFIG, np.random.default_rng(0)), CONFIG)
    with np.load(good) as archive:
        members = {name: archive[name] for name in archive.files}
    members["wpe"] = params["wpe"]
    np.savez(path, **members)
    with pytest.raises(ValueError, match=r"broken-draft\.npz: parameter 'wpe' contains NaN"):
        load(path)


def test_a_config_smaller_than_its_arrays_is_named_as_such(tmp_path):
    config = GPTConfig(n_layer=1, n_head=2, n_embd=16, n_ctx=4096)  # wpe: 256 KB or more
    path = tmp_path / "m.npz"
    save(path, init_params(config, np.random.default_rng(0)), config)
    with_config(path, n_ctx=2)
    load_quickly(path, r"its config gives wpe the shape \(2, .*a config that does not match")


def test_a_training_checkpoint_is_named_as_one():
    """data/weights/checkpoints/ sits beside the weights: loading it says what it is."""
    from speclab.paths import weights_dir

    with pytest.raises(ValueError, match="target.npz: a training checkpoint, not a weights file"):
        load(weights_dir() / "checkpoints" / "target.npz")


def test_two_writers_of_one_file_never_share_a_temporary_file(tmp_path, monkeypatch):
    """Two runs with the same --out: while one writes, the other saves too. With one fixed
    temporary name the second rename took the first's file away (FileNotFoundError) and a
    reader could find a half-written archive; each writer now has a name of its own."""
    path = tmp_path / "shared.npz"
    first = init_params(CONFIG, np.random.default_rng(1))
    second = init_params(CONFIG, np.random.default_rng(2))
    real_savez = np.savez_compressed
    nested = []

    def savez_while_another_saves(file, **arrays):
        real_savez(file, **arrays)
        if not nested:  # the other run saves between this one's write and its rename
            nested.append(file)
            save(path, second, CONFIG, {"writer": 2})

    monkeypatch.setattr(np, "savez_compressed", savez_while_another_saves)
    save(path, first, CONFIG, {"writer": 1})
    model = load(path)  # the later rename wins, and the file is whole
    assert model.meta["writer"] == 1
    np.testing.assert_array_equal(model.params["wte"], first["wte"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared.npz"]  # no temporary left
    assert (path.stat().st_mode & 0o777) == 0o666 & ~_umask()  # as open() would make it


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_steps_label_names_the_last_run_and_the_whole():
    """Scripts printed 'step 3000' for the shipped draft, trained 11,000 steps in three runs."""
    import re

    from speclab.weights import load_draft, steps_label

    assert steps_label({}) == "untrained"
    assert steps_label({"trained_steps": 500}) == "step 500"
    chain = {"trained_steps": 3, "started_from": {"trained_steps": 5, "started_from": {}}}
    assert steps_label(chain) == "step 3 of its last run, 8 in all"
    draft = load_draft()
    in_all = int(re.search(r"(\d+) training steps", draft.describe()).group(1))
    assert steps_label(draft.meta).endswith(f", {in_all} in all")


def test_a_file_name_given_as_the_dtype_is_named():
    """load_target("target") had ended in numpy's "data type 'target' not understood"."""
    from speclab.weights import load_target

    with pytest.raises(ValueError, match=r"got 'target'; to read a file, speclab.weights.load"):
        load_target("target")
    with pytest.raises(ValueError, match="must be a floating type"):
        load_target(int)


def test_a_value_float32_cannot_hold_is_refused_when_loading_as_float32(saved):
    """The check for NaN and infinity ran before the cast, so 1e300 came through as infinity:
    a draft that never agreed, or a training run 'diverged at step 1' (lower the lr)."""
    path, _ = saved

    def huge(arrays):  # a float64 file, as float64 weights are saved
        arrays["wte"] = arrays["wte"].astype(np.float64)
        arrays["wte"][0, 0] = 1e300

    rewrite(path, huge)
    assert load(path, dtype=np.float64).params["wte"][0, 0] == 1e300
    with pytest.raises(ValueError, match=r"parameter 'wte' holds values too large for float32"):
        load(path, dtype=np.float32)


def test_describe_passes_over_a_hand_made_records_values_that_are_not_numbers(saved):
    """load() keeps the record as it is; the lesson's one-line description had raised on a
    string where it formats a number."""
    path, _ = saved
    model = load(path)
    model.meta.update(val_bits_per_byte="7.1", trained_steps="5", started_from={"x": 1})
    said = model.describe()
    assert said.endswith("; untrained") and "7.1" not in said
    model.meta.update(val_bits_per_byte=1.5, trained_steps=40)
    assert model.describe().endswith("; 40 training steps, 1.50 bits per byte on held-out files")
