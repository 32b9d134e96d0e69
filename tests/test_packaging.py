"""The set-up a newcomer relies on: pyproject.toml and environment.yml list the same
packages, the core imports numpy alone, and the two commands exist."""

import re
import subprocess
import sys
import tomllib

from speclab.paths import repo_root

ROOT = repo_root()
# pip name -> conda-forge name, where they differ. conda, unlike pip, does not read - and _
# as the same letter, so a conda name is compared exactly (conda-forge's package pages).
CONDA_NAMES = {"arabic-reshaper": "arabic_reshaper", "playwright": "playwright-python"}


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def split_requirement(text: str, exact: bool = False) -> tuple[str, str]:
    """'numpy>=1.26' -> ('numpy', '>=1.26'); the name as pip reads it, or `exact` as conda does."""
    match = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*(.*?)\s*", text)
    assert match, text
    name = match.group(1) if exact else normalise(match.group(1))
    return name, match.group(2).replace(" ", "")


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def pip_requirements() -> dict[str, str]:
    project = pyproject()["project"]
    listed = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        listed += extra
    pairs = [split_requirement(r) for r in listed]
    return {CONDA_NAMES.get(name, name): spec for name, spec in pairs}


def conda_environment() -> tuple[dict[str, str], list[str]]:
    """(conda packages -> specifier, pip lines) from environment.yml, without a YAML library."""
    conda, pip, section = {}, [], None
    for raw in (ROOT / "environment.yml").read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if not line.startswith(" "):
            section = line.split(":", 1)[0]
            continue
        if section != "dependencies":
            continue
        item = line.strip()
        assert item.startswith("- "), raw
        item = item[2:].strip()
        if item == "pip:":
            continue
        if raw.startswith(" " * 6):
            pip.append(item)
        else:
            name, spec = split_requirement(item, exact=True)
            conda[name] = spec
    return conda, pip


def test_environment_yml_lists_the_same_packages_as_pyproject():
    conda, pip = conda_environment()
    assert conda.pop("python") == pyproject()["project"]["requires-python"]
    assert conda.pop("pip") == ""
    assert conda == pip_requirements()
    assert pip == ["-e ."]  # the package itself, editable, as `make` installs it


def test_conda_environment_name():
    text = (ROOT / "environment.yml").read_text(encoding="utf-8")
    assert re.search(r"^name: speclab$", text, flags=re.M)


def test_core_imports_numpy_only():
    code = (
        "import sys; import speclab, speclab.acceptance, speclab.counting, speclab.paths;"
        "import speclab.student_files;"
        "heavy = {'pandas', 'matplotlib', 'ipywidgets', 'IPython'} & set(sys.modules);"
        "import speclab.exercises, speclab.guesses_report, speclab.cli;"
        "late = {'matplotlib', 'ipywidgets'} & set(sys.modules);"
        "print(sorted(heavy), sorted(late))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[] []"


def test_make_targets_and_ci():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("lab", "test", "lint"):
        assert re.search(rf"^{target}:", makefile, flags=re.M), target
    assert re.search(r"^\$\(STAMP\): pyproject.toml", makefile, flags=re.M)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test" in ci and "set -euo pipefail" in ci


def test_licence_is_mit():
    assert pyproject()["project"]["license"] == "MIT"
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License")
    assert "WITHOUT WARRANTY OF ANY KIND" in licence


def test_readme_names_the_commands_notebooks_and_handouts():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for command in ("make lab", "make test", "pip install -e", "conda env create"):
        assert command in readme, command
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert notebook.name in readme, notebook.name
    for handout in sorted((ROOT / "lessons").glob("0*.md")):
        assert f"lessons/{handout.name}" in readme, handout.name


def test_no_machine_specific_paths():
    checked = [
        *(ROOT / "src" / "speclab").rglob("*.py"),
        *ROOT.joinpath("notebooks").rglob("*.ipynb"),
        *ROOT.joinpath("lessons").rglob("*.md"),
        *ROOT.joinpath("docs").rglob("*.md"),
        ROOT / "README.md",
    ]
    assert ROOT / "src" / "speclab" / "widgets" / "base.py" in checked  # the subpackages too
    for path in checked:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"(?<![\w.])/(work|tmp|root|home)/", text), path
