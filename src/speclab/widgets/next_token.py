"""Widgets of what a language model does (lesson 03b).

- `NextTokenExplorer`: type a text and see the target's ten most likely next tokens as
  bars that update as you type; a temperature slider reshapes them; the top bar is what
  greedy decoding writes.
"""

import html

import ipywidgets as widgets
from matplotlib.figure import Figure

from speclab.widgets.base import Shown, checked_number, figure_png, float_slider, typed_text

LONG_TEXT = 256  # tokens: above this, the note says it is computing while the forward runs


class NextTokenExplorer(Shown):
    """Lesson 03b: one forward, one set of bars (speclab.next_token).

    `.text` is the text box, `.temperature` the slider; what is shown: the bars
    (`.picture`, `.figure`) and one line on the greedy choice (`.note`). The latest choices
    are `.choices` (speclab.next_token.Choice, most likely first).
    """

    def __init__(self, model, text: str = "def is_even(number):\n    return", n: int = 10):
        from speclab.weights import checked_model

        self.model = checked_model(model)
        self.n = checked_number(n, 1, model.config.n_vocab, "n", whole=True)
        if not isinstance(text, str):  # encode("abc") had ended in traitlets' TraitError
            raise TypeError(f"text must be the text itself, in quotes, got {text!r:.60}")
        self.text = widgets.Textarea(value=text, description="text",
                                     layout=widgets.Layout(width="100%", height="5em"))  # fmt: skip
        self.temperature = float_slider(value=1.0, min=0.0, max=2.0, step=0.1,
                                        description="temperature")  # fmt: skip
        self.note, self.picture = widgets.HTML(), widgets.Image(format="png")
        self.figure: Figure | None = None
        self._last = None  # (the tokens read, their logits): the latest forward
        self.text.observe(self._on_change, names="value")
        self.temperature.observe(self._on_change, names="value")
        self.box = widgets.VBox([self.text, self.temperature, self.note, self.picture])
        self.update()

    def update(self) -> None:
        from speclab.figures import next_token_figure
        from speclab.next_token import next_token_logits, top_choices
        from speclab.render import counted, shown_probability, shown_token
        from speclab.tokenizer import encode

        tokens = encode(typed_text(self.text.value))
        if not tokens:
            self.choices = []
            self.note.value = "<p>Type some text: the model needs a token to continue.</p>"
            self.picture.value = b""
            return
        t = self.temperature.value
        read = tuple(tokens[-self.model.config.n_ctx :])  # what the forward reads
        seen = len(read)  # the model reads its last n_ctx tokens
        over = (
            f"the last {seen:,} of {len(tokens):,} tokens"
            if seen < len(tokens)
            else ("1 token" if seen == 1 else f"{seen:,} tokens")
        )
        if self._last is None or self._last[0] != read:  # a new temperature needs no forward
            if len(tokens) > LONG_TEXT:  # a forward over a long text takes a moment: say so
                self.note.value = f"<p>Computing: one forward over {over}\u2026</p>"
            self._last = (read, next_token_logits(self.model, tokens))
        self.choices = top_choices(self._last[1], t, self.n)
        top = self.choices[0]
        # one forward a keystroke: on a long text typing queues forwards faster than they
        # run (0.6 s each at 1,200 tokens), so the bars then follow when the box is left
        self.text.continuous_update = len(tokens) <= LONG_TEXT
        after = (
            ""
            if self.text.continuous_update
            else " A long text: the bars now follow when you click outside the box."
        )
        self.note.value = (
            f"<p>One forward over {over}. Greedy decoding writes "
            f"<b>{html.escape(shown_token(top.token))}</b> ({shown_probability(top.probability)} at temperature "
            f"{t:g}); the {counted(len(self.choices), 'bar')} "
            f"{'holds' if len(self.choices) == 1 else 'hold'} "
            f"{sum(c.probability for c in self.choices):.0%} of the "
            f"probability.{after}</p>"
        )
        self.figure = next_token_figure(self.choices, title=f"temperature {t:g}")
        self.picture.value = figure_png(self.figure)
