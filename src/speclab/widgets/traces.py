"""Widgets of real decoding runs (lesson 05).

- `SpeculativeExplorer`: pick a prompt, a drafter and k; a real speculative run on the
  shipped model, coloured by token role, with its rounds table and the byte-for-byte check
  against greedy decoding.
- `DrafterGame`: you are the drafter; type a guess, the target verifies it in one forward,
  and your tokens per forward stand beside prompt lookup's on the same text.
"""

import html
import math
from collections.abc import Mapping

import ipywidgets as widgets
from matplotlib.figure import Figure

from speclab.figures import CROSS, TICK
from speclab.render import counted
from speclab.widgets.base import Shown, checked_choice, checked_number, figure_png, visible_text


def _named(things, name: str) -> dict:
    """{name: thing}, at least one: a list or a text ended in "dictionary update sequence
    element #0 has length 10; 2 is required", an empty dict in a bare StopIteration."""
    pairs = isinstance(things, (list, tuple)) and all(
        isinstance(pair, tuple) and len(pair) == 2 for pair in things
    )  # [(name, thing), ...], as dict() takes them
    if not (isinstance(things, Mapping) or pairs) or not things:
        raise ValueError(
            f"{name} must be a dict of at least one {{name: ...}}, got {things!r}"[:300]
        )
    return dict(things)


