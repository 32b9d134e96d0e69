"""Lesson 07's answer key, recomputed with speclab.sampling (tables marked `<!-- check 07: NAME -->`).

Distributions are read from the tables themselves; the step tables replay the handout's
numbers u and u' through the library's `speculative_step` (the same uniforms, in the order
the library draws them), so the paper procedure and the code cannot drift apart. The
handout must show every checked table with the same inputs and blank answers. The `check:`
tables (Eq. 1, speedup) are checked by tests/test_lessons.py.
"""

import itertools
import json
import re

import numpy as np
import pytest

from speclab.decode_reports import load_report
from speclab.paths import repo_root
from speclab.sampling import (
    SamplingSettings,
    acceptance_probability,
    expected_acceptance,
    expected_match_acceptance,
    leftover_distribution,
    sampling_distribution,
    speculative_step,
)

LESSONS = repo_root() / "lessons"
HANDOUT = LESSONS / "07_speculative_sampling.md"
KEY = LESSONS / "answers" / "07_speculative_sampling.md"
TOKENS = "ABCD"
NEVER = "never drafted"
N_INPUTS = {"rule": 3, "step": 3, "output": 3, "biased": 3, "kept": 2, "onehot": 3, "settings": 1}


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def marked_tables(text: str) -> list[tuple[str, list[str], list[list[str]]]]:
    """(name, header, rows) of every table after `<!-- check 07: NAME -->`, in order."""
    found, lines = [], text.splitlines()
    for index, line in enumerate(lines):
        marker = re.fullmatch(r"<!-- check 07: (\w+) -->", line.strip())
        if marker:
            body = list(itertools.takewhile(lambda row: row.startswith("|"), lines[index + 1 :]))
            found.append((marker.group(1), cells(body[0]), [cells(row) for row in body[2:]]))
    return found


def all_tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    lines, tables, index = text.splitlines(), [], 0
    while index < len(lines):
        if lines[index].startswith("|"):
            body = list(itertools.takewhile(lambda row: row.startswith("|"), lines[index:]))
            tables.append((cells(body[0]), [cells(row) for row in body[2:]]))
            index += len(body)
        else:
            index += 1
    return tables


def close(shown: str, exact: float) -> bool:
    """A number shown with its decimals agrees with the exact value to that precision."""
    decimals = len(shown.split(".")[1]) if "." in shown else 0
    return abs(float(shown) - exact) <= 0.5 * 10**-decimals + 1e-12


def column(rows, index) -> np.ndarray:
    return np.array([float(row[index]) for row in rows])


def numbers(cell: str) -> np.ndarray:
    return np.array([float(value) for value in cell.split(",")])


def check_rule(rows):
    p, q = column(rows, 1), column(rows, 2)
    keep, leftover = acceptance_probability(p, q), leftover_distribution(p, q)
    for i, row in enumerate(rows):
        assert close(row[3], p[i] / q[i]), row
        assert close(row[4], keep[i]) and close(row[5], max(0.0, p[i] - q[i])), row
        assert close(row[6], leftover[i]), row


def check_output(rows):
    p, q = column(rows, 1), column(rows, 2)
    beta = expected_acceptance(p, q)
    kept = q * acceptance_probability(p, q)
    from_leftover = (1 - beta) * leftover_distribution(p, q)
    for i, row in enumerate(rows):
        assert close(row[3], kept[i]) and close(row[4], from_leftover[i]), row
        assert close(row[5], kept[i] + from_leftover[i]) and close(row[5], p[i]), row


def check_biased(rows):
    p, q = column(rows, 1), column(rows, 2)
    emitted = np.minimum(p, q) + (1 - expected_acceptance(p, q)) * p
    for i, row in enumerate(rows):
        assert close(row[3], emitted[i]), row
        verdict = "exactly" if np.isclose(emitted[i], p[i]) else (
            "too often" if emitted[i] > p[i] else "too rarely"
        )  # fmt: skip
        assert row[4] == verdict, row


def check_kept(rows):
    for row in rows:
        p, q = numbers(row[0]), numbers(row[1])
        assert close(row[2], expected_acceptance(p, q)), row
        assert close(row[3], expected_match_acceptance(p, q)), row


def check_onehot(rows):
    p, q = column(rows, 1), column(rows, 2)
    keep, leftover = acceptance_probability(p, q), leftover_distribution(p, q)
    for i, row in enumerate(rows):
        assert row[3] == NEVER if q[i] == 0 else close(row[3], keep[i]), row
        assert close(row[4], leftover[i]), row


