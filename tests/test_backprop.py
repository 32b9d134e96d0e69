"""The hand-written backward passes against finite differences (float64), and the training
forward against speclab.gpt.forward (two independent implementations of the same model)."""

import numpy as np
import pytest

from speclab import backprop
from speclab.backprop import (
    loss_and_grads,
    loss_and_grads_forward_only,
    token_losses,
    unlikelihood_and_grads,
)
from speclab.gpt import GPTConfig, forward
from speclab.weights import flatten, init_params

CONFIG = GPTConfig(n_layer=2, n_head=2, n_embd=8, n_ctx=16)


def perturbed_params(seed=0):
    rng = np.random.default_rng(seed)
    params = init_params(CONFIG, rng, dtype=np.float64)
    for value in flatten(params).values():
        value += rng.standard_normal(value.shape) * 0.3  # away from the symmetric start
    return params, rng


def check_against_finite_differences(params, rng, inputs, targets, grads, loss_only):
    flat_params, flat_grads = flatten(params), flatten(grads)
    for name, value in flat_params.items():
        indices = [tuple(int(rng.integers(0, s)) for s in value.shape) for _ in range(4)]
        if name == "wte":
            indices += [(int(inputs[0, 0]), 1), (int(targets[1, 2]), 0)]
        for index in indices:
            old = value[index]
            value[index] = old + 1e-6
            plus = loss_only()
            value[index] = old - 1e-6
            minus = loss_only()
            value[index] = old
            numeric = (plus - minus) / 2e-6
            # key biases have an exactly zero gradient (softmax ignores a shift), so compare absolutely too
            assert abs(numeric - flat_grads[name][index]) <= 1e-6 * max(1.0, abs(numeric)), name
        # and along one random direction of the whole tensor: every entry counts (four
        # sampled entries missed a wrong row of wpe), as <gradient, direction>
        direction = rng.standard_normal(value.shape)
        direction /= np.linalg.norm(direction)
        old = value.copy()
        value += 1e-6 * direction
        plus = loss_only()
        value[...] = old - 1e-6 * direction
        minus = loss_only()
        value[...] = old
        numeric = (plus - minus) / 2e-6
        along = float(np.sum(flat_grads[name] * direction))
        assert abs(numeric - along) <= 1e-6 * max(1.0, abs(numeric)), (name, "direction")


@pytest.mark.parametrize("query_block", [64, 4, 1])  # one block; 4 + 2 rows; a row a block
def test_gradients_match_finite_differences(monkeypatch, query_block):
    monkeypatch.setattr(backprop, "QUERY_BLOCK", query_block)
    params, rng = perturbed_params()
    inputs, targets = rng.integers(0, 256, (2, 6)), rng.integers(0, 256, (2, 6))
    positions = np.arange(3, 9)
    _, grads = loss_and_grads(params, CONFIG.n_head, inputs, targets, positions)
    check_against_finite_differences(
        params, rng, inputs, targets, grads,
        lambda: loss_and_grads_forward_only(params, CONFIG.n_head, inputs, targets, positions),
    )  # fmt: skip


def test_weighted_loss_is_the_weighted_mean_and_its_gradients_match_finite_differences():
    params, rng = perturbed_params(4)
    inputs, targets = rng.integers(0, 256, (2, 6)), rng.integers(0, 256, (2, 6))
    positions = np.arange(6)
    weights = np.where(rng.random((2, 6)) < 0.3, 8.0, 1.0)

    def loss_only():  # the weighted mean of the plain per-byte cross-entropy
        losses = token_losses(params, CONFIG.n_head, inputs, targets, positions)
        return (losses * weights).sum() / weights.sum()

    loss, grads = loss_and_grads(params, CONFIG.n_head, inputs, targets, positions, weights)
    np.testing.assert_allclose(loss, loss_only(), rtol=1e-9)
    check_against_finite_differences(params, rng, inputs, targets, grads, loss_only)
    plain = flatten(loss_and_grads(params, CONFIG.n_head, inputs, targets, positions)[1])
    ones = loss_and_grads(params, CONFIG.n_head, inputs, targets, positions, np.ones((2, 6)))
    for name, grad in flatten(ones[1]).items():  # weights of 1 are the plain mean
        np.testing.assert_allclose(grad, plain[name], rtol=1e-9, atol=1e-15)


def test_distillation_loss_and_its_gradients_match_finite_differences():
    params, rng = perturbed_params(5)
    inputs, targets = rng.integers(0, 256, (2, 6)), rng.integers(0, 256, (2, 6))
    positions = np.arange(6)
    weights = np.where(rng.random((2, 6)) < 0.3, 8.0, 1.0)
    teacher = rng.dirichlet(np.full(256, 0.1), size=(2, 6))  # any distribution per position
    share = 0.7

    def loss_only():  # cross-entropy against the mixture, from speclab.gpt's own forward
        total = 0.0
        for row in range(2):
            logits = forward(params, CONFIG, inputs[row])  # positions 0..5
            log_probs = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
            wanted = share * teacher[row]
            wanted[np.arange(6), targets[row]] += 1 - share
            total += (-(wanted * log_probs).sum(axis=-1) * weights[row]).sum()
        return total / weights.sum()

    loss, grads = loss_and_grads(params, CONFIG.n_head, inputs, targets, positions, weights,
                                 teacher=teacher, teacher_share=share)  # fmt: skip
    np.testing.assert_allclose(loss, loss_only(), rtol=1e-9)
    check_against_finite_differences(params, rng, inputs, targets, grads, loss_only)


