"""Notebooks are committed stripped: no outputs, no execution counts, no widget state.

`nbstripout --install` only configures one clone, so this test guards every clone and CI.
"""

import json
import re

import pytest

from speclab.paths import repo_root

NOTEBOOK_DIR = repo_root() / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.rglob("*.ipynb"))  # the translations in zh/ and fa/ too


def name(path):
    return path.relative_to(NOTEBOOK_DIR).as_posix()


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=name)
def test_notebook_is_stripped(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert "widgets" not in notebook.get("metadata", {}), "metadata.widgets: strip the notebook"
    for index, cell in enumerate(notebook["cells"]):
        where = f"{path.name} cell {index}"
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"{where} has outputs: run nbstripout"
            assert cell.get("execution_count") is None, f"{where} has an execution count"
        assert "widgets" not in cell.get("metadata", {}), where


# Digits that may stand in hand-written prose: names and labels, not results.
LABELS = [
    r"\$\$.*?\$\$",  # display maths
    r"\$.*?\$",  # inline maths
    r"[Ll]essons? \d\d( and \d\d)?",
    r"lessons/(answers/)?\d\d_\w+\.md",
    r"^\d+\. ",  # numbered steps
    r"Figure \d",
    r"Eq\. 1",
    r"et al\. \d{4}",
    r"\b\w+ \+ 1\b",  # formulas: m + 1, accepted + 1
    r"below 1\b",
    # the Chinese and Persian notebooks (lesson numbers, figure and equation names)
    r"lessons/(zh|fa)/\d\d_\w+\.md",
    r"第 \d\d 课",
    r"[图式] [12]\b",
    r"(درس|درس‌های) [۰-۹]{2}( و [۰-۹]{2})?",
    r"(شکل|معادلهٔ) [۱۲]",
]
COMPUTED_PROSE = [p for p in NOTEBOOKS if p.name[:2] in {"01", "02", "03"}]


@pytest.mark.parametrize("path", COMPUTED_PROSE, ids=name)
def test_numbers_in_prose_are_computed(path):
    """Hand-written Markdown holds no numbers; results appear through display(Markdown(...))."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        text = "".join(cell["source"])
        for label in LABELS:
            text = re.sub(label, "", text, flags=re.S | re.M)
        assert not re.search(r"\d", text), f"{path.name} cell {index}: a typed number in {text!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=name)
def test_a_learner_sees_no_lint_pragmas(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    for index, cell in enumerate(notebook["cells"]):
        found = re.findall(r"# fmt: (?:skip|off|on)|# noqa|strict=False", "".join(cell["source"]))
        assert not found, f"{path.name} cell {index}: {found}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=name)
def test_a_count_is_said_with_its_noun_in_number(path):
    """A sentence a code cell writes names a count with speclab.render.counted ("1 token",
    "4 tokens"), not with a "(s)" left for the reader ("proposed 4 token(s)")."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] == "code":
            found = re.findall(r"\w\(s\)", "".join(cell["source"]))
            assert not found, f"{path.name} cell {index}: {found}"
