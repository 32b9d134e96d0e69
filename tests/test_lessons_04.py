"""Lesson 04's handout and answer key: every checked number recomputed with speclab.

The key marks its tables with `<!-- check04: NAME -->` (the lesson-04 checks below) or
`<!-- check: NAME -->` (the shared checks of tests/test_lessons.py). Each checker derives
the answer independently where it can (a brute-force count, a direct formula) and
compares with the library function the notebook uses.
"""

import math
import re

import pytest
from lesson_tables import cells, checked_tables, close  # a helper in tests/

from speclab.bench import matmul_params, roofline_free_positions, roofline_time
from speclab.counting import break_even_alpha, expected_tokens_per_round, speedup_with_verify_cost
from speclab.gpt import GPTConfig
from speclab.paths import repo_root

LESSONS = repo_root() / "lessons"
HANDOUT = LESSONS / "04_why_decoding_is_slow.md"
DEEP_DIVE = LESSONS / "04b_where_the_time_goes.md"  # lesson 04b: its exercises, same checks
KEY = LESSONS / "answers" / "04_why_decoding_is_slow.md"


def check_weights(row):
    model, blocks, n_embd, n_vocab, bytes_per_weight, weights, megabytes = row
    n_layer, n_embd, n_vocab = int(blocks), int(n_embd), int(n_vocab)
    if model.startswith("speclab "):  # the shipped models' own shapes, not remembered ones
        from speclab.weights import load_draft, load_target

        loaded = {"speclab target": load_target, "speclab draft": load_draft}[model]()
        shipped = loaded.config
        assert (n_layer, n_embd, n_vocab) == (shipped.n_layer, shipped.n_embd, shipped.n_vocab)
        # as the package runs it: the draft in float32 (4 bytes), the target in float64 (8)
        assert int(bytes_per_weight) == loaded.params["wte"].dtype.itemsize, model
    config = GPTConfig(n_layer=n_layer, n_head=1, n_embd=n_embd, n_ctx=1, n_vocab=n_vocab)
    block = n_embd * 3 * n_embd + n_embd * n_embd + 2 * n_embd * 4 * n_embd  # by matrix
    assert int(weights) == n_layer * block + n_vocab * n_embd == matmul_params(config)
    assert close(megabytes, int(weights) * int(bytes_per_weight) / 1e6)


def check_linear_cost(row):
    t1, t16, a, b, t5, ratio, n_double = row
    t1, t16 = float(t1), float(t16)
    slope = (t16 - t1) / 15
    fixed = t1 - slope
    assert close(a, fixed) and close(b, slope)
    assert close(t5, fixed + 5 * slope)
    assert close(ratio, (fixed + 5 * slope) / t1)
    n = 1  # the smallest n_new whose forward costs at least twice a one-position forward
    while fixed + slope * n < 2 * t1 - 1e-9:
        n += 1
    assert int(n_double) == n == math.ceil((fixed + 2 * slope) / slope - 1e-9)


def check_speedup_measured(row):
    r, alpha, k, c, speedup = row
    r, alpha, k, c = float(r), float(alpha), int(k), float(c)
    tokens = sum(alpha**i for i in range(k + 1))  # 1 + α + … + α^k
    assert close(speedup, tokens / (k * c + r))
    assert close(speedup, speedup_with_verify_cost(alpha, k, r, c))


def check_break_even(row):
    k, c, r, alpha = row
    k, c, r = int(k), float(c), float(r)
    found = break_even_alpha(k, r, c)
    assert close(alpha, found)
    cost = k * c + r
    if 0 < found < 1:
        assert expected_tokens_per_round(found, k) == pytest.approx(cost, rel=1e-9)
    grid = [i / 10000 for i in range(10000)]  # independent: scan for the first α that pays
    first_win = next((a for a in grid if expected_tokens_per_round(a, k) >= cost), 1.0)
    assert abs(first_win - found) <= 1e-4


