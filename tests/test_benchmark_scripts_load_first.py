"""Scripts that take several weights files load them all before any work: a missing second
file is one line at once, not after the first file's analysis has printed."""

import subprocess
import sys

import pytest
from benchmark_scripts import FOLDER

from speclab.paths import weights_dir


@pytest.mark.parametrize("script", ["copy_diagnosis", "copy_mistakes", "lookup_acceptance"])
def test_a_missing_second_weights_file_stops_before_the_first_is_analysed(tmp_path, script):
    draft = weights_dir() / "draft.npz"
    result = subprocess.run(
        [sys.executable, FOLDER / f"{script}.py", draft, tmp_path / "missing.npz"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode != 0
    assert "missing.npz" in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert "==" not in result.stdout, result.stdout  # no model's report began
