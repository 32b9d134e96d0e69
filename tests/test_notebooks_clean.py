"""Notebooks are committed stripped: no outputs, no execution counts, no widget state.

`nbstripout --install` only configures one clone, so this test guards every clone and CI.
"""

import json

import pytest

from speclab.paths import repo_root

NOTEBOOKS = sorted((repo_root() / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_notebook_is_stripped(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert "widgets" not in notebook.get("metadata", {}), "metadata.widgets: strip the notebook"
    for index, cell in enumerate(notebook["cells"]):
        where = f"{path.name} cell {index}"
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"{where} has outputs: run nbstripout"
            assert cell.get("execution_count") is None, f"{where} has an execution count"
        assert "widgets" not in cell.get("metadata", {}), where
