"""Where a benchmark's report goes, and writing it so that it is never half there (lesson 06).

`speclab bench` writes a pair of files per benchmark (forward.json + forward.csv, decode.json
+ decode.csv): the JSON holds everything, the CSV the table a spreadsheet opens. Lesson 06
reads the learner's own decode.json from the clone's build/bench/ (see
`speclab.paths.bench_dir`), so that is the default folder whatever the current one is.

Two rules a long measurement needs: the folder is checked (made, and written to once)
before the timing starts, so a typo in --out costs nothing; and the pair is written
together: each file to a temporary name first, then both renamed, so a failure leaves the
previous pair as it was and no temporary file behind (a failed rename puts back what it had
replaced).

`one_at_a_time` lets one process at a time write into a folder: a training's run folder, a
handouts build's folder, a benchmark's --out (two benchmarks at once would also time each
other's work).
"""

import contextlib
import csv
import errno
import io
import os
import tempfile
from pathlib import Path


def leads_into_a_loop(path: Path) -> bool:
    """Whether path is, or goes through, a symbolic link loop. Such a path neither exists nor
    can be made: mkdir says only "File exists", and pathlib's resolve() raises RuntimeError."""
    try:
        path.stat()
    except OSError as error:
        return error.errno == errno.ELOOP
    return False


def broken_link(path: Path) -> str | None:
    """How a path fails through a symbolic link, as words after it ("... leads into a symbolic
    link loop"), or None. mkdir says only "File exists" of both kinds, and exists() False."""
    if leads_into_a_loop(path):
        return "leads into a symbolic link loop (a link that points back to itself)"
    if path.exists():
        return None
    for link in (path, *path.parents):
        if link.is_symlink() and not link.exists():
            where = "" if link == path else f" ({link} on its way)"
            return f"goes through a link that leads nowhere{where}: it points to {os.readlink(link)}, which does not exist"  # fmt: skip
    return None


def unlisted(folder: Path) -> str | None:
    """Why a folder cannot be listed ("Permission denied"), or None. Path.glob finds nothing
    in such a folder, which a message would then call empty."""
    try:
        with os.scandir(folder):
            return None
    except OSError as error:
        return error.strerror or str(error)


def kind_of(path: Path) -> str:
    """What stands at a path that is not a folder, in words: a file, a pipe, a device..."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError:
        return "a file"
    kinds = {stat.S_ISFIFO: "a pipe", stat.S_ISCHR: "a device", stat.S_ISBLK: "a device",
             stat.S_ISSOCK: "a socket"}  # fmt: skip
    return next((kind for test, kind in kinds.items() if test(mode)), "a file")


def writable_folder(out: Path, name: str | None = None, files: tuple[str, ...] = ()) -> Path:
    """out, made if missing and tried with a temporary file; OSError naming the problem if not.

    name: how the message calls the folder (default `--out OUT`; a command writing a file
    into it names the file's option instead). files: the names the report will take there;
    a folder, pipe or device standing in one's place is refused now, not after the timing."""
    out = Path(out)
    name = name or f"--out {out}"
    if out.exists() and not out.is_dir():
        raise OSError(f"{name} is {kind_of(out)}, not a folder")
    if problem := broken_link(out):
        raise OSError(f"{name} {problem}; give another folder")
    for file in files:
        if (out / file).exists() and not (out / file).is_file():
            raise OSError(f"{name}: {out / file} is a folder, a pipe or a device, where the "
                          f"report's {file} goes; move it away or give another --out")  # fmt: skip
        if (out / file).is_file() and not _a_report(out / file):
            raise OSError(f"{name}: {out / file} is not a speclab report, and it is left as it "
                          "is; give another --out")  # fmt: skip
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as error:
        raise OSError(f"{name}: cannot write there ({error.strerror or error})") from None
    return out


def _a_report(path: Path) -> bool:
    """Whether a file where a report goes is one a benchmark wrote (so it may be replaced):
    a JSON report names its benchmark; a CSV report starts with its scenario or setting."""
    try:
        with open(path, "rb") as file:
            head = file.read(4096)
    except OSError:
        return True  # the write will say what is wrong
    if not head:  # an empty file holds nothing to lose
        return True
    if path.suffix == ".json":
        return b'"benchmark":' in head
    first = head.split(b"\n", 1)[0]
    return first.startswith((b"scenario,", b"n_new,"))


def first_missing(path: Path) -> Path | None:
    """The outermost of path and its parents that does not exist yet, or None."""
    missing = None
    for folder in (path, *path.parents):
        if folder.exists() or folder.is_symlink():
            break
        missing = folder
    return missing


def remove_empty_folders(folder: Path, made: Path | None) -> None:
    """Remove folder and its parents up to made (the outermost one a command made) while they
    are empty: a command that failed leaves no empty folders behind."""
    if made is None:
        return
    for each in (folder, *folder.parents):
        try:
            if any(each.iterdir()):
                return
            each.rmdir()
        except OSError as error:
            if error.errno not in (errno.ENOENT, errno.ENAMETOOLONG):
                return  # not ours to remove: leave it
            # never made (a name too long stopped the making): the folders above may have been
        if each == made:
            return


def remove_if_unused(folder: Path, made: Path | None, lock: str = ".lock", *others: str) -> None:
    """After a failed start: the lock file (`one_at_a_time`), and any `others` it names (a
    training's lock for an --out inside its run folder), if that is all folder holds, then
    every folder up to made (the outermost one the command made) that is left empty, so that
    no empty folder is left behind for the next try to trip on. made None: nothing was made."""
    if made is None:
        return
    try:
        names = {p.name for p in folder.iterdir()}
    except OSError:  # never made, or not ours: remove_empty_folders tells which
        names = set()
    try:
        if lock in names and names <= {lock, *others}:
            for name in sorted(names):  # a process refused by another's lock keeps off
                remove_unless_held(folder / name)
    except OSError:  # gone already, or not ours to remove: leave it
        return
    remove_empty_folders(folder, made)


def remove_unless_held(lock: Path) -> None:
    """Remove the lock file while holding it, unless another process holds it (a build or a
    training still running there: its folder must stay). Where nothing can lock, remove it.
    OSError if it cannot be opened (gone, a link, not ours)."""
    try:
        import fcntl
    except ImportError:
        lock.unlink()
        return
    fd = os.open(lock, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            if error.errno in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES):
                return  # held
        lock.unlink()
    finally:
        os.close(fd)


def writable_name(path: Path, name: str) -> None:
    """Try the temporary name write_together will use beside path (made and removed at
    once); OSError naming the problem, e.g. a name too long for the file system."""
    try:
        handle, temporary = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
        )
    except OSError as error:
        raise OSError(
            f"{name}: cannot write a file of that name ({error.strerror or error})"
        ) from None
    os.close(handle)
    os.unlink(temporary)


