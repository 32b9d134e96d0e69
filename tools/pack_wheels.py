"""Which wheels a classroom pack needs for one Python on one platform, and pip to get them.

Used by tools/classroom_pack.py (issue 16). `pip download --only-binary=:all: --platform TAG
--python-version X.Y` picks wheels for another machine, but it evaluates environment markers
(`os_name == "nt"`, `python_version < "3.12"`) for the machine it runs on: a Windows set
downloaded on Linux lacks pywinpty and colorama and carries pexpect. So after each download
`download_target` walks the dependency tree itself, from the wheels' metadata with the
target's markers (`closure`), downloads what is missing, pinned to the versions already
chosen, and deletes what the target does not use.

Platform tags, as the real wheels carry them: numpy, pandas, pillow and pyzmq ship Linux
wheels for manylinux_2_28 (numpy and pillow as manylinux_2_27.manylinux_2_28); matplotlib,
kiwisolver and fonttools for manylinux2014 (= manylinux_2_17); psutil for manylinux2010;
tornado for manylinux1. pip expands manylinux2014 to 2010 and 1 itself, but not the PEP 600
names, so every manylinux_2_N from the glibc floor down is listed. On macOS, pip expands
macosx_11_0_<arch> to every older macOS and to universal2 (pyzmq, tornado, fonttools).

Left out: musllinux (Alpine), Windows on ARM, 32-bit systems, PyPy; Linux older than glibc
2.28 (manylinux2014 alone would give older numpy and pandas) and macOS older than 11.
"""

import platform
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from email.parser import BytesHeaderParser
from pathlib import Path

try:
    from packaging.markers import Marker
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import Version
except ModuleNotFoundError:  # a bare Python: pip carries its own copy
    from pip._vendor.packaging.markers import Marker
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.utils import canonicalize_name
    from pip._vendor.packaging.version import Version

PYTHONS = ("3.11", "3.12", "3.13")
GLIBC_FLOOR = "2.28"  # manylinux_2_28: Debian 10, Ubuntu 20.04, RHEL 8 and newer
MACOS_FLOOR = "11.0"  # Big Sur, the first macOS on arm64
MAX_ROUNDS = 6  # download rounds per target: pip's choice, then what its markers missed


@dataclass(frozen=True)
class Platform:
    key: str  # the name on the command line and in the manifest
    title: str  # for people
    pip_tags: tuple[str, ...]  # `pip download --platform` values, most preferred first
    markers: dict[str, str] = field(compare=False)  # its PEP 508 environment markers
    machines: tuple[str, ...] = ()  # platform.machine().lower() of a computer it serves
    min_glibc: str | None = None
    min_macos: str | None = None


@dataclass(frozen=True)
class Target:
    python: str  # "3.12"
    platform: Platform

    @property
    def name(self) -> str:
        return f"Python {self.python} on {self.platform.key}"


def manylinux_tags(arch: str, oldest_minor: int) -> tuple[str, ...]:
    """manylinux_2_28_<arch> down to manylinux_2_<oldest_minor>_<arch>, then the old aliases.

    pip expands manylinux2014 to manylinux2010 and manylinux1 itself, but not the PEP 600
    names, so every glibc version is listed.
    """
    newest = int(GLIBC_FLOOR.split(".")[1])
    tags = [f"manylinux_2_{minor}_{arch}" for minor in range(newest, oldest_minor - 1, -1)]
    return (*tags, f"manylinux2014_{arch}")


def _markers(sys_platform: str, system: str, os_name: str, machine: str) -> dict[str, str]:
    return {
        "sys_platform": sys_platform,
        "platform_system": system,
        "os_name": os_name,
        "platform_machine": machine,
    }


PLATFORMS = {
    p.key: p
    for p in (
        Platform(
            "linux-x86_64",
            "Linux x86_64 (glibc 2.28+)",
            manylinux_tags("x86_64", 5),
            _markers("linux", "Linux", "posix", "x86_64"),
            ("x86_64", "amd64"),
            min_glibc=GLIBC_FLOOR,
        ),
        Platform(
            "linux-aarch64",
            "Linux aarch64 (glibc 2.28+)",
            manylinux_tags("aarch64", 17),
            _markers("linux", "Linux", "posix", "aarch64"),
            ("aarch64", "arm64"),
            min_glibc=GLIBC_FLOOR,
        ),
        Platform(
            "macos-arm64",
            "macOS 11+ on Apple silicon",
            ("macosx_11_0_arm64",),
            _markers("darwin", "Darwin", "posix", "arm64"),
            ("arm64",),
            min_macos=MACOS_FLOOR,
        ),
        Platform(
            "macos-x86_64",
            "macOS 11+ on Intel",
            ("macosx_11_0_x86_64",),
            _markers("darwin", "Darwin", "posix", "x86_64"),
            ("x86_64",),
            min_macos=MACOS_FLOOR,
        ),
        Platform(
            "windows-x86_64",
            "Windows x86_64 (64-bit)",
            ("win_amd64",),
            _markers("win32", "Windows", "nt", "AMD64"),
            ("amd64", "x86_64"),
        ),
    )
}


