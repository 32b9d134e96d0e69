"""A GPT-2-architecture transformer as pure numpy functions (lessons 04–07).

Exactly GPT-2's forward pass (Radford et al. 2019): learned token and position embeddings,
pre-LayerNorm blocks (eps 1e-5) of causal multi-head attention and a tanh-GELU MLP, a final
LayerNorm, and an LM head tied to the token embedding. Parameters are a nested dict named
as a GPT-2 checkpoint names them (`params["h"][0]["attn"]["c_attn"]["w"]`, linear weights
[in, out]); each layer function takes its part of the dict as keyword arguments.

One function, `forward`, serves both a single decoding step (n_new = 1) and the
verification of k drafted tokens (n_new = k + 1): it takes only the new tokens, appends
their keys and values to a `KVCache`, and returns logits for every new position.

Shapes, one vocabulary throughout: n_seq positions in all, n_past already in the cache,
n_new being computed now, n_embd model width, n_head heads of d_head = n_embd / n_head,
n_vocab = 256 byte tokens; n_layer blocks, and n_ctx, the context window, is the most
positions n_past + n_new can reach.

dtype: inference runs in float64 (`speclab.weights.load` casts the float32 file). Speculative
decoding must pick exactly the token plain greedy decoding picks, and a forward over
several positions may round differently from one over a single position (BLAS takes other
code paths). In float64 those differences are ~1e-16 of the logits, so two candidates would
have to tie to ~15 digits to swap; in float32 (~1e-7) near-ties do happen in long runs.
The wider dtype costs time (lesson 04b measures how much); exact agreement is worth it here.
The draft model drafts in float32 (`speclab.weights.load_draft`): it only proposes, and the
target decides every token, so its rounding moves how many drafts are kept, not the output.

Left out: dropout, training (see `speclab.train`; its forward and backward are
`speclab.backprop`'s, checked against this one), batching of several sequences, and BPE.
"""

import math
from dataclasses import dataclass

import numpy as np

from speclab.kv_cache import KVCache
from speclab.tokenizer import as_token_list


@dataclass(frozen=True)
class GPTConfig:
    n_layer: int  # transformer blocks
    n_head: int  # attention heads per block
    n_embd: int  # width of the residual stream
    n_ctx: int  # context window: the most positions the model can see
    n_vocab: int = 256  # byte-level vocabulary

    def __post_init__(self):
        for name in ("n_layer", "n_head", "n_embd", "n_ctx", "n_vocab"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"GPTConfig.{name} must be a positive integer, got {value!r}")
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd {self.n_embd} is not divisible by n_head {self.n_head}")


def gelu(x):  # [...] -> [...], GPT-2's tanh approximation
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)))


def softmax(x):  # [..., n] -> [..., n], along the last axis
    exp_x = np.exp(x - np.max(x, axis=-1, keepdims=True))  # [..., n], the largest becomes 1
    return exp_x / np.sum(exp_x, axis=-1, keepdims=True)


def layer_norm(x, g, b, eps: float = 1e-5):  # [n_new, n_embd] -> [n_new, n_embd]
    mean = np.mean(x, axis=-1, keepdims=True)  # [n_new, 1]
    variance = np.var(x, axis=-1, keepdims=True)  # [n_new, 1]
    return g * (x - mean) / np.sqrt(variance + eps) + b


def linear(x, w, b):  # [n_new, n_in] @ [n_in, n_out] + [n_out] -> [n_new, n_out]
    return x @ w + b


def ffn(x, c_fc, c_proj):  # [n_new, n_embd] -> [n_new, n_embd]
    hidden = gelu(linear(x, **c_fc))  # [n_new, 4 * n_embd]
    return linear(hidden, **c_proj)  # [n_new, n_embd]


def attention(q, k, v, n_past: int):
    """Causal attention of the new positions over everything so far.

    q [n_head, n_new, d_head], k and v [n_head, n_past + n_new, d_head] -> [n_head, n_new, d_head].
    New position i (absolute n_past + i) sees keys 0 .. n_past + i.
    """
    n_new, n_seq = q.shape[1], k.shape[1]
    scores = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])  # [n_head, n_new, n_seq]
    future = np.arange(n_seq)[None, :] > (n_past + np.arange(n_new))[:, None]  # [n_new, n_seq]
    scores = np.where(future, -np.inf, scores)  # [n_head, n_new, n_seq], no look ahead
    return softmax(scores) @ v  # [n_head, n_new, d_head]


