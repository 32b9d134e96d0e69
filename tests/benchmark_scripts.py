"""benchmarks/*.py as modules, for tests (benchmarks/ is no package)."""

import importlib.util
from pathlib import Path

FOLDER = Path(__file__).parent.parent / "benchmarks"


def load(name: str):
    """The script benchmarks/NAME.py, imported (its main() is not run)."""
    spec = importlib.util.spec_from_file_location(name, FOLDER / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
