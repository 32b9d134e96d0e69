"""Lesson 05's answer key, recomputed with speclab (tables marked `<!-- check 05: NAME -->`).

The trace uses the real lookup drafter on the handout's prompt and the same `accept` as the
decoder; the statistics are read from a `DecodeResult`; the cache sizes come from a real
`KVCache` after a real forward; exercise 6 runs the real decoder on a small random model.
The `check: rounds` table of the same key is checked by tests/test_lessons.py.
"""

import itertools
import re

import numpy as np
import pytest

from speclab.acceptance import accept
from speclab.decoding import DecodeResult, Round, greedy_decode, speculative_decode
from speclab.drafters import PromptLookupDrafter, continuation
from speclab.gpt import GPTConfig
from speclab.kv_cache import KVCache
from speclab.paths import repo_root
from speclab.render import round_role
from speclab.tokenizer import encode
from speclab.weights import random_model

LESSONS = repo_root() / "lessons"
HANDOUT = LESSONS / "05_speculative_decoding.md"
KEY = LESSONS / "answers" / "05_speculative_decoding.md"
NONE = "(none)"
SYMBOLS = {"\u2423": " ", "\u21b5": "\n"}  # ␣ and ↵ as the handout prints them


def symbols(cell: str) -> list[int]:
    """A table cell of handout symbols -> token ids ("(none)" is no tokens)."""
    if cell == NONE:
        return []
    return list("".join(SYMBOLS.get(char, char) for char in cell).encode())


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def key_tables() -> dict[str, list[list[str]]]:
    tables: dict[str, list[list[str]]] = {}
    lines = KEY.read_text(encoding="utf-8").splitlines()
    for index, line in enumerate(lines):
        marker = re.fullmatch(r"<!-- check 05: (\w+) -->", line.strip())
        if marker:
            body = list(itertools.takewhile(lambda row: row.startswith("|"), lines[index + 1 :]))
            tables[marker.group(1)] = [cells(row) for row in body[2:]]
    return tables


TABLES = key_tables()


def handout_prompt() -> list[int]:
    text = HANDOUT.read_text(encoding="utf-8")
    block = re.search(r"```\n(.*?)```", text, flags=re.S).group(1)
    return list(block.rstrip("\n").encode())


def test_the_key_has_every_checked_table():
    assert set(TABLES) == {"trace", "lookup", "stats", "cache", "tie", "drafter_effect"}
    assert all(TABLES.values())


def test_trace_follows_the_lookup_drafter_and_accept():
    text = handout_prompt()
    assert bytes(text).endswith(b"    ret")
    for row in TABLES["trace"]:
        _, drafts, choices, m, appended, role, added = row
        drafts, choices = symbols(drafts), symbols(choices)
        # the proposals are what the lookup drafter really proposes on the text so far
        assert PromptLookupDrafter(3, 1).propose(text, 4) == drafts, row
        assert len(choices) == len(drafts) + 1  # t1 .. t(k+1) from one forward
        accepted = accept(drafts, choices[:-1])
        assert accepted == int(m), row
        assert symbols(appended) == [choices[accepted]], row
        assert role == round_role(drafts, accepted), row
        assert symbols(added) == drafts[:accepted] + [choices[accepted]], row
        text = text + symbols(added)
    assert bytes(text).endswith(b"return w + ")


def earliest_match(tokens: list[int], k: int, max_ngram: int = 3, min_ngram: int = 1):
    """The proposal if the *earliest* earlier occurrence wins (Hugging Face's choice of match)."""
    for n in range(max_ngram, min_ngram - 1, -1):
        suffix = tokens[-n:]
        for start in range(0, len(tokens) - n):
            if len(tokens) > n and tokens[start : start + n] == suffix:
                return continuation(tokens, start + n, k), n  # the same run-on rule
    return [], None


def test_lookup_exercise():
    for row in TABLES["lookup"]:
        text, k, proposal, n_used, earliest = row
        tokens, k = symbols(text), int(k)
        assert PromptLookupDrafter(3, 1).propose(tokens, k) == symbols(proposal), row
        used = [n for n in (3, 2, 1) if PromptLookupDrafter(n, n).propose(tokens, k)]
        assert (str(used[0]) if used else NONE) == n_used, row
        assert earliest_match(tokens, k)[0] == symbols(earliest), row


def numbers(cell: str) -> list[int]:
    return [int(n) for n in cell.split(",")]


def close(shown: str, exact: float) -> bool:
    decimals = len(shown.split(".")[1]) if "." in shown else 0
    return abs(float(shown) - exact) <= 0.5 * 10**-decimals + 1e-12


def test_statistics_are_those_of_the_result_record():
    for row in TABLES["stats"]:
        drafted, accepted, tokens, forwards, per_forward, rate = row
        rounds = [
            Round(drafted=[0] * d, accepted=m, appended=0)
            for d, m in zip(numbers(drafted), numbers(accepted), strict=True)
        ]
        all_tokens = [t for r in rounds for t in r.new_tokens]
        result = DecodeResult([0], all_tokens, rounds, target_forwards=len(rounds))
        assert len(result.tokens) == int(tokens), row
        assert result.target_forwards == int(forwards), row
        assert close(per_forward, result.tokens_per_target_forward), row
        assert close(per_forward, result.mean_accepted_length), row
        if rate == "(none drafted)":
            assert np.isnan(result.accepted_over_drafted)
        else:
            assert close(rate, result.accepted_over_drafted), row


