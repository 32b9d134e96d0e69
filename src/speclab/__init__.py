"""speclab: learn speculative decoding (draft + verify), from a quiz game to a numpy transformer.

Every notebook in `notebooks/` imports its functions from the modules of this package;
the core modules need numpy alone (matplotlib lives in `figures`, ipywidgets in `widgets`).
Importing the package does nothing else: no module-level state, no side effects.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("speclab")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
