"""Widgets of real decoding runs (lesson 05).

- `SpeculativeExplorer`: pick a prompt, a drafter and k; a real speculative run on the
  shipped model, coloured by token role, with its rounds table and the byte-for-byte check
  against greedy decoding.
"""

import html

import ipywidgets as widgets
from matplotlib.figure import Figure

from speclab.widgets.base import Shown, figure_png


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
        self.target, self.drafters, self.prompts = target, dict(drafters), dict(prompts)
        self._greedy_runs: dict = {}  # (prompt name, max_new_tokens) -> greedy DecodeResult
        self.prompt = widgets.Dropdown(
            options=list(self.prompts), value=prompt or next(iter(self.prompts)),
            description="prompt",
        )  # fmt: skip
        self.drafter = widgets.Dropdown(
            options=list(self.drafters), value=drafter or next(iter(self.drafters)),
            description="drafter",
        )  # fmt: skip
        self.k = widgets.IntSlider(value=k, min=1, max=8, description="k (drafts)",
                                   continuous_update=False)  # fmt: skip
        self.max_new_tokens = widgets.IntSlider(
            value=max_new_tokens, min=10, max=200, step=10, description="new tokens",
            continuous_update=False,
        )  # fmt: skip
        self.adaptive = widgets.Checkbox(value=adaptive, description="adaptive k (at most k)")
        self.text, self.stats, self.table = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.picture = widgets.Image(format="png")
        self.figure: Figure | None = None
        controls = (self.prompt, self.drafter, self.k, self.max_new_tokens, self.adaptive)
        for control in controls:
            control.observe(self._on_change, names="value")
        self.box = widgets.VBox(
            [widgets.HBox(controls[:2]), widgets.HBox(controls[2:]), self.text, self.stats,
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

        from speclab.decoding import speculative_decode
        from speclab.demo import match_line, statistics_lines
        from speclab.figures import rounds_figure
        from speclab.render import render_html, round_rows
        from speclab.tokenizer import encode

        prompt = self.prompts[self.prompt.value]
        self.result = speculative_decode(
            self.target, self.drafters[self.drafter.value](), encode(prompt),
            self.max_new_tokens.value, self.k.value, adaptive=self.adaptive.value,
        )  # fmt: skip
        greedy = self.greedy()
        self.matches, verdict = match_line(self.result, greedy)
        self.text.value = render_html(self.result, prompt=prompt)
        policy = "adaptive, at most" if self.adaptive.value else "exactly"
        settings = (
            f"{self.prompt.value}: {self.drafter.value} drafter, {policy} k = {self.k.value} "
            f"drafts per round, {self.max_new_tokens.value} new tokens"
        )
        lines = [settings] + statistics_lines(self.result, greedy)[:2]
        self.stats.value = "<br>".join([*map(html.escape, lines), f"<b>{html.escape(verdict)}</b>"])
        self.table.value = pd.DataFrame(round_rows(self.result)).to_html(
            index=False, float_format="{:.2f}".format
        )
        self.figure = rounds_figure(self.result)
        self.picture.value = figure_png(self.figure)
