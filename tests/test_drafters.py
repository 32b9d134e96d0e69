import numpy as np
import pytest

from speclab.drafters import ModelDrafter, PromptLookupDrafter, common_prefix_length
from speclab.gpt import GPTConfig, forward
from speclab.weights import random_model


def brute_force_source(tokens, max_ngram, min_ngram, earliest=False):
    """The definition, by rescanning: the index after the latest (or earliest) earlier
    occurrence of the longest suffix n-gram (None: no occurrence)."""
    for n in range(max_ngram, min_ngram - 1, -1):
        if len(tokens) < n + 1:
            continue
        suffix = tokens[-n:]
        starts = range(len(tokens) - n - 1, -1, -1)
        for start in reversed(starts) if earliest else starts:
            if tokens[start : start + n] == suffix:
                return start + n
    return None


def brute_force_lookup(tokens, k, max_ngram, min_ngram, earliest=False):
    """k tokens copied from the source on, running on into the proposal itself."""
    source = brute_force_source(tokens, max_ngram, min_ngram, earliest)
    if source is None:
        return []
    extended = list(tokens)
    while len(extended) < source + k:
        extended.append(extended[len(extended) - (len(tokens) - source)])
    return extended[source : source + k]


@pytest.mark.parametrize("earliest", [False, True])
def test_lookup_matches_rescan_definition_as_text_grows(earliest):
    rng = np.random.default_rng(0)
    for _ in range(30):
        max_ngram = int(rng.integers(1, 5))
        drafter = PromptLookupDrafter(max_ngram=max_ngram, min_ngram=1, earliest=earliest)
        alphabet = int(rng.integers(2, 6))  # small alphabets give many repeats
        tokens = list(rng.integers(0, alphabet, 60))
        for length in range(1, 60):
            k = int(rng.integers(1, 9))
            expected = brute_force_lookup(tokens[:length], k, max_ngram, 1, earliest)
            assert drafter.propose(tokens[:length], k) == expected
            source = brute_force_source(tokens[:length], max_ngram, 1, earliest)
            assert drafter.source(tokens[:length]) == source


def test_earliest_and_latest_lookup_differ_where_a_phrase_recurs():
    text = list(b"ab1 ab2 ab")
    assert PromptLookupDrafter(2).propose(text, 1) == list(b"2")
    assert PromptLookupDrafter(2, earliest=True).propose(text, 1) == list(b"1")


def test_lookup_resyncs_after_the_text_changes():
    drafter = PromptLookupDrafter(max_ngram=2)
    assert drafter.propose([1, 2, 3, 1, 2], 2) == [3, 1]
    assert drafter.propose([1, 2, 3, 1, 2], 5) == [3, 1, 2, 3, 1]  # on past the end
    # a rollback: the text seen before is no longer a prefix
    assert drafter.propose([5, 6, 5], 2) == [6, 5]
    assert drafter.propose([5, 6, 5, 6], 3) == brute_force_lookup([5, 6, 5, 6], 3, 2, 1)


def test_lookup_continues_a_repeating_run():
    assert PromptLookupDrafter(3, 1).propose([32] * 6, 4) == [32] * 4
    assert PromptLookupDrafter(2, 1).propose([7, 8, 7, 8, 7], 5) == [8, 7, 8, 7, 8]


def test_lookup_copy_example():
    text = list(b"def area(w, h):\n    return w * h\n\ndef area(w, h):\n    ret")
    assert bytes(PromptLookupDrafter(3, 1).propose(text, 6)) == b"urn w "


def test_lookup_no_match_and_bad_settings():
    assert PromptLookupDrafter().propose([1, 2, 3], 4) == []
    assert PromptLookupDrafter().propose([7], 4) == []
    with pytest.raises(ValueError, match="larger than"):
        PromptLookupDrafter(max_ngram=1, min_ngram=2)
    with pytest.raises(ValueError, match="positive"):
        PromptLookupDrafter(max_ngram=0)
    with pytest.raises(ValueError, match="longer than 15"):
        PromptLookupDrafter(max_ngram=16)
    with pytest.raises(TypeError):
        PromptLookupDrafter().propose([1, 2], 2.0)


