"""Lesson 05's SpeculativeExplorer, driven headless: set a control, read what is shown."""

import re

import numpy as np
import pytest

from speclab.decoding import greedy_decode, speculative_decode
from speclab.drafters import ModelDrafter, PromptLookupDrafter
from speclab.gpt import GPTConfig
from speclab.tokenizer import encode
from speclab.weights import random_model
from speclab.widgets import DrafterGame, SpeculativeExplorer

PROMPTS = {"repeat": "abcdabcdabcdabcd", "text": "hello there"}


@pytest.fixture(scope="module")
def models():
    config = GPTConfig(n_layer=2, n_head=2, n_embd=16, n_ctx=256)
    target = random_model(config, np.random.default_rng(1))
    draft = random_model(
        GPTConfig(n_layer=1, n_head=2, n_embd=8, n_ctx=256), np.random.default_rng(2)
    )
    return target, draft


class Oracle:
    """Knows greedy decoding's text: every draft is accepted."""

    def __init__(self, target, prompt):
        self.text = encode(prompt) + greedy_decode(target, encode(prompt), 200).tokens

    def propose(self, tokens, k):
        return self.text[len(tokens) : len(tokens) + k]


def explorer(models, **kwargs):
    target, draft = models
    drafters = {
        "lookup": lambda: PromptLookupDrafter(3, 1),
        "model": lambda: ModelDrafter(draft),
        "oracle": lambda: Oracle(target, PROMPTS["repeat"]),
    }
    return SpeculativeExplorer(target, drafters, PROMPTS, max_new_tokens=30, **kwargs)


def test_first_view(models):
    shown = explorer(models)
    assert shown.matches
    assert "matches greedy decoding byte for byte: yes (30 bytes)" in shown.stats.value
    assert "draft token the target accepted" in shown.text.value  # the legend
    assert "abcdabcd" in shown.text.value  # the prompt
    assert shown.table.value.count("<tr") == len(shown.result.rounds) + 1  # + the header
    assert shown.picture.value[:4] == b"\x89PNG"
    assert shown.result.tokens == shown.greedy().tokens


def test_controls_change_the_run(models):
    shown = explorer(models)
    assert (
        "repeat: lookup drafter, exactly k = 4 drafts per round, 30 new tokens" in shown.stats.value
    )
    shown.k.value = 2
    assert "exactly k = 2 drafts" in shown.stats.value  # shown even when the run is the same
    assert max(len(r.drafted) for r in shown.result.rounds) <= 2
    before = shown.stats.value
    shown.drafter.value = "model"
    assert shown.result.draft_forwards > 0 and shown.matches
    assert shown.stats.value != before
    shown.prompt.value = "text"
    assert shown.result.prompt_tokens == encode(PROMPTS["text"])
    assert "hello there" in shown.text.value and shown.matches
    shown.max_new_tokens.value = 50
    assert len(shown.result.tokens) == 50 and shown.matches


def test_perfect_drafter_shows_bonus_tokens_and_adaptive_k(models):
    shown = explorer(models, drafter="oracle", k=4)
    assert "class='speclab-bonus'" in shown.text.value
    assert "class='speclab-correction'" not in shown.text.value
    assert shown.result.tokens_per_target_forward > 4
    shown.adaptive.value = True
    assert shown.matches and shown.result.rounds[0].drafted


def test_greedy_is_run_once_per_prompt_and_length(models):
    shown = explorer(models)
    first = shown.greedy()
    shown.k.value = 3
    assert shown.greedy() is first
    shown.max_new_tokens.value = 40
    assert shown.greedy() is not first


# --- DrafterGame: you are the drafter -----------------------------------------------------


def test_drafter_game_checks_every_prompt_it_offers_fits_the_context(models):
    """max_new_tokens was checked against the first text only: choosing a longer one in the
    dropdown raised inside the callback (only logged), and the game went on with the old text."""
    target, _ = models
    long = {"short": "ab", "long": "x" * 200}  # n_ctx 256: 200 + 60 does not fit
    with pytest.raises(
        ValueError,
        match=r"prompt 'long' \(200 tokens\) \+ max_new_tokens \(60\)"
        r" exceeds the context window of 256 tokens: ask for at most 56",
    ):
        DrafterGame(target, long, prompt="short", max_new_tokens=60)
    game = DrafterGame(target, long, prompt="short", max_new_tokens=56)
    game.prompt.value = "long"  # now every choice fits
    assert len(game.game.result.prompt_tokens) == 200  # the game plays the text it shows


