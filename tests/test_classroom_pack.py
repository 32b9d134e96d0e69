"""The offline classroom pack: tools/classroom_pack.py, tools/pack_wheels.py and the pack's
installer tools/classroom_pack/install.py (issue 16).

Fast and offline (in `make test`): the platform and Python matrix, the markers of a target,
the walk through wheels' metadata, pip download from a folder of made-up wheels (a Windows
set gets its Windows-only dependency although pip runs on Linux), the messages for no
network, a missing wheel and an unknown platform, Ctrl-C leaving no pack, a pack assembled
from made-up downloads, the manifest as install.py reads it, and install.sh refusing a Python
the pack has no wheels for.

`make test-pack` (marker `pack`, minutes, needs PyPI): builds a pack for this machine only,
installs it into a fresh venv with pip unable to reach any network, runs lesson 02 and
`speclab check-guesses` from the installed pack, and checks the size report.
"""

import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from speclab.paths import repo_root

TOOLS = repo_root() / "tools"
sys.path.insert(0, str(TOOLS))  # tools/ is a folder of scripts, not a package
import classroom_pack  # noqa: E402
import pack_wheels  # noqa: E402
from pack_wheels import PLATFORMS, PYTHONS, Target  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "pack_install", TOOLS / "classroom_pack" / "install.py"
)
pack_install = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pack_install)

UNREACHABLE = "http://127.0.0.1:9"  # the discard port: nothing listens, refused at once


def _in_a_git_clone() -> bool:
    try:
        command = ["git", "rev-parse", "--is-inside-work-tree"]
        result = subprocess.run(command, cwd=repo_root(), capture_output=True, text=True)
    except FileNotFoundError:
        return False
    return result.stdout.strip() == "true"


# A pack is made from git HEAD; the repository copy inside a pack has no .git.
IN_A_GIT_CLONE = _in_a_git_clone()
needs_git = pytest.mark.skipif(not IN_A_GIT_CLONE, reason="not a git clone (a pack?)")


def make_wheel(folder: Path, name: str, version: str, requires=(), tag="py3-none-any") -> Path:
    """A minimal wheel, enough for pip download and for pack_wheels.Wheel.read."""
    dist = f"{name.replace('-', '_')}-{version}"
    path = folder / f"{dist}-{tag}.whl"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    metadata += "".join(f"Requires-Dist: {requirement}\n" for requirement in requires)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{name.replace('-', '_')}/__init__.py", "")
        archive.writestr(f"{dist}.dist-info/METADATA", metadata)
        archive.writestr(f"{dist}.dist-info/WHEEL", f"Wheel-Version: 1.0\nTag: {tag}\n")
        archive.writestr(f"{dist}.dist-info/RECORD", "")
    return path


@pytest.fixture
def local_index(tmp_path, monkeypatch):
    """A find-links folder standing in for PyPI; pip may read nothing else."""
    folder = tmp_path / "index"
    folder.mkdir()
    make_wheel(
        folder,
        "lesson-app",
        "1.0",
        [
            "lesson-core>=1",
            "lesson-win; os_name == 'nt'",
            "lesson-posix; sys_platform != 'win32'",
            "lesson-old; python_version < '3.12'",
            "lesson-extra[fancy]",
        ],
    )
    for name in ("lesson-core", "lesson-win", "lesson-posix", "lesson-old", "lesson-fancy"):
        make_wheel(folder, name, "1.0")
    make_wheel(folder, "lesson-extra", "1.0", ["lesson-fancy; extra == 'fancy'"])
    make_wheel(folder, "lesson-native", "1.0", tag="cp313-cp313-win_amd64")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    return folder


def target(python: str, key: str) -> Target:
    return Target(python, PLATFORMS[key])


# --- the matrix ------------------------------------------------------------------------------


def test_default_matrix_is_every_python_on_every_platform():
    targets = pack_wheels.targets_for(list(PYTHONS), list(PLATFORMS))
    assert PYTHONS == ("3.11", "3.12", "3.13")
    assert list(PLATFORMS) == [
        "linux-x86_64",
        "linux-aarch64",
        "macos-arm64",
        "macos-x86_64",
        "windows-x86_64",
    ]
    assert len(targets) == 15 == len(set(targets))
    assert [t.name for t in targets[:3]] == [f"Python {v} on linux-x86_64" for v in PYTHONS]


