"""What a language model does: one forward gives a probability for every next token (lesson 03b).

The bridge between the symbols of lessons 01-03 and the real model of lessons 04-07. A
language model reads the text as tokens (here bytes: 256 ids, speclab.tokenizer) and, in one
forward, gives a score (a *logit*) to every possible next token. Softmax turns the scores
into probabilities: p_i = exp(z_i / T) / sum_j exp(z_j / T), with T the temperature (T = 1:
the model's own distribution; T < 1 sharpens it, T > 1 flattens it; T -> 0 puts all the
probability on the top token). *Greedy decoding* takes the top token every time; generating
n tokens takes n forwards, one per token.

A forward over the whole text recomputes every position; the KV cache (speclab.kv_cache)
keeps each position's keys and values, so the next step computes one new position only.
`positions_computed` counts both ways. Softmax and temperature are speclab.sampling's
(`sampling_distribution`), so the bars here are exactly what lesson 07 samples from.

Left out: how the model computes its logits (speclab.gpt), sampling (lesson 07).
"""

from dataclasses import dataclass

import numpy as np

from speclab.counting import as_count
from speclab.decoding import context_overflow
from speclab.gpt import forward
from speclab.sampling import SamplingSettings, sampling_distribution
from speclab.tokenizer import as_token_list
from speclab.weights import checked_model


@dataclass(frozen=True)
class Choice:
    token: int  # the next token's id (a byte)
    logit: float  # the model's score for it
    probability: float  # softmax of the scores at the chosen temperature


def probabilities(logits, temperature: float = 1.0) -> np.ndarray:
    """Softmax of logits / temperature, [..., n_vocab]; temperature 0 is one-hot (greedy)."""
    return sampling_distribution(logits, SamplingSettings(temperature=temperature))


def next_token_logits(model, tokens) -> np.ndarray:
    """The logits after the last token: one forward over the whole text, [n_vocab]."""
    checked_model(model)
    tokens = as_token_list(tokens)
    if not tokens:
        raise ValueError("type at least one character: the model needs a token to continue")
    if len(tokens) > model.config.n_ctx:
        tokens = tokens[-model.config.n_ctx :]  # the model sees its last n_ctx tokens
    return forward(model.params, model.config, tokens)[-1]


def top_choices(logits, temperature: float = 1.0, n: int = 10) -> list[Choice]:
    """The n most likely next tokens, most likely first (ties: the lower id, as argmax)."""
    logits = np.asarray(logits, dtype=np.float64)  # [n_vocab]
    if logits.ndim != 1:  # all positions' logits: the next token's are the last row
        raise ValueError(f"logits must be one row [n_vocab], got shape {logits.shape}: "
                         "the next token's are forward(...)[-1]")  # fmt: skip
    n = as_count(n, "n", 1)
    p = probabilities(logits, temperature)
    order = np.lexsort((np.arange(logits.size), -logits))[:n]  # by logit, then by id
    return [Choice(int(i), float(logits[i]), float(p[i])) for i in order]


def greedy_steps(model, tokens, n_new: int) -> list[list[Choice]]:
    """Generate n_new tokens greedily, one forward each; the top 3 choices of every step.

    The first choice of each step is the token written. Without a cache, for clarity: each
    step is a forward over the whole text so far (speclab.decoding does the same with one).
    The prompt and the new tokens must fit the context window, as greedy_decode requires
    (next_token_logits alone reads a longer text's last n_ctx tokens).
    """
    text, steps = as_token_list(tokens), []
    n_new, n_ctx = as_count(n_new, "n_new"), checked_model(model).config.n_ctx
    problem = context_overflow(len(text), n_new, n_ctx)  # greedy_decode's rule, so the two
    if problem:  # write the same tokens or refuse alike
        raise ValueError(problem)
    for _ in range(n_new):
        choices = top_choices(next_token_logits(model, text), n=3)
        steps.append(choices)
        text.append(choices[0].token)
    return steps


def positions_computed(n_prompt: int, n_new: int, cached: bool) -> int:
    """Positions the forwards compute to write n_new tokens after an n_prompt-token prompt.

    With a KV cache: the prompt once (its forward gives the first token), then one new
    position per further token. Without: forward i recomputes the prompt and the i tokens
    written so far, n_prompt + i positions for i = 0 .. n_new - 1.
    """
    n_prompt, n_new = as_count(n_prompt, "n_prompt"), as_count(n_new, "n_new")
    if n_prompt < 1 or n_new < 1:
        raise ValueError("a prompt of at least one token and at least one new token")
    if not isinstance(cached, bool | np.bool_):  # cached="no" had counted as True
        raise TypeError(f"cached must be True or False, got {cached!r}")
    if cached:
        return n_prompt + (n_new - 1)
    return n_new * n_prompt + n_new * (n_new - 1) // 2
