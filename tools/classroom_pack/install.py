"""Install the speclab classroom pack without internet, then open JupyterLab (issue 16).

install.sh (Linux, macOS) and install.bat (Windows) at the top of the pack run this with the
Python they found. It reads pack-manifest.json, refuses with a clear message when the pack
has no wheels for this Python on this system or when a wheel is missing from wheels/ (an
interrupted copy), then makes speclab/.venv, installs speclab editable from speclab/ with
`pip install --no-index --find-links wheels` (pip never reaches the network) and starts
JupyterLab on speclab/notebooks. Run again, it only starts JupyterLab.

Written so that Python 3.6 and newer can read it and print why they cannot be used; the
standard library only. Left out: installing a Python; a desktop shortcut.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_PACK = Path(__file__).resolve().parents[3]  # <pack>/speclab/tools/classroom_pack/
STAMP = "classroom-pack.json"  # in the venv: which pack and Python it was installed from


class Refusal(Exception):
    """The pack cannot be installed here; the message says why and what to do."""


def read_manifest(pack):
    path = pack / "pack-manifest.json"
    if not path.is_file():
        raise Refusal(
            f"no pack-manifest.json in {pack}: this is not a complete classroom pack. "
            "Copy the whole pack folder again."
        )
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:  # ValueError: bad JSON or bytes that are not UTF-8
        raise Refusal(
            f"{path} cannot be read ({error}): the copy of the pack is damaged or was "
            "interrupted. Copy the whole pack folder again."
        ) from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("targets"), list):
        raise Refusal(
            f"{path} is not a classroom pack's manifest (it lists no targets). "
            "Copy the whole pack folder again."
        )
    return manifest


def this_computer():
    """The facts the manifest is matched against."""
    return {
        "python": "{}.{}".format(*sys.version_info[:2]),
        "implementation": platform.python_implementation(),
        "bits": 64 if sys.maxsize > 2**32 else 32,
        "sys_platform": sys.platform,
        "machine": platform.machine().lower(),
        "glibc": glibc_version(),
        "macos": platform.mac_ver()[0] or None,
    }


def glibc_version():
    """'2.36' on a glibc Linux, None elsewhere (musl, macOS, Windows)."""
    try:
        name, version = os.confstr("CS_GNU_LIBC_VERSION").split()
    except (AttributeError, ValueError, OSError):
        return None
    return version if name == "glibc" else None


def version_tuple(text):
    return tuple(int(part) for part in text.split(".")[:2])


def offered(manifest):
    """'Python 3.11, 3.12 on linux-x86_64; Python 3.13 on windows-x86_64' for messages."""
    by_platform = {}
    for target in manifest["targets"]:
        by_platform.setdefault(target["platform"], []).append(target["python"])
    return "; ".join(
        "Python {} on {}".format(", ".join(pythons), manifest["platforms"][key]["title"])
        for key, pythons in by_platform.items()
    )


def choose_target(manifest, computer):
    """The manifest's target for this computer; Refusal, naming what the pack has, if none."""
    have = f"This pack has: {offered(manifest)}."
    if computer["implementation"] != "CPython" or computer["bits"] != 64:
        raise Refusal(
            f"this is {computer['implementation']} ({computer['bits']}-bit); the pack's wheels "
            f"are for 64-bit CPython, the Python from python.org. {have}"
        )
    keys = [
        key
        for key, info in manifest["platforms"].items()
        if info["sys_platform"] == computer["sys_platform"]
        and computer["machine"] in info["machines"]
    ]
    if not keys:
        raise Refusal(
            f"this pack has no wheels for this system ({computer['sys_platform']}, "
            f"{computer['machine']}). {have}"
        )
    info = manifest["platforms"][keys[0]]
    targets = [t for t in manifest["targets"] if t["platform"] == keys[0]]
    pythons = ", ".join(t["python"] for t in targets)
    if computer["python"] not in [t["python"] for t in targets]:
        raise Refusal(
            f"this pack has no wheels for Python {computer['python']} on {info['title']}; "
            f"for this system it has Python {pythons}.\nInstall one of those (python.org) and "
            "run the installer again with it:\n  PYTHON=python3.12 sh install.sh      "
            "(Linux, macOS)\n  set PYTHON=py -3.12  then  install.bat  (Windows)"
        )
    check_system_version(info, computer)
    return next(t for t in targets if t["python"] == computer["python"])


def check_system_version(info, computer):
    """Linux: glibc at least the wheels' manylinux floor; macOS: at least the wheels' floor."""
    if info.get("min_glibc"):
        if computer["glibc"] is None:
            raise Refusal(
                f"the pack's Linux wheels need glibc {info['min_glibc']} or newer; this Linux "
                "has no glibc (Alpine or another musl system?)."
            )
        if version_tuple(computer["glibc"]) < version_tuple(info["min_glibc"]):
            raise Refusal(
                f"the pack's Linux wheels need glibc {info['min_glibc']} or newer (Ubuntu "
                f"20.04, Debian 10, RHEL 8 or newer); this system has glibc {computer['glibc']}."
            )
    if info.get("min_macos") and computer["macos"]:
        macos = version_tuple(computer["macos"])
        macos = (11, 0) if macos == (10, 16) else macos  # macOS 11+ as old builds report it
        if macos < version_tuple(info["min_macos"]):
            raise Refusal(
                f"the pack's macOS wheels need macOS {info['min_macos']} or newer; "
                f"this Mac has {computer['macos']}."
            )