def mha(x, c_attn, c_proj, n_head: int, layer: int, cache):  # [n_new, n_embd] -> [n_new, n_embd]
    n_new, n_embd = x.shape
    qkv = linear(x, **c_attn)  # [n_new, 3 * n_embd]
    heads = qkv.reshape(n_new, 3, n_head, n_embd // n_head)  # [n_new, 3, n_head, d_head]
    heads = heads.transpose(1, 2, 0, 3)  # [3, n_head, n_new, d_head]
    q, k, v = heads  # each [n_head, n_new, d_head]
    n_past = len(cache)
    k_all, v_all = cache.append(layer, k, v)  # [n_head, n_past + n_new, d_head]
    out = attention(q, k_all, v_all, n_past)  # [n_head, n_new, d_head]
    merged = out.transpose(1, 0, 2).reshape(n_new, n_embd)  # [n_new, n_embd]
    return linear(merged, **c_proj)


def transformer_block(x, mlp, attn, ln_1, ln_2, n_head: int, layer: int, cache):
    # [n_new, n_embd] -> [n_new, n_embd]
    x = x + mha(layer_norm(x, **ln_1), **attn, n_head=n_head, layer=layer, cache=cache)
    return x + ffn(layer_norm(x, **ln_2), **mlp)


def _check_same_model(params, config: GPTConfig, cache) -> None:
    """One model's params, config and cache: the draft's params with the target's config had
    ended in "could not broadcast input array from shape (4,1,16) into shape (4,1,32)"."""
    if not isinstance(params, dict) or not isinstance(config, GPTConfig):
        raise TypeError("forward takes a model's params and config: "
                        "forward(model.params, model.config, tokens)")  # fmt: skip
    if not isinstance(cache, KVCache | None):
        raise TypeError(f"cache must be a KVCache(model.config) or None, got {cache!r:.40}")
    d_head = config.n_embd // config.n_head
    if params["wte"].shape != (config.n_vocab, config.n_embd) or len(params["h"]) != config.n_layer:
        raise ValueError(
            f"params (n_embd {params['wte'].shape[1]}, n_layer {len(params['h'])}) are not of "
            f"the model config describes (n_embd {config.n_embd}, n_layer {config.n_layer})"
        )
    cache_shape = (config.n_layer, config.n_head, config.n_ctx, d_head)
    if cache is not None and cache.keys.shape != cache_shape:
        raise ValueError("the cache was made for another model: KVCache(config) for this one")


def forward(params, config: GPTConfig, tokens, cache=None):
    """Logits for every new token: [n_new] ids -> [n_new, n_vocab].

    With a cache, the new tokens continue the cached positions and are appended to the
    cache in place; without one, the tokens are the whole sequence.
    """
    tokens = np.asarray(as_token_list(tokens), dtype=np.int64)  # [n_new]
    if tokens.size == 0:
        raise ValueError("forward needs at least one new token")
    _check_same_model(params, config, cache)
    if cache is None:
        cache = KVCache(config, dtype=params["wte"].dtype)
    n_past = len(cache)
    if n_past + tokens.size > config.n_ctx:
        raise ValueError(
            f"{n_past} cached + {tokens.size} new positions exceed the context window "
            f"n_ctx = {config.n_ctx}"
        )
    positions = np.arange(n_past, n_past + tokens.size)  # [n_new]
    x = params["wte"][tokens] + params["wpe"][positions]  # [n_new, n_embd]
    for layer, block in enumerate(params["h"]):
        x = transformer_block(x, **block, n_head=config.n_head, layer=layer, cache=cache)
    x = layer_norm(x, **params["ln_f"])  # [n_new, n_embd]
    return x @ params["wte"].T  # [n_new, n_vocab], the head tied to the embedding
