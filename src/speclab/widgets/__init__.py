"""Interactive widgets for the lessons, built from ipywidgets (imported here and in these
modules only), split by idea like speclab.figures; every widget is importable from here
(`from speclab.widgets import QuizGame`):

- `base`: what every widget shares (shown by evaluating it, figures as PNG);
- `symbolic`: `QuizGame` (lesson 01), `PathExplorer` (02), `SpeedupExplorer` (03);
- `next_token`: `NextTokenExplorer` (lesson 03b);
- `costs`: `WidthExplorer` (lesson 04b), `BoundaryExplorer` (06);
- `traces`: `SpeculativeExplorer` and `DrafterGame` (lesson 05);
- `sampling`: `SamplingRuleExplorer` (lesson 07).

Each widget is a small class whose callback is a plain method (`update`), so pytest can
set a value and read what is shown without a browser.
Left out: decoding runs on the shipped models other than lesson 05's explorer.
"""

from speclab.widgets.base import figure_png
from speclab.widgets.costs import BoundaryExplorer, WidthExplorer
from speclab.widgets.next_token import NextTokenExplorer
from speclab.widgets.sampling import SAMPLING_LABELS, SamplingRuleExplorer
from speclab.widgets.symbolic import (
    QUIZ_KEY,
    QUIZ_QUESTIONS,
    PathExplorer,
    QuizGame,
    SpeedupExplorer,
    quiz_board,
)
from speclab.widgets.traces import DrafterGame, SpeculativeExplorer

__all__ = [
    "QUIZ_KEY",
    "QUIZ_QUESTIONS",
    "SAMPLING_LABELS",
    "BoundaryExplorer",
    "DrafterGame",
    "NextTokenExplorer",
    "PathExplorer",
    "QuizGame",
    "SamplingRuleExplorer",
    "SpeculativeExplorer",
    "SpeedupExplorer",
    "WidthExplorer",
    "figure_png",
    "quiz_board",
]
