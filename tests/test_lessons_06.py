"""Lesson 06's handout and answer key: every checked number recomputed with speclab.

The key marks its tables with `<!-- check06: NAME -->` (checked here) or `<!-- check: NAME
-->` (the shared checks of tests/test_lessons.py). Each checker derives the answer by hand
(a direct sum or a scan) and compares it with the library function the notebook uses.
"""

import json
import re

import numpy as np
import pytest
from lesson_tables import cells, checked_tables, close  # a helper in tests/

from speclab.adaptive import CostModel, best_k
from speclab.bench_decode import alpha_estimate
from speclab.counting import break_even_alpha, speedup_with_verify_cost
from speclab.decode_reports import load_report
from speclab.decoding import Round
from speclab.paths import data_dir, repo_root

LESSONS = repo_root() / "lessons"
HANDOUT = LESSONS / "06_benefit_boundary.md"
KEY = LESSONS / "answers" / "06_benefit_boundary.md"


def tokens_per_round(alpha: float, k: int) -> float:
    return sum(alpha**i for i in range(k + 1))  # 1 + α + … + α^k, by hand


def check_speedup_verify(row):
    alpha, k, c, r, speedup = row
    alpha, k, c, r = float(alpha), int(k), float(c), float(r)
    assert close(speedup, tokens_per_round(alpha, k) / (k * c + r))
    assert close(speedup, speedup_with_verify_cost(alpha, k, r, c))


def check_break_even(row):
    k, c, r, alpha = row
    k, c, r = int(k), float(c), float(r)
    found = break_even_alpha(k, r, c)
    assert close(alpha, found)
    grid = [i / 10000 for i in range(10001)]  # independent: the first α that pays
    first = next((a for a in grid if tokens_per_round(a, k) >= k * c + r), 1.0)
    assert abs(first - found) <= 1e-4


def check_pays(row):
    _, alpha, c, speedup, pays = row
    exact = tokens_per_round(float(alpha), 4) / (4 * float(c) + 1.2)  # k = 4, r = 1.2
    assert close(speedup, exact)
    assert close(speedup, speedup_with_verify_cost(float(alpha), 4, 1.2, float(c)))
    assert pays == ("yes" if exact > 1 else "no")


def check_three_figures(row):
    drafted, accepted, alpha, ratio, mean_length = row
    drafted = [int(x) for x in drafted.split()]
    accepted = [int(x) for x in accepted.split()]
    kept = sum(accepted)
    rejections = sum(1 for d, a in zip(drafted, accepted, strict=True) if d and a < d)
    assert close(alpha, kept / (kept + rejections))
    assert close(ratio, kept / sum(drafted))
    assert close(mean_length, (kept + len(drafted)) / len(drafted))
    rounds = [Round([0] * d, a, 0) for d, a in zip(drafted, accepted, strict=True)]
    assert close(alpha, alpha_estimate(rounds))
    assert float(ratio) <= float(alpha) + 1e-9


def check_best_k(row):
    alpha, v, c, k, speedup, decision = row
    alpha, v, c = float(alpha), float(v), float(c)
    predictions = {n: tokens_per_round(alpha, n) / (1 + (v + c) * n) for n in range(1, 9)}
    best = max(predictions, key=lambda n: (predictions[n], -n))
    assert int(k) == best and close(speedup, predictions[best])
    assert decision == ("draft" if predictions[best] >= 1 else "off")
    found_k, found = best_k(alpha, 8, CostModel(verify_per_position=v, draft_per_token=c))
    assert (found_k, pytest.approx(found)) == (best, predictions[best])


CHECKS = {  # name -> (checker, number of input columns)
    "speedup_verify": (check_speedup_verify, 4),
    "break_even": (check_break_even, 3),
    "pays": (check_pays, 3),
    "three_figures": (check_three_figures, 2),
    "best_k": (check_best_k, 3),
}


def key_tables():
    return checked_tables(KEY.read_text(encoding="utf-8"), marker="check06")


def test_every_lesson_06_check_is_present():
    assert set(key_tables()) == set(CHECKS)


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_answer_key_numbers_agree_with_the_code(name):
    checker, _ = CHECKS[name]
    rows = key_tables()[name]
    assert len(rows) >= 3
    for row in rows:
        try:
            checker(row)
        except AssertionError as error:
            raise AssertionError(f"table {name!r} row {row}: {error}") from None


