"""The set-up a newcomer relies on: pyproject.toml and environment.yml list the same
packages, the core imports numpy alone, and the two commands exist."""

import os
import re
import shutil
import subprocess
import sys
import tomllib

import pytest

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


def fake_python(path, version: str, log):
    """A stand-in interpreter: answers -V, passes (new) or fails (old) the version check, makes
    a venv of itself, and logs every call; no real Python or network is needed."""
    passes = 0 if version >= "3.11" else 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "#!/bin/sh\n"
        f'echo "{version} $*" >> "{log}"\n'
        f'if [ "$1" = "-V" ]; then echo "Python {version}"; exit 0; fi\n'
        'if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then mkdir -p "$3/bin"; cp "$0" "$3/bin/python"; '
        "exit 0; fi\n"
        f'if [ "$1" = "-c" ]; then exit {passes}; fi\n'
        "exit 0\n"
    )
    path.chmod(0o755)
    return path


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_remakes_a_venv_of_an_older_python(tmp_path):
    """After a first `make lab` with Python 3.10 had made .venv, `make lab PYTHON=python3.12`,
    as the README advises, reused the 3.10 venv (its only test was that .venv/bin/python ran)."""
    shutil.copy(ROOT / "Makefile", tmp_path)
    (tmp_path / "pyproject.toml").write_text("")
    log = tmp_path / "calls"

    # not the outer make's variables: CI's `make test VENV=build/venv-3.13` passes them down
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}

    def make(python):
        return subprocess.run(["make", ".venv/.installed", f"PYTHON={python}"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60, env=env)  # fmt: skip

    fake_python(tmp_path / ".venv" / "bin" / "python", "3.10.12", log)
    old = fake_python(tmp_path / "old" / "python3", "3.10.12", log)
    refused = make(old)
    assert refused.returncode != 0 and not (tmp_path / ".venv" / ".installed").exists()
    assert "speclab needs Python 3.11 or newer; " in refused.stderr
    assert "is Python 3.10.12: name another, e.g. make lab PYTHON=python3.12" in refused.stderr

    log.write_text("")
    made = make(fake_python(tmp_path / "new" / "python3.12", "3.12.1", log))
    assert made.returncode == 0, made.stderr
    calls = log.read_text().splitlines()
    assert "3.12.1 -m venv .venv" in calls  # made anew by the Python named
    assert not any(call.startswith("3.10.12 -m pip") for call in calls)  # not the old venv
    assert any(call.startswith("3.12.1 -m pip install --quiet -e") for call in calls)

    log.write_text("")
    (tmp_path / "pyproject.toml").write_text("# changed")  # the stamp is older: install again
    again = make(old)  # a good venv is kept: the Python named is not even asked
    assert again.returncode == 0, again.stderr
    assert not any(
        call.startswith("3.10.12") or " -m venv" in call for call in log.read_text().splitlines()
    )


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


def test_the_readme_gives_make_tests_hang_guard_as_the_makefile_sets_it():
    guard = re.search(r"^HANG_GUARD := (.*)$", (ROOT / "Makefile").read_text("utf-8"), re.M)[1]
    seconds = int(re.search(r"--timeout=(\d+)", guard)[1])
    assert "--reruns=1" in guard and "--only-rerun=Timeout" in guard
    readme = " ".join((ROOT / "README.md").read_text("utf-8").split())
    assert f"A test that hangs fails after {seconds // 60} minutes and runs once more" in readme
    test_line = next(line for line in (ROOT / "Makefile").read_text("utf-8").splitlines()
                     if "pytest -n 2" in line)  # fmt: skip
    assert "$(HANG_GUARD)" in test_line
