"""The output folder of `speclab handouts`: which folder a build may write into, and what a
rebuild removes there, so that `--out` never costs a teacher a file of their own.

`--out` may name another folder than `build/handouts`: a new or empty one, or an earlier
build, of which a rebuild removes only the files that build wrote (listed in
`.speclab-handouts`); any other folder, or one inside the lessons, is refused untouched, and
so is one whose `answers`, `figures`, `zh` or `fa` is a link or a file (the build would write
through the link, or fail halfway). An earlier build without that list (copied by
`cp -r build/handouts/* site/`, which leaves hidden files behind) has only the files a build
of the current lessons writes replaced: whatever else is beside them may be the teacher's
own, so it stays. A rebuild that stops (a bad figure, Chromium failing, Ctrl-C) leaves the
earlier build whole: `speclab.handouts` builds in a hidden `.speclab-building-*` folder
inside `--out` and moves the files in only once every page is made.

`HandoutError`, `read_text_file` and `TRANSLATED` are defined here, below `speclab.handouts`
(which imports them from here), because these rules raise the first, read the list with
the second and know the folders of the third.

Two builds into one folder at the same time: where the system has file locks, the second is
refused while the first holds its lock (`LOCK`, an flock that ends with the process, in an
empty file that stays; `speclab.report_files.one_at_a_time`). It used to remove the first's
hidden folder, and the first failed.
"""

from pathlib import Path, PurePosixPath

from speclab.report_files import broken_link, kind_of

STAGE_PREFIX = ".speclab-building-"  # the folder a build is made in before it is moved
MARKER = ".speclab-handouts"  # in the output folder: the files the last build wrote
LOCK = ".speclab-handouts.lock"  # in the output folder: held while a build writes there
TRANSLATED = ("zh", "fa")  # lessons/<lang>/ beside the English lessons/
# The folders of --out a build writes into ("." is --out itself), and the kinds of file.
BUILD_FOLDERS = (
    ".",
    "answers",
    "figures",
    *TRANSLATED,
    *(f"{lang}/answers" for lang in TRANSLATED),
)
BUILD_SUFFIXES = (".html", ".pdf", ".svg")


class HandoutError(ValueError):
    """A handout that cannot be built as asked (unknown figure, bad argument, leaked answers,
    Chromium failing to print)."""


MAX_LESSON_BYTES = 2 * 2**20  # a 20 MB lesson took 23 s and 1.2 GB of memory to render


def read_text_file(path: Path) -> str:
    """A lesson's Markdown, or the build's file list: UTF-8 text, else one HandoutError.
    A byte-order mark (Windows Notepad saves one) is dropped: it would hide the first heading."""
    if path.exists() and not path.is_file():  # reading a named pipe would wait forever
        raise HandoutError(
            f"{path} is not a regular file (a folder, a pipe or a device): give a UTF-8 text file"
        )
    try:
        if (size := path.stat().st_size) > MAX_LESSON_BYTES:  # rendering takes ~60x its size
            raise HandoutError(
                f"{path} is {size / 2**20:.1f} MB, more than the {MAX_LESSON_BYTES // 2**20} MB "
                "a file of the handouts may be (a lesson is a few KB): not read"
            )
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise HandoutError(
            f"{path} is not UTF-8 text (byte {error.start}); save it as UTF-8"
        ) from None
    except OSError as error:
        raise HandoutError(f"cannot read {path}: {error.strerror or error}") from None


def list_written_files(out_dir: Path, written: list[Path]) -> None:
    """out_dir/.speclab-handouts: the pages, PDFs and figures a build wrote, for the next one."""
    names = sorted({path.relative_to(out_dir).as_posix() for path in written})
    (out_dir / MARKER).write_text("".join(f"{name}\n" for name in names), encoding="utf-8")


def _is_build_file(name: str) -> bool:
    """Could a build have written this name (relative to --out)? In its folders, of its kinds:
    a damaged or hand-edited list names nothing else (nor, on Windows, `..\\x` or `C:`)."""
    path = PurePosixPath(name)
    if "\\" in name or ":" in name:  # the list is written with "/" only
        return False
    return path.parent.as_posix() in BUILD_FOLDERS and path.suffix in BUILD_SUFFIXES


