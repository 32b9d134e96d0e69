"""No import circle inside speclab: no module imports one that (directly or through others)
imports it. Read from the source with the standard library's `ast`, every `import` counted,
the ones inside functions too (a late import hides a circle; it does not remove it)."""

import ast
from pathlib import Path

import speclab

PACKAGE = Path(speclab.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def speclab_imports(path: Path, modules: set[str]) -> set[str]:
    """The speclab modules that the file imports, wherever in the file."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}  # from pkg import mod
    return found & modules


def import_graph() -> dict[str, set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {module_name(p): speclab_imports(p, modules) - {module_name(p)} for p in paths}


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of imports (a list of modules, first == last), or None."""
    state: dict[str, str] = {}  # module -> "open" while on the path, "done" after

    def visit(module, path):
        state[module] = "open"
        for imported in sorted(graph.get(module, ())):
            if state.get(imported) == "open":
                return path[path.index(imported) :] + [imported]
            if imported not in state and (circle := visit(imported, path + [imported])):
                return circle
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state and (circle := visit(module, [module])):
            return circle
    return None


def test_find_circle_finds_one_and_only_one():
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    assert find_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b"}, "b": {"b"}}) == ["b", "b"]


def test_the_graph_sees_late_imports(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from speclab.bench import x\n    import speclab.gpt\n")
    modules = {"speclab.bench", "speclab.gpt", "speclab.weights"}
    assert speclab_imports(source, modules) == {"speclab.bench", "speclab.gpt"}


def test_no_import_circle_in_speclab():
    graph = import_graph()
    assert "speclab.bench_cli" in graph and "speclab.figures.style" in graph  # it read them all
    circle = find_circle(graph)
    assert circle is None, "import circle: " + " -> ".join(circle)


def test_benchmarks_share_timing_and_only_the_command_wires_them():
    graph = import_graph()
    assert "speclab.bench_decode" not in graph["speclab.bench"]
    assert "speclab.bench" not in graph["speclab.bench_decode"]
    assert {"speclab.bench", "speclab.bench_decode"} <= graph["speclab.bench_cli"]
    assert "speclab.timing" in graph["speclab.bench"] & graph["speclab.bench_decode"]