def csv_text(rows: list[dict], fields: list[str]) -> str:
    """The CSV of rows (one dict each, keys beyond fields ignored), made in memory."""
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=fields, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def write_together(files: dict[Path, str]) -> None:
    """Write every file or none of them: {path: text}, UTF-8.

    Each text goes to a temporary file beside its target. Only when all are written are the
    old files moved aside and the new ones renamed into place (a rename within a folder is
    atomic); if any step fails (a full disk, a file another program holds open, a folder
    where a file should be), the old files are put back, so the pair stays as it was.
    """
    temporary: dict[Path, Path] = {}
    aside: dict[Path, Path] = {}  # an old file -> where it waits until the new one is in
    mode = file_mode()  # as open() would make them: mkstemp's files are private (0600)
    try:
        for path, text in files.items():
            if path.is_dir():
                raise IsADirectoryError(
                    errno.EISDIR, "a folder stands where the file goes", str(path)
                )
            try:
                handle, name = tempfile.mkstemp(
                    dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
                )
                temporary[path] = Path(name)
                with os.fdopen(handle, "wb") as stream:
                    stream.write(text.encode("utf-8"))
                os.chmod(name, mode)
            except OSError as error:  # a full disk names no file: name the one not written
                if error.errno is None:  # not a system error: nothing to rename
                    raise
                raise OSError(error.errno, error.strerror, str(path)) from error
        try:
            for path in files:
                if path.exists() or path.is_symlink():
                    aside[path] = temporary[path].with_suffix(".old")
                    path.replace(aside[path])
            for path, temp in temporary.items():
                temp.replace(path)
        except BaseException:
            for path in files:  # undo: the old file back, or no file where there was none
                if path in aside:
                    aside.pop(path).replace(path)
                elif not temporary[path].exists():
                    path.unlink(missing_ok=True)
            raise
    finally:
        for leftover in [*temporary.values(), *aside.values()]:
            leftover.unlink(missing_ok=True)  # already renamed, or left by a failure


def file_mode() -> int:
    """The permissions open() gives a new file: 0o666 less the process's umask."""
    return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask (reading it means setting it: it is put straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def one_at_a_time(folder: Path, busy: str, option: str, name: str = ".lock", refuse=ValueError):
    """One process at a time writing into folder (a training's run folder, a handouts build):
    a second gets refuse(busy) at once. The lock, an flock on folder/name, ends with the
    process however it ends. Nothing is locked on systems without fcntl (Windows), on file
    systems without locks (some network mounts) or in a folder nobody can write to.
    option: how a message names the folder (`--run-dir`); name: the lock file's; refuse: the
    exception class raised."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    lock = folder / name
    for _ in range(100):  # again while a finished run removes the file we opened (see below)
        try:  # no O_TRUNC, O_NOFOLLOW: a file or link put there is left as it is, and so is its
            # target; O_NONBLOCK: a FIFO put there fails at once instead of waiting for a reader
            fd = os.open(lock, os.O_CREAT | os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK, 0o666)
        except OSError:
            if lock.is_symlink() or lock.exists() and not lock.is_file():
                kind = "a symbolic link" if lock.is_symlink() else "not a file"
                raise refuse(f"{lock} is {kind}; speclab keeps a lock file there: remove it, "
                             f"or give another {option}") from None  # fmt: skip
            yield  # a read-only folder: nothing can be written there either
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno not in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES):
                yield  # a file system without locks
                return
            raise refuse(busy) from None
        # `remove_unless_held` removes a lock file once its run ends: locked after that, the
        # file is no longer the one at the path, and a third run would lock a new one
        if _same_file(fd, lock):
            break
        os.close(fd)
    else:
        raise refuse(busy)
    try:
        yield
    finally:
        os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    """Whether the open file fd is still the file at path (not removed or replaced since)."""
    try:
        here, there = os.fstat(fd), os.lstat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)
