"""Pictures for the lessons, drawn with matplotlib and returned as figures (never shown here).

Split by idea, one module each; every figure is importable from here
(`from speclab.figures import rounds_figure`):

- `style`: the palette, projector sizes, ticks and crosses, and how a bench report is read;
- `symbolic`: lessons 01-03 (a guess against the path, rounds and forwards counted);
- `next_token`: lesson 03b (one forward's bars: the most likely next tokens);
- `costs`: what one forward and a speculative round cost in time (lessons 04 and 06);
- `traces`: real decoding runs, what was accepted and where (lessons 05 and 06);
- `sampling`: speculative sampling's distributions and speed (lesson 07).

matplotlib is imported here and in these modules only (the core needs numpy alone).
"""

from speclab.figures.costs import (
    boundary_figure,
    breakdown_figure,
    cache_figure,
    forward_cost_figure,
    k_speedup_figure,
    predicted_vs_measured_figure,
    roofline_figure,
    time_per_token_figure,
)
from speclab.figures.next_token import next_token_figure
from speclab.figures.sampling import (
    sampling_convergence_figure,
    sampling_rule_figure,
    sampling_speed_figure,
    temperature_acceptance_figure,
)
from speclab.figures.style import CROSS, OKABE_ITO, PROJECTOR, ROLE_COLOURS, TICK
from speclab.figures.symbolic import (
    check_row_figure,
    draft_verify_figure,
    eq1_figure,
    forwards_per_case_figure,
)
from speclab.figures.traces import (
    acceptance_measures_figure,
    adaptive_trace_figure,
    position_acceptance_figure,
    rounds_figure,
)

__all__ = [
    "CROSS",
    "OKABE_ITO",
    "PROJECTOR",
    "ROLE_COLOURS",
    "TICK",
    "acceptance_measures_figure",
    "adaptive_trace_figure",
    "boundary_figure",
    "breakdown_figure",
    "cache_figure",
    "check_row_figure",
    "draft_verify_figure",
    "eq1_figure",
    "forward_cost_figure",
    "forwards_per_case_figure",
    "k_speedup_figure",
    "next_token_figure",
    "position_acceptance_figure",
    "predicted_vs_measured_figure",
    "roofline_figure",
    "rounds_figure",
    "sampling_convergence_figure",
    "sampling_rule_figure",
    "sampling_speed_figure",
    "temperature_acceptance_figure",
    "time_per_token_figure",
]
