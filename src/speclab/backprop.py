"""The model's forward and backward passes for training, in numpy, layer by layer.

Used by speclab.train (lessons 04–07's weights). Each layer's forward and backward stand
side by side (as in micrograd), on batches [n_batch, n_seq]; the forward returns what the
backward needs (its cache). `loss_and_grads` gives the mean cross-entropy and the gradient
of every parameter of the GPT-2 architecture of speclab.gpt (tied LM head, learned
positions); `unlikelihood_and_grads` the same for a loss that pushes chosen bytes down.
`tests/test_backprop.py` checks every backward against finite differences in float64 and
this forward against `speclab.gpt.forward`, an independent implementation.

Left out: dropout, mixed precision, and a KV cache (training sees whole rows at once).
"""

import numpy as np

# --- layers: forward and backward side by side ------------------------------------------
# x [n_batch, n_seq, n_embd] throughout; caches hold what the backward pass needs.


def layer_norm_forward(x, g, b, eps=1e-5):  # [..., n_embd] -> [..., n_embd], cache
    mean = x.mean(axis=-1, keepdims=True)
    rstd = 1 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - mean) * rstd  # [..., n_embd]
    return g * x_hat + b, (x_hat, rstd, g)


def layer_norm_backward(dy, cache):  # dy [..., n_embd] -> dx [..., n_embd], {g, b}
    x_hat, rstd, g = cache
    axes = tuple(range(dy.ndim - 1))
    grads = {"g": (dy * x_hat).sum(axis=axes), "b": dy.sum(axis=axes)}
    dx_hat = dy * g
    dx = rstd * (
        dx_hat
        - dx_hat.mean(axis=-1, keepdims=True)
        - x_hat * (dx_hat * x_hat).mean(axis=-1, keepdims=True)
    )
    return dx, grads


def linear_forward(x, w, b):  # [..., n_in] -> [..., n_out]
    return x @ w + b, x


def linear_backward(dy, x, w):  # dy [..., n_out] -> dx [..., n_in], {w, b}
    n_in, n_out = w.shape
    dy_2d = dy.reshape(-1, n_out)
    grads = {"w": x.reshape(-1, n_in).T @ dy_2d, "b": dy_2d.sum(axis=0)}
    return dy @ w.T, grads


def gelu_forward(x):  # [...] -> [...], cache
    s = np.sqrt(2 / np.pi).astype(x.dtype)
    t = np.tanh(s * (x + np.float32(0.044715) * x * x * x))
    return 0.5 * x * (1 + t), (x, t)


def gelu_backward(dy, cache):  # dy [...] -> dx [...]
    x, t = cache
    s = np.sqrt(2 / np.pi).astype(x.dtype)
    return dy * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * s * (1 + 3 * 0.044715 * x * x))


QUERY_BLOCK = 64  # queries per block: a causal row never looks past its own block's end


def attention_forward(q, k, v):  # [n_batch, n_head, n_seq, d_head] each -> same shape
    """Causal self-attention, a block of queries at a time.

    Queries start..stop see keys 0..stop only, so the masked upper triangle is mostly never
    computed: for rows of 1,024 about 0.53 of the full score matrix's work (exactly the
    same numbers as one full masked matrix; tests check both against finite differences).
    """
    n_seq, d_head = q.shape[-2], q.shape[-1]
    scale = np.asarray(1 / np.sqrt(d_head), dtype=q.dtype)
    out, probs = np.empty_like(q), []
    for start in range(0, n_seq, QUERY_BLOCK):
        stop = min(start + QUERY_BLOCK, n_seq)
        scores = (q[..., start:stop, :] @ k[..., :stop, :].swapaxes(-1, -2)) * scale
        scores += np.triu(np.full((stop - start, stop), -np.inf, dtype=q.dtype), k=start + 1)
        scores -= scores.max(axis=-1, keepdims=True)
        p = np.exp(scores, out=scores)  # [n_batch, n_head, stop - start, stop]
        p /= p.sum(axis=-1, keepdims=True)
        out[..., start:stop, :] = p @ v[..., :stop, :]
        probs.append(p)
    return out, (q, k, v, probs, scale)


def attention_backward(dy, cache):  # dy [n_batch, n_head, n_seq, d_head] -> dq, dk, dv
    q, k, v, probs, scale = cache
    dq, dk, dv = np.empty_like(q), np.zeros_like(k), np.zeros_like(v)
    for block, p in enumerate(probs):
        start = block * QUERY_BLOCK
        stop = start + p.shape[-2]
        dy_block = dy[..., start:stop, :]
        dv[..., :stop, :] += p.swapaxes(-1, -2) @ dy_block
        dp = dy_block @ v[..., :stop, :].swapaxes(-1, -2)  # [n_batch, n_head, rows, stop]
        dscores = p * (dp - (dp * p).sum(axis=-1, keepdims=True))
        dscores *= scale
        dq[..., start:stop, :] = dscores @ k[..., :stop, :]
        dk[..., :stop, :] += dscores.swapaxes(-1, -2) @ q[..., start:stop, :]
    return dq, dk, dv


