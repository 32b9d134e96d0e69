"""Greedy decoding and speculative (draft + verify) greedy decoding (lessons 05 and 06).

`greedy_decode` is the reference: one target forward per new token, with a KV cache.
`speculative_decode` is the algorithm of Leviathan et al. 2023 and Chen et al. 2023 in its
greedy form, as the source text writes it: each round the drafter proposes up to k tokens,
the target scores them all in ONE forward, the same `accept` function as lesson 02 gives
the accepted prefix length m, the first m drafts are kept and the target's own token is
appended at the break (or as a bonus after a full accept), and the KV cache is rolled back
past the rejected positions.

Each round feeds the target [last token, draft_1 .. draft_k]: k + 1 positions, whose
logits give the target's choice after the last token and after every draft. Without
drafts the same round is one plain greedy step, so both decoders share `_run`.

Both return a `DecodeResult` (the new tokens, and per round what was drafted, accepted and
appended, with forward counts and times) that notebooks, the CLI, the benchmark and the
tests all read. Equality with greedy decoding rests on float64 inference (see speclab.gpt).

With temperature > 0 both decoders sample (lesson 07): `greedy_decode` becomes plain
sampling and `speculative_decode` becomes speculative sampling, which replaces `accept` by
the accept/resample rule of `speclab.sampling.speculative_step` (the output then has exactly
the target's distribution, not its greedy tokens). Temperature 0 is the greedy path above,
untouched. A model drafter samples its drafts from its own adjusted distribution
(`propose_with_probs`); any other drafter counts as the one-hot distribution on its proposal.

Left out: batching several prompts, tree drafts.
"""

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from speclab.acceptance import accept
from speclab.adaptive import AdaptiveK, CostModel, FixedK
from speclab.counting import as_count
from speclab.gpt import forward
from speclab.kv_cache import KVCache
from speclab.render import counted
from speclab.sampling import (
    SamplingSettings,
    check_draft_support,
    one_hot,
    sampling_distribution,
    speculative_step,
)
from speclab.tokenizer import as_token_list, encode
from speclab.weights import checked_model


@dataclass
class Round:
    drafted: list[int]  # what the drafter proposed (may be empty: a plain step)
    accepted: int  # m: how many of the drafts the target agreed with
    appended: int  # the target's own token after them (a correction, or the bonus)
    draft_seconds: float = 0.0
    verify_seconds: float = 0.0

    @property
    def new_tokens(self) -> list[int]:
        return self.drafted[: self.accepted] + [self.appended]


@dataclass
class DecodeResult:
    prompt_tokens: list[int]
    tokens: list[int] = field(default_factory=list)  # the new tokens only
    rounds: list[Round] = field(default_factory=list)
    target_forwards: int = 0  # decoding forwards (the prompt's prefill not counted)
    draft_forwards: int = 0  # forward calls of a model drafter (0 for lookup)
    prefill_seconds: float = 0.0
    seconds: float = 0.0  # wall-clock time of the whole call
    stop_reason: str = "max_new_tokens"  # or "stop"
    method: str = "greedy"

    @property
    def draft_seconds(self) -> float:
        return sum(r.draft_seconds for r in self.rounds)

    @property
    def verify_seconds(self) -> float:
        return sum(r.verify_seconds for r in self.rounds)

    @property
    def tokens_per_target_forward(self) -> float:
        return len(self.tokens) / max(1, self.target_forwards)

    @property
    def drafted_count(self) -> int:
        return sum(len(r.drafted) for r in self.rounds)

    @property
    def accepted_count(self) -> int:
        return sum(r.accepted for r in self.rounds)

    @property
    def accepted_over_drafted(self) -> float:
        """vLLM's "draft acceptance rate": accepted drafts / drafted tokens."""
        return self.accepted_count / self.drafted_count if self.drafted_count else float("nan")

    @property
    def mean_accepted_length(self) -> float:
        """Mean tokens gained per round (accepted + the target's own), as engines report it."""
        return len(self.tokens) / len(self.rounds) if self.rounds else float("nan")


def _stop_sequences(stop) -> list[list[int]]:
    if stop is None:
        return []
    if not isinstance(stop, (str, bytes, Sequence, np.ndarray)):  # stop=10 was not subscriptable
        raise TypeError(f"stop must be a text, a token list or a list of either, got {stop!r}")
    if isinstance(stop, (str, bytes)) or (len(stop) and isinstance(stop[0], (int, np.integer))):
        stop = [stop]
    sequences = []
    for item in stop:
        tokens = encode(item) if isinstance(item, str) else as_token_list(item, "stop")
        if not tokens:
            raise ValueError("a stop sequence must not be empty")
        sequences.append(tokens)
    return sequences


