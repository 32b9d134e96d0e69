"""Build the offline classroom pack: one folder that installs speclab with no internet (issue 16).

`make classroom-pack`, or on a machine without make `python tools/classroom_pack.py`, writes
build/classroom-pack/:

    INSTALL.txt          how to install, in English, Chinese and Persian
    install.sh           Linux and macOS: `sh install.sh`
    install.bat          Windows: double-click it, or run it in a terminal
    pack-manifest.json   the (Python, platform) pairs the pack serves, each with its wheels
    pack-size.txt        the pack's size, in all and per platform
    speclab/             the repository at HEAD (`git archive`: no .git, .venv, build/, runs/)
    handouts/            the handouts as HTML, with A4 and Letter PDFs when Chromium exists
    wheels/              every wheel the lessons need at run time, for every pair

The wheels for each (Python, platform) pair are chosen by tools/pack_wheels.py, with
pip download and the pair's own environment markers. The pack is built in a hidden folder
beside its destination and renamed at the end, so Ctrl-C or an error leaves the previous
pack (or none), never a half-written one. install.sh and install.bat find a Python and run
tools/classroom_pack/install.py, which reads pack-manifest.json.

speclab itself is installed editable from speclab/ (`pip install -e`), as from a clone: the
lessons find data/ beside the code (`speclab.paths`), which a speclab wheel copied into
site-packages would not. The editable install needs pyproject.toml's build backend
(setuptools, a pure wheel), so it is in wheels/ too and pip never asks the internet for it.

Left out: the platforms listed in pack_wheels.py; signing the pack; reusing the wheels of an
earlier pack (pip's own cache makes a second build quick).
"""

import argparse
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
from pathlib import Path

from pack_wheels import (
    PLATFORMS,
    PYTHONS,
    MissingWheel,
    PackError,
    Target,
    UsageError,
    Wheel,
    download_target,
    targets_for,
    this_machine,
)

REPO = Path(__file__).resolve().parents[1]
TEMPLATES = Path("tools") / "classroom_pack"  # inside the repository, and so inside speclab/
MANIFEST = "pack-manifest.json"
SIZE_REPORT = "pack-size.txt"


# --- the pack -------------------------------------------------------------------------------


def export_repository(dest: Path) -> str:
    """The repository at HEAD into dest (tracked files only); returns the commit."""
    commit = _git("rev-parse", "HEAD").strip()
    command = ["git", "archive", "--format=tar", "HEAD"]
    safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # 3.11.4 and later
    with subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE) as archive:
        with tarfile.open(fileobj=archive.stdout, mode="r|") as tar:
            tar.extractall(dest, **safe)
    if archive.returncode != 0:
        raise PackError("git archive HEAD failed")
    return commit


def _git(*args: str) -> str:
    try:
        result = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
    except FileNotFoundError:
        raise PackError(
            "git is not installed; the pack is made from the repository's HEAD"
        ) from None
    if result.returncode != 0:
        raise PackError(f"git {' '.join(args)}: {result.stderr.strip()}")
    return result.stdout


def run_requirements(project: Path, with_test_extras: bool) -> list[str]:
    """What the installed lessons need: dependencies, the build backend, the test extra if asked."""
    pyproject = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    roots = list(pyproject["project"]["dependencies"])
    roots += pyproject["build-system"]["requires"]  # for `pip install -e speclab`, offline
    if with_test_extras:
        roots += pyproject["project"]["optional-dependencies"]["test"]
    return roots


