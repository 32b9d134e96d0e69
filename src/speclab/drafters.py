"""Drafters: cheap guessers that propose the next few tokens (lessons 05–07).

A drafter has one method, `propose(tokens, k) -> list[int]`: given the whole accepted
sequence so far (prompt + output), up to k guesses for what comes next (maybe none).
A drafter with state brings itself in step with `tokens` on every call, so a decoder never
tells it about rollbacks: it only ever shows the drafter the accepted text. A drafter may also
offer `prepare(prompt)`, which the decoders call once during prefill so that reading the
prompt is not charged to the first round.

- `PromptLookupDrafter`: the source's "look back in the history" (prompt lookup decoding,
  Saxena 2023; Hugging Face's `prompt_lookup_num_tokens`, vLLM's n-gram speculator,
  llama.cpp's lookup decoding). Take the last n tokens, find the same n-gram earlier, and
  propose what followed it; n runs from max_ngram down to min_ngram; no match, no draft.
- `ModelDrafter`: a smaller language model decoding greedily with its own KV cache; for
  speculative sampling (lesson 07) `propose_with_probs` samples its drafts instead and
  returns the draft distribution p_draft it drew them from.

Left out: tree drafts (several candidate continuations at once), and drafters that learn
while decoding.
"""

import numpy as np

from speclab.counting import K_MOST, as_count
from speclab.gpt import forward
from speclab.kv_cache import KVCache
from speclab.sampling import sample_token, sampling_distribution
from speclab.tokenizer import as_token_list
from speclab.weights import checked_model

MAX_NGRAM = 15  # the longest n-gram PromptLookupDrafter indexes


def common_prefix_length(a: list[int], b: list[int]) -> int:
    """How many leading tokens two sequences share (fast when one extends the other)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    mismatch = np.flatnonzero(np.asarray(a[:n]) != np.asarray(b[:n]))
    return int(mismatch[0])


class PromptLookupDrafter:
    """Propose the continuation of the most recent earlier occurrence of the last n tokens.

    Which match: the most recent one, and its continuation runs on past the end of the text
    (so a repeating run of period p is continued for all k tokens, not only p). When a text is being copied or edited, the latest
    occurrence of a phrase is usually the passage being copied from (and a repeating
    pattern continues from its last repetition); Hugging Face picks the earliest instead
    (`earliest=True`: what a copy of a passage at the very start of the text wants).

    Cost: an index from each n-gram to the position that followed its latest occurrence,
    updated once per new token (O(max_ngram) work), so a proposal is a dictionary look-up
    whatever the length of the text, not a rescan of the history.
    """

    def __init__(self, max_ngram: int = 3, min_ngram: int = 1, earliest: bool = False):
        for name, value in (("max_ngram", max_ngram), ("min_ngram", min_ngram)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
            if value > MAX_NGRAM:
                raise ValueError(
                    f"{name} = {value}: n-grams longer than {MAX_NGRAM} tokens are not indexed"
                )
        if min_ngram > max_ngram:
            raise ValueError(f"min_ngram {min_ngram} is larger than max_ngram {max_ngram}")
        self.max_ngram, self.min_ngram = int(max_ngram), int(min_ngram)
        self.earliest = bool(earliest)
        self.name = f"lookup (n = {self.max_ngram}..{self.min_ngram}{', earliest' * self.earliest})"
        self.reset()

    def reset(self):
        self._tokens: list[int] = []
        # one dictionary for every n: key (n, the n tokens packed into one int) -> index of
        # the token that followed the n-gram's latest (or, with earliest, first) occurrence
        self._index: dict[int, int] = {}

    def _sync(self, tokens):
        """Index every n-gram that has a known follower; rebuild after a rollback.

        Only the tokens past the part already indexed are checked and indexed, so a call
        costs O(new tokens) Python work (the prefix comparison runs in C), not O(history).
        """
        tokens = tokens.tolist() if isinstance(tokens, np.ndarray) else list(tokens)
        if tokens[: len(self._tokens)] != self._tokens:
            self.reset()  # the text changed under us: index it again from the start
        as_token_list(tokens[len(self._tokens) :], "tokens")  # clear errors for bad new ids
        start = max(0, len(self._tokens) - 1)
        self._tokens = tokens
        index, min_n, max_n, latest = self._index, self.min_ngram, self.max_ngram, not self.earliest
        for end in range(start, len(tokens) - 1):  # n-grams ending at `end`, followed by end + 1
            packed = 0  # the n-gram as one int: 8 bits a token, the newest in the lowest bits
            for n in range(1, min(max_n, end + 1) + 1):
                packed |= tokens[end + 1 - n] << (8 * (n - 1))
                key = packed << 4 | n  # n < 16 in the low 4 bits of the key
                if n >= min_n and (latest or key not in index):
                    index[key] = end + 1

    def prepare(self, tokens) -> None:
        """Index a prompt before decoding starts (the decoder counts it as prefill)."""
        self._sync(tokens)

    def _lookup(self, tokens: list[int], n: int) -> int | None:
        packed = 0
        for i in range(1, n + 1):
            packed |= tokens[-i] << (8 * (i - 1))
        return self._index.get(packed << 4 | n)

    def propose(self, tokens, k) -> list[int]:
        k = as_count(k, "k")
        if k > K_MOST:  # k = 10**8 had built a list of 0.8 GB; decoding asks for k <= n_ctx
            raise ValueError(f"k must be at most {K_MOST:,} drafts, got {k:,}")
        start = self.source(tokens)
        if k == 0 or start is None:
            return []
        return continuation(self._tokens, start, k)

    def source(self, tokens) -> int | None:
        """Where in tokens a proposal would be copied from: the index of the token that
        followed the matched n-gram's chosen occurrence (None: no match, no draft)."""
        if isinstance(tokens, (str, bytes)):
            raise TypeError("tokens must be token ids, not text: use speclab.tokenizer.encode")
        self._sync(tokens)
        tokens = self._tokens
        for n in range(self.max_ngram, self.min_ngram - 1, -1):
            if len(tokens) < n + 1:
                continue
            follower = self._lookup(tokens, n)
            if follower is not None:
                return follower
        return None


