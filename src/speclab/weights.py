"""Model weights on disk: GPT-2 checkpoint names in a `.npz`, with the config beside them.

Used by every lesson from 04 on. A file holds one array per parameter, named as GPT-2
names them, flattened with dots (`wte`, `wpe`, `h.0.ln_1.g`, `h.0.attn.c_attn.w`, ...,
`ln_f.b`; linear weights [in, out]), plus one JSON string `speclab_meta` with the config
(n_layer, n_head, n_embd, n_ctx, n_vocab) and how the weights were trained. Files are
loaded with `allow_pickle=False` and every key, shape and dtype is checked against the
config, so a damaged or foreign file fails with a message that names the problem.
"""

import hashlib
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from speclab.gpt import GPTConfig

META_KEY = "speclab_meta"


@dataclass(frozen=True)
class Model:
    config: GPTConfig
    params: dict  # nested GPT-2 names: params["h"][0]["attn"]["c_attn"]["w"]
    meta: dict = field(default_factory=dict)  # training recipe, corpus, validation loss
    name: str = ""


def param_shapes(config: GPTConfig) -> dict[str, tuple[int, ...]]:
    """Flat name -> shape for every parameter a GPT-2 of this config has."""
    c = config.n_embd
    shapes = {"wte": (config.n_vocab, c), "wpe": (config.n_ctx, c)}
    for i in range(config.n_layer):
        shapes |= {
            f"h.{i}.ln_1.g": (c,), f"h.{i}.ln_1.b": (c,),
            f"h.{i}.attn.c_attn.w": (c, 3 * c), f"h.{i}.attn.c_attn.b": (3 * c,),
            f"h.{i}.attn.c_proj.w": (c, c), f"h.{i}.attn.c_proj.b": (c,),
            f"h.{i}.ln_2.g": (c,), f"h.{i}.ln_2.b": (c,),
            f"h.{i}.mlp.c_fc.w": (c, 4 * c), f"h.{i}.mlp.c_fc.b": (4 * c,),
            f"h.{i}.mlp.c_proj.w": (4 * c, c), f"h.{i}.mlp.c_proj.b": (c,),
        }  # fmt: skip
    return shapes | {"ln_f.g": (c,), "ln_f.b": (c,)}


def flatten(params: dict, prefix: str = "") -> dict[str, np.ndarray]:
    """Nested dict (lists for `h`) -> {"h.0.attn.c_attn.w": array, ...}."""
    flat = {}
    items = enumerate(params) if isinstance(params, list) else params.items()
    for key, value in items:
        name = f"{prefix}{key}"
        if isinstance(value, (dict, list)):
            flat |= flatten(value, name + ".")
        else:
            flat[name] = value
    return flat


def unflatten(flat: dict[str, np.ndarray], n_layer: int) -> dict:
    """{"h.0.attn.c_attn.w": array, ...} -> nested dict with `h` a list of blocks."""
    params = {"h": [{} for _ in range(n_layer)]}
    for name, value in flat.items():
        parts = name.split(".")
        node = params["h"][int(parts[1])] if parts[0] == "h" else params
        for part in parts[2:-1] if parts[0] == "h" else parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return params


def init_params(config: GPTConfig, rng: np.random.Generator, dtype=np.float32) -> dict:
    """GPT-2's initialisation: N(0, 0.02), residual projections scaled by 1/sqrt(2 n_layer)."""
    flat = {}
    for name, shape in param_shapes(config).items():
        if name.endswith(".g"):
            flat[name] = np.ones(shape, dtype=dtype)
        elif name.endswith(".b"):
            flat[name] = np.zeros(shape, dtype=dtype)
        else:
            std = 0.02 / np.sqrt(2 * config.n_layer) if name.endswith("c_proj.w") else 0.02
            flat[name] = (rng.standard_normal(shape) * std).astype(dtype)
    return unflatten(flat, config.n_layer)


def random_model(config: GPTConfig, rng: np.random.Generator, dtype=np.float64) -> Model:
    """An untrained model: for shape and timing experiments (lesson 04's width slider)."""
    params = init_params(config, rng, dtype=dtype)
    return Model(config, params, {"trained": False}, name="random")


def save(path, params: dict, config: GPTConfig, meta: dict | None = None, dtype=np.float32):
    """Write params (nested) and config to an .npz; meta is any JSON-able training record."""
    flat = {name: np.asarray(value, dtype=dtype) for name, value in flatten(params).items()}
    check_params(flat, config)
    record = {"config": config.__dict__ | {}, **(meta or {})}
    record["config"] = {key: int(value) for key, value in record["config"].items()}
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(tmp, **flat, **{META_KEY: np.array(json.dumps(record))})
    tmp.replace(path)  # never leave a half-written file under the real name


def check_params(flat: dict[str, np.ndarray], config: GPTConfig):
    """Raise ValueError naming the first missing, extra or misshapen parameter."""
    expected = param_shapes(config)
    missing = sorted(set(expected) - set(flat))
    extra = sorted(set(flat) - set(expected))
    if missing:
        raise ValueError(f"weights file lacks parameter {missing[0]!r} ({len(missing)} missing)")
    if extra:
        raise ValueError(f"weights file has unexpected parameter {extra[0]!r} for this config")
    for name, shape in expected.items():
        array = flat[name]
        if array.shape != shape:
            raise ValueError(f"parameter {name!r} has shape {array.shape}, config says {shape}")
        if not np.issubdtype(array.dtype, np.floating):
            raise ValueError(f"parameter {name!r} has dtype {array.dtype}, expected floating point")
        if not np.all(np.isfinite(array)):
            raise ValueError(f"parameter {name!r} contains NaN or infinity")


def load(path, dtype=np.float64) -> Model:
    """Read and validate an .npz written by `save`; params are cast to dtype (float64 for decoding)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no weights file at {path}")
    try:
        with np.load(path, allow_pickle=False) as archive:
            flat = {name: archive[name] for name in archive.files}
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as error:
        raise ValueError(f"{path.name} is not a readable .npz weights file ({error})") from None
    if META_KEY not in flat:
        raise ValueError(f"{path.name} has no {META_KEY!r} entry: not a speclab weights file")
    try:
        meta = json.loads(str(flat.pop(META_KEY)))
        config = GPTConfig(**meta["config"])
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise ValueError(f"{path.name}: cannot read the config in {META_KEY} ({error})") from None
    check_params(flat, config)
    flat = {name: array.astype(dtype) for name, array in flat.items()}
    return Model(config, unflatten(flat, config.n_layer), meta, name=path.stem)


def file_sha256(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def load_target(dtype=np.float64) -> Model:
    """The shipped target model, data/weights/target.npz."""
    from speclab.paths import weights_dir

    return load(weights_dir() / "target.npz", dtype=dtype)


def load_draft(dtype=np.float64) -> Model:
    """The shipped draft model, data/weights/draft.npz."""
    from speclab.paths import weights_dir

    return load(weights_dir() / "draft.npz", dtype=dtype)
