"""Model weights on disk: GPT-2 checkpoint names in a `.npz`, with the config beside them.

Used by every lesson from 04 on. A file holds one array per parameter, named as GPT-2
names them, flattened with dots (`wte`, `wpe`, `h.0.ln_1.g`, `h.0.attn.c_attn.w`, ...,
`ln_f.b`; linear weights [in, out]), plus one JSON string `speclab_meta` with the config
(n_layer, n_head, n_embd, n_ctx, n_vocab) and how the weights were trained.

`load` trusts nothing in the file: it reads the zip directory first (member names, the
sizes they declare), then the config (n_vocab must be the tokenizer's 256, sizes within
`MAX_CONFIG` and `MAX_PARAMETERS`), then each array's .npy header (shape, dtype) before its
data, and never unpickles. So a damaged, foreign or hostile file (a plain .npy, a header
claiming 2^37 floats, a zip bomb) fails fast, in bounded memory, with a ValueError that
names the problem. Left out: OpenAI's TensorFlow checkpoints and Hugging Face's files (the
names are GPT-2's, the format is numpy's), and any layout but one array per parameter.
"""

import hashlib
import json
import math
import os
import tempfile
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from speclab.gpt import GPTConfig
from speclab.tokenizer import N_VOCAB

META_KEY = "speclab_meta"


@dataclass(frozen=True)
class Model:
    config: GPTConfig
    params: dict  # nested GPT-2 names: params["h"][0]["attn"]["c_attn"]["w"]
    meta: dict = field(default_factory=dict)  # training recipe, corpus, validation loss
    name: str = ""

    def describe(self) -> str:
        """One line for a lesson: shape, context, training steps, held-out bits per byte."""
        config, bits = self.config, self.meta.get("val_bits_per_byte")
        runs = []  # (steps, sha256 of the target it learned from or None), its own run first
        record = self.meta
        while isinstance(record, dict) and _count(record.get("trained_steps")):  # --init-from
            teacher = record.get("teacher")
            taught_by = (teacher.get("sha256") or "?") if isinstance(teacher, dict) else teacher
            runs.append((record["trained_steps"], taught_by or None))
            record = record.get("started_from")
        trained = f"; {runs[0][0]} training steps" if runs else "; untrained"
        if len(runs) > 1:  # the runs it went on from came first
            first, *later = reversed(runs)
            groups = []  # runs in a row that learned from the same target (or none) are one
            for steps, taught_by in later:
                if groups and groups[-1][0] == taught_by:
                    groups[-1][1].append(steps)
                else:
                    groups.append((taught_by, [steps]))
            start = "of the model it started from" if len(later) == 1 else "of the first model"
            teachers, taught = [], []
            for taught_by, parts in groups:
                text = " + ".join(map(str, parts))
                if taught_by is not None:
                    which = "the same" if taught_by in teachers else "another" if teachers else "a"
                    text += f" learning from {which} target"
                    teachers.append(taught_by)
                taught.append(text)
            trained = (f"; {sum(steps for steps, _ in runs)} training steps ({first[0]} {start}, "
                       f"then {', then '.join(taught)})")  # fmt: skip
        return (
            f"{config.n_layer} layers of width {config.n_embd} ({config.n_head} heads), "
            f"context {config.n_ctx} bytes, vocabulary {config.n_vocab} bytes"
            + trained
            + (f", {bits:.2f} bits per byte on held-out files" if _number(bits) else "")
        )