def build_handouts(project: Path, dest: Path, mode: str) -> str:
    """The handouts of this commit into dest with `speclab handouts`; returns pdf, html or none.

    auto: PDFs where speclab.handouts finds Chromium, else HTML and a note; pdf: fail
    without Chromium; html: no PDFs; none: no handouts.
    """
    if mode == "none":
        return "none"
    env = {**os.environ, "PYTHONPATH": str(project / "src"), "TQDM_DISABLE": "1"}
    env["MPLBACKEND"] = "Agg"
    command = [sys.executable, "-m", "speclab", "handouts", "--lessons", str(project / "lessons")]
    command += ["--out", str(dest), *{"pdf": ["--pdf"], "html": ["--no-pdf"]}.get(mode, [])]
    result = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise PackError(
            "the handouts could not be built (run this with the project's venv, as "
            "`make classroom-pack` does, or leave them out with --handouts none):\n"
            + (result.stderr.strip() or result.stdout.strip())[-1500:]
        )
    # speclab.handout_folder.LOCK (this script runs speclab as a command, never imports it):
    # held while the build ran, of no use in a pack
    (dest / ".speclab-handouts.lock").unlink(missing_ok=True)
    if any(dest.rglob("*.pdf")):
        return "pdf"
    if mode == "auto":
        progress(f"note: {result.stdout.strip()}")  # says that Chromium was not found
    return "html"


def write_install_files(pack: Path, targets: list[Target]) -> None:
    """install.sh (LF), install.bat (CRLF, for cmd.exe) and INSTALL.txt at the pack's top."""
    templates = pack / "speclab" / TEMPLATES
    serves = "; ".join(
        f"{p.title}: Python {', '.join(t.python for t in targets if t.platform is p)}"
        for p in dict.fromkeys(t.platform for t in targets)
    )
    versions = sorted({t.python for t in targets}, key=lambda v: tuple(map(int, v.split("."))))
    pythons = ", ".join(versions[:-1]) + " or " + versions[-1] if len(versions) > 1 else versions[0]
    for name, newline in (("install.sh", "\n"), ("install.bat", "\r\n"), ("INSTALL.txt", "\n")):
        text = (templates / name).read_text(encoding="utf-8").replace("@SERVES@", serves)
        text = text.replace("@PYTHONS@", pythons)
        (pack / name).write_bytes(text.replace("\r\n", "\n").replace("\n", newline).encode())
    (pack / "install.sh").chmod(0o755)


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def sizes(pack: Path, downloads: dict[Target, list[Wheel]]) -> dict:
    """Bytes in all, per part, per platform (its wheels for every Python) and per target."""
    per_platform: dict[str, dict[str, int]] = {}
    for target, wheels in downloads.items():
        per_platform.setdefault(target.platform.key, {}).update(
            {w.path.name: w.path.stat().st_size for w in wheels}
        )
    return {
        "total_bytes": folder_bytes(pack),
        "speclab_bytes": folder_bytes(pack / "speclab"),
        "handouts_bytes": folder_bytes(pack / "handouts") if (pack / "handouts").exists() else 0,
        "wheels_bytes": folder_bytes(pack / "wheels"),
        "per_platform_wheels_bytes": {k: sum(v.values()) for k, v in per_platform.items()},
        "per_target_wheels_bytes": {
            f"{t.platform.key} {t.python}": sum(w.path.stat().st_size for w in wheels)
            for t, wheels in downloads.items()
        },
    }


def manifest(commit: str, handouts: str, extras: list[str], downloads: dict, size: dict) -> dict:
    """What install.py reads: the pairs served, each with its wheel files and their sizes."""
    platforms = dict.fromkeys(t.platform for t in downloads)
    return {
        "format": 1,
        "project": "speclab",
        "commit": commit,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "extras": extras,
        "handouts": handouts,
        "platforms": {
            p.key: {
                "title": p.title,
                "sys_platform": p.markers["sys_platform"],
                "machines": list(p.machines),
                "min_glibc": p.min_glibc,
                "min_macos": p.min_macos,
                "pip_platform_tags": list(p.pip_tags),
            }
            for p in platforms
        },
        "targets": [
            {
                "python": t.python,
                "platform": t.platform.key,
                "wheels": [{"file": w.path.name, "bytes": w.path.stat().st_size} for w in wheels],
            }
            for t, wheels in downloads.items()
        ],
        "sizes": size,
    }


