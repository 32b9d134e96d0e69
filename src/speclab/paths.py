"""Where the repository's data lives, found from the package, never from the current directory.

speclab is used from a clone, installed editable (`pip install -e .`), so the data folder is
`<repo>/data`. Notebooks start their kernel in `notebooks/`, tests in the repo root: both
reach the same files through these functions.
"""

from pathlib import Path


def repo_root() -> Path:
    """The clone's top folder (the one holding `data/` and `src/`)."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "data").is_dir():
        raise FileNotFoundError(
            f"speclab expects to be installed from a clone (editable); no data/ folder at {root}"
        )
    return root


def data_dir() -> Path:
    return repo_root() / "data"


def weights_dir() -> Path:
    return data_dir() / "weights"


def prompts_dir() -> Path:
    return data_dir() / "prompts"


def bench_dir() -> Path:
    """Where `speclab bench` writes its reports by default, and lesson 06 looks for them."""
    return repo_root() / "build" / "bench"