def _first_stop_end(output: list[int], stops: list[list[int]], searched: int) -> int | None:
    """End index of the earliest stop sequence ending after position `searched` of output."""
    best = None
    for seq in stops:
        for end in range(max(searched + 1, len(seq)), len(output) + 1):
            if output[end - len(seq) : end] == seq:
                best = end if best is None else min(best, end)
                break
    return best


def context_overflow(
    n_prompt: int,
    n_new: int,
    n_ctx: int,
    prompt: str = "prompt",
    *,
    new: str | None = None,
    window: str = "the context window",
    fewer: str = "ask for at most {} new tokens",
    shorter: str = "shorten the prompt to at most {} tokens",
    stuck: str = "shorten the prompt and ask for fewer new tokens",
) -> str | None:
    """None if a prompt of n_prompt tokens and n_new new tokens fit n_ctx positions; else
    what does not fit and how to make it fit, for the caller to raise.

    The one statement of the rule that greedy_decode, speculative_decode, greedy_steps, the
    lesson 05 game, scenario files, `speclab demo` and `speclab bench` share. `new` (else
    "N new tokens"), `fewer` and `shorter` word the count and the ways out in the caller's
    terms ("give --max-new-tokens of at most {}"); a way that cannot work is left out (no "at
    most -998976 tokens"), as is `shorter` when it is empty; `stuck` is said when none is left.
    """
    if n_prompt + n_new <= n_ctx:
        return None
    ways = [fewer.format(f"{n_ctx - n_prompt:,}")] if n_prompt < n_ctx else []
    if shorter and n_new < n_ctx:
        ways.append(shorter.format(f"{n_ctx - n_new:,}"))
    asked = counted(n_new, "new token") if new is None else new.format(f"{n_new:,}")
    return (
        f"{prompt} ({counted(n_prompt, 'token')}) + {asked} exceeds {window} of {n_ctx:,} "
        f"tokens: " + (", or ".join(ways) or stuck)
    )


def _prepare(model, prompt_tokens, max_new_tokens, least: int = 0):
    """The prompt as a token list and max_new_tokens checked: both fit the context window."""
    checked_model(model)
    prompt = as_token_list(prompt_tokens, "prompt_tokens")
    if not prompt:
        raise ValueError("the prompt must hold at least one token")
    max_new_tokens = as_count(max_new_tokens, "max_new_tokens", least)
    n_ctx = model.config.n_ctx
    problem = context_overflow(len(prompt), max_new_tokens, n_ctx, new="max_new_tokens ({})")
    if problem:
        raise ValueError(problem)
    return prompt, max_new_tokens


def _prefilled(model, prompt: list[int]) -> KVCache:
    """A KV cache holding the prompt but its last token, which the first round feeds."""
    cache = KVCache(model.config, dtype=model.params["wte"].dtype)
    if len(prompt) > 1:
        forward(model.params, model.config, prompt[:-1], cache)
    return cache


def _sampling(temperature, top_k, top_p, rng) -> SamplingSettings | None:
    """The sampling settings, or None for the greedy path (temperature 0)."""
    settings = SamplingSettings(temperature, top_k, top_p)  # validates all three
    if settings.greedy:
        return None
    if not isinstance(rng, np.random.Generator):
        raise TypeError("sampling (temperature > 0) needs rng=np.random.default_rng(seed)")
    return settings


def _draft_with_probs(drafter, tokens, k, settings, rng, n_vocab):
    """Drafts and their draft distribution p_draft [len(drafts), n_vocab] (one-hot if unknown)."""
    if callable(getattr(drafter, "propose_with_probs", None)):
        drafts, p_draft = drafter.propose_with_probs(tokens, k, settings, rng)
        drafts = as_token_list(drafts, "drafter output")
        p_draft = np.asarray(p_draft, dtype=np.float64)  # [len(drafts), n_vocab]
        who = f"drafter {getattr(drafter, 'name', type(drafter).__name__)}"
        if p_draft.shape != (len(drafts), n_vocab):
            wanted = [len(drafts), n_vocab]
            raise ValueError(f"{who}: p_draft has shape {list(p_draft.shape)}, expected {wanted}")
        check_draft_support(p_draft, drafts, who)  # named here: the rule cannot say whose
        return drafts, p_draft
    drafts = as_token_list(drafter.propose(tokens, k), "drafter output")
    return drafts, one_hot(drafts, n_vocab)