def test_a_wrong_answer_is_caught():
    with pytest.raises(AssertionError):
        check_best_k(["0.5", "0.02", "0.0", "3", "1.79", "draft"])
    with pytest.raises(AssertionError):
        check_pays(["free text", "0.15", "0.02", "0.92", "yes"])
    with pytest.raises(AssertionError):
        check_three_figures(["4 4", "4 1", "0.833", "0.650", "3.500"])


def test_handout_has_every_exercise_row_blank():
    handout = HANDOUT.read_text(encoding="utf-8")
    assert "check06" not in handout
    handout_rows = [cells(line) for line in handout.splitlines() if line.startswith("|")]
    for name, rows in key_tables().items():
        _, n_inputs = CHECKS[name]
        for key_row in rows:
            shown = [r for r in handout_rows if r[:n_inputs] == key_row[:n_inputs]]
            assert shown, f"{name}: the handout lacks the row {key_row[:n_inputs]}"
            for row in shown:
                assert len(row) == len(key_row), row
                assert all(set(cell) <= {"_", " "} for cell in row[n_inputs:]), row


def test_handout_formula_matches_the_code():
    """The set-up's two formulas, as printed, are the ones the checks use."""
    text = HANDOUT.read_text(encoding="utf-8")
    assert "speedup = (1 + α + … + α^k) / (k · c + 1)" in text
    assert "speedup = (1 + α + … + α^k) / (k · c + r)" in text


def test_quoted_report_figures_match_the_saved_report():
    """The handout and teacher guide quote the saved report in data/bench/: when it is
    re-measured, the prose must follow (about r to one decimal; the draft model's cost range)."""
    forward = json.loads((data_dir() / "bench" / "forward.json").read_text(encoding="utf-8"))
    decode = load_report(data_dir() / "bench" / "decode.json")
    ratio = f"about {forward['ratio_5_to_1']['median']:.1f}"
    handout = HANDOUT.read_text(encoding="utf-8")
    guide = (LESSONS / "teacher-guide.md").read_text(encoding="utf-8")
    assert f"measured {ratio} on its machine" in handout
    verify = [r["verify_ratio"] for r in decode["results"] if r["method"] == "lookup k=4"]
    flat = " ".join(handout.split())
    assert f"(k = 4, the lookup drafter) cost {min(verify):.1f} to {max(verify):.1f} (the" in flat
    # the two reports name their machines: the handout says whether they are one
    same = forward["machine"]["platform"] == decode["machine"]["platform"]
    assert ("timed on another machine of the same kind" in flat) == (not same)
    assert forward["machine"]["cpu"] == decode["machine"]["cpu"]
    # why the two differ: what each report timed, with how many BLAS threads
    threads = {name: report["machine"]["blas"][0]["threads"] for name, report in
               (("forward", forward), ("decode", decode))}  # fmt: skip
    words = {1: "one thread", 2: "two BLAS threads"}
    assert (
        f"the forward alone after {forward['settings']['n_past']} cached positions with "
        f"{words[threads['forward']]}; the second, a round's whole verify step" in flat
    )
    assert f"after the prompt and the text so far, with {words[threads['decode']]}." in flat
    assert f"saved report: {ratio} of one" in guide
    costs = [
        row["draft_cost_per_token"]
        for row in decode["results"]
        if row["drafter"] == "model" and row["draft_cost_per_token"]
    ]
    quoted = re.search(r"saved report measured (\d\.\d+) to (\d\.\d+)\)", handout)
    assert quoted, "handout exercise 4 quotes the draft model's measured cost"
    assert quoted.groups() == (f"{min(costs):.2f}", f"{max(costs):.2f}")


def notebook_06_last_cell() -> str:
    """What lesson 06's "usually wrong drafter" cell displays, run on the saved report (the
    quick run it would otherwise fall back on is left out: the cell reads `report`)."""
    from IPython.display import Markdown

    cells = json.loads(
        (repo_root() / "notebooks" / "06_benefit_boundary.ipynb").read_text(encoding="utf-8")
    )["cells"]
    code = "".join(
        "".join(cell["source"])
        for cell in cells
        if cell["cell_type"] == "code"
        and "A drafter that is usually wrong" in "".join(cell["source"])
    )
    shown = []
    namespace = {
        "np": np,
        "report": load_report(data_dir() / "bench" / "decode.json"),
        "speedup_with_verify_cost": speedup_with_verify_cost,
        "Markdown": Markdown,
        "display": lambda item: shown.append(item.data),
    }
    exec(compile(code, "06_benefit_boundary.ipynb", "exec"), namespace)  # noqa: S102
    return " ".join(shown)