class SpeculativeExplorer(Shown):
    """Lesson 05: pick a prompt, a drafter and k; watch the rounds of a real run.

    target: the target model; drafters: {name: a function making a fresh drafter};
    prompts: {name: text}. Each change decodes the prompt greedily and speculatively and
    shows the continuation coloured by token role with its legend (`.text`), the round
    statistics and the byte-for-byte check (`.stats`), the per-round table (`.table`) and
    `speclab.figures.rounds_figure` (`.picture`). The latest runs are `.result` and
    `.greedy`; `.matches` says whether they are the same bytes.
    """

    def __init__(
        self,
        target,
        drafters: dict,
        prompts: dict,
        prompt: str | None = None,
        drafter: str | None = None,
        k: int = 4,
        max_new_tokens: int = 80,
        adaptive: bool = False,
    ):
        self.target, self.drafters, self.prompts = (
            target,
            _named(drafters, "drafters"),
            _named(prompts, "prompts"),
        )
        for name, make in self.drafters.items():  # a drafter itself has no call: a maker does
            if not callable(make):
                raise ValueError(f"drafters[{name!r}] must make a fresh drafter when called, e.g. "
                                 f"lambda: PromptLookupDrafter(); got {make!r}")  # fmt: skip
        prompt = checked_choice(prompt or next(iter(self.prompts)),
                                self.prompts, "prompt")  # fmt: skip
        drafter = checked_choice(drafter or next(iter(self.drafters)),
                                 self.drafters, "drafter")  # fmt: skip
        checked_number(k, 1, 8, "k", whole=True)
        checked_number(max_new_tokens, 10, 200, "max_new_tokens", whole=True)
        self._greedy_runs: dict = {}  # (prompt name, max_new_tokens) -> greedy DecodeResult
        self.prompt = widgets.Dropdown(
            options=list(self.prompts), value=prompt, description="prompt",
        )  # fmt: skip
        self.drafter = widgets.Dropdown(
            options=list(self.drafters), value=drafter, description="drafter",
        )  # fmt: skip
        self.k = widgets.IntSlider(value=k, min=1, max=8, description="k (drafts)",
                                   continuous_update=False)  # fmt: skip
        self.max_new_tokens = widgets.IntSlider(
            value=max_new_tokens, min=10, max=200, step=10, description="new tokens",
            continuous_update=False,
        )  # fmt: skip
        self.adaptive = widgets.Checkbox(value=adaptive, description="adaptive k (at most k)")
        self.text, self.stats, self.table = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.status = widgets.HTML()  # shown while decoding
        self.picture = widgets.Image(format="png")
        self.figure: Figure | None = None
        controls = (self.prompt, self.drafter, self.k, self.max_new_tokens, self.adaptive)
        for control in controls:
            control.observe(self._on_change, names="value")
        self.box = widgets.VBox(
            [widgets.HBox(controls[:2]), widgets.HBox(controls[2:]), self.status, self.text, self.stats,
             self.picture, self.table]
        )  # fmt: skip
        self.update()

    def greedy(self):
        """Plain greedy decoding of the chosen prompt (kept per prompt and length)."""
        from speclab.decoding import greedy_decode
        from speclab.tokenizer import encode

        key = (self.prompt.value, self.max_new_tokens.value)
        if key not in self._greedy_runs:
            prompt = encode(self.prompts[self.prompt.value])
            self._greedy_runs[key] = greedy_decode(self.target, prompt, key[1])
        return self._greedy_runs[key]

    def update(self) -> None:
        import pandas as pd

        from speclab.adaptive import AdaptiveK
        from speclab.decoding import speculative_decode
        from speclab.demo import drafts_per_round, match_line, policy_off_line, statistics_lines
        from speclab.figures import rounds_figure
        from speclab.render import render_html, round_rows
        from speclab.timing import blas_threads
        from speclab.tokenizer import encode

        if self.prompt.value is None or self.drafter.value is None:  # a dropdown emptied by code
            self.status.value = "<p><b>Choose a prompt and a drafter.</b></p>"
            return
        prompt = self.prompts[self.prompt.value]
        self.status.value = "<p><i>Decoding greedily and speculatively\u2026</i></p>"
        policy = AdaptiveK(self.k.value) if self.adaptive.value else None
        try:
            with blas_threads(1):  # as speclab bench decode: the adaptive policy times rounds
                self.result = speculative_decode(
                    self.target, self.drafters[self.drafter.value](), encode(prompt),
                    self.max_new_tokens.value, self.k.value, adaptive=self.adaptive.value,
                    policy=policy,
                )  # fmt: skip
            greedy = self.greedy()
        finally:
            self.status.value = ""
        self.matches, verdict = match_line(self.result, greedy)
        self.text.value = render_html(self.result, prompt=prompt)
        how = "adaptive, at most" if self.adaptive.value else "exactly"
        settings = (
            f"{self.prompt.value}: {self.drafter.value} drafter, "
            f"{drafts_per_round(how, self.k.value)}, {self.max_new_tokens.value} new tokens"
        )
        lines = [settings] + statistics_lines(self.result, greedy)[:2]
        if policy is not None:  # its choices follow this run's timings: say so
            lines.append(
                "adaptive k chooses from this run's own timings on this machine, so running "
                "it again may choose other k (and other counts); the text stays the same"
            )
            off = policy_off_line(policy, len(self.result.rounds), "unticking 'adaptive k' drafts")
            lines += [off] if off else []
        self.stats.value = "<br>".join([*map(html.escape, lines), f"<b>{html.escape(verdict)}</b>"])
        self.table.value = pd.DataFrame(round_rows(self.result)).to_html(
            index=False, float_format="{:.2f}".format
        )
        self.figure = rounds_figure(self.result)
        self.picture.value = figure_png(self.figure)


def _visible(data: bytes) -> str:
    """Bytes as text with spaces, newlines and other control bytes drawn (␣, ↵, \\x00), for a
    row of ticks."""
    from speclab.tokenizer import token_str

    text = data.decode("utf-8", errors="replace")
    text = "".join(token_str(ord(c)) if ord(c) < 32 and c != "\n" else c for c in text)
    return text.replace(" ", "\u2423").replace("\n", "\u21b5")


GAME_ROLES = {  # the roles of speclab.render.ROLE_MEANING, said to the one who drafts
    "accepted": "your bytes the target kept",
    "correction": "the target's byte where it rejected yours",
    "bonus": "the target's bonus byte after all of yours were kept",
    "plain": "the target's byte in a round you did not guess",
}


def _role(round_) -> str:
    """The role of the target's own token in a round, as speclab.render names it."""
    if not round_.drafted:
        return "plain"
    return "bonus" if round_.accepted == len(round_.drafted) else "correction"