def settings_from(text: str) -> SamplingSettings:
    if match := re.fullmatch(r"temperature ([\d.]+)", text):
        return SamplingSettings(temperature=float(match.group(1)))
    if match := re.fullmatch(r"top-k (\d+)", text):
        return SamplingSettings(top_k=int(match.group(1)))
    if match := re.fullmatch(r"top-p ([\d.]+)", text):
        return SamplingSettings(top_p=float(match.group(1)))
    raise AssertionError(f"unknown setting {text!r}")


def check_settings(rows):
    logits = np.log([0.4, 0.3, 0.2, 0.1])  # p at temperature 1
    for row in rows:
        probs = sampling_distribution(logits, settings_from(row[0]))
        assert all(close(shown, value) for shown, value in zip(row[1:], probs, strict=True)), row


class GivenUniforms:
    """Stands in for np.random.Generator: random() returns the handout's numbers in order."""

    def __init__(self, values):
        self.values = list(values)

    def random(self):
        return self.values.pop(0)


def check_step(rows, p, q):
    for row in rows:
        draft = TOKENS.index(row[0])
        u, u_prime = float(row[1]), float(row[2])
        # p after the draft (the bonus row) is not asked for: any distribution will do
        n_accepted, token = speculative_step(
            np.stack([p, p]), q[None, :], [draft], GivenUniforms([u, u_prime])
        )
        assert row[3] == ("yes" if n_accepted else "no"), row
        assert row[4] == TOKENS[draft if n_accepted else token], row


TABLES = marked_tables(KEY.read_text(encoding="utf-8"))


def test_the_key_has_every_checked_table():
    assert {name for name, _, _ in TABLES} == set(N_INPUTS)
    assert all(rows for _, _, rows in TABLES)


@pytest.mark.parametrize("index", range(len(TABLES)), ids=[t[0] for t in TABLES])
def test_key_table_agrees_with_speclab(index):
    name, _, rows = TABLES[index]
    if name == "step":  # played on the distributions of the exercise's rule table, above it
        rule = next(rows for name, _, rows in reversed(TABLES[:index]) if name == "rule")
        check_step(rows, column(rule, 1), column(rule, 2))
    else:
        {"rule": check_rule, "output": check_output, "biased": check_biased,
         "kept": check_kept, "onehot": check_onehot, "settings": check_settings}[name](rows)  # fmt: skip


def test_handout_shows_every_checked_table_without_answers():
    handout_tables = all_tables(HANDOUT.read_text(encoding="utf-8"))
    for name, header, rows in TABLES:
        n_inputs = N_INPUTS[name]
        shown = [r for h, table in handout_tables if h == header for r in table]
        for row in rows:
            match = [r for r in shown if r[:n_inputs] == row[:n_inputs] and len(r) == len(row)]
            assert match, f"the handout lacks row {row[:n_inputs]} of table {name!r}"
            for answer in match[0][n_inputs:]:
                assert set(answer) <= {"_", " "}, f"the handout shows an answer in {match[0]}"


def test_handout_walks_one_step_on_four_tokens():
    text = HANDOUT.read_text(encoding="utf-8")
    assert "## Exercise 1 · One step by hand" in text
    first_rule = next(rows for name, _, rows in TABLES if name == "rule")
    assert [row[0] for row in first_rule] == list(TOKENS)


def test_the_draft_models_cost_is_quoted_from_the_saved_report_and_the_shapes():
    """Exercise 7 quotes what the draft model costs (the saved report's range of its cost per
    drafted token, in target steps) and its share of the arithmetic (weights read by the
    matrix products); the key names the two models' depths. Retrained models move all three."""

    from speclab.bench import matmul_params
    from speclab.paths import data_dir
    from speclab.weights import load_draft, load_target

    decode = load_report(data_dir() / "bench" / "decode.json")
    costs = [
        row["draft_cost_per_token"]
        for row in decode["results"]
        if row["drafter"] == "model" and row["draft_cost_per_token"]
    ]
    target, draft = load_target().config, load_draft().config
    handout = " ".join(HANDOUT.read_text(encoding="utf-8").split())
    assert f"costs {min(costs):.2f} to {max(costs):.2f} of a target step" in handout
    share = round(matmul_params(target) / matmul_params(draft))
    ordinal = {2: "half", 3: "third", 4: "quarter", 5: "fifth", 6: "sixth", 7: "seventh",
               8: "eighth", 9: "ninth", 10: "tenth"}[share]  # fmt: skip
    assert f"about a {ordinal} of the target's arithmetic" in handout
    guide = " ".join((LESSONS / "teacher-guide.md").read_text(encoding="utf-8").split())
    assert f"doing a {ordinal} of the target's arithmetic costs a {ordinal} of a step" in guide
    words = {1: "one", 2: "two", 3: "three", 4: "four", 6: "six"}
    key = " ".join(KEY.read_text(encoding="utf-8").split())
    assert f"The question's {min(costs):.2f} to {max(costs):.2f} is larger" in key
    assert (
        f"a {words[draft.n_layer]}-layer draft costs a large share of a "
        f"{words[target.n_layer]}-layer target step" in key
    )