def _count(value) -> bool:
    """Whether a record's value is a count of steps (a hand-made file may hold anything)."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def steps_label(meta: dict) -> str:
    """'step 29000', or for weights that went on from others' (--init-from) 'step 3000 of its
    last run, 11000 in all': a script's header must not pass the last run off as the whole."""
    steps, record = [], meta
    while isinstance(record, dict) and record.get("trained_steps"):
        steps.append(record["trained_steps"])
        record = record.get("started_from")
    if not steps:
        return "untrained"
    if len(steps) == 1 or not all(isinstance(n, int) for n in steps):
        return f"step {steps[0]}"
    return f"step {steps[0]} of its last run, {sum(steps)} in all"


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
    """An untrained model: for shape and timing experiments (lesson 04b's width slider)."""
    params = init_params(config, rng, dtype=dtype)
    return Model(config, params, {"trained": False}, name="random")


def save(path, params: dict, config: GPTConfig, meta: dict | None = None, dtype=np.float32):
    """Write params (nested) and config to an .npz; meta is any JSON-able training record."""
    flat = {name: np.asarray(value, dtype=dtype) for name, value in flatten(params).items()}
    check_params(flat, config)
    record = {"config": config.__dict__ | {}, **(meta or {})}
    record["config"] = {key: int(value) for key, value in record["config"].items()}
    path = Path(path)
    tmp = temporary_beside(path)
    try:
        np.savez_compressed(tmp, **flat, **{META_KEY: np.array(json.dumps(record))})
        tmp.replace(path)  # never leave a half-written file under the real name
    except BaseException as error:  # a full disk, a folder in the way, Ctrl-C: no stray .tmp.npz
        tmp.unlink(missing_ok=True)
        raise named(error, path) from None


def named(error: BaseException, path: Path) -> BaseException:
    """An OSError that names no file (np.savez's, on a full disk) as one naming path: a
    message can then tell a file's disk from the standard output's. Anything else as it is."""
    if isinstance(error, OSError) and error.filename is None and error.errno is not None:
        return OSError(error.errno, error.strerror, str(path))  # the same subclass: ENOSPC's
    return error


def temporary_beside(path: Path) -> Path:
    """A new file beside path, named for it, to write into and then rename over it: a name of
    its own (two runs writing one --out never share one), with the permissions open() gives."""
    from speclab.report_files import file_mode

    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp.npz")
    os.close(handle)
    os.chmod(name, file_mode())  # mkstemp's files are private (0600)
    return Path(name)


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


# Limits a weights file must keep before anything is read. Far above what these lessons
# train (the shipped target has 0.96 M parameters), far below what would exhaust memory.
MAX_CONFIG = {"n_layer": 256, "n_head": 256, "n_embd": 16384, "n_ctx": 65536}
MAX_PARAMETERS = 2**28  # 268 M: GPT-2 small's size fits; 2 GB as float64 is the most we load
MAX_META_BYTES = 16 * 2**20  # the config and training record (the shipped ones: 0.25 MB)
NPY_HEADER_BYTES = 2**16  # room for a member's .npy header on top of its data
NPY_MAGIC = b"\x93NUMPY"


def parameter_count(config: GPTConfig) -> int:
    """How many numbers param_shapes(config) holds, without building it."""
    c = config.n_embd
    per_block = 12 * c * c + 13 * c  # attention 4 c^2 + 4 c, MLP 8 c^2 + 5 c, two LayerNorms 4 c
    return (config.n_vocab + config.n_ctx) * c + config.n_layer * per_block + 2 * c


def config_problem(config: GPTConfig) -> str | None:
    """Why speclab will not load a model of this config (None if it will)."""
    if config.n_vocab != N_VOCAB:
        return f"n_vocab is {config.n_vocab}, but the byte tokenizer has {N_VOCAB} tokens"
    for name, most in MAX_CONFIG.items():
        if getattr(config, name) > most:
            return f"{name} = {getattr(config, name)} is above the limit of {most}"
    if parameter_count(config) > MAX_PARAMETERS:
        return f"{parameter_count(config):,} parameters is above the limit of {MAX_PARAMETERS:,}"
    return None


def _open_archive(path: Path) -> zipfile.ZipFile:
    """The zip directory of an .npz; a plain .npy or any other file is named as such."""
    try:
        with path.open("rb") as handle:
            if handle.read(len(NPY_MAGIC)) == NPY_MAGIC:
                raise ValueError(
                    f"{path} is a single .npy array, not an .npz weights file "
                    "(`speclab.weights.save` writes a zip of named arrays)"
                )
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise ValueError(f"{path} is not a readable .npz weights file ({error})") from None


def _members(archive: zipfile.ZipFile) -> dict[str, zipfile.ZipInfo]:
    """{array name: its zip entry}; every entry must be one uniquely named .npy array."""
    members = {}
    for info in archive.infolist():
        name = info.filename.removesuffix(".npy")
        if name == info.filename or info.is_dir():
            raise ValueError(f"unexpected member {info.filename!r}: not an .npy array")
        if name in members:
            raise ValueError(f"member {info.filename!r} appears twice")
        members[name] = info
    if META_KEY not in members:
        if "record" in members and any(name.startswith("param/") for name in members):
            raise ValueError(  # `speclab train`'s resumable state, which sits near the weights
                "a training checkpoint, not a weights file: give the .npz that "
                "`speclab train` exported (--out), or resume training from this one"
            )
        raise ValueError(f"no {META_KEY!r} entry: not a speclab weights file")
    return members


def _check_names_and_sizes(archive, members: dict, config: GPTConfig, itemsize: int = 8):
    """Every parameter present, none extra, none larger than its shape allows (zip bombs)."""
    expected = param_shapes(config)
    names = set(members) - {META_KEY}
    missing, extra = sorted(set(expected) - names), sorted(names - set(expected))
    if missing:
        raise ValueError(f"weights file lacks parameter {missing[0]!r} ({len(missing)} missing)")
    if extra:
        raise ValueError(f"weights file has unexpected parameter {extra[0]!r} for this config")
    for name, shape in expected.items():
        most = math.prod(shape) * itemsize + NPY_HEADER_BYTES
        if members[name].file_size > most:
            _refuse_wide_numbers(archive, members[name], name)
        _check_size(members[name], name, most, f"its config gives {name} the shape {shape}")
    return expected


def _refuse_wide_numbers(archive, info, name: str):
    """An array too large because its numbers are wider than float64 (numpy's longdouble, say)
    is named as such; only its .npy header is read, which numpy bounds to 10,000 bytes."""
    try:
        with archive.open(info) as handle:
            _, _, dtype = _read_header(handle)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError):
        return  # the size check says what it can
    _check_width(name, dtype)


