"""speclab.render: every new token gets its role, and the text survives every rendering."""

import html
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from speclab.decoding import DecodeResult, Round, greedy_decode, speculative_decode
from speclab.drafters import PromptLookupDrafter
from speclab.gpt import GPTConfig
from speclab.render import (
    ANSI_STYLES,
    PLAIN_MARKS,
    ROLES,
    code_span,
    legend_ansi,
    legend_html,
    pieces,
    render_ansi,
    render_html,
    round_role,
    round_rows,
    token_markdown,
    token_roles,
)
from speclab.tokenizer import decode
from speclab.weights import random_model

SGR = re.compile(r"\x1b\[[0-9;]*m")


def made_up_result(rounds: list[Round], prompt: bytes = b"def f(x):\n") -> DecodeResult:
    tokens = [t for r in rounds for t in r.new_tokens]
    return DecodeResult(list(prompt), tokens, rounds, target_forwards=len(rounds))


def e(text: str) -> list[int]:
    return list(text.encode())


ROUNDS = [
    Round(e("    re"), 6, ord("t")),  # all accepted: bonus
    Round(e("urn x"), 2, ord("n")),  # correction
    Round([], 0, ord(" ")),  # plain step
    Round(e("* 2"), 1, ord("+")),
    Round(e(" 1\n"), 3, ord("\n")),  # a bonus that is a line break
    Round(e("xyz"), 0, ord("#")),
]


def test_token_roles_by_hand():
    roles = token_roles(made_up_result(ROUNDS))
    assert [role for _, role, _ in roles[:8]] == ["accepted"] * 6 + ["bonus", "accepted"]
    by_round = {}
    for _, role, index in roles:
        by_round.setdefault(index, []).append(role)
    assert by_round[1] == ["accepted", "accepted", "correction"]
    assert by_round[2] == ["plain"]
    assert by_round[5] == ["correction"]
    assert [round_role(r.drafted, r.accepted) for r in ROUNDS] == [
        "bonus", "correction", "plain", "correction", "bonus", "correction",
    ]  # fmt: skip


def test_roles_follow_a_stop_that_cut_the_last_round():
    result = made_up_result(ROUNDS[:2])
    result.tokens = result.tokens[:9]  # "    retur": a stop inside round 2
    assert len(token_roles(result)) == 9
    assert "".join(p.text for p in pieces(result)) == "    retur"


def test_rounds_that_do_not_add_up_are_refused():
    result = made_up_result(ROUNDS)
    result.tokens = result.tokens[:-1] + [ord("!")]
    with pytest.raises(ValueError, match="do not add up"):
        token_roles(result)


def test_pieces_rebuild_the_text_including_split_characters():
    # "é" is two bytes: the first accepted as a draft, the second the target's bonus
    word = e("café!")
    rounds = [Round(word[:4], 4, word[4]), Round([], 0, word[5])]
    result = made_up_result(rounds)
    assert "".join(p.text for p in pieces(result)) == "café!"
    assert [p.role for p in pieces(result)] == ["accepted", "bonus", "plain"]


def test_plain_text_has_marks_and_no_escape_codes():
    result = made_up_result(ROUNDS)
    text = render_ansi(result, color=False)
    assert "\x1b" not in text
    assert text.startswith("\u2039    re\u203a{t}\u2039ur\u203a[n] ")
    assert "{\u21b5\n}" in text  # a line-break bonus is visible
    assert "\x1b" not in legend_ansi(False)
    for role, (start, end) in PLAIN_MARKS.items():
        assert f"{start}{role}{end}" in legend_ansi(False)


def test_colour_text_without_its_codes_is_the_text():
    result = made_up_result(ROUNDS[:4])  # no marked run of whitespace only
    text = render_ansi(result, color=True)
    assert SGR.sub("", text) == decode(result.tokens)
    for role in ("accepted", "correction", "bonus"):
        assert f"\x1b[{ANSI_STYLES[role]}m" in text
    assert render_ansi(result, color=True, prompt="P").startswith("\x1b[2mP")


def test_colour_never_spans_a_line_break():
    result = made_up_result([Round(e("a\nb"), 3, ord("c"))])
    lines = render_ansi(result, color=True).split("\n")
    assert all(line.count("\x1b[0m") >= line.count("\x1b[3") for line in lines)
    assert lines[0].endswith("\x1b[0m")


def test_html_is_escaped_and_carries_every_role():
    rounds = [Round(e("<b>"), 3, ord("&")), Round(e("x"), 0, ord("<")), Round([], 0, ord("y"))]
    result = made_up_result(rounds)
    page = render_html(result, prompt="if a < b:")
    assert "<b>" not in page and "&lt;b&gt;" in page
    for role in ("accepted", "correction", "bonus"):
        assert f"class='speclab-{role}'" in page
    shown = html.unescape(re.sub(r"<[^>]+>", "", page.split("</pre>")[0]))
    assert shown == "if a < b:" + decode(result.tokens)
    assert "title='round 1: draft token the target accepted'" in page
    legend = legend_html()
    assert all(role in legend for role in ROLES)
    assert render_html(result, legend=False).endswith("</pre>")


def test_html_styles_differ_without_colour():
    """Each marked role keeps a cue of its own when colours are removed (print)."""
    from speclab.render import HTML_STYLES

    def without_colour(style):
        kept = [
            part
            for part in style.split(";")
            if part and not part.startswith(("background", "color"))
        ]
        return ";".join(re.sub(r"#[0-9A-Fa-f]{6}", "", part) for part in kept)

    cues = {role: without_colour(HTML_STYLES[role]) for role in ("accepted", "correction", "bonus")}
    assert len(set(cues.values())) == 3 and all(cues.values())


