"""speclab: learn speculative decoding (draft + verify), from a quiz game to a numpy transformer.

Every notebook in `notebooks/` imports its functions from the modules of this package;
the core modules need numpy alone (matplotlib lives in `figures`, ipywidgets in `widgets`).
Importing the package does nothing else: no module-level state, no side effects.
"""


def __getattr__(name: str) -> str:
    """`speclab.__version__`, looked up when asked for.

    Not at import: importlib.metadata takes about 0.1 s to import, and the `speclab`
    command must already be inside `main` (where Ctrl-C prints one line) by then.
    """
    if name != "__version__":
        raise AttributeError(f"module 'speclab' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("speclab")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"
