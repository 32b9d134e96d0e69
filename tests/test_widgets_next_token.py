"""Lesson 03b's NextTokenExplorer and next_token_figure, driven headless."""

import numpy as np
import pytest
from matplotlib.figure import Figure

from speclab.figures import next_token_figure
from speclab.gpt import GPTConfig
from speclab.next_token import next_token_logits, top_choices
from speclab.tokenizer import encode
from speclab.weights import random_model
from speclab.widgets import NextTokenExplorer

MODEL = random_model(GPTConfig(n_layer=1, n_head=2, n_embd=16, n_ctx=64), np.random.default_rng(5))


def texts(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.axes[0].texts]


def test_the_bars_follow_the_text_and_the_temperature():
    shown = NextTokenExplorer(MODEL, text="hello")
    expected = top_choices(next_token_logits(MODEL, encode("hello")), 1.0, 10)
    assert shown.choices == expected
    assert shown.picture.value[:4] == b"\x89PNG"
    assert "One forward over 5 tokens" in shown.note.value
    shown.text.value = "hello there"
    assert shown.choices == top_choices(next_token_logits(MODEL, encode("hello there")), 1.0, 10)
    shown.temperature.value = 0.0
    assert shown.choices[0].probability == 1.0 and "at temperature 0" in shown.note.value
    shown.temperature.value = 2.0  # flatter: a hotter temperature lowers the top bar
    flat = shown.choices[0].probability
    shown.temperature.value = 0.5
    assert shown.choices[0].probability > flat


def test_a_one_byte_text_says_one_token():
    assert "One forward over 1 token." in NextTokenExplorer(MODEL, text="a").note.value


def test_an_empty_text_asks_for_one():
    shown = NextTokenExplorer(MODEL, text="")
    assert shown.choices == [] and "Type some text" in shown.note.value


def test_the_figure_labels_every_bar_and_marks_greedy():
    choices = top_choices(np.array([3.0, 1.0, 2.0, 0.5] + [-5.0] * 252), 1.0, 4)
    fig = next_token_figure(choices)
    labels = [tick.get_text() for tick in fig.axes[0].get_yticklabels()]
    assert labels == ["\\x03", "\\x01", "\\x02", "\\x00"][::-1]  # most likely (token 0) on top
    notes = texts(fig)
    assert notes[0].endswith("greedy") and sum("greedy" in n for n in notes) == 1
    assert notes[0].strip().startswith(f"{choices[0].probability:.1%}")


def test_a_text_longer_than_the_context_says_what_the_model_reads():
    shown = NextTokenExplorer(MODEL, text="ab" * 50)  # 100 tokens, a context of 64
    assert "One forward over the last 64 of 100 tokens" in shown.note.value
    assert shown.choices == top_choices(next_token_logits(MODEL, encode("ab" * 50)[-64:]), 1.0, 10)


def test_half_a_character_from_the_browser_is_read_as_the_replacement_character():
    shown = NextTokenExplorer(MODEL, text="ab\ud800")
    assert shown.choices == top_choices(next_token_logits(MODEL, encode("ab\ufffd")), 1.0, 10)


def test_a_long_text_says_it_is_computing_while_the_forward_runs():
    shown = NextTokenExplorer(MODEL, text="hi")
    notes = []
    shown.note.observe(lambda change: notes.append(change["new"]), names="value")
    shown.text.value = "x = 1\n" * 100  # 600 tokens, of which the model reads its last 64
    # it said "one forward over 600 tokens", then "One forward over the last 64 of 600"
    assert notes[0] == "<p>Computing: one forward over the last 64 of 600 tokens\u2026</p>"
    assert notes[-1].startswith("<p>One forward over the last 64 of 600 tokens.")
    shown.text.value = "x = 1\n" * 300
    assert shown.note.value.startswith("<p>One forward over the last 64 of 1,800 tokens.")
    notes.clear()
    shown.text.value = "short"
    assert not any("Computing" in note for note in notes)


def test_the_temperature_reshapes_the_bars_without_a_forward(monkeypatch):
    """Moving the slider ran a forward each time: about a second a move over a long text."""
    import speclab.next_token

    shown = NextTokenExplorer(MODEL, text="x = 1\n" * 100)
    forwards, real = [], speclab.next_token.next_token_logits
    monkeypatch.setattr(speclab.next_token, "next_token_logits",
                        lambda *a: forwards.append(1) or real(*a))  # fmt: skip
    notes = []
    shown.note.observe(lambda change: notes.append(change["new"]), names="value")
    shown.temperature.value = 0.5
    logits = real(MODEL, encode("x = 1\n" * 100))
    assert forwards == [] and shown.choices == top_choices(logits, 0.5, 10)
    assert not any("Computing" in note for note in notes)  # nothing to wait for
    shown.text.value = "x = 2\n" * 100  # a new text: one forward
    assert forwards == [1]
    assert shown.choices == top_choices(real(MODEL, encode("x = 2\n" * 100)), 0.5, 10)


def test_every_label_stays_on_the_picture_even_at_certainty():
    """At temperature 0 the top bar reaches 100 %, and its "greedy" label ran off the edge."""
    from speclab.next_token import Choice

    for top in (1.0, 0.7, 0.3):
        fig = next_token_figure([Choice(41, 5.0, top), Choice(42, 1.0, 1 - top)])
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        renderer = FigureCanvasAgg(fig).get_renderer()
        edge = fig.bbox
        for text in fig.axes[0].texts:
            box = text.get_window_extent(renderer)
            assert edge.x0 <= box.x0 and box.x1 <= edge.x1, (top, text.get_text())


def test_a_long_text_updates_when_the_box_is_left_not_at_every_key():
    """One forward a keystroke: at 1,200 tokens typing 20 characters queued 13-20 s of
    forwards. A long text now updates when the learner leaves the box, and the note says so."""
    shown = NextTokenExplorer(MODEL, text="hi")
    assert shown.text.continuous_update and "click outside" not in shown.note.value
    shown.text.value = "x = 1\n" * 100
    assert not shown.text.continuous_update
    assert shown.note.value.endswith("the bars now follow when you click outside the box.</p>")
    shown.text.value = "short again"
    assert shown.text.continuous_update and "click outside" not in shown.note.value


def test_the_note_counts_the_bars_it_draws():
    """n = 1 still said "the ten bars"."""
    assert "the 1 bar holds" in NextTokenExplorer(MODEL, text="a", n=1).note.value
    assert "the 3 bars hold" in NextTokenExplorer(MODEL, text="a", n=3).note.value


def test_a_near_certain_bar_is_not_labelled_certain():
    """The bar labels and the note rounded 0.9995 onto 100.0% and 4e-5 onto 0.0%, as lesson
    03b's table had: the lesson says the model gives odds, never certainty."""
    from speclab.next_token import Choice

    choices = [Choice(32, 10.0, 0.99955), Choice(10, 1.0, 0.00004)]
    notes = texts(next_token_figure(choices))
    assert notes[0].strip().startswith(">99.9%") and notes[1].strip().startswith("<0.1%")
    assert not any("100.0%" in n or "0.0%" in n for n in notes)


def test_the_explorer_wants_text_and_a_model():
    """text=encode("abc") and a model's params had ended in traitlets' TraitError and in
    "'dict' object has no attribute 'config'"."""
    with pytest.raises(TypeError, match="text must be the text itself, in quotes"):
        NextTokenExplorer(MODEL, text=encode("abc"))
    with pytest.raises(TypeError, match="must be a model"):
        NextTokenExplorer(MODEL.params, text="abc")
