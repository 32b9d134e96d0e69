"""What every widget shares: shown by evaluating it, figures as PNG in an Image widget.

Each widget is a small class whose callback is a plain method (`update`), so pytest can
set a value and read what is shown (`.text.value`, `.figure`, `.picture.value`) without
a browser. Figures are drawn by `speclab.figures` and shown as PNG.
"""

import io

import ipywidgets as widgets
from matplotlib.figure import Figure


def figure_png(fig: Figure, dpi: int = 72) -> bytes:
    """The figure as PNG bytes, cropped to its content."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    return buffer.getvalue()


class Shown:
    """A widget holder that notebooks display by evaluating it."""

    box: widgets.Widget

    def _repr_mimebundle_(self, **kwargs):
        return self.box._repr_mimebundle_(**kwargs)

    def _on_change(self, change) -> None:
        self.update()

    def update(self) -> None:  # pragma: no cover - every subclass defines it
        raise NotImplementedError


def normalise(answer: str) -> str:
    return answer.strip().casefold()


def squares(count: int) -> str:
    return f"{count} square" if count == 1 else f"{count} squares"