def check_kv_positions(row):
    prompt, n_tokens, with_cache, without, ratio = map(float, row)
    prompt, n_tokens = int(prompt), int(n_tokens)
    cached = prompt + sum(1 for _ in range(n_tokens - 1))  # prefill, then one per token
    recomputed = sum(prompt + i - 1 for i in range(1, n_tokens + 1))
    assert (int(with_cache), int(without)) == (cached, recomputed)
    assert recomputed == n_tokens * prompt + n_tokens * (n_tokens - 1) // 2
    assert close(row[4], recomputed / cached)


def check_skeleton_share(row):
    time_1, skeleton, share, time_5, ratio = map(float, row)
    per_position = time_1 - skeleton  # the arithmetic, paid once per position
    assert close(row[2], skeleton / time_1)
    assert close(row[3], skeleton + 5 * per_position)
    assert close(row[4], (skeleton + 5 * per_position) / time_1)


def check_weight_bytes(row):
    weights, bytes_per_weight, megabytes = float(row[0]), float(row[1]), row[2]
    assert close(megabytes, weights * bytes_per_weight / 1e6)
    if weights == 819200:  # "the target's matrices" in the handout: the shipped target's count
        from speclab.weights import load_target

        assert weights == matmul_params(load_target().config)


def check_roofline(row):
    bandwidth, peak, bytes_per_weight, knee = row
    found = roofline_free_positions(float(bytes_per_weight), float(bandwidth), float(peak))
    assert close(knee, found)
    times = roofline_time([found / 2, found, found * 2], 1e9, float(bytes_per_weight),
                          float(bandwidth), float(peak))  # fmt: skip
    assert times[0] == pytest.approx(times[1]) and times[2] == pytest.approx(2 * times[1])


def check_roofline_time(row):
    weights, bytes_per_weight, bandwidth, peak, n_new, micro = row
    weights, bytes_per_weight = float(weights), float(bytes_per_weight)
    bandwidth, peak, n_new = float(bandwidth), float(peak), int(n_new)
    by_hand = max(weights * bytes_per_weight / bandwidth, 2 * weights * n_new / peak)
    assert close(micro, by_hand * 1e6)
    assert close(
        micro, float(roofline_time(n_new, weights, bytes_per_weight, bandwidth, peak)) * 1e6
    )


CHECKS = {  # name -> (checker, number of input columns)
    "weights": (check_weights, 5),
    "linear_cost": (check_linear_cost, 2),
    "speedup_measured": (check_speedup_measured, 4),
    "break_even": (check_break_even, 3),
    "kv_positions": (check_kv_positions, 2),
    "roofline": (check_roofline, 3),
    "skeleton_share": (check_skeleton_share, 2),
    "weight_bytes": (check_weight_bytes, 2),
    "roofline_time": (check_roofline_time, 5),
}


DEEP_DIVE_KEY = LESSONS / "answers" / DEEP_DIVE.name


def key_tables():
    """The check04 tables of lesson 04's key and of its deep dive's (lesson 04b)."""
    tables = {}
    for key in (KEY, DEEP_DIVE_KEY):
        for name, rows in checked_tables(key.read_text(encoding="utf-8"), marker="check04").items():
            tables.setdefault(name, []).extend(rows)
    return tables


def test_every_lesson_04_check_is_present():
    assert set(key_tables()) == set(CHECKS)


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_answer_key_numbers_agree_with_the_code(name):
    checker, _ = CHECKS[name]
    rows = key_tables()[name]
    assert rows
    for row in rows:
        try:
            checker(row)
        except AssertionError as error:
            raise AssertionError(f"table {name!r} row {row}: {error}") from None