def test_platform_tags_reach_the_tags_real_wheels_carry():
    linux = PLATFORMS["linux-x86_64"].pip_tags
    assert linux[0] == "manylinux_2_28_x86_64"  # numpy, pandas, pillow, pyzmq
    for tag in ("manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux_2_5_x86_64"):
        assert tag in linux  # matplotlib, kiwisolver; tornado (and pip adds 2010, 1)
    arm = PLATFORMS["linux-aarch64"].pip_tags
    assert arm[0] == "manylinux_2_28_aarch64" and arm[-2:] == (
        "manylinux_2_17_aarch64",
        "manylinux2014_aarch64",
    )
    assert PLATFORMS["macos-arm64"].pip_tags == ("macosx_11_0_arm64",)
    assert PLATFORMS["macos-x86_64"].pip_tags == ("macosx_11_0_x86_64",)
    assert PLATFORMS["windows-x86_64"].pip_tags == ("win_amd64",)


def test_marker_environments_are_the_targets_not_this_machines():
    envs = pack_wheels.marker_environments(target("3.13", "windows-x86_64"))
    assert {env["python_full_version"] for env in envs} == {"3.13.0", "3.13.99"}
    for env in envs:
        assert (env["os_name"], env["sys_platform"], env["platform_system"]) == (
            "nt",
            "win32",
            "Windows",
        )
        assert env["python_version"] == "3.13" and env["platform_machine"] == "AMD64"
    mac = pack_wheels.marker_environments(target("3.11", "macos-arm64"))[0]
    assert (mac["sys_platform"], mac["platform_machine"]) == ("darwin", "arm64")