def check_out_dir(out_dir: Path, lessons_dir: Path, this_build: list[Path]) -> list[Path]:
    """The files of an earlier build in out_dir that a rebuild removes (see
    clear_earlier_build), or HandoutError for a folder that must not be written to.

    this_build: the files a build of the current lessons writes (`_files_a_build_writes` in
    speclab.handouts).
    Changes nothing.
    """
    if problem := broken_link(out_dir):
        raise HandoutError(f"--out {out_dir} {problem}: give a folder")
    try:
        out, lessons = out_dir.resolve(), lessons_dir.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop further up the path
        raise HandoutError(f"--out {out_dir}: its links cannot be followed (a loop?)") from None
    if out == lessons or lessons in out.parents:
        raise HandoutError(f"--out {out_dir} is inside the lesson folder {lessons_dir}: "
                           "choose a folder outside it (default: build/handouts)")  # fmt: skip
    if out_dir.exists() and not out_dir.is_dir():
        raise HandoutError(f"--out {out_dir} is {kind_of(out_dir)}, not a folder")
    for name in BUILD_FOLDERS[1:]:  # a build writes in these: they must be its own folders
        folder = out_dir / name
        if folder.is_symlink():  # the pages would land wherever it points (answers -> ~/x)
            raise HandoutError(f"--out {out_dir}: {folder} is a link, and a build writes its "
                               "own folder there: remove the link or choose another --out")  # fmt: skip
        if folder.exists() and not folder.is_dir():
            raise HandoutError(f"--out {out_dir}: {folder} is a file, and a build writes a "
                               "folder there: move it or choose another --out")  # fmt: skip
    if not out_dir.is_dir() or all(
        p.name.startswith(STAGE_PREFIX) or p.name == LOCK for p in out_dir.iterdir()
    ):
        return []  # new, empty, or holding only what a killed build left
    marker = out_dir / MARKER
    if marker.is_file():
        names = read_text_file(marker).split("\n")
        return [out_dir / name for name in names if name and _is_build_file(name)]
    if "<title>speclab handouts</title>" in _text_or_empty(out_dir / "index.html"):
        # A build without its list: from before the list existed, or copied by
        # `cp -r build/handouts/* site/` (hidden files stay behind) beside the teacher's own
        # pages. What else it wrote is unknown, so only what this build writes is replaced.
        return [path for path in this_build if path.is_file()]
    raise HandoutError(f"--out {out_dir} is not empty and holds no earlier build of the "
                       "handouts: choose a new or empty folder (nothing was changed)")  # fmt: skip


def clear_earlier_build(out_dir: Path, earlier: list[Path]) -> None:
    """Remove what an earlier build wrote in out_dir (`check_out_dir` lists it), and nothing
    else; then those of its folders that are left empty.

    The build lists its files in out_dir/.speclab-handouts. A folder that is not empty and
    holds no such list (nor a build's index page) is not a build of the handouts: it is
    refused, never cleaned, so `--out ~/Documents` cannot cost a file.
    """
    out = out_dir.resolve()
    marker = out_dir / MARKER
    for path in earlier:  # a link out of out_dir (answers -> ~/Documents) is not followed
        if path.resolve().parent.is_relative_to(out) and path.is_file():
            path.unlink()
    # Their folders are all BUILD_FOLDERS (answers, figures, zh...): check_out_dir saw to it.
    for folder in sorted({path.parent for path in earlier}, key=lambda p: -len(p.parts)):
        inside = folder.resolve().is_relative_to(out)
        if folder != out_dir and inside and folder.is_dir() and not folder.is_symlink():
            if not any(folder.iterdir()):  # emptied by this clearing, or empty already
                folder.rmdir()
    marker.unlink(missing_ok=True)


def _text_or_empty(path: Path) -> str:
    if not path.is_file():  # missing, or a named pipe that reading would wait on forever
        return ""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