def _greedy_verdict(logits, drafts: list[int]) -> tuple[int, int]:
    """(m, appended): drafts kept up to the target's first different pick, then its own token."""
    chosen = np.argmax(logits, axis=-1).tolist()  # the target's pick after each position
    m = accept(drafts, chosen[:-1]) if drafts else 0
    return m, chosen[m]


def _draft(drafter, policy, tokens, remaining, settings, rng, n_vocab):
    """This round's drafts and, when sampling, their p_draft [len(drafts), n_vocab].

    No drafter, or room for one more token only: no drafts, and the round is a plain step.
    """
    no_probs = np.zeros((0, n_vocab), dtype=np.float64)  # [0, n_vocab]: greedy needs none
    if drafter is None or remaining <= 1:
        return [], no_probs
    k = min(policy.next_k(), remaining - 1)  # never draft past max_new_tokens
    if settings is None:
        drafts, p_draft = as_token_list(drafter.propose(tokens, k), "drafter output"), no_probs
    else:
        drafts, p_draft = _draft_with_probs(drafter, tokens, k, settings, rng, n_vocab)
    if len(drafts) > k:
        raise ValueError(f"the drafter proposed {len(drafts)} tokens when asked for {k}")
    return drafts, p_draft


def _verify(model, cache, last, drafts, p_draft, settings, rule, rng) -> tuple[int, int]:
    """ONE target forward over [last, drafts...] -> (m drafts kept, the token appended after
    them); the cache then holds `last` and the m kept drafts, not the rejected ones."""
    n_cached = len(cache)
    logits = forward(model.params, model.config, [last] + drafts, cache)  # [k + 1, n_vocab]
    if settings is None:
        m, appended = _greedy_verdict(logits, drafts)
    else:  # the accept/resample rule; with no drafts, one plain draw from p_target
        p_target = sampling_distribution(logits, settings)  # [k + 1, n_vocab]
        m, appended = rule(p_target, p_draft, drafts, rng)
    cache.truncate(n_cached + 1 + m)  # roll back past the rejected drafts
    return m, appended


def _run(
    model, prompt, max_new_tokens, drafter, policy, stop, method, settings=None, rng=None,
    rule=speculative_step,
) -> DecodeResult:  # fmt: skip
    started = time.perf_counter()
    result = DecodeResult(prompt_tokens=prompt, method=method)
    stops = _stop_sequences(stop)
    cache = _prefilled(model, prompt)
    if drafter is not None and callable(getattr(drafter, "prepare", None)):
        drafter.prepare(prompt)  # the drafter reads the prompt once, as the target just did
    result.prefill_seconds = time.perf_counter() - started
    draft_forwards_before = getattr(drafter, "forwards", 0)
    output: list[int] = []
    last = prompt[-1]
    while len(output) < max_new_tokens:
        remaining = max_new_tokens - len(output)
        t0 = time.perf_counter()
        drafts, p_draft = _draft(drafter, policy, prompt + output, remaining, settings, rng,
                                 model.config.n_vocab)  # fmt: skip
        t1 = time.perf_counter()
        m, appended = _verify(model, cache, last, drafts, p_draft, settings, rule, rng)
        result.target_forwards += 1
        round_ = Round(drafts, m, appended, t1 - t0, time.perf_counter() - t1)
        result.rounds.append(round_)
        if drafter is not None:
            policy.update(len(drafts), m)
        searched = len(output)
        output += round_.new_tokens
        last = output[-1]
        end = _first_stop_end(output, stops, searched) if stops else None
        if end is not None:
            del output[end:]
            result.stop_reason = "stop"
            break
    result.tokens = output
    result.draft_forwards = getattr(drafter, "forwards", 0) - draft_forwards_before
    result.seconds = time.perf_counter() - started
    return result


def greedy_decode(
    model, prompt_tokens, max_new_tokens, stop=None, temperature=0.0, top_k=None, top_p=None,
    rng=None,
) -> DecodeResult:  # fmt: skip
    """Plain greedy decoding with a KV cache: one target forward per new token.

    stop: a string, a token list, or a list of either; decoding ends right after the first
    occurrence in the output (which keeps it).
    temperature > 0: plain sampling instead (with top_k / top_p, see speclab.sampling),
    every random draw from rng, an np.random.Generator: the same seed, the same tokens.
    """
    prompt, max_new_tokens = _prepare(model, prompt_tokens, max_new_tokens)
    settings = _sampling(temperature, top_k, top_p, rng)
    method = "greedy" if settings is None else "sampling"
    return _run(model, prompt, max_new_tokens, None, None, stop, method, settings, rng)