def test_the_teacher_guides_repeating_examples_are_what_the_models_write():
    """Teacher guide, lesson 07 misconceptions: with notebook 07's two decoding prompts (its
    temperature cell: k = 3, 60 bytes, seed = the prompt's index), the shipped models write
    `__init__(self, width=` again, then `width=0, ` five times at T = 0, and `file` six times
    at T = 0.5."""
    from speclab.decoding import speculative_decode
    from speclab.drafters import ModelDrafter
    from speclab.tokenizer import decode, encode
    from speclab.weights import load_draft, load_target

    guide = " ".join((LESSONS / "teacher-guide.md").read_text(encoding="utf-8").split())
    assert (
        "`__init__(self, width=` again and then `width=0, ` five times at T = 0, `file` six "
        "times in 60 bytes at T = 0.5)" in guide
    )
    cells = json.loads(
        (repo_root() / "notebooks" / "07_speculative_sampling.ipynb").read_text("utf-8")
    )
    code = "".join(
        "".join(cell["source"]) for cell in cells["cells"] if cell["cell_type"] == "code"
    )
    prompts = [
        "class Wrapper:\n    def __init__(self, width=70):\n        self.",
        'def read_config(path):\n    """Read the file at path."""\n    with open(',
    ]
    assert all(repr(prompt)[1:-1] in code for prompt in prompts), "the notebook's prompts"
    target, draft = load_target(), load_draft()

    def written(temperature):
        return [
            decode(
                speculative_decode(
                    target, ModelDrafter(draft), encode(prompt), 60, 3, adaptive=False,
                    temperature=temperature, rng=np.random.default_rng(seed),
                ).tokens
            )
            for seed, prompt in enumerate(prompts)
        ]  # fmt: skip

    cold = written(0.0)
    assert any(t.startswith("__init__(self, width=") and t.count("width=0, ") >= 5 for t in cold)
    assert any(text.count("file") >= 6 for text in written(0.5))


def test_the_teacher_guides_temperature_curve_is_the_notebooks():
    """Teacher guide, lesson 07: the exact rule's curve (notebook 07's sweep over the first
    800 bytes of a held-out file) "rises slowly up to T = 1.5 and faster beyond"."""
    import sysconfig
    from pathlib import Path

    from speclab import sampling
    from speclab.gpt import forward
    from speclab.weights import load_draft, load_target

    guide = " ".join((LESSONS / "teacher-guide.md").read_text(encoding="utf-8").split())
    assert "rises slowly up to T = 1.5 and faster beyond" in guide
    # one position can go the other way first: the guide's p and q, beta at T = 0, 1 and 4
    example = [np.log([0.6, 0.4]), np.log([0.9, 0.1])]
    beta = []
    for t in (0.0, 1.0, 4.0):
        p, q = (sampling.sampling_distribution(x, sampling.SamplingSettings(temperature=t))
                for x in example)  # fmt: skip
        beta.append(np.minimum(p, q).sum())
    assert beta[1] < beta[0] and beta[1] < beta[2]
    assert f"1 at T = 0, {beta[1]:.2f} at T = 1, {beta[2]:.2f} at T = 4" in guide
    assert f"{beta[0]:g}" == "1"
    target, draft = load_target(), load_draft()
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    held_out = next(f for f in target.meta["corpus"]["val_files"] if (stdlib / f).is_file())
    tokens = list((stdlib / held_out).read_bytes()[:800])
    logits = [forward(m.params, m.config, tokens) for m in (target, draft)]
    curve = []
    for t in (0.0, 0.5, 1.0, 1.5, 2.0, 4.0):
        p, q = (sampling.sampling_distribution(x, sampling.SamplingSettings(temperature=t))
                for x in logits)  # fmt: skip
        curve.append(np.minimum(p, q).sum(axis=1).mean())
    steps = np.diff(curve)  # per interval: 0-0.5, 0.5-1, 1-1.5, 1.5-2, 2-4
    assert (steps[:3] > -0.01).all() and curve[3] - curve[0] < 0.05  # slowly, to 1.5
    assert steps[3] > 0.02 and steps[4] > 0.1  # faster beyond