def _every_prompt_fits(prompts: dict, max_new_tokens: int, n_ctx: int) -> None:
    """ValueError naming the first prompt that leaves no room for max_new_tokens: found when
    the game is made, not when the dropdown chooses it (the callback's error was only logged,
    and the dropdown showed one text while the game went on with another)."""
    from speclab.decoding import context_overflow
    from speclab.tokenizer import encode

    words = {"new": "max_new_tokens ({})", "shorter": "leave that prompt out"}
    for name, text in prompts.items():
        n_prompt = len(encode(text))
        if problem := context_overflow(
            n_prompt, max_new_tokens, n_ctx, f"prompt {name!r}", **words
        ):
            raise ValueError(problem)


class DrafterGame(Shown):
    """Lesson 05: you are the drafter. Type your guess of the next characters and press
    "check": the target verifies the whole guess in ONE forward (speclab.decoding.GuessVerifier).

    Shown: the text so far, your guessed bytes that the target kept and the target's own
    tokens in the roles and colours of lesson 05's runs (speclab.render: accepted,
    correction, bonus, plain; `.text`); the last round byte by byte, ticks up to the
    first mismatch, a cross there, and the token the target wrote instead (`.last`); your
    tokens per target forward beside prompt lookup's on the same text, allowed your longest
    guess as its k (`.score`).
    Speculation is lossless, so the text is greedy decoding's whoever drafts.
    """

    def __init__(self, target, prompts: dict, prompt: str | None = None, max_new_tokens: int = 60):
        self.target, self.prompts = target, _named(prompts, "prompts")
        prompt = checked_choice(prompt or next(iter(self.prompts)),
                                self.prompts, "prompt")  # fmt: skip
        self.max_new_tokens = checked_number(
            max_new_tokens, 1, math.inf, "max_new_tokens", whole=True
        )
        _every_prompt_fits(self.prompts, self.max_new_tokens, target.config.n_ctx)
        self._lookup_runs: dict = {}  # (prompt name, n tokens) -> lookup's tokens per forward
        self.prompt = widgets.Dropdown(
            options=list(self.prompts), value=prompt, description="text",
        )  # fmt: skip
        self.guess = widgets.Text(description="your guess",
                                  placeholder="the next few characters, then press check")  # fmt: skip
        self.check = widgets.Button(description="check", button_style="primary")
        self.restart = widgets.Button(description="start again")
        self.text, self.last, self.score = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.prompt.observe(self._on_change, names="value")
        self.check.on_click(lambda _: self.submit(self.guess.value))
        self.restart.on_click(lambda _: self.update())
        self.box = widgets.VBox(
            [self.prompt, widgets.HBox([self.guess, self.check, self.restart]), self.last,
             self.score, self.text]
        )  # fmt: skip
        self.update()

    def update(self) -> None:
        """Start the chosen text again."""
        from speclab.decoding import GuessVerifier
        from speclab.tokenizer import encode

        if self.prompt.value is None:  # the dropdown emptied by code: the game stays as it was
            self.last.value = "<p><b>Choose a text.</b></p>"
            return
        prompt = encode(self.prompts[self.prompt.value])
        self.game = GuessVerifier(self.target, prompt, self.max_new_tokens)
        self.last.value = (
            "<p>Guess what the model writes next; an empty guess is one plain step.</p>"
        )
        self._show()

    def submit(self, guess: str):
        """One round with this guess; returns it (a Round), or None when the text is done."""
        if self.game.done:
            self.last.value = "<p><b>The text is complete.</b> Press <i>start again</i>.</p>"
            return None
        from speclab.tokenizer import encode

        if not isinstance(guess, str):  # None had ended inside re: "expected string"
            raise TypeError(f"the guess must be text (the characters you expect), got {guess!r}")
        typed = encode(visible_text(guess))  # a zero-width space pasted in is not a guessed byte
        room = self.game.room  # before the round: verify cuts the guess to it
        round_ = self.game.verify(typed)
        self.guess.value = ""
        marks = [f"<span style='color:#009E73'>{TICK} {html.escape(_visible(bytes([t])))}</span>"
                 for t in round_.drafted[: round_.accepted]]  # fmt: skip
        if round_.accepted < len(round_.drafted):
            wrong = bytes([round_.drafted[round_.accepted]])
            marks.append(
                f"<span style='color:#D55E00'>{CROSS} {html.escape(_visible(wrong))}</span>"
            )
        kept = (f"{round_.accepted} of your {counted(len(round_.drafted), 'byte')} kept; "
                if round_.drafted else "")  # fmt: skip
        own = html.escape(_visible(bytes([round_.appended])))
        n_new = len(round_.new_tokens)
        notes = []
        if len(typed) > len(round_.drafted):
            notes.append(
                f"Your guess was cut to its first {room:,} of {counted(len(typed), 'byte')}: "
                f"{room + 1} new token{'s' * (room != 0)} {'are' if room else 'is'} left, and "
                "every round ends with one of the target's own."
            )  # fmt: skip
        if any(byte >= 0x80 for byte in typed):
            notes.append("Counts are bytes (the model's tokens): é is 2 bytes, most emoji 4.")
        from speclab.render import HTML_STYLES

        self.last.value = (
            f"<p style='font-family:monospace;font-size:1.2em'>{' '.join(marks)}</p>"
            f"<p>{kept}the target wrote <b style='{HTML_STYLES[_role(round_)]}'>{own}</b>: "
            f"{n_new} new token{'s' * (n_new != 1)} from one forward.</p>"
            + "".join(f"<p><i>{note}</i></p>" for note in notes)
        )
        self._show()
        return round_

    def lookup_k(self) -> int:
        """The k prompt lookup gets in the comparison: your longest guess so far (a fair race:
        you may draft that many, so may it), or 4 while you have guessed nothing."""
        return max((len(r.drafted) for r in self.game.result.rounds), default=0) or 4

    def lookup_tokens_per_forward(self) -> float:
        """Prompt lookup (k = lookup_k()) over as many new tokens as you have written so far."""
        from speclab.decoding import speculative_decode
        from speclab.drafters import PromptLookupDrafter

        n_new, k = len(self.game.result.tokens), self.lookup_k()
        key = (self.prompt.value, n_new, k)
        if key not in self._lookup_runs:
            run = speculative_decode(self.target, PromptLookupDrafter(), self.game.result.prompt_tokens,
                                     n_new, k, adaptive=False)  # fmt: skip
            self._lookup_runs[key] = run.tokens_per_target_forward
        return self._lookup_runs[key]

    def _show(self) -> None:
        from speclab.render import HTML_STYLES, visible

        result = self.game.result
        pieces = [f"<span style='color:#666'>{html.escape(bytes(result.prompt_tokens).decode('utf-8', 'replace'))}</span>"]  # fmt: skip
        for round_ in result.rounds:  # the roles and colours of speclab.render, as lesson 05's runs
            yours = bytes(round_.drafted[: round_.accepted]).decode("utf-8", "replace")
            own = bytes([round_.appended]).decode("utf-8", "replace")
            role = _role(round_)  # a marked run of only white space is shown (↵, ·), as render does
            if yours:
                shown = html.escape(visible(yours, "accepted"))
                pieces.append(f"<span style='{HTML_STYLES['accepted']}'>{shown}</span>")
            shown = html.escape(visible(own, role))
            pieces.append(f"<span style='{HTML_STYLES[role]}'>{shown}</span>")
        legend = "; ".join(
            f"<span style='{HTML_STYLES[role]}'>{words}</span>"
            for role, words in GAME_ROLES.items()
        )
        self.text.value = (
            f"<p>{legend}</p><pre style='white-space:pre-wrap'>{''.join(pieces)}</pre>"
        )
        if not result.rounds:
            self.score.value = ""
            return
        tokens = f"{len(result.tokens)} token{'s' * (len(result.tokens) != 1)}"
        forwards = f"{result.target_forwards} target forward{'s' * (result.target_forwards != 1)}"
        k = self.lookup_k()
        guessed = any(r.drafted for r in result.rounds)
        allowed = f"k = {k}, your longest guess so far" if guessed else "k = 4"
        self.score.value = (
            f"<p><b>You: {tokens} in {forwards}, "
            f"{result.tokens_per_target_forward:.2f} per forward.</b> Prompt lookup ({allowed}) "
            f"on the same text: {self.lookup_tokens_per_forward():.2f} per forward. Plain greedy "
            "decoding: 1.00. These count forwards, not time: a forward over many positions "
            "costs more than a step (lesson 04).</p>"
        )