def speculative_decode(
    model, drafter, prompt_tokens, max_new_tokens, k, adaptive=True, stop=None, policy=None,
    temperature=0.0, top_k=None, top_p=None, rng=None, rule=speculative_step,
) -> DecodeResult:  # fmt: skip
    """Draft up to k tokens per round, verify them in one forward; same tokens as greedy.

    adaptive=True: k is the most drafts per round and `AdaptiveK` picks each round's k;
    adaptive=False: always k. A custom `policy` (with next_k() and update(drafted, accepted))
    overrides both.
    temperature > 0: speculative sampling (lesson 07), with the same settings applied to
    target and draft; the output has the distribution of `greedy_decode(..., temperature)`.
    The same seed gives the same tokens: when sampling, the default adaptive policy uses a
    fixed cost model (`CostModel()`) instead of timing rounds, because another k would consume
    the random draws differently. (In greedy mode the timed policy may pick other k from run
    to run; the tokens are the same whatever k is.)
    rule: the accept/resample function when sampling; lesson 07 passes the alternatives of
    speclab.sampling (draw_and_match_step, biased_resample_step) to compare them.
    """
    prompt, max_new_tokens = _prepare(model, prompt_tokens, max_new_tokens)
    k = as_count(k, "k", 1)
    k = min(k, model.config.n_ctx)  # no round drafts more; k = 10**9 had taken gigabytes
    if isinstance(drafter, type):  # speculative_decode(target, PromptLookupDrafter, ...)
        raise TypeError(f"drafter must be a drafter, e.g. {drafter.__name__}(), not its class")
    if drafter is None or not callable(getattr(drafter, "propose", None)):
        raise TypeError("drafter must have a propose(tokens, k) method")
    settings = _sampling(temperature, top_k, top_p, rng)
    if not callable(rule):  # rule="exact": found here, not after the prompt's forward
        raise TypeError(f"rule must be a function of speclab.sampling.STEP_RULES, e.g. "
                        f"STEP_RULES['exact'], got {rule!r}")  # fmt: skip
    if policy is not None and not all(
        callable(getattr(policy, n, None)) for n in ("next_k", "update")
    ):
        raise TypeError(f"policy must have next_k() and update(drafted, accepted), got {policy!r}")
    if policy is None and adaptive:
        policy = AdaptiveK(k) if settings is None else AdaptiveK(k, cost=CostModel())
    elif policy is None:
        policy = FixedK(k)
    method = "speculative" if settings is None else "speculative sampling"
    return _run(model, prompt, max_new_tokens, drafter, policy, stop, method, settings, rng, rule)


class GuessVerifier:
    """You are the drafter (lesson 05): each guess is one round, verified in one target forward.

    The round is `speculative_decode`'s greedy round with the learner's guess as the drafts:
    the target scores [last token, guess...] at once, `accept` keeps the guess up to the
    first byte where the target would have chosen otherwise, and the target's own token
    follows (the correction, or the bonus when the whole guess stands). An empty guess is
    a plain greedy step. The text therefore grows exactly as greedy decoding's does.
    `.result` is the same `DecodeResult` the decoders return (method "you").
    """

    def __init__(self, model, prompt_tokens, max_new_tokens: int = 200):
        self.model = model
        prompt, self.max_new_tokens = _prepare(model, prompt_tokens, max_new_tokens, least=1)
        self.result = DecodeResult(prompt_tokens=prompt, method="you")
        self.cache = _prefilled(model, prompt)  # as in _run

    @property
    def done(self) -> bool:
        return len(self.result.tokens) >= self.max_new_tokens

    @property
    def room(self) -> int:
        """How many guessed tokens the next round can hold: the tokens still to come, less
        the target's own token that ends every round."""
        return max(0, self.max_new_tokens - len(self.result.tokens) - 1)

    def verify(self, guess) -> Round:
        """One round: guess (text or token ids) checked in one forward; returns the Round.

        A guess longer than the tokens still to come is cut to fit (as the decoders never
        draft past max_new_tokens).
        """
        if self.done:
            raise ValueError(f"all {self.max_new_tokens} new tokens are written")
        drafts = encode(guess) if isinstance(guess, str) else as_token_list(guess, "guess")
        drafts = drafts[: self.room]
        text = self.result.prompt_tokens + self.result.tokens
        params, config = self.model.params, self.model.config
        n_cached = len(self.cache)
        logits = forward(params, config, [text[-1]] + drafts, self.cache)  # [k + 1, n_vocab]
        m, appended = _greedy_verdict(logits, drafts)  # the same round as speculative_decode's
        self.cache.truncate(n_cached + 1 + m)
        round_ = Round(drafts, m, appended)
        self.result.rounds.append(round_)
        self.result.target_forwards += 1
        self.result.tokens += round_.new_tokens
        return round_