def split_heads(x, n_head):  # [n_batch, n_seq, n_embd] -> [n_batch, n_head, n_seq, d_head]
    n_batch, n_seq, n_embd = x.shape
    return x.reshape(n_batch, n_seq, n_head, n_embd // n_head).transpose(0, 2, 1, 3)


def merge_heads(x):  # [n_batch, n_head, n_seq, d_head] -> [n_batch, n_seq, n_embd]
    n_batch, n_head, n_seq, d_head = x.shape
    return x.transpose(0, 2, 1, 3).reshape(n_batch, n_seq, n_head * d_head)


def block_forward(x, block, n_head):  # [n_batch, n_seq, n_embd] -> same shape, cache
    a, ln_1 = layer_norm_forward(x, **block["ln_1"])
    qkv, c_attn = linear_forward(a, **block["attn"]["c_attn"])  # [n_batch, n_seq, 3 n_embd]
    q, k, v = (split_heads(part, n_head) for part in np.split(qkv, 3, axis=-1))
    heads, attn = attention_forward(q, k, v)
    out, c_proj = linear_forward(merge_heads(heads), **block["attn"]["c_proj"])
    x = x + out
    a2, ln_2 = layer_norm_forward(x, **block["ln_2"])
    hidden, c_fc = linear_forward(a2, **block["mlp"]["c_fc"])  # [n_batch, n_seq, 4 n_embd]
    activated, gelu = gelu_forward(hidden)
    out2, mlp_proj = linear_forward(activated, **block["mlp"]["c_proj"])
    cache = (ln_1, c_attn, attn, c_proj, ln_2, c_fc, gelu, mlp_proj, block, n_head)
    return x + out2, cache


def block_backward(dx, cache):  # dx [n_batch, n_seq, n_embd] -> dx of the input, grads
    ln_1, c_attn, attn, c_proj, ln_2, c_fc, gelu, mlp_proj, block, n_head = cache
    d_activated, g_mlp_proj = linear_backward(dx, mlp_proj, block["mlp"]["c_proj"]["w"])
    d_hidden, g_fc = linear_backward(
        gelu_backward(d_activated, gelu), c_fc, block["mlp"]["c_fc"]["w"]
    )
    d_a2, g_ln_2 = layer_norm_backward(d_hidden, ln_2)
    dx = dx + d_a2
    d_merged, g_c_proj = linear_backward(dx, c_proj, block["attn"]["c_proj"]["w"])
    dq, dk, dv = attention_backward(split_heads(d_merged, n_head), attn)
    d_qkv = np.concatenate([merge_heads(d) for d in (dq, dk, dv)], axis=-1)
    d_a, g_c_attn = linear_backward(d_qkv, c_attn, block["attn"]["c_attn"]["w"])
    d_x_ln1, g_ln_1 = layer_norm_backward(d_a, ln_1)
    grads = {
        "ln_1": g_ln_1,
        "attn": {"c_attn": g_c_attn, "c_proj": g_c_proj},
        "ln_2": g_ln_2,
        "mlp": {"c_fc": g_fc, "c_proj": g_mlp_proj},
    }
    return dx + d_x_ln1, grads


def loss_and_grads(params, n_head, inputs, targets, positions, weights=None, teacher=None,
                   teacher_share=0.0):  # fmt: skip
    """Mean cross-entropy (nats per byte) and its gradient for every parameter.

    inputs, targets [n_batch, n_seq]; positions [n_seq], the position ids of the columns.
    weights [n_batch, n_seq] (optional): the loss is then the weighted mean.
    teacher [n_batch, n_seq, n_vocab] (optional): another model's next-byte probabilities
    (distillation, Hinton et al. 2015). Each position's cross-entropy is then taken against
    (1 - teacher_share) * one-hot(target) + teacher_share * teacher.
    """
    log_probs, caches = _forward(params, n_head, inputs, positions)
    picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    d_logits = np.exp(log_probs)  # softmax minus the wanted distribution, per position
    np.put_along_axis(d_logits, targets[..., None], np.exp(picked)[..., None] - 1, axis=-1)
    losses = -picked  # [n_batch, n_seq]
    if teacher is not None and teacher_share:
        soft = -(teacher * log_probs).sum(axis=-1)
        losses = (1 - teacher_share) * losses + teacher_share * soft
        one_hot = np.zeros_like(d_logits)
        np.put_along_axis(one_hot, targets[..., None], 1.0, axis=-1)
        d_logits += teacher_share * (one_hot - teacher).astype(d_logits.dtype)
    if weights is None:
        loss, d_logits = losses.mean(), d_logits / targets.size
    else:
        share = (weights / weights.sum()).astype(d_logits.dtype)
        loss, d_logits = (losses * share).sum(), d_logits * share[..., None]
    return float(loss), _backward(params, d_logits, inputs, positions, caches)


def next_byte_probs(params, n_head, inputs, positions):
    """Next-byte probabilities [n_batch, n_seq, n_vocab] (forward only): a teacher's."""
    return np.exp(_forward(params, n_head, inputs, positions)[0])


def unlikelihood_and_grads(params, n_head, inputs, targets, positions, penalize):
    """Unlikelihood loss -log(1 - p) on the penalized bytes, and its gradients.

    penalize [n_batch, n_seq] bool: the bytes the model should not have produced (its own
    loops). Minimising -log(1 - p) pushes their probability down (Welleck et al. 2019,
    "Neural text generation with unlikelihood training"); other bytes add nothing.
    """
    log_probs, caches = _forward(params, n_head, inputs, positions)
    probs = np.exp(log_probs)
    p = np.take_along_axis(probs, targets[..., None], axis=-1)  # [n_batch, n_seq, 1]
    p = np.minimum(p, 1 - 1e-5)  # as Welleck et al.: 1 - p never quite 0
    n = max(1, int(penalize.sum()))
    loss = -(np.log(1 - p)[..., 0] * penalize).sum() / n
    # d/dz of -log(1 - p_t) = p_t / (1 - p_t) * (one_hot_t - softmax)
    one_hot = np.zeros_like(probs)
    np.put_along_axis(one_hot, targets[..., None], 1.0, axis=-1)
    d_logits = (p / (1 - p)) * (one_hot - probs) * penalize[..., None] / n
    return float(loss), _backward(params, d_logits.astype(probs.dtype), inputs, positions, caches)


def _forward(params, n_head, inputs, positions):
    """Log-probabilities of the next byte [n_batch, n_seq, n_vocab] and the layer caches."""
    x = params["wte"][inputs] + params["wpe"][positions]  # [n_batch, n_seq, n_embd]
    caches = []
    for block in params["h"]:
        x, cache = block_forward(x, block, n_head)
        caches.append(cache)
    final, ln_f = layer_norm_forward(x, **params["ln_f"])
    logits = final @ params["wte"].T  # [n_batch, n_seq, n_vocab]
    logits -= logits.max(axis=-1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    return log_probs, (caches, final, ln_f)


def _backward(params, d_logits, inputs, positions, caches):
    """Every parameter's gradient, given the loss's gradient at the logits."""
    caches, final, ln_f = caches
    n_vocab, n_embd = params["wte"].shape
    d_final = d_logits @ params["wte"]  # [n_batch, n_seq, n_embd]
    d_wte = d_logits.reshape(-1, n_vocab).T @ final.reshape(-1, n_embd)  # tied head
    dx, g_ln_f = layer_norm_backward(d_final, ln_f)
    block_grads = []
    for cache in reversed(caches):
        dx, grads = block_backward(dx, cache)
        block_grads.append(grads)
    one_hot = np.zeros((inputs.size, n_vocab), dtype=dx.dtype)
    one_hot[np.arange(inputs.size), inputs.ravel()] = 1
    d_wte += one_hot.T @ dx.reshape(-1, n_embd)
    d_wpe = np.zeros_like(params["wpe"])
    d_wpe[positions] = dx.sum(axis=0)
    return {"wte": d_wte, "wpe": d_wpe, "h": block_grads[::-1], "ln_f": g_ln_f}


def token_losses(params, n_head, inputs, targets, positions):
    """Cross-entropy in nats of every target byte: [n_batch, n_seq] (forward only)."""
    log_probs, _ = _forward(params, n_head, inputs, positions)
    return -np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]


def attention_maps(params, n_head, inputs):
    """Every layer's attention weights, [n_layer, n_batch, n_head, n_seq, n_seq] (row: query,
    column: key; zero above the diagonal). For looking inside the model, not for training."""
    _, (caches, _, _) = _forward(params, n_head, inputs, np.arange(inputs.shape[1]))
    n_batch, n_seq = inputs.shape
    maps = []
    for cache in caches:
        probs = cache[2][3]  # the attention cache's probabilities, a block of queries each
        layer = np.zeros((n_batch, n_head, n_seq, n_seq), dtype=probs[0].dtype)
        for block, p in enumerate(probs):
            start = block * QUERY_BLOCK
            layer[..., start : start + p.shape[-2], : p.shape[-1]] = p
        maps.append(layer)
    return np.stack(maps)


def loss_and_grads_forward_only(params, n_head, inputs, targets, positions):
    return token_losses(params, n_head, inputs, targets, positions).mean()