def test_handout_has_every_exercise_row_blank():
    text = HANDOUT.read_text(encoding="utf-8") + DEEP_DIVE.read_text(encoding="utf-8")
    handout_rows = [cells(line) for line in text.splitlines() if line.startswith("|")]
    for name, rows in key_tables().items():
        _, n_inputs = CHECKS[name]
        for key_row in rows:
            shown = [r for r in handout_rows if r[:n_inputs] == key_row[:n_inputs]]
            assert shown, f"{name}: the handout lacks the row {key_row[:n_inputs]}"
            for row in shown:
                assert len(row) == len(key_row), row
                assert all(set(cell) <= {"_", " "} for cell in row[n_inputs:]), row


def test_shared_checks_are_also_used():
    """The key's Exercise 4 is checked by tests/test_lessons.py's `speedup` check."""
    shared = checked_tables(KEY.read_text(encoding="utf-8"), marker="check")
    assert list(shared) == ["speedup"]
    for alpha, k, c, speedup in shared["speedup"]:
        assert close(speedup, speedup_with_verify_cost(float(alpha), int(k), 1.0, float(c)))


def test_handout_tokens_per_round_table_is_right():
    """Exercise 6 gives 1 + α + … + α⁴ to two decimals; those numbers must be right too."""
    text = HANDOUT.read_text(encoding="utf-8")
    alphas = cells(re.search(r"^\| α \| 0\.1 .*$", text, flags=re.M).group(0))[1:]
    tokens = cells(re.search(r"^\| tokens per round \|.*$", text, flags=re.M).group(0))[1:]
    assert len(alphas) == len(tokens) == 9
    for alpha, shown in zip(alphas, tokens, strict=True):
        assert close(shown, expected_tokens_per_round(float(alpha), 4))


def test_handout_exercise_3_times_lie_on_the_line():
    text = HANDOUT.read_text(encoding="utf-8")
    n_new = [int(x) for x in cells(re.search(r"^\| n_new \| 1 .*$", text, flags=re.M).group(0))[1:]]
    times = [
        float(x) for x in cells(re.search(r"^\| time \(ms\) .*$", text, flags=re.M).group(0))[1:]
    ]
    slope = (times[-1] - times[0]) / (n_new[-1] - n_new[0])
    for n, t in zip(n_new, times, strict=True):
        assert t == pytest.approx(times[0] + slope * (n - 1))


@pytest.mark.parametrize("handout,title,exercises", [(HANDOUT, "04", 7), (DEEP_DIVE, "04b", 4)])
def test_handout_layout(handout, title, exercises):
    text = handout.read_text(encoding="utf-8")
    assert text.startswith(f"# Lesson {title} ")
    assert "Name: " in text and "<!--" not in text
    assert len(re.findall(r"^## Exercise ", text, flags=re.M)) == exercises
    for line in text.splitlines():
        if not line.startswith("|"):
            assert len(line) <= 100, line


def test_lesson_04_says_what_is_true_everywhere_and_not_more():
    """A forward over k + 1 positions costs less than k + 1 steps: how much less is measured,
    so no handout, key or notebook of lesson 04 calls extra positions (nearly) free in numpy."""
    import json

    texts = [path.read_text(encoding="utf-8") for path in (HANDOUT, KEY, DEEP_DIVE, DEEP_DIVE_KEY)]
    for notebook in ("04_why_decoding_is_slow.ipynb", "04b_where_the_time_goes.ipynb"):
        cells_ = json.loads((repo_root() / "notebooks" / notebook).read_text("utf-8"))["cells"]
        texts.append("\n".join("".join(cell["source"]) for cell in cells_))
    for text in texts:
        flat = " ".join(text.split())
        for claim in ("nearly free", "nearly as cheap", "checking several tokens is cheap"):
            assert claim not in flat, claim
    core = " ".join(texts[4].split())
    assert "costs less than k + 1 separate steps" in core and "matrix-*vector* product" in core