def test_round_rows_add_up():
    result = made_up_result(ROUNDS)
    rows = round_rows(result)
    assert [r["round"] for r in rows] == list(range(1, len(ROUNDS) + 1))
    assert sum(r["tokens gained"] for r in rows) == len(result.tokens)
    assert rows[0]["drafted"] == "\u2423" * 4 + "re"
    assert rows[4]["appended"] == "\\n" and rows[4]["appended as"] == "bonus"
    assert rows[-1]["tokens per forward so far"] == pytest.approx(result.tokens_per_target_forward)


def test_roles_of_a_real_run_match_its_counts():
    model = random_model(
        GPTConfig(n_layer=2, n_head=2, n_embd=16, n_ctx=96), np.random.default_rng(3)
    )
    prompt = list(b"abcabcabcabcabc")
    result = speculative_decode(model, PromptLookupDrafter(), prompt, 40, 4, adaptive=False)
    assert result.tokens == greedy_decode(model, prompt, 40).tokens
    roles = [role for _, role, _ in token_roles(result)]
    assert roles.count("accepted") == result.accepted_count
    assert len(roles) - roles.count("accepted") == len(result.rounds)
    assert [t for t, _, _ in token_roles(result)] == result.tokens


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("`*_<>&\\[] a'"), min_size=1, max_size=12))
def test_a_code_span_shows_its_text_as_it_is(text):
    # The oracle is a CommonMark renderer (markdown-it, as JupyterLab's is CommonMark too).
    rendered = MarkdownIt().renderInline(code_span(text))
    assert rendered.startswith("<code>") and rendered.endswith("</code>"), rendered
    assert html.unescape(rendered[len("<code>") : -len("</code>")]) == text


def test_a_token_in_a_sentence_is_shown_as_itself():
    for token, shown in ((96, "'`'"), (42, "'*'"), (60, "'<'"), (10, "'\\n'"), (32, "'\u2423'")):
        assert (
            MarkdownIt().renderInline(token_markdown(token))
            == f"<code>{html.escape(shown, quote=False)}</code>"
        )


def test_the_legend_says_what_each_whitespace_mark_stands_for():
    """speclab demo showed ‹···› and ↵ with no word on what they were."""
    from speclab.render import VISIBLE

    names = {" ": "a space", "\n": "a line break", "\t": "a tab"}
    for legend in (legend_ansi(False), legend_html()):  # the terminal's and the notebook's
        for char, shown in VISIBLE.items():
            assert f"{shown[0]} {names[char]}" in legend


def test_counted_writes_large_counts_as_the_rest_of_the_text_does():
    """ "cut to its first 53 of 100000 bytes", where every other large number has separators."""
    from speclab.render import counted

    assert counted(1, "byte") == "1 byte" and counted(100_000, "byte") == "100,000 bytes"


def test_decimals_shows_what_differs_as_different():
    from speclab.render import decimals

    assert decimals(0.3, 0.5, 0.6) == 2  # the lesson's own p and q: as before
    assert decimals(0.0005, 0.001, 0.5) == 4  # 0.0005 is not 0.00
    assert decimals(0.29985, 0.3) == 4  # nor 0.30 the same as 0.30: 0.2998 and 0.3000
    assert decimals(0.3, 0.3, 0.1) == 2  # equal values may print alike
    assert decimals(97.4, 98.1, least=0) == 0 and decimals(99.6, 99.8, least=0) == 1


@pytest.mark.parametrize(
    ("p", "shown"),
    [(0.999515, ">99.9%"), (1.0, "100.0%"), (4e-5, "<0.1%"), (0.0, "0.0%"), (0.4, "40.0%"),
     (0.0005, "0.1%"), (0.9994, "99.9%")],
)  # fmt: skip
def test_a_probability_is_never_rounded_onto_certainty_or_impossibility(p, shown):
    """Lesson 03b's greedy table showed 0.999515 as 100.0% and 4e-5 as 0.0%, beside a lesson
    that says the model gives odds, not answers."""
    from speclab.render import shown_probability

    assert shown_probability(p) == shown


def test_the_tokens_or_rounds_of_a_run_instead_of_the_run_are_named():
    """render_html(run.tokens) and the other renderings had ended in "'list' object has no
    attribute 'rounds'"; alpha_estimate(run) in "'DecodeResult' object is not iterable"."""
    from speclab.bench_decode import alpha_estimate
    from speclab.figures import rounds_figure
    from speclab.render import render_ansi, render_html, round_rows, token_roles

    run = DecodeResult(prompt_tokens=[97], tokens=[98], rounds=[Round([], 0, 98)])
    for render in (render_html, render_ansi, round_rows, token_roles, rounds_figure):
        with pytest.raises(TypeError, match=r"the run itself, not run.tokens"):
            render(run.tokens)
        with pytest.raises(TypeError, match=r"the run itself"):
            render(run.rounds)
    assert render_html(run) and round_rows(run)  # the run itself is fine
    with pytest.raises(TypeError, match=r"alpha_estimate\(run.rounds\)"):
        alpha_estimate(run)
    with pytest.raises(TypeError, match=r"alpha_estimate\(run.rounds\)"):
        alpha_estimate([run])


def test_shown_probability_refuses_what_is_no_probability():
    from speclab.render import shown_probability

    for p in (1.5, -0.1, float("nan")):
        with pytest.raises(ValueError, match="between 0 and 1"):
            shown_probability(p)
    assert [shown_probability(p) for p in (0, 1, 0.5)] == ["0.0%", "100.0%", "50.0%"]
