"""The hand-written backward passes against finite differences (float64), and the training
forward against speclab.gpt.forward (two independent implementations of the same model)."""

import numpy as np

from speclab.backprop import loss_and_grads, loss_and_grads_forward_only
from speclab.gpt import GPTConfig, forward
from speclab.weights import flatten, init_params

CONFIG = GPTConfig(n_layer=2, n_head=2, n_embd=8, n_ctx=16)


def perturbed_params(seed=0):
    rng = np.random.default_rng(seed)
    params = init_params(CONFIG, rng, dtype=np.float64)
    for value in flatten(params).values():
        value += rng.standard_normal(value.shape) * 0.3  # away from the symmetric start
    return params, rng


def test_gradients_match_finite_differences():
    params, rng = perturbed_params()
    inputs, targets = rng.integers(0, 256, (2, 6)), rng.integers(0, 256, (2, 6))
    positions = np.arange(3, 9)
    _, grads = loss_and_grads(params, CONFIG.n_head, inputs, targets, positions)
    flat_params, flat_grads = flatten(params), flatten(grads)
    for name, value in flat_params.items():
        indices = [tuple(int(rng.integers(0, s)) for s in value.shape) for _ in range(4)]
        if name == "wte":
            indices += [(int(inputs[0, 0]), 1), (int(targets[1, 2]), 0)]
        for index in indices:
            old = value[index]
            value[index] = old + 1e-6
            plus = loss_and_grads_forward_only(params, CONFIG.n_head, inputs, targets, positions)
            value[index] = old - 1e-6
            minus = loss_and_grads_forward_only(params, CONFIG.n_head, inputs, targets, positions)
            value[index] = old
            numeric = (plus - minus) / 2e-6
            # key biases have an exactly zero gradient (softmax ignores a shift), so compare absolutely too
            assert abs(numeric - flat_grads[name][index]) <= 1e-6 * max(1.0, abs(numeric)), name


def test_training_forward_equals_inference_forward():
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
