"""Speculative greedy decoding must return exactly plain greedy decoding's tokens."""

import re
import sysconfig
from pathlib import Path

import numpy as np
import pytest

from speclab.decoding import GuessVerifier, context_overflow, greedy_decode, speculative_decode
from speclab.drafters import ModelDrafter, PromptLookupDrafter
from speclab.gpt import GPTConfig
from speclab.tokenizer import decode, encode
from speclab.weights import random_model

CONFIG = GPTConfig(n_layer=2, n_head=2, n_embd=16, n_ctx=96)
DRAFT_CONFIG = GPTConfig(n_layer=1, n_head=2, n_embd=8, n_ctx=96)


@pytest.fixture(scope="module")
def models():
    return random_model(CONFIG, np.random.default_rng(10)), random_model(
        DRAFT_CONFIG, np.random.default_rng(11)
    )


def prompt_pool(rng):
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    source = (stdlib / "textwrap.py").read_bytes() + (stdlib / "bisect.py").read_bytes()
    pool = []
    for _ in range(8):
        pool.append(list(rng.integers(0, 256, int(rng.integers(1, 40)))))  # random bytes
        start = int(rng.integers(0, len(source) - 80))
        pool.append(list(source[start : start + int(rng.integers(5, 70))]))  # real source
        unit = list(rng.integers(0, 256, int(rng.integers(1, 6))))
        pool.append((unit * 40)[: int(rng.integers(8, 70))])  # highly repetitive
        pool.append(list(rng.integers(97, 100, int(rng.integers(80, 92)))))  # near the window
    return pool


def test_speculative_equals_greedy_over_1000_combinations(models):
    target, draft = models
    rng = np.random.default_rng(0)
    checked = 0
    for prompt in prompt_pool(rng):
        room = CONFIG.n_ctx - len(prompt)
        max_new = min(room, int(rng.integers(0, 24)))
        reference = greedy_decode(target, prompt, max_new).tokens
        assert len(reference) == max_new
        for k in range(1, 9):
            for make in (lambda: PromptLookupDrafter(3, 1), lambda: ModelDrafter(draft)):
                for adaptive in (False, True):
                    result = speculative_decode(
                        target, make(), prompt, max_new, k, adaptive=adaptive
                    )
                    assert result.tokens == reference, (prompt, k, adaptive)
                    assert result.target_forwards == len(result.rounds) <= max(1, max_new)
                    checked += 1
    assert checked >= 1000


def test_round_bookkeeping(models):
    target, _ = models
    prompt = list(b"abcabcabcabcabcabc")
    result = speculative_decode(target, PromptLookupDrafter(), prompt, 20, 4, adaptive=False)
    assert sum(len(r.new_tokens) for r in result.rounds) == len(result.tokens) == 20
    for r in result.rounds:
        assert 0 <= r.accepted <= len(r.drafted) <= 4
    assert result.tokens_per_target_forward == 20 / result.target_forwards
    plain = greedy_decode(target, prompt, 20)
    assert plain.target_forwards == 20 and plain.drafted_count == 0


class Oracle:
    """A drafter that knows the greedy answer: every draft is accepted."""

    def __init__(self, prompt, answer):
        self.full = list(prompt) + list(answer)

    def propose(self, tokens, k):
        return self.full[len(tokens) : len(tokens) + k]


def test_perfect_drafter_gives_k_plus_one_tokens_per_forward(models):
    target, _ = models
    prompt = [1, 2, 3]
    answer = greedy_decode(target, prompt, 30).tokens
    result = speculative_decode(target, Oracle(prompt, answer), prompt, 30, 4, adaptive=False)
    assert result.tokens == answer
    assert result.target_forwards == 6  # 5 tokens per round
    assert all(r.accepted == len(r.drafted) for r in result.rounds)


def test_edge_lengths(models):
    target, _ = models
    for max_new in (0, 1, 4):
        reference = greedy_decode(target, [5, 6], max_new).tokens
        result = speculative_decode(target, Oracle([5, 6], reference), [5, 6], max_new, 4)
        assert result.tokens == reference and len(reference) == max_new


def test_a_round_with_room_for_one_token_asks_the_drafter_nothing(models):
    """Verifying k drafts writes up to k + 1 tokens, so with one token left the round is a
    plain step: the drafter is not asked for zero drafts (a model drafter would pay for it)."""
    target, _ = models
    reference = greedy_decode(target, [5, 6], 6).tokens

    class Asked(Oracle):
        def propose(self, tokens, k):
            asked.append(k)
            return super().propose(tokens, k)

    for max_new, expected in ((1, []), (6, [4])):  # 6 = one round of 4 drafts + 1, then 1 left
        asked = []
        result = speculative_decode(
            target, Asked([5, 6], reference), [5, 6], max_new, 4, adaptive=False
        )
        assert result.tokens == reference[:max_new] and asked == expected
        assert len(result.rounds[-1].drafted) == 0