def test_model_drafter_proposes_its_own_greedy_tokens_and_follows_rollbacks():
    config = GPTConfig(n_layer=1, n_head=2, n_embd=16, n_ctx=40)
    model = random_model(config, np.random.default_rng(1))
    drafter = ModelDrafter(model)

    def greedy(tokens, k):
        out = list(tokens)
        for _ in range(k):
            out.append(int(np.argmax(forward(model.params, config, out)[-1])))
        return out[len(tokens) :]

    rng = np.random.default_rng(2)
    tokens = list(rng.integers(0, 256, 10))
    for _ in range(15):
        k = int(rng.integers(1, 6))
        assert drafter.propose(tokens, k) == greedy(tokens, k)
        # the decoder accepts some drafts, or rolls back, or jumps to a new text
        tokens = tokens[: int(rng.integers(1, len(tokens) + 1))] + list(rng.integers(0, 256, 3))
        tokens = tokens[:30]
    assert drafter.propose(list(range(40)), 4) == []  # no room left in its window


def test_common_prefix_length():
    assert common_prefix_length([1, 2, 3], [1, 2, 3, 4]) == 3
    assert common_prefix_length([1, 9, 3], [1, 2, 3]) == 1
    assert common_prefix_length([], [1]) == 0


def test_lookup_checks_new_tokens_and_numpy_input():
    drafter = PromptLookupDrafter()
    assert drafter.propose(np.array([1, 2, 1], dtype=np.int32), 2) == [2, 1]
    with pytest.raises(ValueError, match="outside the vocabulary"):
        drafter.propose([1, 2, 1, 300], 2)
    with pytest.raises(TypeError, match="not text"):
        drafter.propose("abc", 2)
    assert drafter.propose([1, 2, 1], 2) == [2, 1]  # still usable after the error


def test_lookup_refuses_a_k_no_round_could_use():
    """PromptLookupDrafter().propose(tokens, 10**8) had built a list of 10**8 tokens (0.8 GB);
    the decoders never ask for more than the context window."""
    from speclab.counting import K_MOST

    drafter = PromptLookupDrafter()
    with pytest.raises(ValueError, match=f"k must be at most {K_MOST:,} drafts"):
        drafter.propose([1, 2, 3, 1, 2], 10**8)
    assert len(drafter.propose([1, 2, 3, 1, 2], K_MOST)) == K_MOST  # runs on into its own copy


def positions_fed(monkeypatch):
    """The number of positions each of the draft model's forwards reads (a spy on forward)."""
    import speclab.drafters

    fed, real = [], speclab.drafters.forward

    def spy(params, config, tokens, cache=None):
        fed.append(len(tokens))
        return real(params, config, tokens, cache)

    monkeypatch.setattr(speclab.drafters, "forward", spy)
    return fed


@pytest.mark.parametrize("sampled", [False, True])
def test_model_drafter_reads_only_what_its_cache_lacks(monkeypatch, sampled):
    """Its KV cache keeps the text and the drafts it fed: a round that keeps 2 of 4 drafts and
    adds the target's own token costs the next round one position to catch up, not the
    whole text again (greedy drafts and sampled ones alike)."""
    from speclab.sampling import SamplingSettings

    model = random_model(
        GPTConfig(n_layer=1, n_head=2, n_embd=8, n_ctx=96), np.random.default_rng(11)
    )
    drafter, rng = ModelDrafter(model), np.random.default_rng(0)

    def propose(tokens):
        if sampled:
            return drafter.propose_with_probs(tokens, 4, SamplingSettings(1.0), rng)[0]
        return drafter.propose(tokens, 4)

    fed = positions_fed(monkeypatch)
    tokens = list(range(10, 30))
    drafts = propose(tokens)
    assert fed == [20, 1, 1, 1]  # the text once, then each draft but the last
    fed.clear()
    propose(tokens + drafts[:2] + [(drafts[2] + 1) % 256])
    assert fed[0] == 1  # the kept drafts are in the cache: only the target's token is read


def test_sampled_drafts_stop_at_the_context_window():
    """propose_with_probs drafts no further than the model's window, as propose does."""
    from speclab.sampling import SamplingSettings

    config = GPTConfig(n_layer=1, n_head=2, n_embd=16, n_ctx=40)
    drafter = ModelDrafter(random_model(config, np.random.default_rng(1)))
    settings, rng = SamplingSettings(1.0), np.random.default_rng(0)
    drafts, p_draft = drafter.propose_with_probs(list(range(40)), 4, settings, rng)
    assert drafts == [] and p_draft.shape == (0, 256)
    drafts, p_draft = drafter.propose_with_probs(list(range(38)), 4, settings, rng)
    assert len(drafts) == 2 and p_draft.shape == (2, 256)