def test_exercise_3_uses_the_saved_reports_verify_costs():
    forward = json.loads((data_dir() / "bench" / "forward.json").read_text(encoding="utf-8"))
    ratio_to_1 = {row["n_new"]: row["ratio_to_1"] for row in forward["forward_cost"]}
    r5 = round(forward["ratio_5_to_1"]["median"], 1)
    handout = " ".join(HANDOUT.read_text(encoding="utf-8").split())
    key = " ".join(KEY.read_text(encoding="utf-8").split())
    assert f"r = {r5} is the saved report's figure for 5 positions" in handout
    assert f"| 0.9 | 4 | 0.02 | {r5} | ______ |" in handout
    r2 = round(ratio_to_1[2], 2)
    assert (
        f"the saved forward report (`data/bench/forward.json`) measured {r2} for 2 positions" in key
    )
    assert "r = 1.05 stands for a machine on which a forward over 2 positions" in handout
    low = speedup_with_verify_cost(0.1, 1, r2, 0.02)
    verdict = "faster" if low >= 1.005 else "slower" if low < 0.995 else "no faster than greedy"
    assert f"α = 0.1, k = 1 gives {low:.2f} ({verdict})" in key
    # inside real decoding rounds (the report lesson 06's last cell reads) a 2-position verify
    # step costs more than the forward alone: the key quotes that cell's inputs and verdict
    decode = load_report(data_dir() / "bench" / "decode.json")
    lookup = [r for r in decode["results"] if r["drafter"] == "lookup" and not r["adaptive"]]
    in_rounds = sorted(r["verify_ratio"] for r in lookup if r["k"] == 1)
    middle = (in_rounds[(len(in_rounds) - 1) // 2] + in_rounds[len(in_rounds) // 2]) / 2
    # a drafted token's cost at k = 1, not over every k: a round's lookup costs about the
    # same at any k, so a drafted token at k = 1 costs about 3 times one at k = 4
    costs = sorted(c for r in lookup if r["k"] == 1 and (c := r["draft_cost_per_token"]) == c)
    c_lookup = (costs[(len(costs) - 1) // 2] + costs[len(costs) // 2]) / 2
    in_decoding = speedup_with_verify_cost(0.1, 1, middle, c_lookup)
    assert (
        f"a verify step over 2 positions cost {in_rounds[0]:.2f} to {in_rounds[-1]:.2f} plain "
        f"steps (median {middle:.2f}) and a drafted token cost c = {c_lookup:.2f}, and there the "
        f"same row gives {in_decoding:.2f}: it about breaks even" in key
    )
    assert abs(in_decoding - 1) <= 0.05  # "about breaks even", as the notebook's verdict() says
    said = notebook_06_last_cell()
    assert f"c = {c_lookup:.2f} a drafted token at k = 1" in said, said
    assert f"about breaks even at k = 1 ({in_decoding:.2f}×)" in said, said
    even = break_even_alpha(4, r5, 0.02)
    assert f"needs α above {even:.2f} to pay at k = 4" in key
    assert f"gets only {speedup_with_verify_cost(0.5, 4, r5, 0.02):.2f}" in key


def test_exercise_1_key_quotes_the_saved_reports_outcome():
    """The key's measured outcome (lookup at k = 4, and how much of each scenario's output
    is a loop) is the saved report's: re-measured, the prose must follow."""
    decode = load_report(data_dir() / "bench" / "decode.json")
    rows = {r["scenario"]: r for r in decode["results"] if r["method"] == "lookup k=4"}
    order = ["copy-heavy", "structured", "counting", "free text"]
    key = " ".join(KEY.read_text(encoding="utf-8").split())
    alphas = ", ".join(f"{s} {rows[s]['alpha_leviathan']:.2f}" for s in order)
    speedups = ", ".join(f"{s} {rows[s]['speedup']:.2f}×" for s in order)
    shares = decode["provenance"]
    loop = {s: f"{100 * shares[s]['loop']:.0f} %" for s in order}
    assert f"α {alphas}, and speedups {speedups}." in key
    assert (
        f"(a loop: counting {loop['counting']} of its output, structured {loop['structured']}, "
        f"copy-heavy {loop['copy-heavy']}, free text {loop['free text']})" in key
    )
    assert (
        f"({100 * shares['free text']['prompt']:.0f} % of its output is copied from the prompt)"
        in key
    )
    assert all(rows[s]["speedup"] > 1 for s in order), "the key says every scenario was faster"
    by_speed = sorted(order, key=lambda s: rows[s]["speedup"])
    assert f"{by_speed[0]} was the slowest of the four at this k" in key
    assert f"and {by_speed[-1]} the fastest" in key
    k8 = next(
        r for r in decode["results"] if r["method"] == "lookup k=8" and r["scenario"] == by_speed[0]
    )
    assert k8["speedup"] > rows[by_speed[0]]["speedup"]
    assert f"(it gains more at k = 8: {k8['speedup']:.2f}×)" in key


def test_the_teacher_guides_counting_loop_is_the_saved_reports_output():
    """Teacher guide, lesson 06: "it repeats a line of its own (`...` again and again": the
    line is one the saved report's greedy output for the squares prompt repeats."""
    decode = load_report(data_dir() / "bench" / "decode.json")
    guide = " ".join((LESSONS / "teacher-guide.md").read_text(encoding="utf-8").split())
    found = re.search(r"it repeats a line of its own \(`([^`]+)` again and again", guide)
    assert found, "the guide quotes the repeated line"
    assert decode["outputs"]["counting / squares"].count(found.group(1) + "\n") >= 3


def test_exercise_4_key_says_how_the_real_draft_model_differs():
    """The key's note after exercise 4: the saved report's draft model keeps drafts about as
    often on copy-heavy prompts as on free text, is faster than greedy where it says, and is
    held back by its cost per drafted token."""
    decode = load_report(data_dir() / "bench" / "decode.json")
    kept = {
        r["scenario"]: r["accepted_over_drafted"]
        for r in decode["results"]
        if r["method"] == "model k=4"
    }
    assert max(kept, key=kept.get) == "counting" and min(kept, key=kept.get) == "free text"
    assert min(kept.values()) > 0.5  # "accepted often in every scenario"
    rows = [r for r in decode["results"] if r["drafter"] == "model"]
    fixed = [r for r in rows if not r["adaptive"]]
    slow = [r for r in fixed if r["speedup"] < 1]
    best = max(rows, key=lambda r: r["speedup"])
    costs = [r["draft_cost_per_token"] for r in rows if r["draft_cost_per_token"]]
    key = " ".join(KEY.read_text(encoding="utf-8").split())
    assert (
        f"keeps {100 * kept['counting']:.0f} % of its drafts on counting prompts, "
        f"{100 * kept['copy-heavy']:.0f} % on copy-heavy ones and "
        f"{100 * kept['free text']:.0f} % on free text" in key
    )
    assert "most on counting and least on free text" in key
    if slow:
        assert f"slower than greedy in {len(slow)} of its {len(fixed)} fixed-k rows" in key
    else:
        assert f"faster than greedy in all {len(fixed)} of its fixed-k rows" in key
    assert f"at best {best['speedup']:.2f}× ({best['scenario']}, k = {best['k']})" in key
    lookup = next(r for r in decode["results"] if r["scenario"] == best["scenario"]
                  and r["method"] == f"lookup k={best['k']}")  # fmt: skip
    assert lookup["speedup"] > best["speedup"]
    assert f"where prompt lookup reaches {lookup['speedup']:.2f}×" in key
    assert f"({min(costs):.2f} to {max(costs):.2f} of a target step)" in key


def test_the_takeaway_on_the_adaptive_policy_holds_in_the_saved_report():
    """Notebook 06's takeaway: "the best fixed k, which no policy knows before the run, can
    beat it (the table above)": somewhere in the saved report it does."""
    decode = load_report(data_dir() / "bench" / "decode.json")
    notebook = (repo_root() / "notebooks" / "06_benefit_boundary.ipynb").read_text("utf-8")
    assert "the best fixed k, which no policy knows before the run,\\n" in notebook
    rows = decode["results"]
    beaten = [
        (r["scenario"], r["drafter"])
        for r in rows
        if r["adaptive"]
        and any(
            o["speedup"] > r["speedup"]
            for o in rows
            if (o["scenario"], o["drafter"]) == (r["scenario"], r["drafter"]) and not o["adaptive"]
        )
    ]
    assert beaten


def test_the_guide_says_how_long_make_bench_took():
    """Teacher guide, lesson 06: "the saved report's decode benchmark took N s"."""
    decode = load_report(data_dir() / "bench" / "decode.json")
    guide = " ".join((LESSONS / "teacher-guide.md").read_text(encoding="utf-8").split())
    assert f"the saved report's decode benchmark took {decode['seconds']:.0f} s" in guide