def test_stop_sequences_end_output_at_the_same_place(models):
    target, _ = models
    prompt = list(b"xyzxyzxyz")
    reference = greedy_decode(target, prompt, 40).tokens
    oracle = Oracle(prompt, reference)
    for stops in ([reference[10:12]], [reference[20:23], reference[10:12]], [reference[5:6]]):
        # brute force: the output ends where the first of the stop sequences first ends
        end = next(e for e in range(1, 41) if any(reference[:e][-len(s) :] == s for s in stops))
        expected = greedy_decode(target, prompt, 40, stop=stops).tokens
        assert expected == reference[:end]
        result = speculative_decode(target, oracle, prompt, 40, 8, stop=stops)
        assert result.tokens == expected and result.stop_reason == "stop"


def test_bad_inputs_are_clear_errors(models):
    target, _ = models
    lookup = PromptLookupDrafter()
    with pytest.raises(ValueError, match="at least one token"):
        greedy_decode(target, [], 5)
    with pytest.raises(ValueError, match="context window"):
        speculative_decode(target, lookup, [1] * 90, 10, 4)
    with pytest.raises(ValueError, match="at least 1"):
        speculative_decode(target, lookup, [1, 2], 5, 0)
    with pytest.raises(TypeError, match="integer"):
        speculative_decode(target, lookup, [1, 2], 5, 2.5)
    with pytest.raises(TypeError, match="integer"):
        greedy_decode(target, [1, 2], True)

    class Garbage:
        def propose(self, tokens, k):
            return [999]

    with pytest.raises(ValueError, match="outside the vocabulary"):
        speculative_decode(target, Garbage(), [1, 2], 5, 2)

    class TooMany:
        def propose(self, tokens, k):
            return [1] * (k + 1)

    with pytest.raises(ValueError, match="proposed"):
        speculative_decode(target, TooMany(), [1, 2], 5, 2)

    class Nothing:
        def propose(self, tokens, k):
            return []

    assert (
        speculative_decode(target, Nothing(), [1, 2], 5, 3).tokens
        == greedy_decode(target, [1, 2], 5).tokens
    )


def test_numpy_inputs(models):
    target, _ = models
    prompt = np.array([3, 4, 5], dtype=np.int32)
    assert (
        greedy_decode(target, prompt, np.int64(3)).tokens
        == greedy_decode(target, [3, 4, 5], 3).tokens
    )


def test_drafter_reads_the_prompt_during_prefill(models):
    target, draft = models

    class Recorder(PromptLookupDrafter):
        def __init__(self):
            super().__init__()
            self.calls = []

        def prepare(self, tokens):
            self.calls.append(("prepare", list(tokens)))
            super().prepare(tokens)

        def propose(self, tokens, k):
            self.calls.append(("propose", len(tokens)))
            return super().propose(tokens, k)

    prompt = list(b"abcabcabc")
    recorder = Recorder()
    result = speculative_decode(target, recorder, prompt, 6, 3)
    assert recorder.calls[0] == ("prepare", prompt)
    assert all(kind == "propose" for kind, _ in recorder.calls[1:])
    drafter = ModelDrafter(draft)
    result = speculative_decode(target, drafter, prompt, 6, 3, adaptive=False)
    assert result.draft_forwards == drafter.forwards - 1  # the prefill forward is not a round's


# --- you are the drafter: GuessVerifier --------------------------------------------------


def _guess_model():
    config = GPTConfig(n_layer=2, n_head=2, n_embd=16, n_ctx=64)
    return random_model(config, np.random.default_rng(7))


def test_guesses_of_any_quality_write_greedy_decodings_text():
    model = _guess_model()
    prompt = encode("abcabcab")
    greedy = greedy_decode(model, prompt, 20).tokens
    game = GuessVerifier(model, prompt, max_new_tokens=20)
    guesses = [greedy[:3], [], [(greedy[4] + 1) % 256, 5], greedy[5:9], "zz", greedy[10:40]]
    for guess in guesses:
        if game.done:
            break
        game.verify(guess)
    while not game.done:
        game.verify([])
    assert game.result.tokens == greedy  # whoever drafts, the text is greedy's
    assert game.result.target_forwards == len(game.result.rounds)


def test_a_right_guess_is_kept_whole_and_a_wrong_byte_ends_it():
    model = _guess_model()
    prompt = encode("hello")
    greedy = greedy_decode(model, prompt, 10).tokens
    game = GuessVerifier(model, prompt, max_new_tokens=10)
    right = game.verify(greedy[:4])
    assert (right.accepted, right.appended) == (4, greedy[4])  # 4 kept + the bonus: 5 tokens
    wrong = game.verify([(greedy[5] + 1) % 256] + greedy[6:8])
    assert (wrong.accepted, wrong.appended) == (0, greedy[5])  # the target's own token instead
    plain = game.verify("")
    assert (plain.drafted, plain.new_tokens) == ([], [greedy[6]])