def _check_width(name: str, dtype: np.dtype, itemsize: int = 8):
    if dtype.kind == "f" and dtype.itemsize > itemsize:
        raise ValueError(
            f"parameter {name!r} has dtype {dtype} ({dtype.itemsize} bytes a number): speclab "
            "reads weights of float64 or narrower (save them with .astype(np.float64))"
        )


def _check_size(info: zipfile.ZipInfo, name: str, most: int, why: str = ""):
    """The size the zip directory declares, checked before the member is inflated."""
    if info.file_size > most:
        because = f" ({why})" if why else ""
        raise ValueError(
            f"{name!r} claims {info.file_size / 2**20:.1f} MB, more than the "
            f"{most / 2**20:.1f} MB it can need{because}: a config that does not match the "
            "arrays, a damaged file or a zip bomb"
        )
    if info.flag_bits & 0x1:
        raise ValueError(f"{name!r} is encrypted")


def _read_array(archive, info, name: str, shape: tuple | None, kind: str) -> np.ndarray:
    """One member, its .npy header checked (shape, dtype kind) before its data is read.

    shape None: any shape (checked by the caller); kind: "f" floating point, "U" text.
    Pickled objects are refused by the dtype check and never unpickled.
    """
    try:
        with archive.open(info) as handle:
            header_shape, fortran_order, dtype = _read_header(handle)
            _check_header(name, header_shape, dtype, shape, kind)
            nbytes = math.prod(header_shape) * dtype.itemsize
            data = handle.read(nbytes)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError) as error:
        raise ValueError(f"member {name!r} is damaged ({error})") from None
    if len(data) != nbytes:
        raise ValueError(f"member {name!r} is truncated: {len(data)} of {nbytes} bytes")
    order = "F" if fortran_order else "C"
    return np.frombuffer(data, dtype=dtype).reshape(header_shape, order=order)


def _read_header(handle):
    """(shape, fortran_order, dtype) from an .npy header; only the versions `np.save` writes."""
    try:
        version = np.lib.format.read_magic(handle)
        if version == (1, 0):
            return np.lib.format.read_array_header_1_0(handle)
        if version == (2, 0):
            return np.lib.format.read_array_header_2_0(handle)
    except ValueError as error:
        raise OSError(f"bad .npy header: {error}") from None
    raise OSError(f".npy format version {version} is not supported")


def _check_header(name: str, header_shape: tuple, dtype: np.dtype, shape, kind: str):
    if dtype.hasobject or dtype.kind != kind:
        wanted = "floating point" if kind == "f" else "text"
        raise ValueError(f"parameter {name!r} has dtype {dtype}, expected {wanted}")
    _check_width(name, dtype)
    if shape is not None and header_shape != shape:
        raise ValueError(f"parameter {name!r} has shape {header_shape}, config says {shape}")