def test_unknown_platform_or_python_is_refused_before_anything_is_written(tmp_path, capsys):
    out = tmp_path / "pack"
    assert classroom_pack.main(["--platforms", "beos-x86_64", "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert "unknown platform beos-x86_64" in error and "windows-x86_64" in error
    assert classroom_pack.main(["--pythons", "3.10", "--out", str(out)]) == 2
    assert "unknown Python 3.10" in capsys.readouterr().err
    for option in ("--platforms", "--pythons"):  # empty: it used to build all 15 pairs
        assert classroom_pack.main([option, " , ", "--out", str(out)]) == 2
        assert f"{option} ' , ' names none" in capsys.readouterr().err
        assert classroom_pack.main(["--this-machine", option, "", "--out", str(out)]) == 2
        assert "--this-machine chooses the Python and platform itself" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:  # argparse's usage error
        classroom_pack.main(["--out", ""])
    assert stopped.value.code == 2 and "an empty path" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_out_folder_that_cannot_be_made_is_named_as_given(tmp_path, capsys):
    """An --out under a file, or under a read-only folder, ended in a traceback naming the
    hidden build folder beside it."""
    (tmp_path / "notes.csv").write_text("x", encoding="utf-8")
    out = tmp_path / "notes.csv" / "pack"
    assert classroom_pack.main(["--this-machine", "--handouts", "none", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"--out {out}: cannot write a folder there" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.csv"]


def test_a_folder_that_is_not_a_pack_is_refused_before_anything_is_written(tmp_path, capsys):
    out = tmp_path / "Desktop"
    (out / "sub").mkdir(parents=True)
    (out / "grades.xlsx").write_text("a teacher's own file", encoding="utf-8")
    assert classroom_pack.main(["--this-machine", "--handouts", "none", "--out", str(out)]) == 2
    assert "is not an earlier pack" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["grades.xlsx", "sub"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["Desktop"]
    file = tmp_path / "a-file"
    file.write_text("x", encoding="utf-8")
    assert classroom_pack.main(["--out", str(file)]) == 2
    assert "is a file" in capsys.readouterr().err


def test_this_machine_does_not_quietly_drop_other_choices(tmp_path, capsys):
    argv = ["--this-machine", "--platforms", "windows-x86_64", "--out", str(tmp_path / "p")]
    assert classroom_pack.main(argv) == 2
    assert "leave out --pythons and --platforms" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


# --- which wheels a target needs ------------------------------------------------------------


def test_closure_follows_the_targets_markers_and_extras(local_index):
    wheels = {w.name: w for w in map(pack_wheels.Wheel.read, local_index.glob("*.whl"))}
    roots = ["lesson-app"]
    windows = pack_wheels.closure(
        roots, wheels, pack_wheels.marker_environments(target("3.13", "windows-x86_64"))
    )
    assert windows.needed == lessons("app core win extra fancy")
    linux = pack_wheels.closure(
        roots, wheels, pack_wheels.marker_environments(target("3.11", "linux-x86_64"))
    )
    assert linux.needed == lessons("app core posix old extra fancy")
    assert windows.missing == linux.missing == set() and not windows.conflicts
    del wheels["lesson-win"]
    walk = pack_wheels.closure(
        roots, wheels, pack_wheels.marker_environments(target("3.12", "windows-x86_64"))
    )
    assert walk.missing == {"lesson-win"}
    walk = pack_wheels.closure(
        ["lesson-core>=2"], wheels, pack_wheels.marker_environments(target("3.12", "linux-x86_64"))
    )
    assert walk.conflicts == ["pyproject.toml needs lesson-core>=2, the set has 1.0"]


def names(wheels) -> set[str]:
    return {wheel.name for wheel in wheels}


def lessons(short_names: str) -> set[str]:
    """'app core' -> {'lesson-app', 'lesson-core'}: the made-up projects of local_index."""
    return {f"lesson-{name}" for name in short_names.split()}


def test_download_gets_what_pip_skips_for_another_platform_and_drops_the_rest(
    local_index, tmp_path
):
    # pip evaluates markers for this machine (Linux, 3.11+): it would skip lesson-win for
    # Windows and bring lesson-posix; the walk with Windows' markers fixes both
    windows = pack_wheels.download_target(
        target("3.13", "windows-x86_64"), ["lesson-app"], tmp_path / "w"
    )
    assert names(windows) == lessons("app core win extra fancy")
    kept = {p.name.split("-")[0].replace("_", "-") for p in (tmp_path / "w").glob("*.whl")}
    assert kept == lessons("app core win extra fancy")  # lesson-posix was deleted
    linux = pack_wheels.download_target(
        target("3.12", "linux-x86_64"), ["lesson-app"], tmp_path / "l"
    )
    assert names(linux) == lessons("app core posix extra fancy")  # 3.12: no lesson-old
    native = pack_wheels.download_target(
        target("3.13", "windows-x86_64"), ["lesson-native"], tmp_path / "n"
    )
    assert [w.path.name for w in native] == ["lesson_native-1.0-cp313-cp313-win_amd64.whl"]


def test_a_missing_wheel_names_the_pair_and_the_package(local_index, tmp_path, capsys):
    with pytest.raises(
        pack_wheels.MissingWheel, match=r"Python 3.13 on linux-x86_64: no wheel of lesson-native"
    ):
        pack_wheels.download_target(
            target("3.13", "linux-x86_64"), ["lesson-native"], tmp_path / "s"
        )
    targets = [
        target("3.13", "windows-x86_64"),
        target("3.12", "windows-x86_64"),
        target("3.13", "macos-arm64"),
    ]
    with pytest.raises(pack_wheels.MissingWheel) as failure:
        classroom_pack.download_all(targets, ["lesson-native"], tmp_path / "wheels", tmp_path / "s")
    assert str(failure.value).splitlines() == [
        "Python 3.12 on windows-x86_64: no wheel of lesson-native for this Python and platform"
        " (platform tags win_amd64).",
        "Python 3.13 on macos-arm64: no wheel of lesson-native for this Python and platform"
        " (platform tags macosx_11_0_arm64).",
    ]
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(
        r"\[1/3\] Python 3.13 on windows-x86_64: 1 wheel, 0.0 MB \(\d+ s\)", lines[0]
    )
    assert lines[1:] == [
        "[2/3] Python 3.12 on windows-x86_64: FAILED",
        "[3/3] Python 3.13 on macos-arm64: FAILED",
    ]


def test_pip_failures_are_told_apart():
    windows = target("3.12", "windows-x86_64")
    offline = (
        "WARNING: Retrying (Retry(total=0, ...)) after connection broken by "
        "'NewConnectionError(...: Failed to establish a new connection: [Errno -3] Temporary "
        "failure in name resolution')': /simple/numpy/\n"
        "ERROR: Could not find a version that satisfies the requirement numpy (from versions: none)\n"
        "ERROR: No matching distribution found for numpy\n"
    )
    assert isinstance(pack_wheels.explain_pip_failure(windows, offline), pack_wheels.NetworkError)
    missing = "ERROR: No matching distribution found for pywinpty>=2\n"
    error = pack_wheels.explain_pip_failure(windows, missing)
    assert isinstance(error, pack_wheels.MissingWheel) and "no wheel of pywinpty>=2" in str(error)
    other = pack_wheels.explain_pip_failure(windows, "ERROR: disk full\n")
    assert type(other) is pack_wheels.PackError and "disk full" in str(other)


@needs_git
def test_no_network_is_one_clear_message_and_no_pack(tmp_path):
    env = {**os.environ, "PIP_INDEX_URL": f"{UNREACHABLE}/simple", "PIP_RETRIES": "0"}
    env.update(PIP_NO_CACHE_DIR="1", PIP_CONFIG_FILE=os.devnull, PIP_TIMEOUT="5")
    env.pop("PIP_FIND_LINKS", None)
    command = [sys.executable, str(TOOLS / "classroom_pack.py"), "--platforms", "linux-x86_64"]
    command += ["--pythons", "3.12", "--handouts", "none", "--out", str(tmp_path / "pack")]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr
    assert "cannot reach the package index" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert "[1/1] Python 3.12 on linux-x86_64: FAILED" in result.stdout
    assert list(tmp_path.iterdir()) == []  # no pack, no hidden half-built folder


# --- the pack, assembled from made-up downloads ------------------------------------------------


def fake_downloads():
    """A stand-in for download_all: two targets sharing one pure wheel."""

    def download_all(targets, roots, wheels_dir, staging):
        wheels_dir.mkdir()
        shared = make_wheel(wheels_dir, "lesson-core", "1.0")
        downloads = {}
        for t in targets:
            tag = f"cp{t.python.replace('.', '')}-cp{t.python.replace('.', '')}-{t.platform.pip_tags[0]}"
            native = make_wheel(wheels_dir, "lesson-native", "1.0", tag=tag)
            downloads[t] = [pack_wheels.Wheel.read(p) for p in (shared, native)]
        return downloads

    return download_all


@pytest.fixture(scope="module")
def small_pack(tmp_path_factory):
    """A pack for this machine's Python and two platforms, with made-up wheels, no handouts."""
    if not IN_A_GIT_CLONE:
        pytest.skip("not a git clone (a pack?)")
    out = tmp_path_factory.mktemp("small") / "classroom-pack"
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(classroom_pack, "download_all", fake_downloads())
        targets = pack_wheels.targets_for([python], ["linux-x86_64", "windows-x86_64"])
        classroom_pack.build_pack(out, targets, with_test_extras=False, handouts="none")
    return out


def test_the_pack_holds_the_repository_installers_manifest_and_sizes(small_pack):
    assert sorted(p.name for p in small_pack.parent.iterdir()) == ["classroom-pack"]
    assert {p.name for p in small_pack.iterdir()} == {
        "INSTALL.txt",
        "install.sh",
        "install.bat",
        "pack-manifest.json",
        "pack-size.txt",
        "speclab",
        "wheels",
    }
    command = ["git", "ls-tree", "-r", "--name-only", "HEAD"]
    committed = subprocess.run(command, cwd=repo_root(), capture_output=True, text=True)
    for name in committed.stdout.splitlines():
        assert (small_pack / "speclab" / name).is_file(), name
    for junk in (".git", ".venv", "build", "runs"):
        assert not (small_pack / "speclab" / junk).exists(), junk
    assert os.access(small_pack / "install.sh", os.X_OK)
    assert b"\r\n" not in (small_pack / "install.sh").read_bytes()
    bat = (small_pack / "install.bat").read_bytes()
    assert bat.count(b"\r\n") == bat.count(b"\n") > 10  # cmd.exe wants CRLF
    guide = (small_pack / "INSTALL.txt").read_text(encoding="utf-8")
    assert "@" not in guide and "Linux x86_64 (glibc 2.28+): Python" in guide
    for words in ("English", "中文", "فارسی", "sh install.sh", "install.bat", "python3-venv"):
        assert words in guide, words


def test_manifest_lists_each_pair_with_its_wheels_and_sizes(small_pack):
    manifest = json.loads((small_pack / "pack-manifest.json").read_text(encoding="utf-8"))
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert [(t["python"], t["platform"]) for t in manifest["targets"]] == [
        (python, "linux-x86_64"),
        (python, "windows-x86_64"),
    ]
    assert manifest["extras"] == [] and manifest["handouts"] == "none"
    assert re.fullmatch(r"[0-9a-f]{40}", manifest["commit"])
    assert manifest["platforms"]["linux-x86_64"]["min_glibc"] == "2.28"
    wheels = {p.name: p.stat().st_size for p in (small_pack / "wheels").iterdir()}
    assert len(wheels) == 3  # one shared pure wheel, one native wheel per platform
    for t in manifest["targets"]:
        assert {w["file"]: w["bytes"] for w in t["wheels"]}.items() <= wheels.items()
    sizes = manifest["sizes"]
    assert sizes["wheels_bytes"] == sum(wheels.values())
    assert sizes["per_platform_wheels_bytes"]["linux-x86_64"] == sum(
        w["bytes"] for w in manifest["targets"][0]["wheels"]
    )
    report = (small_pack / "pack-size.txt").read_text(encoding="utf-8")
    assert report.startswith("speclab classroom pack: ") and "windows-x86_64" in report


@needs_git
def test_interrupted_build_leaves_the_old_pack_and_nothing_else(tmp_path, monkeypatch, capsys):
    out = tmp_path / "classroom-pack"
    out.mkdir()
    (out / "old.txt").write_text("the previous pack", encoding="utf-8")
    (out / "pack-manifest.json").write_text("{}", encoding="utf-8")

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(classroom_pack, "download_all", interrupted)
    assert classroom_pack.main(["--this-machine", "--handouts", "none", "--out", str(out)]) == 130
    assert "interrupted: no pack written" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["classroom-pack"]
    assert sorted(p.name for p in out.iterdir()) == ["old.txt", "pack-manifest.json"]


# --- install.py and install.sh -------------------------------------------------------------


def computer(**facts):
    base = dict(
        python="3.12",
        implementation="CPython",
        bits=64,
        sys_platform="linux",
        machine="x86_64",
        glibc="2.31",
        macos=None,
    )
    return {**base, **facts}


@pytest.fixture
def manifest(small_pack):
    document = json.loads((small_pack / "pack-manifest.json").read_text(encoding="utf-8"))
    for t in document["targets"]:
        t["python"] = "3.12"
    document["platforms"]["macos-arm64"] = {
        "title": "macOS 11+ on Apple silicon",
        "sys_platform": "darwin",
        "machines": ["arm64"],
        "min_glibc": None,
        "min_macos": "11.0",
    }
    document["targets"].append({"python": "3.13", "platform": "macos-arm64", "wheels": []})
    return document


def test_installer_finds_this_computers_wheels(manifest):
    choose = pack_install.choose_target
    assert choose(manifest, computer())["platform"] == "linux-x86_64"
    windows = computer(sys_platform="win32", machine="amd64", glibc=None)
    assert choose(manifest, windows)["platform"] == "windows-x86_64"
    mac = computer(python="3.13", sys_platform="darwin", machine="arm64", glibc=None, macos="14.5")
    assert choose(manifest, mac)["platform"] == "macos-arm64"
    assert choose(manifest, {**mac, "macos": "10.16"})["platform"] == "macos-arm64"  # = 11


@pytest.mark.parametrize(
    "facts, words",
    [
        (
            {"python": "3.10"},
            "no wheels for Python 3.10 on Linux x86_64 (glibc 2.28+); for this system it has Python 3.12",
        ),
        ({"glibc": "2.17"}, "need glibc 2.28 or newer"),
        ({"glibc": None}, "has no glibc (Alpine"),
        ({"sys_platform": "freebsd14"}, "no wheels for this system (freebsd14, x86_64)"),
        ({"machine": "riscv64"}, "no wheels for this system (linux, riscv64)"),
        ({"bits": 32}, "for 64-bit CPython"),
        ({"implementation": "PyPy"}, "this is PyPy"),
        (
            {"python": "3.13", "sys_platform": "darwin", "machine": "arm64", "macos": "10.15"},
            "need macOS 11.0 or newer",
        ),
    ],
)
def test_installer_refuses_with_what_the_pack_has(manifest, facts, words):
    with pytest.raises(pack_install.Refusal) as refusal:
        pack_install.choose_target(manifest, computer(**facts))
    assert words in str(refusal.value)


def test_installer_refuses_an_incomplete_copy(small_pack, manifest):
    target = pack_install.choose_target(manifest, computer())
    pack_install.check_wheels(small_pack, target)
    damaged = {
        **target,
        "wheels": [*target["wheels"], {"file": "gone-1.0-py3-none-any.whl", "bytes": 1}],
    }
    with pytest.raises(pack_install.Refusal, match=r"incomplete: 1 of 3 wheels .* \(gone-1.0"):
        pack_install.check_wheels(small_pack, damaged)


@pytest.mark.parametrize(
    "text",
    [
        b'{"targets": [',
        b"[]",
        b"\xff\xfe{",
        b"{}",
        b'{"targets": []}',  # valid JSON without the platforms: a KeyError before
        b'{"targets": [{"python": "3.11", "platform": "linux-x86_64"}],'
        b' "platforms": {"linux-x86_64": {"title": "Linux"}}}',
        b'{"targets": [7]}',
    ],
)
def test_installer_refuses_a_damaged_manifest_with_a_message(tmp_path, capsys, text):
    (tmp_path / "pack-manifest.json").write_bytes(text)  # an interrupted copy, say
    assert pack_install.main(["--check-only", "--pack", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "Copy the whole pack folder again" in err and "Traceback" not in err


def test_installer_can_be_read_by_old_pythons():
    source = (TOOLS / "classroom_pack" / "install.py").read_text(encoding="utf-8")
    ast.parse(source, feature_version=(3, 7))  # so that they can say they are too old


def test_install_sh_refuses_a_python_the_pack_lacks(small_pack, tmp_path):
    # the pack's manifest and wheels, with this working tree's installers (not HEAD's)
    pack = tmp_path / "pack"
    shutil.copytree(small_pack, pack, ignore=shutil.ignore_patterns("speclab"))
    shutil.copytree(TOOLS / "classroom_pack", pack / "speclab" / "tools" / "classroom_pack")
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    classroom_pack.write_install_files(pack, pack_wheels.targets_for([python], ["linux-x86_64"]))
    manifest = json.loads((pack / "pack-manifest.json").read_text(encoding="utf-8"))
    for t in manifest["targets"]:
        t["python"] = "3.99"  # a Python this machine does not run
    (pack / "pack-manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    env = {**os.environ, "PYTHON": sys.executable, "PIP_INDEX_URL": f"{UNREACHABLE}/simple"}
    result = subprocess.run(
        ["sh", str(pack / "install.sh"), "--no-launch"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert f"this pack has no wheels for Python {python}" in result.stderr
    assert "it has Python 3.99" in result.stderr and "Traceback" not in result.stderr
    assert not (pack / "speclab" / ".venv").exists()
    env["PYTHON"] = str(tmp_path / "no-such-python")
    result = subprocess.run(
        ["sh", str(pack / "install.sh")], env=env, capture_output=True, text=True
    )
    assert result.returncode == 1 and "is not a Python 3.6 or newer" in result.stderr


# --- the real thing: build for this machine, install offline, run lesson 02 -----------------

RUN_LESSON = """
import json, sys
import nbformat
from nbclient import NotebookClient
path, folder = sys.argv[1], sys.argv[2]
notebook = nbformat.read(path, as_version=4)
notebook.cells.append(nbformat.v4.new_code_cell(
    "import sys, speclab; print(sys.prefix); print(speclab.__file__)"))
NotebookClient(notebook, timeout=600, kernel_name="python3",
               resources={"metadata": {"path": folder}}).execute()
print(json.dumps(notebook.cells[-1].outputs[0]["text"].split()))
"""


def offline_env(tmp_path: Path, venv: Path | None = None) -> dict[str, str]:
    """No index, no proxy that works, Jupyter's folders private to the test."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
    }
    env.update(PIP_INDEX_URL=f"{UNREACHABLE}/simple", PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull)
    env.update(
        http_proxy=UNREACHABLE,
        https_proxy=UNREACHABLE,
        HTTP_PROXY=UNREACHABLE,
        HTTPS_PROXY=UNREACHABLE,
    )
    for name in ("no_proxy", "NO_PROXY", "PIP_FIND_LINKS", "PIP_CONSTRAINT"):
        env.pop(name, None)  # the pack's wheels/ is the only source
    for name in ("CONFIG", "DATA", "RUNTIME"):
        env[f"JUPYTER_{name}_DIR"] = str(tmp_path / "jupyter" / name.lower())
    env["IPYTHONDIR"] = str(tmp_path / "ipython")
    if venv is not None:
        env["PATH"] = str(venv / "bin") + os.pathsep + env["PATH"]
    return env


@pytest.mark.pack
@pytest.mark.timeout(1800)
@needs_git
def test_pack_for_this_machine_installs_offline_and_runs_lesson_02(tmp_path):
    out = tmp_path / "classroom-pack"
    started = time.perf_counter()
    # HTML handouts: the PDFs (minutes of Chromium here) are test_handouts.py's business
    command = [sys.executable, str(TOOLS / "classroom_pack.py"), "--this-machine"]
    command += ["--handouts", "html"]
    build = subprocess.run(
        command + ["--out", str(out)], capture_output=True, text=True, timeout=1200
    )
    build_s = time.perf_counter() - started
    assert build.returncode == 0, build.stdout + build.stderr
    python, key = pack_wheels.this_machine()
    assert f"[1/1] Python {python} on {key}: " in build.stdout
    assert "speclab classroom pack: " in build.stdout and "MB in all" in build.stdout
    sizes = json.loads((out / "pack-manifest.json").read_text(encoding="utf-8"))["sizes"]
    assert sizes["per_platform_wheels_bytes"][key] > 10e6 and sizes["total_bytes"] > 10e6
    assert f"{key}" in (out / "pack-size.txt").read_text(encoding="utf-8")
    print(build.stdout)

    started = time.perf_counter()
    env = {**offline_env(tmp_path), "PYTHON": sys.executable}
    installed = subprocess.run(
        ["sh", str(out / "install.sh"), "--no-launch"],
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    install_s = time.perf_counter() - started
    assert installed.returncode == 0, installed.stdout + installed.stderr
    venv = out / "speclab" / ".venv"
    again = subprocess.run(
        ["sh", str(out / "install.sh"), "--no-launch"], env=env, capture_output=True, text=True
    )
    assert again.returncode == 0 and "installing" not in again.stdout  # installed once only

    started = time.perf_counter()
    notebook = next((out / "speclab" / "notebooks").glob("02_*.ipynb"))
    lesson = subprocess.run(
        [str(venv / "bin" / "python"), "-c", RUN_LESSON, str(notebook), str(notebook.parent)],
        env=offline_env(tmp_path, venv),
        capture_output=True,
        text=True,
        timeout=900,
    )
    lesson_s = time.perf_counter() - started
    assert lesson.returncode == 0, lesson.stderr[-3000:]
    prefix, module = json.loads(lesson.stdout.splitlines()[-1])
    assert Path(prefix).resolve() == venv.resolve()  # the kernel ran in the pack's venv
    assert Path(module).resolve().is_relative_to((out / "speclab" / "src").resolve())

    speclab = venv / "bin" / "speclab"
    checked = subprocess.run(
        [str(speclab), "check-guesses", str(out / "speclab" / "data" / "guesses.csv")],
        env=offline_env(tmp_path, venv),
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0 and "score: " in checked.stdout, checked.stdout + checked.stderr
    mine = tmp_path / "my_guesses.csv"
    template = (out / "speclab" / "data" / "guesses_template.csv").read_text(encoding="utf-8")
    mine.write_text(template.rstrip("\n") + "\n,ABX,ABC\n", encoding="utf-8")
    checked = subprocess.run(
        [str(speclab), "check-guesses", str(mine)],
        env=offline_env(tmp_path, venv),
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0 and "score: 1 of 1" in checked.stdout, checked.stdout
    print(f"build {build_s:.0f} s, offline install {install_s:.0f} s, lesson 02 {lesson_s:.0f} s")


def test_the_packs_handouts_hold_no_lock_file(tmp_path):
    """speclab handouts keeps an empty lock file in its folder; a pack has no use for it."""
    lessons = tmp_path / "project" / "lessons"
    (lessons / "answers").mkdir(parents=True)
    (lessons / "99_x.md").write_text("# Handout\n\nA question? ______\n", "utf-8")
    (lessons / "answers" / "99_x.md").write_text("# Key\n\nThe answer is 4.\n", "utf-8")
    shutil.copytree(repo_root() / "src", tmp_path / "project" / "src")
    (tmp_path / "project" / "data").mkdir()  # where speclab.paths finds a clone
    dest = tmp_path / "handouts"
    assert classroom_pack.build_handouts(tmp_path / "project", dest, "html") == "html"
    assert (dest / "99_x.html").is_file()
    assert sorted(p.name for p in dest.iterdir() if p.name.startswith(".")) == [".speclab-handouts"]


def test_the_printed_launch_command_can_be_pasted_from_a_folder_with_spaces(tmp_path):
    """install.sh --no-launch printed the command unquoted: pasted from "speclab pack" or
    a Windows folder with a space it broke at the space."""
    import shlex

    python, notebooks = tmp_path / "my pack" / ".venv" / "bin" / "python", tmp_path / "nb ü"
    posix = pack_install.launch_command(python, notebooks, windows=False)
    assert shlex.split(posix) == [
        str(python), "-m", "jupyterlab", f"--notebook-dir={notebooks}"
    ]  # fmt: skip
    windows = pack_install.launch_command(
        r"D:\speclab pack\.venv\Scripts\python.exe", r"D:\speclab pack\nb", windows=True
    )
    assert windows.startswith('"D:\\speclab pack\\.venv\\Scripts\\python.exe" -m')
    assert windows.endswith('"--notebook-dir=D:\\speclab pack\\nb"')
    ampersand = pack_install.launch_command(r"D:\A&B\python.exe", r"D:\A&B\nb", windows=True)
    assert ampersand == '"D:\\A&B\\python.exe" -m jupyterlab "--notebook-dir=D:\\A&B\\nb"'


def test_the_readme_quotes_the_saved_pack_sizes():
    """README's table of pack sizes is the saved record of a real build, not remembered."""
    record = json.loads(
        (repo_root() / "docs" / "classroom-pack-sizes.json").read_text(encoding="utf-8")
    )
    readme = " ".join((repo_root() / "README.md").read_text(encoding="utf-8").split())
    sizes = record["sizes"]

    def mb(n_bytes):
        return f"{n_bytes / 1e6:.1f} MB"

    assert f"at commit {record['commit'][:7]} (`docs/classroom-pack-sizes.json`" in readme
    per_platform = sizes["per_platform_wheels_bytes"]
    rows = {
        "everything": sizes["total_bytes"],
        "`speclab/` (code, notebooks, data, weights)": sizes["speclab_bytes"],
        "`handouts/` (32 pages in HTML and 64 PDFs, English, Chinese, Persian)": sizes[
            "handouts_bytes"
        ],
        "`wheels/`, each file once": sizes["wheels_bytes"],
        "wheels for Linux x86_64 (3 Pythons)": per_platform["linux-x86_64"],
        "wheels for Linux aarch64": per_platform["linux-aarch64"],
        "wheels for macOS Apple silicon": per_platform["macos-arm64"],
        "wheels for macOS Intel": per_platform["macos-x86_64"],
        "wheels for Windows x86_64": per_platform["windows-x86_64"],
    }
    for part, n_bytes in rows.items():
        assert f"| {part} | {mb(n_bytes)} |" in readme, part
    installs = sizes["per_target_wheels_bytes"].values()
    assert f"| {mb(min(installs))[:-3]} to {mb(max(installs))} |" in readme
    extra = sizes["speclab_bytes"] + sizes["handouts_bytes"]
    assert f"that platform's wheels plus {mb(extra)}" in readme
    counts = record["wheels_per_pair"].values()
    assert f"took {record['build_seconds']} s" in readme
    assert f"({min(counts)} to {max(counts)} wheels per pair" in readme
