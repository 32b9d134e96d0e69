"""speclab.paths: the clone's folders, found from where the package lives, never from the
current directory.

The module is copied into a made-up clone (`<root>/src/speclab/paths.py`) and loaded from
there, so that where it looks can be checked against a folder the test chose."""

import importlib.util
import shutil
from pathlib import Path

import pytest

from speclab import paths


def _paths_in_a_clone_at(root: Path):
    """speclab.paths as it would be in a clone at root: the same file, loaded from there."""
    module_file = root / "src" / "speclab" / "paths.py"
    module_file.parent.mkdir(parents=True)
    shutil.copy(paths.__file__, module_file)
    spec = importlib.util.spec_from_file_location("paths_in_a_clone", module_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_folder_is_the_clones_whatever_the_current_one(tmp_path, monkeypatch):
    """README: `make bench` writes its reports to build/bench/; the shipped ones are in data/."""
    tmp_path = tmp_path.resolve()  # the root is found resolved
    clone = tmp_path / "clone"
    moved = _paths_in_a_clone_at(clone)
    (clone / "data").mkdir()
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "data").mkdir(parents=True)  # a data/ folder here must not be taken
    monkeypatch.chdir(elsewhere)
    assert moved.repo_root() == clone
    assert moved.data_dir() == clone / "data"
    assert moved.weights_dir() == clone / "data" / "weights"
    assert moved.prompts_dir() == clone / "data" / "prompts"
    assert moved.bench_dir() == clone / "build" / "bench"


def test_a_package_outside_a_clone_is_told_where_it_looked(tmp_path):
    """Installed without its clone (no data/ beside src/), every path would lead nowhere: the
    error names the folder where data/ was expected, the one holding src/."""
    tmp_path = tmp_path.resolve()  # the root is found resolved
    moved = _paths_in_a_clone_at(tmp_path / "site")
    for function in (moved.repo_root, moved.weights_dir, moved.bench_dir):
        with pytest.raises(FileNotFoundError) as error:
            function()
        assert str(error.value) == (
            "speclab expects to be installed from a clone (editable); no data/ folder at "
            f"{tmp_path / 'site'}"
        )


def test_the_root_found_is_the_clone_these_tests_are_in():
    """tests/ sits beside src/ and data/ in the clone: its parent is the root."""
    assert paths.repo_root() == Path(__file__).resolve().parents[1]
    assert (paths.weights_dir() / "target.npz").is_file()
    assert (paths.prompts_dir() / "01_copy_heavy.toml").is_file()