def _read_meta(archive, info) -> tuple[dict, GPTConfig]:
    """The training record and the config it holds, checked before any parameter is read."""
    _check_size(info, META_KEY, MAX_META_BYTES)
    text = _read_array(archive, info, META_KEY, (), "U")
    try:
        meta = json.loads(str(text))
    except (ValueError, RecursionError) as error:
        raise ValueError(f"{META_KEY} is not a JSON record ({error})") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("config"), dict):
        raise ValueError(f"{META_KEY} holds no config (a JSON object with a 'config' object)")
    try:
        config = GPTConfig(**meta["config"])
    except TypeError as error:  # a missing or unknown field
        raise ValueError(f"cannot read the config in {META_KEY} ({error})") from None
    if problem := config_problem(config):
        raise ValueError(f"the config in {META_KEY} is not loadable: {problem}")
    return meta, config


def load(path, dtype=np.float64) -> Model:
    """Read and validate an .npz written by `save`; params are cast to dtype (float64 for decoding).

    Checked in this order, so that a hostile file costs neither time nor memory: the file
    kind, the zip directory (names, declared sizes), the config, then each array's .npy
    header (shape, dtype) before its data. Every problem is a ValueError naming it.
    """
    try:  # load_target("target") had ended in numpy's "data type 'target' not understood"
        floating = np.issubdtype(np.dtype(dtype), np.floating)
    except TypeError:
        floating = False
    if not floating:  # int gave a model of zeros
        hint = "; to read a file, speclab.weights.load(path)" if isinstance(dtype, str) else ""
        raise ValueError(f"dtype must be a floating type (np.float64 or np.float32), got "
                         f"{dtype!r}{hint}")  # fmt: skip
    path = Path(path)
    if not path.exists():
        if path.is_symlink():  # a link to nothing, or to itself ("no file" misled)
            raise FileNotFoundError(f"{path} is a link that leads to no file (a broken link or "
                                    "a loop of links): give an .npz weights file")  # fmt: skip
        raise FileNotFoundError(f"no weights file at {path}")
    if not path.is_file():
        raise ValueError(f"{path} is not a regular file: give an .npz weights file")
    with _open_archive(path) as archive:
        try:
            members = _members(archive)
            meta, config = _read_meta(archive, members.pop(META_KEY))
            shapes = _check_names_and_sizes(archive, members, config)
            flat = {
                name: _read_array(archive, members[name], name, shape, "f")
                for name, shape in shapes.items()
            }
            check_params(flat, config)  # NaN or infinity
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from None
    with np.errstate(over="ignore"):  # a value float32 cannot hold becomes infinity: named below
        flat = {name: array.astype(dtype) for name, array in flat.items()}
    for name, array in flat.items():
        if not np.isfinite(array).all():  # finite before the cast (check_params)
            raise ValueError(f"{path}: parameter {name!r} holds values too large for "
                             f"{np.dtype(dtype).name} (beyond {np.finfo(dtype).max:.3g})")  # fmt: skip
    return Model(config, unflatten(flat, config.n_layer), meta, name=path.stem)


def file_sha256(path) -> str:
    """SHA-256 of a file, read in chunks (a weights file may be large)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for chunk in iter(lambda: handle.read(2**20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def load_target(dtype=np.float64) -> Model:
    """The shipped target model, data/weights/target.npz."""
    from speclab.paths import weights_dir

    return load(weights_dir() / "target.npz", dtype=dtype)


# The draft model computes in float32. It only proposes: the target, in float64, decides every
# token, so the draft's rounding can change how many drafts are kept, never the output; and
# float32 makes its step cheaper (docs/model-history.md, "The draft in float32").
DRAFT_DTYPE = np.float32


def load_draft(dtype=DRAFT_DTYPE) -> Model:
    """The shipped draft model, data/weights/draft.npz, in float32 (DRAFT_DTYPE) to draft."""
    from speclab.paths import weights_dir

    return load(weights_dir() / "draft.npz", dtype=dtype)


def checked_model(model, name: str = "model") -> Model:
    """model, if it is one: its parameters alone, a file name or the model's class were read
    deep inside as "'dict' object has no attribute 'config'"."""
    if not (hasattr(model, "config") and hasattr(model, "params")):  # a Model, or one like it
        given = type(model).__name__
        hint = (
            " (to read a file: speclab.weights.load(path))"
            if isinstance(model, (str, Path))
            else ""
        )
        raise TypeError(f"{name} must be a model, as load_target(), load_draft() or load(path) "
                        f"return it; got a {given}{hint}")  # fmt: skip
    return model