def test_drafter_game_keeps_a_right_guess_and_scores_it_beside_lookup(models):
    target, _ = models
    game = DrafterGame(target, PROMPTS, prompt="text", max_new_tokens=20)
    greedy = greedy_decode(target, encode(PROMPTS["text"]), 20).tokens
    assert game.score.value == "" and "Guess what the model writes next" in game.last.value
    round_ = game.submit(bytes(greedy[:3]).decode("latin-1"))
    assert round_.accepted == 3 and round_.appended == greedy[3]
    assert game.last.value.count("\u2713") == 3 and "\u2717" not in game.last.value
    assert "4 new tokens from one forward" in game.last.value
    assert "You: 4 tokens in 1 target forward, 4.00 per forward" in game.score.value
    lookup = speculative_decode(target, PromptLookupDrafter(), encode(PROMPTS["text"]), 4, 3,
                                adaptive=False)  # fmt: skip  # k = the longest guess, 3
    assert "Prompt lookup (k = 3, your longest guess so far)" in game.score.value
    assert f"the same text: {lookup.tokens_per_target_forward:.2f} per forward" in game.score.value
    assert "These count forwards, not time" in game.score.value
    assert game.guess.value == ""  # cleared for the next guess


def test_drafter_game_colours_the_targets_tokens_as_lesson_05s_runs_do(models):
    """Its text showed every token of the target in one blue, which lesson 05's runs keep for
    a bonus token (a correction is vermillion there): the same roles, the same styles."""
    import html

    from speclab.render import HTML_STYLES

    target, _ = models
    game = DrafterGame(target, PROMPTS, prompt="text", max_new_tokens=20)
    greedy = greedy_decode(target, encode(PROMPTS["text"]), 20).tokens
    wrong = greedy[4] + 1 if greedy[4] < 127 else greedy[4] - 1  # not greedy's 5th byte

    def styled(role, token):
        piece = html.escape(bytes([token]).decode("utf-8", "replace"))
        return f"<span style='{HTML_STYLES[role]}'>{piece}</span>"

    right = game.submit(bytes(greedy[:2]).decode("latin-1"))  # both kept: a bonus token
    assert styled("bonus", right.appended) in game.text.value
    game.submit(bytes([greedy[3], wrong]).decode("latin-1"))  # the second byte rejected
    assert styled("correction", game.game.result.rounds[-1].appended) in game.text.value
    plain = game.submit("")
    assert styled("plain", plain.appended) in game.text.value
    assert "the target's byte where it rejected yours" in game.text.value  # the legend
    assert "#0072B2;color:white" not in game.text.value  # the old one-blue


def test_drafter_game_races_lookup_at_the_students_longest_guess(models):
    """Pasting a long guess must not beat lookup held to 4 drafts: lookup gets the same k."""
    target, _ = models
    game = DrafterGame(target, PROMPTS, prompt="repeat", max_new_tokens=30)
    game.submit("")  # a plain step first: nothing guessed yet, lookup at its default k = 4
    assert "Prompt lookup (k = 4)" in game.score.value
    assert len(game.submit("abcd" * 5).drafted) == 20  # 20 bytes at once
    lookup = speculative_decode(target, PromptLookupDrafter(), encode(PROMPTS["repeat"]),
                                len(game.game.result.tokens), 20, adaptive=False)  # fmt: skip
    assert "Prompt lookup (k = 20, your longest guess so far)" in game.score.value
    assert f"the same text: {lookup.tokens_per_target_forward:.2f} per forward" in game.score.value


def test_drafter_game_marks_the_first_wrong_byte_and_restarts(models):
    target, _ = models
    game = DrafterGame(target, PROMPTS, prompt="text", max_new_tokens=4)
    greedy = greedy_decode(target, encode(PROMPTS["text"]), 4).tokens
    wrong = chr((greedy[0] + 1) % 128 or 65)
    round_ = game.submit(wrong + "xy")
    assert round_.accepted == 0 and "\u2717" in game.last.value
    while game.submit("") is not None:
        pass
    assert game.game.result.tokens == greedy and "The text is complete" in game.last.value
    game.prompt.value = "repeat"  # another text starts afresh
    assert game.game.result.tokens == [] and game.score.value == ""
    game.restart.click()
    assert game.game.result.rounds == []