def size_report(size: dict, handouts: str) -> str:
    """pack-size.txt: the total, the parts, the wheels per platform and per install."""
    parts = {"html": "HTML", "pdf": "HTML, A4 and Letter PDFs", "none": "none"}
    lines = [
        f"speclab classroom pack: {mb(size['total_bytes'])} in all",
        f"  speclab/   the lessons, code and data      {mb(size['speclab_bytes']):>10}",
        f"  handouts/  {parts[handouts]:<32}{mb(size['handouts_bytes']):>10}",
        f"  wheels/    all platforms, each file once   {mb(size['wheels_bytes']):>10}",
        "wheels per platform (all its Pythons; pure-Python wheels counted in each):",
    ]
    lines += [f"  {key:<43}{mb(n):>10}" for key, n in size["per_platform_wheels_bytes"].items()]
    lines.append("wheels per install (one Python on one platform):")
    lines += [f"  {key:<43}{mb(n):>10}" for key, n in size["per_target_wheels_bytes"].items()]
    return "\n".join(lines) + "\n"


def mb(n_bytes: int) -> str:
    return f"{n_bytes / 1e6:.1f} MB"


def progress(text: str, end: str = "\n") -> None:
    print(text, end=end, flush=True)


def download_all(targets: list[Target], roots: list[str], wheels_dir: Path, staging: Path):
    """Target -> its wheels in wheels_dir (shared by all), with a progress line per target.

    A target with a missing wheel does not stop the others: one run names every such pair.
    """
    wheels_dir.mkdir(parents=True, exist_ok=True)
    downloads: dict[Target, list[Wheel]] = {}
    failed: list[str] = []
    for number, target in enumerate(targets, 1):
        progress(f"[{number}/{len(targets)}] {target.name}: ", end="")
        started = time.perf_counter()
        try:
            wheels = download_target(target, roots, staging)
        except MissingWheel as error:
            progress("FAILED")
            failed.append(str(error))
            continue
        except PackError:
            progress("FAILED")
            raise
        kept = [dataclasses.replace(w, path=wheels_dir / w.path.name) for w in wheels]
        for wheel, keep in zip(wheels, kept, strict=True):
            if not keep.path.exists():
                wheel.path.replace(keep.path)
        downloads[target] = kept
        total = sum(w.path.stat().st_size for w in kept)
        count = f"{len(kept)} wheel{'s' if len(kept) != 1 else ''}"
        progress(f"{count}, {mb(total)} ({time.perf_counter() - started:.0f} s)")
    shutil.rmtree(staging, ignore_errors=True)
    if failed:
        raise MissingWheel("\n".join(failed))
    return downloads