def test_cache_sizes_with_a_real_cache(monkeypatch):
    """The key's cache table against speculative_decode itself: a prompt that leaves
    `before` positions cached, one round of scripted drafts of which the first m are
    greedy's, and the cache's length at the rollback (after the forward, and after it)."""
    config = GPTConfig(n_layer=1, n_head=2, n_embd=8, n_ctx=64)
    model = random_model(config, np.random.default_rng(5))
    rng = np.random.default_rng(6)
    seen = []
    real_truncate = KVCache.truncate

    def truncate(cache, n):
        seen.append((len(cache), n))
        return real_truncate(cache, n)

    monkeypatch.setattr(KVCache, "truncate", truncate)
    for row in TABLES["cache"]:
        before, drafts, m, after_forward, after_rollback = map(int, row)
        prompt = rng.integers(0, 256, before + 1).tolist()  # the cache holds all but the last
        greedy = greedy_decode(model, prompt, drafts + 1).tokens
        wrong = [(t + 1) % 256 for t in greedy[m:drafts]]  # the first m agree, then none
        seen.clear()
        result = speculative_decode(model, Always(greedy[:m] + wrong), prompt, drafts + 1, drafts,
                                    adaptive=False)  # fmt: skip
        assert result.tokens == greedy and result.rounds[0].accepted == m, row
        assert seen[0] == (after_forward, after_rollback), row


def test_near_tie_rule_by_perturbing_logits():
    for row in TABLES["tie"]:
        gap, largest, answer = float(row[0]), float(row[1]), row[2]
        logits = np.array([0.0, -gap])  # token 0 is the best, by gap
        worst = logits + np.array([-largest, largest])  # each moved by e, against the best
        can_change = int(np.argmax(worst)) != 0 or worst[0] == worst[1]
        assert can_change == (answer == "yes"), row
        assert can_change == (2 * largest >= gap), row


class Always:
    def __init__(self, proposal):
        self.proposal = proposal

    def propose(self, tokens, k):
        return self.proposal[:k]


class Oracle:
    """Proposes exactly greedy decoding's next tokens."""

    def __init__(self, prompt, continuation):
        self.full = list(prompt) + list(continuation)

    def propose(self, tokens, k):
        return self.full[len(tokens) : len(tokens) + k]


def test_drafter_effect_with_the_real_decoder():
    config = GPTConfig(n_layer=2, n_head=2, n_embd=16, n_ctx=64)
    model = random_model(config, np.random.default_rng(7))
    prompt, n_new, k = list(b"area(w, h)"), 20, 4
    reference = greedy_decode(model, prompt, n_new).tokens
    assert ord("z") not in reference  # so zzzz is never right
    drafters = {
        "always proposes zzzz (never right)": Always(list(b"zzzz")),
        "proposes exactly greedy's next tokens": Oracle(prompt, reference),
    }
    for name, same, forwards in TABLES["drafter_effect"]:
        result = speculative_decode(model, drafters[name], prompt, n_new, k, adaptive=False)
        assert (result.tokens == reference) == (same == "yes"), name
        assert result.target_forwards == int(forwards), name


@pytest.mark.parametrize("name", sorted(TABLES))
def test_handout_shows_inputs_but_no_answers(name):
    handout_rows = [cells(line) for line in HANDOUT.read_text(encoding="utf-8").splitlines()]
    n_inputs = {"trace": 1, "lookup": 2, "stats": 2, "cache": 3, "tie": 2, "drafter_effect": 1}
    for key_row in TABLES[name]:
        inputs = key_row[: n_inputs[name]]
        shown = [row for row in handout_rows if row[: n_inputs[name]] == inputs and len(row) > 2]
        assert shown, f"{name}: the handout lacks the row {inputs}"
        for row in shown:
            assert all(set(cell) <= {"_", " "} for cell in row[n_inputs[name] :]), row


def test_handout_prints_the_trace_tables():
    """The per-round tables of exercise 1 hold the key's drafts and target's choices."""
    text = HANDOUT.read_text(encoding="utf-8")
    for _, drafts, choices, *_ in TABLES["trace"][:2]:
        assert "| drafter proposes di | " + " | ".join(drafts) + " | (none) |" in text
        assert "| target's choice ti | " + " | ".join(choices) + " |" in text


def test_the_handout_states_the_run_on_rule_with_an_example_the_drafter_agrees_with():
    text = " ".join(HANDOUT.read_text(encoding="utf-8").split())
    assert "the copy runs on into what it has just proposed" in text
    example = re.search(r"\(`(\w+)` with k = (\d): .*?→ `(\w+)`\)", text)
    assert example, "the run-on example is missing"
    drafter = PromptLookupDrafter(max_ngram=3, min_ngram=1)
    proposal = drafter.propose(encode(example[1]), int(example[2]))
    assert bytes(proposal).decode() == example[3]