def test_the_explorer_says_it_is_decoding_while_it_decodes(models):
    target, _ = models
    seen = []
    shown = explorer(models)

    def watched_lookup():
        seen.append(shown.status.value)
        return PromptLookupDrafter(3, 1)

    shown.drafters["lookup"] = watched_lookup
    shown.k.value = 2
    assert seen and "Decoding" in seen[-1] and shown.status.value == ""


def test_drafter_game_says_when_a_guess_is_cut_and_counts_bytes(models):
    """A guess runs past the tokens left: the round drafts what fits (as the decoder does) and
    says so; a guess with a multi-byte character says its counts are bytes."""
    target = models[0]
    game = DrafterGame(target, PROMPTS, prompt="text", max_new_tokens=6)
    greedy = greedy_decode(target, encode(PROMPTS["text"]), 6).tokens
    round_ = game.submit(bytes(greedy).decode("latin-1") + "zzzz")  # 10 guessed, 5 fit
    assert len(round_.drafted) == 5
    assert "cut to its first 5 of 10 bytes: 6 new tokens are left" in game.last.value
    assert round_.accepted == 5 and "5 of your 5 bytes kept" in game.last.value  # greedy's own
    game.update()
    round_ = game.submit("é")
    assert "of your 2 bytes kept" in game.last.value and "Counts are bytes" in game.last.value
    assert "new token from one forward" in game.last.value and "1 new tokens" not in game.last.value
    game.update()
    game.submit("z")
    assert "of your 1 byte kept" in game.last.value


def test_drafter_game_takes_half_a_character_from_the_browser(models):
    """A text box can deliver a lone surrogate, which UTF-8 cannot hold: shown as �, no error."""
    game = DrafterGame(models[0], PROMPTS, prompt="text", max_new_tokens=6)
    round_ = game.submit("a\ud800")
    assert round_.drafted[:1] == list(b"a") and len(round_.drafted) == 4  # a + the 3 bytes of �


def test_the_explorer_says_adaptive_k_follows_this_runs_timings(models):
    shown = explorer(models, prompt="repeat", drafter="lookup", k=1)
    assert "exactly k = 1 draft per round" in shown.stats.value
    assert "adaptive k chooses" not in shown.stats.value
    shown.adaptive.value = True
    assert "adaptive, at most k = 1 draft per round" in shown.stats.value
    assert "adaptive k chooses from this run&#x27;s own timings" in shown.stats.value
    assert shown.matches


def test_drafter_game_cuts_a_one_byte_guess_in_the_singular(models):
    target = models[0]
    game = DrafterGame(target, PROMPTS, prompt="text", max_new_tokens=2)
    game.submit("")  # one token left: a guess has no room
    game.submit("x")
    assert "cut to its first 0 of 1 byte:" in game.last.value


def test_drafter_game_shows_white_space_it_marks_and_no_empty_marks():
    """A guessed line break, kept, and the target's own line break were bare newlines inside
    coloured spans, so nothing showed; lesson 05's runs show them as ↵ (speclab.render). A
    round that kept none of the guess left an empty span."""
    from speclab.render import HTML_STYLES, VISIBLE
    from speclab.weights import load_target

    game = DrafterGame(load_target(), {"f": "def f(x):\n    return x\n"}, max_new_tokens=8)
    kept = game.submit("\n")  # the shipped target writes a blank line next: kept, bonus "\n"
    assert kept.accepted == 1 and kept.appended == ord("\n")
    assert f"<span style='{HTML_STYLES['accepted']}'>{VISIBLE[chr(10)]}</span>" in game.text.value
    assert f"<span style='{HTML_STYLES['bonus']}'>{VISIBLE[chr(10)]}</span>" in game.text.value
    game.submit("zz")  # rejected at once: nothing of it kept
    assert "'></span>" not in game.text.value


def test_the_explorer_names_its_own_control_where_the_policy_switched_drafting_off(
    models, monkeypatch
):
    """The line on rounds the adaptive policy left without drafts ended "--fixed-k drafts
    every round", a flag of `speclab demo`, in a widget that has a tick box for it."""
    import speclab.demo

    real = speclab.demo.policy_off_line

    def as_if_off(policy, rounds, fixed="--fixed-k drafts"):
        policy.decisions[0].mode = "off"  # the first round: as a busy machine can make it
        return real(policy, rounds, fixed)

    monkeypatch.setattr(speclab.demo, "policy_off_line", as_if_off)
    shown = explorer(models, prompt="repeat", drafter="lookup", k=2, adaptive=True)
    assert "unticking &#x27;adaptive k&#x27; drafts every round" in shown.stats.value
    assert "--fixed-k" not in shown.stats.value