def build_pack(out: Path, targets: list[Target], with_test_extras: bool, handouts: str) -> dict:
    """Build in a hidden folder beside `out`, then rename it: `out` is complete or untouched."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    except OSError as error:  # named by --out, not by the hidden folder beside it
        raise UsageError(f"--out {out}: cannot write a folder there ({error.strerror or error}); "
                         "choose a folder you can write to (nothing was changed)") from None  # fmt: skip
    work.chmod(0o755)  # mkdtemp makes it private; the pack is for sharing
    try:
        commit = export_repository(work / "speclab")
        dirty = _git("status", "--porcelain", "--untracked-files=no").splitlines()
        progress(f"speclab at commit {commit[:10]} (git archive HEAD)")
        if dirty:
            progress(f"note: {len(dirty)} changed files are not committed; the pack holds HEAD")
        roots = run_requirements(work / "speclab", with_test_extras)
        downloads = download_all(targets, roots, work / "wheels", work / ".staging")
        progress("handouts: ", end="")
        built = build_handouts(work / "speclab", work / "handouts", handouts)
        progress(built)
        write_install_files(work, targets)
        size = sizes(work, downloads)
        extras = ["test"] if with_test_extras else []
        document = manifest(commit, built, extras, downloads, size)
        (work / SIZE_REPORT).write_text(size_report(size, built), encoding="utf-8")
        (work / MANIFEST).write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
        size["total_bytes"] = folder_bytes(work)  # with the two files just written
        _replace(out, work)
        return size
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def _replace(out: Path, work: Path) -> None:
    old = None
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
        out.replace(old / out.name)
    work.replace(out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="classroom_pack.py",
        description=__doc__.splitlines()[0],
        epilog=f"platforms: {', '.join(PLATFORMS)}; pythons: {', '.join(PYTHONS)}",
    )
    parser.add_argument(
        "--out", type=_folder, default=REPO / "build" / "classroom-pack", help="the pack's folder"
    )
    parser.add_argument("--platforms", default=None, help="comma list (default: all)")
    parser.add_argument("--pythons", default=None, help="comma list (default: all)")
    parser.add_argument(
        "--this-machine", action="store_true", help="only this computer's Python and platform"
    )
    parser.add_argument(
        "--with-test-extras", action="store_true", help="also the [test] extra (pytest, ...)"
    )
    parser.add_argument(
        "--handouts",
        choices=("auto", "pdf", "html", "none"),
        default="auto",
        help="auto: PDFs when Chromium exists, else HTML with a note (default)",
    )
    return parser.parse_args(argv)


def check_out(out: Path) -> None:
    """A new build replaces `out` whole: refuse anything but nothing, an empty folder or a pack."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file; give a folder for the pack")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise UsageError(f"--out {out} is not empty and is not an earlier pack (it has no "
                         f"{MANIFEST}); the pack replaces its folder whole, so choose a new or "
                         "empty one (nothing was changed)")  # fmt: skip


def _interrupt(signum, frame):
    raise KeyboardInterrupt  # a terminal closed or a `kill`: clean up as Ctrl-C does


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signals = [
        getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)
    ]  # Windows: no SIGHUP
    before = {number: signal.signal(number, _interrupt) for number in signals}
    try:
        return _main(args)
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def _main(args: argparse.Namespace) -> int:
    try:
        if args.this_machine:
            if args.pythons is not None or args.platforms is not None:
                raise UsageError("--this-machine chooses the Python and platform itself; "
                                 "leave out --pythons and --platforms, or leave out --this-machine")  # fmt: skip
            args.pythons, args.platforms = this_machine()
        check_out(args.out)
        pythons = list(PYTHONS) if args.pythons is None else _comma_list(args.pythons, "--pythons")
        platforms = (
            list(PLATFORMS)
            if args.platforms is None
            else _comma_list(args.platforms, "--platforms")
        )
        targets = targets_for(pythons, platforms)
        started = time.perf_counter()
        build_pack(args.out, targets, args.with_test_extras, args.handouts)
    except MissingWheel as error:
        print(f"classroom-pack: no pack written.\n{error}", file=sys.stderr)
        print("Leave those pairs out with --platforms and --pythons.", file=sys.stderr)
        return 1
    except PackError as error:
        print(f"classroom-pack: {error}", file=sys.stderr)
        return 2 if isinstance(error, UsageError) else 1
    except KeyboardInterrupt:
        print(f"\ninterrupted: no pack written; {args.out} is as it was", file=sys.stderr)
        return 130
    except OSError as error:  # a full disk while building, say: the build folder is gone
        where = f" ({error.filename})" if error.filename else ""
        print(f"classroom-pack: no pack written: {error.strerror or error}{where}; "
              f"{args.out} is as it was", file=sys.stderr)  # fmt: skip
        return 1
    progress(f"\npack ready in {time.perf_counter() - started:.0f} s: {args.out}")
    progress((args.out / SIZE_REPORT).read_text(encoding="utf-8").rstrip())
    return 0


def _comma_list(text: str, option: str) -> list[str]:
    """'a, b' -> ['a', 'b']; an empty list is refused (it used to mean every pair: a build of
    15 pairs where the teacher meant to choose some)."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts:
        raise UsageError(f"{option} {text!r} names none; give a comma list, or leave {option} out")
    return parts


def _folder(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give the pack's folder")
    return Path(text)


if __name__ == "__main__":
    sys.exit(main())