def test_a_guess_past_the_budget_is_cut_and_a_finished_text_refuses_more():
    model = _guess_model()
    game = GuessVerifier(model, encode("ab"), max_new_tokens=3)
    round_ = game.verify("0123456789")
    assert len(round_.drafted) == 2  # room for 2 guesses and the target's own token
    while not game.done:
        game.verify([])
    assert len(game.result.tokens) == 3
    with pytest.raises(ValueError, match="all 3 new tokens are written"):
        game.verify("x")
    with pytest.raises(ValueError, match="context window of 64"):
        GuessVerifier(model, encode("a" * 60), max_new_tokens=10)
    with pytest.raises(ValueError, match="at least one token"):
        GuessVerifier(model, [], max_new_tokens=10)
    with pytest.raises(ValueError, match="max_new_tokens"):  # a game needs one token to write
        GuessVerifier(model, encode("a"), max_new_tokens=0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m, p: speculative_decode(m, PromptLookupDrafter, p, 5, 4),
         "drafter must be a drafter, e.g. PromptLookupDrafter(), not its class"),
        (lambda m, p: speculative_decode(m, p, PromptLookupDrafter(), 5, 4),  # two swapped
         "prompt_tokens must be a list of token ids, got PromptLookupDrafter"),
        (lambda m, p: decode(greedy_decode(m, p, 3)),
         "tokens must be a list of token ids, got DecodeResult (its .tokens are token ids)"),
        (lambda m, p: greedy_decode(m.params, p, 3), "model must be a model, as load_target()"),
        (lambda m, p: ModelDrafter("draft.npz"), "(to read a file: speclab.weights.load(path))"),
        (lambda m, p: greedy_decode(m, p, 3, stop=10), "stop must be a text, a token list"),
    ],
)  # fmt: skip
def test_a_wrong_object_is_named_where_it_is_given(tiny_model, call, message):
    """Each ended deep inside: "'dict' object has no attribute 'config'", "prepare() missing 1
    required positional argument", "'DecodeResult' object is not iterable"."""
    with pytest.raises((TypeError, ValueError), match=re.escape(message)):
        call(tiny_model, encode("abc abc"))


def test_a_model_of_integers_is_refused(tmp_path, tiny_model):
    """load(path, dtype=int) cast every weight to 0: a model that writes only NUL bytes."""
    from speclab.weights import load, save

    save(tmp_path / "m.npz", tiny_model.params, tiny_model.config)
    with pytest.raises(ValueError, match="dtype must be a floating type"):
        load(tmp_path / "m.npz", dtype=int)


def test_a_k_beyond_the_context_drafts_as_the_context_allows(tiny_model):
    """k = 10**9 had run for minutes, its memory growing by gigabytes; no round can draft
    more than the context holds, so such a k is the context's."""
    prompt = encode("abc abc abc ")
    spec = speculative_decode(tiny_model, PromptLookupDrafter(), prompt, 20, 10**9)
    assert spec.tokens == greedy_decode(tiny_model, prompt, 20).tokens


def test_what_the_checks_still_take(tiny_model):
    """A model-like object, a stop given as any sequence: accepted as before the checks."""
    from types import SimpleNamespace

    like = SimpleNamespace(config=tiny_model.config, params=tiny_model.params, name="like")
    prompt = encode("abc abc")
    assert greedy_decode(like, prompt, 5).tokens == greedy_decode(tiny_model, prompt, 5).tokens
    ModelDrafter(like).propose(prompt, 2)
    first = greedy_decode(tiny_model, prompt, 5).tokens[0]
    assert greedy_decode(tiny_model, prompt, 5, stop=range(first, first + 1)).tokens == [first]


def test_the_policy_learns_what_each_round_drafted_and_kept(models):
    """The adaptive policy chooses k from what it is told; greedy output cannot show a lie
    (tokens do not depend on k), so compare what it was told with the rounds themselves."""
    from speclab.adaptive import AdaptiveK

    target, _ = models
    prompt = list(b"abcabcabcabcabcabcabc")
    policy = AdaptiveK(4)
    result = speculative_decode(target, PromptLookupDrafter(), prompt, 40, 4, policy=policy)
    told = [(d.drafted, d.accepted) for d in policy.decisions]
    assert told == [(len(r.drafted), r.accepted) for r in result.rounds][: len(told)]
    assert any(drafted > accepted for drafted, accepted in told)  # a rejection was told too

    answer = list(prompt) + greedy_decode(target, prompt, 40).tokens

    class AlwaysWrong:  # its first draft is never greedy's next token
        def propose(self, tokens, k):
            return [(answer[len(tokens) + i] + 1) % 256 for i in range(k)]

    wrong = AdaptiveK(4)
    speculative_decode(target, AlwaysWrong(), prompt, 40, 4, policy=wrong)
    assert all(d.accepted == 0 for d in wrong.decisions if d.drafted > 0)
    assert wrong.alpha < 0.5