def check_wheels(pack, target):
    """Every wheel of the target is in wheels/ with its size; Refusal lists what is not."""
    broken = []
    for wheel in target["wheels"]:
        path = pack / "wheels" / wheel["file"]
        if not path.is_file() or path.stat().st_size != wheel["bytes"]:
            broken.append(wheel["file"])
    if broken:
        raise Refusal(
            f"the pack is incomplete: {len(broken)} of {len(target['wheels'])} wheels for this "
            f"computer are missing or damaged in wheels/ ({', '.join(broken[:3])}"
            f"{', ...' if len(broken) > 3 else ''}). Copy the whole pack folder again."
        )


def venv_python(venv):
    if sys.platform == "win32":
        return venv / "Scripts" / "python.exe"
    return venv / "bin" / "python"


def make_venv(venv, computer):
    """speclab/.venv with this Python; a venv of another Python is replaced."""
    python = venv_python(venv)
    command = [sys.executable, "-m", "venv", str(venv)]
    if python.exists():
        version = run([str(python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
        if version.strip() == computer["python"]:
            return python
        say(f"replacing {venv} (made with Python {version.strip() or '?'})")
        command.insert(3, "--clear")
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        hint = ""
        if "ensurepip" in result.stdout + result.stderr:
            hint = " On Debian or Ubuntu, install the package python3-venv first."
        raise Refusal(
            f"could not make a virtual environment in {venv}.{hint}\n"
            + (result.stderr or result.stdout).strip()
        )
    return python


def run(command):
    """The command's output, '' if it fails."""
    result = subprocess.run(command, capture_output=True, text=True)
    return result.stdout if result.returncode == 0 else ""


def install(pack, manifest, target, computer):
    """Make the venv and install speclab into it from the pack; returns the venv's Python."""
    venv = pack / "speclab" / ".venv"
    python = make_venv(venv, computer)
    stamp = {
        "commit": manifest["commit"],
        "built_at": manifest["built_at"],
        "python": computer["python"],
    }
    stamp_path = venv / STAMP
    if stamp_path.is_file() and json.loads(stamp_path.read_text(encoding="utf-8")) == stamp:
        return python
    project = str(pack / "speclab")
    if manifest.get("extras"):
        project += "[" + ",".join(manifest["extras"]) + "]"
    say(f"installing {len(target['wheels'])} packages from wheels/, offline (1 to 3 minutes)...")
    started = time.monotonic()
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")  # for the
    # build of speclab's editable wheel too (its setuptools comes from wheels/, like the rest)
    command = [str(python), "-m", "pip", "--isolated", "install", "--quiet", "--no-index"]
    command += ["--find-links", str(pack / "wheels"), "--editable", project]
    if subprocess.call(command, env=env) != 0:
        raise Refusal("pip could not install from the pack (its message is above).")
    check = (
        "import numpy, pandas, matplotlib, ipywidgets, jupyterlab, speclab.paths as p; p.data_dir()"
    )
    if subprocess.call([str(python), "-c", check]) != 0:
        raise Refusal("the lessons' packages do not import after the install (see above).")
    stamp_path.write_text(json.dumps(stamp), encoding="utf-8")
    say(f"installed in {time.monotonic() - started:.0f} s.")
    return python


def say(text):
    print(f"speclab install: {text}", flush=True)


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pack", type=Path, default=DEFAULT_PACK, help="the pack's folder")
    parser.add_argument(
        "--check-only", action="store_true", help="only say whether this Python can use the pack"
    )
    parser.add_argument("--no-launch", action="store_true", help="install, do not open JupyterLab")
    return parser.parse_args(argv)


def launch_command(python, notebooks, windows=None) -> str:
    """The command that opens the lessons, quoted to paste into this computer's shell: a
    folder with a space in its name ("speclab pack") broke it unquoted. On Windows it is
    quoted for Command Prompt, where install.bat runs (PowerShell wants `& ` before it): both
    paths in double quotes, which a Windows path cannot hold, so that a folder named "A&B"
    does not end the command at its `&` (list2cmdline quoted only spaces)."""
    argv = [str(python), "-m", "jupyterlab", "--notebook-dir=" + str(notebooks)]
    if os.name == "nt" if windows is None else windows:
        return f'"{argv[0]}" -m jupyterlab "{argv[3]}"'
    import shlex

    return " ".join(shlex.quote(arg) for arg in argv)


def main(argv=None):
    args = parse_args(argv)
    pack = args.pack.resolve()
    try:
        manifest = read_manifest(pack)
        computer = this_computer()
        target = choose_target(manifest, computer)
        check_wheels(pack, target)
        if args.check_only:
            say(f"Python {computer['python']} on {target['platform']}: the pack has its wheels.")
            return 0
        python = install(pack, manifest, target, computer)
    except Refusal as refusal:
        print(f"speclab install: {refusal}", file=sys.stderr)
        return 1
    except (KeyError, TypeError, AttributeError, IndexError) as error:
        # valid JSON that lacks what a pack's manifest holds: a damaged or hand-edited copy
        print(f"speclab install: {pack / 'pack-manifest.json'} is damaged ({type(error).__name__}: "
              f"{error}). Copy the whole pack folder again.", file=sys.stderr)  # fmt: skip
        return 1
    except KeyboardInterrupt:
        print("\nspeclab install: interrupted; run the installer again to finish.", file=sys.stderr)
        return 130
    notebooks = pack / "speclab" / "notebooks"
    if args.no_launch:
        again = "install.bat" if os.name == "nt" else "sh install.sh"
        say(f"ready. Start the lessons by running {again} again (it opens JupyterLab), or in this "
            f"shell with: {launch_command(python, notebooks)}")  # fmt: skip
        return 0
    say("opening JupyterLab on the lessons; stop it with Ctrl-C (twice) in this window.")
    try:
        return subprocess.call([str(python), "-m", "jupyterlab", f"--notebook-dir={notebooks}"])
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