class PackError(Exception):
    """A pack that cannot be built as asked; the message says why and what to do."""


class UsageError(PackError):
    """An unknown platform or Python on the command line (exit status 2)."""


class NetworkError(PackError):
    """The package index cannot be reached: every download would fail."""


class MissingWheel(PackError):
    """A target for which some package has no wheel."""


def this_machine() -> tuple[str, str]:
    """(python, platform key) of the running interpreter; PackError where the pack has none."""
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    machine = platform.machine().lower()
    for p in PLATFORMS.values():
        if p.markers["sys_platform"] == sys.platform and machine in p.machines:
            return python, p.key
    raise UsageError(f"no pack platform for this machine ({sys.platform}, {machine})")


def targets_for(pythons: list[str], platforms: list[str]) -> list[Target]:
    """Every (python, platform) pair, platform by platform; PackError names an unknown one."""
    unknown = [p for p in platforms if p not in PLATFORMS]
    if unknown:
        raise UsageError(f"unknown platform {', '.join(unknown)}; known: {', '.join(PLATFORMS)}")
    unknown = [v for v in pythons if v not in PYTHONS]
    if unknown:
        raise UsageError(f"unknown Python {', '.join(unknown)}; known: {', '.join(PYTHONS)}")
    if not platforms or not pythons:
        raise UsageError("no platform or no Python chosen")
    pairs = [(v, p) for p in dict.fromkeys(platforms) for v in dict.fromkeys(pythons)]
    return [Target(python, PLATFORMS[key]) for python, key in pairs]


def marker_environments(target: Target) -> list[dict[str, str]]:
    """The markers of the target's first and of a late patch release (a marker may compare it)."""
    base = {
        **target.platform.markers,
        "python_version": target.python,
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "platform_release": "",
        "platform_version": "",
    }
    return [
        {**base, "python_full_version": full, "implementation_version": full}
        for full in (f"{target.python}.0", f"{target.python}.99")
    ]


# --- what a set of wheels needs ----------------------------------------------------------


@dataclass(frozen=True)
class Wheel:
    path: Path
    name: str  # canonical project name
    version: Version
    requires: tuple[str, ...]  # Requires-Dist lines

    @classmethod
    def read(cls, path: Path) -> "Wheel":
        name, version = path.name.split("-")[:2]
        with zipfile.ZipFile(path) as archive:
            member = next(
                m for m in archive.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", m)
            )
            metadata = BytesHeaderParser().parsebytes(archive.read(member))
        requires = tuple(metadata.get_all("Requires-Dist") or ())
        return cls(path, canonicalize_name(name), Version(version), requires)


@dataclass
class Closure:
    needed: set[str] = field(default_factory=set)  # canonical names the target installs
    missing: set[str] = field(default_factory=set)  # requirements with no wheel in the set
    conflicts: list[str] = field(default_factory=list)


def closure(roots: list[str], wheels: dict[str, Wheel], envs: list[dict[str, str]]) -> Closure:
    """Walk the requirements from `roots` through the wheels' metadata, markers as in `envs`."""
    result, seen = Closure(), set()
    todo = [(Requirement(text), "pyproject.toml") for text in roots]
    while todo:
        requirement, wanted_by = todo.pop()
        extras = ("", *sorted(requirement.extras))
        if requirement.marker and not _applies(requirement.marker, envs, extras=("",)):
            continue
        name = canonicalize_name(requirement.name)
        wheel = wheels.get(name)
        if wheel is None:
            result.missing.add(_without_marker(requirement))
            continue
        if not requirement.specifier.contains(wheel.version, prereleases=True):
            result.conflicts.append(f"{wanted_by} needs {requirement}, the set has {wheel.version}")
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        result.needed.add(name)
        for text in wheel.requires:
            dependency = Requirement(text)
            if dependency.marker is None or _applies(dependency.marker, envs, extras):
                todo.append((_strip_marker(dependency), name))
    return result


def _applies(marker: Marker, envs: list[dict[str, str]], extras: tuple[str, ...]) -> bool:
    return any(marker.evaluate({**env, "extra": extra}) for env in envs for extra in extras)


def _strip_marker(requirement: Requirement) -> Requirement:
    return Requirement(_without_marker(requirement))