def test_key_04_quotes_the_fixed_share_of_the_shipped_forward_report():
    import json

    report = json.loads((repo_root() / "data" / "bench" / "forward.json").read_text("utf-8"))
    ratio = {row["n_new"]: row["ratio_to_1"] for row in report["forward_cost"]}
    fixed = 1 - (ratio[16] - ratio[1]) / 15  # a / time(1), by exercise 3's two-point rule
    text = " ".join((LESSONS / "answers" / "04_why_decoding_is_slow.md").read_text("utf-8").split())
    assert f"gives a = {fixed:.0%} of a one-position forward".replace("%", " %") in text
    words = {1: "one BLAS thread", 2: "the library's two BLAS threads"}
    assert f"timed with {words[report['machine']['blas'][0]['threads']]}) gives a" in text
    notebook = (repo_root() / "notebooks" / "04_why_decoding_is_slow.ipynb").read_text("utf-8")
    assert "THREADS = 1" in notebook and "measured on your machine with one thread" in text


def test_exercise_6_interpolation_in_the_handouts_table_is_within_its_tolerance():
    import numpy as np

    handout = HANDOUT.read_text(encoding="utf-8")
    row = re.search(r"^\| tokens per round \|(.*)\|$", handout, flags=re.M)[1]
    table = [float(value) for value in row.split("|")]
    alphas = [i / 10 for i in range(1, 10)]
    key = " ".join((LESSONS / "answers" / "04_why_decoding_is_slow.md").read_text("utf-8").split())
    listed = re.search(r"interpolation in the handout's rounded table gives ([\d., and]+) for", key)
    quoted = [float(v) for v in re.findall(r"\d\.\d\d", listed[1])]
    interpolated = []
    for c, r in [(0, 1.2), (0, 1.5), (0, 2.0), (0.05, 1.2)]:
        value = float(np.interp(4 * c + r, [1.0, *table], [0.0, *alphas]))
        assert abs(value - break_even_alpha(4, r, c)) <= 0.01 + 1e-9
        interpolated.append(round(value, 2))
    assert quoted == interpolated
    assert "within 0.01 of it is right" in " ".join(handout.split())


def test_key_04_says_dividing_by_r_holds_only_without_a_draft_cost():
    """Key 04, exercise 5: dividing lesson 03's speedups by r matches the measured-cost formula
    only when c = 0 (a round costs k·c + r, not (k·c + 1)·r); it had said so for every row."""
    from speclab.counting import expected_speedup, speedup_with_verify_cost

    text = " ".join(KEY.read_text(encoding="utf-8").split())
    assert "With c = 0, dividing lesson 03's speedups by r gives the same numbers" in text
    assert "Dividing lesson 03's answers by r gives the same numbers." not in text
    for r in (1.2, 2.0):
        assert expected_speedup(0.8, 4, 0) / r == pytest.approx(speedup_with_verify_cost(0.8, 4, r))
    # lesson 03's row alpha 0.8, k 4, c 0.05 (2.80): divided by 1.2 it is 2.33, the formula 2.40
    divided = expected_speedup(0.8, 4, 0.05) / 1.2
    assert round(divided, 2) != round(speedup_with_verify_cost(0.8, 4, 1.2, 0.05), 2)


def test_lesson_04b_counts_gpt2_small_as_lesson_04_does():
    """Lesson 04b's roofline and bytes exercises use GPT-2 small's weights as lesson 04's
    exercise 2 counts them (its matrices), not a rounded total that gives other answers."""
    gpt2_small = GPTConfig(n_layer=12, n_head=12, n_embd=768, n_ctx=1024, n_vocab=50257)
    counted = matmul_params(gpt2_small)
    tables = key_tables()
    lesson_04 = [row for row in tables["weights"] if row[0] == "GPT-2 small"]
    assert [int(row[5]) for row in lesson_04] == [counted]
    for name in ("roofline_time", "weight_bytes"):
        for row in tables[name]:
            assert float(row[0]) in (counted, 819200), (name, row)
    prose = " ".join(DEEP_DIVE.read_text(encoding="utf-8").split())
    assert f"GPT-2 small ({counted:,} weights in its matrices, lesson 04's exercise 2)" in prose