def test_context_overflow_suggests_only_ways_that_fit():
    """One rule for every caller: None exactly when prompt + new tokens fit, and each number
    the message suggests makes it fit (no "at most -998976 tokens", no way that cannot work)."""
    n_ctx = 8
    for n_prompt in range(12):
        for n_new in range(12):
            problem = context_overflow(n_prompt, n_new, n_ctx)
            assert (problem is None) == (n_prompt + n_new <= n_ctx)
            if problem is None:
                continue
            fewer = re.search(r"ask for at most (\d+) new tokens", problem)
            shorter = re.search(r"shorten the prompt to at most (\d+) tokens", problem)
            assert fewer or shorter or "ask for fewer" in problem, problem
            assert (fewer is not None) == (n_prompt < n_ctx), problem
            assert (shorter is not None) == (n_new < n_ctx), problem
            if fewer:
                assert context_overflow(n_prompt, int(fewer[1]), n_ctx) is None
                assert context_overflow(n_prompt, int(fewer[1]) + 1, n_ctx) is not None
            if shorter:
                assert context_overflow(int(shorter[1]), n_new, n_ctx) is None
            assert "-" not in problem.split(":")[-1], problem
    big = context_overflow(1500, 10**6, 1024, new="max_new_tokens ({})")
    assert big.startswith("prompt (1,500 tokens) + max_new_tokens (1,000,000) exceeds the")
    assert big.endswith("shorten the prompt and ask for fewer new tokens")
    assert context_overflow(1, 9, 8).startswith("prompt (1 token) + 9 new tokens")


def test_a_rule_by_name_or_a_policy_that_is_not_one_is_named_before_any_forward():
    """rule="exact" had ended in "'str' object is not callable" after the prompt's forward;
    policy=3 in "'int' object has no attribute 'next_k'"."""
    model = random_model(CONFIG, np.random.default_rng(0))
    drafter, rng = PromptLookupDrafter(), np.random.default_rng(0)
    with pytest.raises(TypeError, match=r"STEP_RULES\['exact'\]"):
        speculative_decode(model, drafter, [1, 2], 4, k=2, temperature=0.5, rng=rng, rule="exact")
    with pytest.raises(TypeError, match=r"next_k\(\) and update"):
        speculative_decode(model, drafter, [1, 2], 4, k=2, policy=3)


def test_context_overflow_counts_one_token_and_says_what_is_left_when_nothing_works():
    one = context_overflow(20, 1, 16)
    assert "+ 1 new token exceeds" in one and one.endswith(
        "shorten the prompt to at most 15 tokens"
    )
    nothing = context_overflow(20, 16, 16)  # neither way alone can work
    assert nothing.endswith(": shorten the prompt and ask for fewer new tokens")
    stuck = context_overflow(20, 1, 16, shorter="", stuck="leave that prompt out")
    assert stuck.endswith(": leave that prompt out")


def test_a_stop_sequence_as_a_numpy_array_and_an_empty_one(models):
    """A stop sequence read from an array stops where the same list does; an empty one ("",
    or one of several) would match at once and is refused, not taken as "stop now"."""
    target, _ = models
    reference = greedy_decode(target, [1, 2, 3], 10).tokens
    as_list = greedy_decode(target, [1, 2, 3], 10, stop=reference[3:5])
    as_array = greedy_decode(target, [1, 2, 3], 10, stop=np.array(reference[3:5]))
    assert as_array.tokens == as_list.tokens and len(as_list.tokens) <= 5
    assert as_array.stop_reason == as_list.stop_reason == "stop"
    for stop in ("", [[1], []], ["x", ""]):
        with pytest.raises(ValueError, match="must not be empty"):
            greedy_decode(target, [1, 2, 3], 10, stop=stop)


def test_a_model_drafter_makes_one_forward_per_draft(models):
    """Counting by hand: a fresh drafter's k drafts take k forwards (the first reads the
    text, each other one the draft before it), so draft forwards = drafted tokens."""
    target, draft = models
    drafter = ModelDrafter(draft)
    drafter.propose(list(range(10, 30)), 5)
    assert drafter.forwards == 5
    result = speculative_decode(target, ModelDrafter(draft), [1, 2, 3], 30, 4, adaptive=False)
    assert result.draft_forwards == result.drafted_count > 0