def continuation(tokens: list[int], start: int, k: int) -> list[int]:
    """k tokens copied from tokens[start:], running on into the copy itself at the end.

    Inside a repeating run the latest match sits just before the end of the text; copying
    on into what was just proposed continues the pattern (period len(tokens) - start).
    """
    proposal: list[int] = []
    for i in range(k):
        position = start + i
        proposal.append(
            tokens[position] if position < len(tokens) else proposal[position - len(tokens)]
        )
    return proposal


class ModelDrafter:
    """A small language model as drafter: k greedy steps with its own KV cache.

    Its cache is kept in step with the accepted text on every call: positions past the
    common prefix with the last text it saw are dropped (the rollback) and the new
    accepted tokens are fed in one forward. `forwards` counts its forward calls.
    """

    def __init__(self, model):
        self.model = checked_model(model, "ModelDrafter's model")
        self.name = f"model ({model.name or 'draft'})"
        self.forwards = 0
        self.reset()

    def reset(self):
        self.cache = KVCache(self.model.config, dtype=self.model.params["wte"].dtype)
        self._fed: list[int] = []  # the tokens whose keys and values are in the cache

    def _catch_up(self, tokens: list[int]):
        """Logits [n_vocab] for the position after `tokens`, reusing the cache."""
        keep = min(common_prefix_length(self._fed, tokens), len(tokens) - 1)
        self.cache.truncate(keep)
        self._fed = tokens[:keep]
        logits = forward(self.model.params, self.model.config, tokens[keep:], self.cache)
        self.forwards += 1
        self._fed = list(tokens)
        return logits[-1]

    def prepare(self, tokens) -> None:
        """Read a prompt into the draft model's cache before decoding starts (prefill)."""
        tokens = as_token_list(tokens)
        if tokens:
            self._catch_up(tokens)

    def propose(self, tokens, k) -> list[int]:
        k = as_count(k, "k")
        tokens = as_token_list(tokens)
        if k == 0 or not tokens:
            return []
        k = min(k, self.model.config.n_ctx - len(tokens))
        if k <= 0:
            return []
        logits = self._catch_up(tokens)
        drafts = [int(np.argmax(logits))]
        for _ in range(k - 1):
            logits = forward(self.model.params, self.model.config, drafts[-1:], self.cache)[-1]
            self.forwards += 1
            self._fed.append(drafts[-1])
            drafts.append(int(np.argmax(logits)))
        return drafts

    def propose_with_probs(self, tokens, k, settings, rng: np.random.Generator):
        """Sample up to k drafts from the draft model's own distribution (lesson 07).

        settings: the `speclab.sampling.SamplingSettings` the target uses too. Returns the
        drafts and p_draft [len(drafts), n_vocab], the distribution each was drawn from:
        what speculative sampling needs to accept or reject them.
        """
        k = as_count(k, "k")
        tokens = as_token_list(tokens)
        k = min(k, self.model.config.n_ctx - len(tokens)) if tokens else 0
        if k <= 0:
            return [], np.zeros((0, self.model.config.n_vocab), dtype=np.float64)
        logits = self._catch_up(tokens)  # [n_vocab]
        drafts, rows = [], []
        for _ in range(k):
            if drafts:
                logits = forward(self.model.params, self.model.config, drafts[-1:], self.cache)[-1]
                self.forwards += 1
                self._fed.append(drafts[-1])
            rows.append(sampling_distribution(logits, settings))  # [n_vocab]
            drafts.append(sample_token(rows[-1], rng))
        return drafts, np.stack(rows)  # list of k ids, [k, n_vocab]