def test_drafter_game_drops_a_zero_width_space_pasted_before_a_guess(models):
    """A zero-width space copied with the four spaces made the round '✗ 0 of your 7 bytes
    kept', with a note on bytes the learner never saw typing."""
    target, _ = models
    greedy = greedy_decode(target, encode(PROMPTS["text"]), 20).tokens
    guess = bytes(greedy[:3]).decode("latin-1")  # the right guess, as the test above makes it
    game = DrafterGame(target, PROMPTS, prompt="text", max_new_tokens=20)
    round_ = game.submit("\u200b" + guess)
    assert round_.accepted == 3 and round_.drafted == greedy[:3], round_
    assert "\u2717" not in game.last.value and "Counts are bytes" not in game.last.value


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"prompt": "code_edit"}, "prompt 'code_edit': choose one of repeat, text"),
        ({"drafter": "Lookup"}, "drafter 'Lookup': choose one of lookup, model, oracle"),
        ({"k": 16}, "k 16: choose a whole number from 1 to 8"),  # had become 8 without a word
        ({"k": 0}, "k 0: choose a whole number from 1 to 8"),
        ({"k": 2.5}, "k 2.5: choose a whole number from 1 to 8"),
        ({"max_new_tokens": 500}, "max_new_tokens 500: choose a whole number from 10 to 200"),
        ({"drafters": {"lookup": PromptLookupDrafter()}}, "must make a fresh drafter when called"),
        ({"drafters": {}}, "drafters must be a dict of at least one"),
        ({"prompts": ["abc"]}, "prompts must be a dict of at least one"),
    ],
)
def test_the_explorer_names_a_value_its_controls_cannot_hold(models, change, message):
    """A wrong name ended in traitlets' "Invalid selection: value not found", a k of 16 was
    shown and run as 8, a drafter instance for its maker in "object is not callable"."""
    target, _ = models
    given = {"drafters": {"lookup": lambda: PromptLookupDrafter(3, 1), "model": None,
                          "oracle": None}, "prompts": PROMPTS, "max_new_tokens": 30}  # fmt: skip
    given["drafters"] = {name: make or (lambda: PromptLookupDrafter())
                         for name, make in given["drafters"].items()}  # fmt: skip
    given |= change
    with pytest.raises(ValueError, match=re.escape(message)):
        SpeculativeExplorer(target, given.pop("drafters"), given.pop("prompts"), **given)


@pytest.mark.parametrize(
    ("change", "message"),
    [({"prompt": "nope"}, "prompt 'nope': choose one of repeat, text"),
     ({"max_new_tokens": 0}, "max_new_tokens 0: choose a whole number of 1 or more")],
)  # fmt: skip
def test_the_game_names_a_value_it_cannot_use(models, change, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        DrafterGame(models[0], PROMPTS, **change)


def test_prompts_as_pairs_or_any_mapping_are_taken(models):
    from types import MappingProxyType

    target, _ = models
    drafters = {"lookup": lambda: PromptLookupDrafter(3, 1)}
    for prompts in (list(PROMPTS.items()), MappingProxyType(PROMPTS)):
        shown = SpeculativeExplorer(target, drafters, prompts, prompt="", max_new_tokens=10)
        assert shown.prompt.value == "repeat"  # "" or None: the first prompt


def test_a_guess_that_is_no_text_is_named(models):
    target, _ = models
    game = DrafterGame(target, {"p": "abcabc"}, max_new_tokens=8)
    with pytest.raises(TypeError, match="the guess must be text"):
        game.submit(None)
    assert game.submit("abc") is not None  # the game goes on


def test_an_emptied_dropdown_asks_for_a_choice_instead_of_a_key_error(models):
    """explorer.drafter.value = None (a dropdown with nothing chosen, set from code) had ended
    in KeyError: None inside the callback."""
    shown = explorer(models)
    before = shown.text.value
    shown.drafter.value = None
    assert "Choose a prompt and a drafter" in shown.status.value and shown.text.value == before
    shown.drafter.value = shown.drafter.options[0]  # and it goes on
    assert "Choose" not in shown.status.value


def test_the_game_asks_for_a_text_when_its_dropdown_is_emptied(models):
    target, _ = models
    game = DrafterGame(target, {"p": "abcabc", "q": "xyzxyz"}, max_new_tokens=8)
    game.prompt.value = None  # had ended in KeyError: None
    assert "Choose a text" in game.last.value
    assert game.submit("abc") is not None  # the game it had goes on