def _without_marker(requirement: Requirement) -> str:
    extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
    return f"{requirement.name}{extras}{requirement.specifier}"


def read_wheels(folder: Path) -> dict[str, Wheel]:
    """Canonical name -> wheel; PackError if pip left two versions of one project."""
    wheels: dict[str, Wheel] = {}
    for path in sorted(folder.glob("*.whl")):
        wheel = Wheel.read(path)
        if wheel.name in wheels:
            raise PackError(
                f"two versions of {wheel.name}: {wheels[wheel.name].path.name}, {path.name}"
            )
        wheels[wheel.name] = wheel
    return wheels


# --- pip -----------------------------------------------------------------------------------

NETWORK_TROUBLE = re.compile(
    r"NewConnectionError|Failed to establish a new connection|Temporary failure in name"
    r"|Name or service not known|nodename nor servname|Network is unreachable|No route to host"
    r"|Connection refused|ConnectTimeoutError|Read timed out|ProxyError|SSLError"
    r"|getaddrinfo failed|Max retries exceeded|Could not fetch URL .*: connection error"
)
PIP_OPTIONS = ("--disable-pip-version-check", "--no-input", "--progress-bar=off")
PIP_OPTIONS += ("--only-binary=:all:", "--implementation=cp")
NO_WHEEL = re.compile(r"No matching distribution found for (\S+)")


def pip_download(target: Target, requirements: list[str], dest: Path, constraints=None) -> None:
    """`pip download` of binary wheels for the target into dest; PackError with pip's reason."""
    abi = f"cp{target.python.replace('.', '')}"
    command = [sys.executable, "-m", "pip", "download", *PIP_OPTIONS, f"--dest={dest}"]
    command += [f"--python-version={target.python}", f"--abi={abi}"]
    for tag in target.platform.pip_tags:
        command += ["--platform", tag]
    if constraints is not None:
        command += ["--constraint", str(constraints)]
    log = dest.parent / f".{dest.name}.pip.log"  # pip's debug log: why an index page failed
    log.unlink(missing_ok=True)
    command.append(f"--log={log}")
    try:
        result = subprocess.run(command + requirements, capture_output=True, text=True)
        if result.returncode != 0:
            details = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
            raise explain_pip_failure(target, result.stderr + result.stdout + details)
    finally:
        log.unlink(missing_ok=True)


def explain_pip_failure(target: Target, output: str) -> PackError:
    """pip's output -> one clear message: no network, no wheel for the target, or pip's words."""
    if NETWORK_TROUBLE.search(output):
        return NetworkError(
            "cannot reach the package index, so no wheels were downloaded.\n"
            "Connect this machine to the internet (or point PIP_INDEX_URL at a mirror) "
            f"and run again.\npip said: {_last_lines(output, NETWORK_TROUBLE)}"
        )
    missing = NO_WHEEL.search(output)
    if missing:
        tags = target.platform.pip_tags
        shown = ", ".join(tags[:3]) + (f" and {len(tags) - 3} older" if len(tags) > 3 else "")
        return MissingWheel(
            f"{target.name}: no wheel of {missing.group(1)} for this Python and platform "
            f"(platform tags {shown})."
        )
    return PackError(f"{target.name}: pip download failed:\n{output.strip()[-1500:]}")


def _last_lines(output: str, pattern: re.Pattern) -> str:
    lines = [line.strip() for line in output.splitlines() if pattern.search(line)]
    return (lines or output.strip().splitlines() or ["(nothing)"])[-1][:300]


def download_target(target: Target, roots: list[str], staging: Path) -> list[Wheel]:
    """Every wheel the target needs, downloaded into staging (emptied first)."""
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    pip_download(target, roots, staging)
    envs = marker_environments(target)
    for _ in range(MAX_ROUNDS):
        wheels = read_wheels(staging)
        walk = closure(roots, wheels, envs)
        if walk.conflicts:
            raise PackError(f"{target.name}: " + "; ".join(walk.conflicts))
        if not walk.missing:
            break
        pins = staging / "pins.txt"  # the versions chosen so far stay chosen
        pins.write_text("".join(f"{n}=={w.version}\n" for n, w in wheels.items()), "utf-8")
        pip_download(target, sorted(walk.missing), staging, constraints=pins)
        pins.unlink()
    else:
        raise PackError(f"{target.name}: still missing after {MAX_ROUNDS} rounds: {walk.missing}")
    for name, wheel in wheels.items():
        if name not in walk.needed:
            wheel.path.unlink()  # chosen by pip for the machine it runs on, not for the target
    return [wheel for name, wheel in sorted(wheels.items()) if name in walk.needed]