def test_a_one_hot_teacher_is_plain_cross_entropy():
    params, rng = perturbed_params(6)
    inputs, targets = rng.integers(0, 256, (2, 6)), rng.integers(0, 256, (2, 6))
    one_hot = np.eye(256)[targets]
    plain_loss, plain = loss_and_grads(params, CONFIG.n_head, inputs, targets, np.arange(6))
    loss, grads = loss_and_grads(params, CONFIG.n_head, inputs, targets, np.arange(6),
                                 teacher=one_hot, teacher_share=1.0)  # fmt: skip
    np.testing.assert_allclose(loss, plain_loss, rtol=1e-12)
    for name, grad in flatten(grads).items():
        np.testing.assert_allclose(grad, flatten(plain)[name], rtol=1e-9, atol=1e-15)


def test_unlikelihood_gradients_match_finite_differences():
    params, rng = perturbed_params(2)
    inputs, targets = rng.integers(0, 256, (2, 6)), rng.integers(0, 256, (2, 6))
    positions = np.arange(6)
    penalize = rng.random((2, 6)) < 0.5
    targets[0, 1] = int(np.argmax(forward(params, CONFIG, inputs[0, :2])[-1]))  # a likely byte

    def loss_only():  # -log(1 - p) from the plain cross-entropy: p = exp(-loss)
        p = np.exp(-token_losses(params, CONFIG.n_head, inputs, targets, positions))
        return -(np.log(1 - p) * penalize).sum() / penalize.sum()

    loss, grads = unlikelihood_and_grads(
        params, CONFIG.n_head, inputs, targets, positions, penalize
    )
    np.testing.assert_allclose(loss, loss_only(), rtol=1e-9)
    check_against_finite_differences(params, rng, inputs, targets, grads, loss_only)


def test_unlikelihood_lowers_the_penalized_probability():
    params, rng = perturbed_params(3)
    inputs = rng.integers(0, 256, (1, 6))
    targets = np.array(
        [[int(np.argmax(forward(params, CONFIG, inputs[0, : i + 1])[-1])) for i in range(6)]]
    )
    penalize = np.zeros((1, 6), dtype=bool)
    penalize[0, 3] = True
    before = token_losses(params, CONFIG.n_head, inputs, targets, np.arange(6))
    _, grads = unlikelihood_and_grads(
        params, CONFIG.n_head, inputs, targets, np.arange(6), penalize
    )
    flat_grads = flatten(grads)
    for name, value in flatten(params).items():
        value -= 0.05 * flat_grads[name]
    after = token_losses(params, CONFIG.n_head, inputs, targets, np.arange(6))
    assert after[0, 3] > before[0, 3] + 0.01  # the penalized byte became less likely


@pytest.mark.parametrize("query_block", [64, 3])
def test_training_forward_equals_inference_forward(monkeypatch, query_block):
    monkeypatch.setattr(backprop, "QUERY_BLOCK", query_block)
    params, rng = perturbed_params(1)
    tokens = rng.integers(0, 256, (1, 10))
    targets = rng.integers(0, 256, (1, 10))
    logits = forward(params, CONFIG, tokens[0])
    log_probs = (
        logits
        - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True))
        - logits.max(-1, keepdims=True)
    )
    expected = -log_probs[np.arange(10), targets[0]].mean()
    got = loss_and_grads_forward_only(params, CONFIG.n_head, tokens, targets, np.arange(10))
    np.testing.assert_allclose(got, expected, rtol=1e-9)


@pytest.mark.parametrize("query_block", [64, 3])
def test_attention_maps_are_causal_distributions(monkeypatch, query_block):
    from speclab.backprop import attention_maps

    monkeypatch.setattr(backprop, "QUERY_BLOCK", query_block)
    params, rng = perturbed_params(4)
    maps = attention_maps(params, CONFIG.n_head, rng.integers(0, 256, (2, 10)))
    assert maps.shape == (CONFIG.n_layer, 2, CONFIG.n_head, 10, 10)
    np.testing.assert_allclose(maps.sum(axis=-1), 1, rtol=1e-12)
    assert np.all(maps[..., np.triu_indices(10, k=1)[0], np.triu_indices(10, k=1)[1]] == 0)
    assert maps[..., 0, 0].min() == 1  # the first byte can only look at itself
    # layer 0's weights from the definition: softmax(q k^T / sqrt(d_head)) of the first block
    from speclab.gpt import layer_norm, linear, softmax

    inputs = rng.integers(0, 256, (1, 10))
    block = params["h"][0]
    x = params["wte"][inputs[0]] + params["wpe"][:10]
    q, k, _ = np.split(linear(layer_norm(x, **block["ln_1"]), **block["attn"]["c_attn"]), 3, -1)
    d_head = q.shape[-1] // CONFIG.n_head
    q0, k0 = q[:, :d_head], k[:, :d_head]  # head 0
    scores = q0 @ k0.T / np.sqrt(d_head) + np.triu(np.full((10, 10), -np.inf), k=1)
    expected = softmax(scores)
    np.testing.assert_allclose(
        attention_maps(params, CONFIG.n_head, inputs)[0, 0, 0], expected, rtol=1e-9
    )
