"""Report files: the output folder checked before timing, and a pair written both or neither."""

import os
from pathlib import Path

import pytest

from speclab.report_files import csv_text, writable_folder, write_together


def test_write_together_leaves_nothing_half_written(tmp_path):
    first = tmp_path / "a.json"
    first.write_text("old", encoding="utf-8")
    with pytest.raises(OSError):
        write_together({first: "new", tmp_path / "missing" / "b.csv": "new"})
    assert first.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]  # no temporary file left
    write_together({first: "new ✓", tmp_path / "b.csv": "x,y\r\n"})
    assert first.read_text(encoding="utf-8") == "new ✓"
    assert (tmp_path / "b.csv").read_bytes() == b"x,y\r\n"


def test_a_folder_where_a_file_goes_changes_neither_file(tmp_path):
    first, second = tmp_path / "a.json", tmp_path / "b.csv"
    first.write_text("old", encoding="utf-8")
    second.mkdir()
    with pytest.raises(IsADirectoryError, match="a folder stands where the file goes"):
        write_together({first: "new", second: "new"})
    assert first.read_text(encoding="utf-8") == "old" and second.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.csv"]


@pytest.mark.parametrize("had_second", [True, False])
def test_a_rename_that_fails_puts_the_first_file_back(tmp_path, monkeypatch, had_second):
    """Renaming the second file fails (on Windows: a spreadsheet holds it open) after the
    first is in place: the first file's old text comes back, and no temporary file stays."""
    first, second = tmp_path / "a.json", tmp_path / "b.csv"
    first.write_text("old a", encoding="utf-8")
    if had_second:
        second.write_text("old b", encoding="utf-8")
    real_replace = Path.replace

    def replace(self, target):
        if Path(target) == second and self.suffix == ".tmp":
            raise PermissionError(13, "Permission denied", str(target))
        return real_replace(self, target)

    monkeypatch.setattr(Path, "replace", replace)
    with pytest.raises(PermissionError):
        write_together({first: "new a", second: "new b"})
    assert first.read_text(encoding="utf-8") == "old a"
    assert second.read_text(encoding="utf-8") == "old b" if had_second else not second.exists()
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == (["a.json", "b.csv"] if had_second else ["a.json"])


def test_writable_folder_makes_the_folder_and_names_what_is_wrong(tmp_path):
    assert writable_folder(tmp_path / "a" / "b") == tmp_path / "a" / "b"
    assert (tmp_path / "a" / "b").is_dir() and not any((tmp_path / "a" / "b").iterdir())
    a_file = tmp_path / "file"
    a_file.write_text("x", encoding="utf-8")
    with pytest.raises(OSError, match="is a file, not a folder"):
        writable_folder(a_file)
    with pytest.raises(OSError, match="cannot write there"):
        writable_folder(a_file / "sub")


def test_writable_folder_refuses_a_folder_it_cannot_write_in(tmp_path):
    # A folder that exists but takes no file. A read-only folder does not do as one here:
    # root (as CI runs) may write into it. /proc/self takes no new file, whoever you are.
    with pytest.raises(OSError, match="cannot write there"):
        writable_folder(Path("/proc/self"))
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(OSError, match="cannot write there"):
            writable_folder(locked)


def test_csv_text_is_what_a_csv_file_would_hold():
    rows = [{"a": 1, "b": "x,y", "extra": 3}, {"a": 2, "b": 'say "hi"'}]
    assert csv_text(rows, ["a", "b"]) == 'a,b\r\n1,"x,y"\r\n2,"say ""hi"""\r\n'


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_reports_are_readable_as_any_file_the_user_writes(tmp_path):
    """mkstemp makes private files (0600); a report follows the umask, as open() would."""
    previous = os.umask(0o022)
    try:
        write_together({tmp_path / "a.json": "{}"})
        (tmp_path / "b.json").write_text("{}", encoding="utf-8")
    finally:
        os.umask(previous)
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == (
        tmp_path / "b.json"
    ).stat().st_mode & 0o777


def test_a_report_or_an_empty_file_may_be_replaced_a_users_file_not(tmp_path):
    for name, text, ours in (("forward.json", '{\n "benchmark": "forward"\n}', True),
                             ("decode.csv", "scenario,method\n", True),
                             ("decode.json", "", True), ("forward.csv", "", True),
                             ("forward.csv", "name,score\n", False),
                             ("decode.json", '{"mine": 1}', False)):  # fmt: skip
        (tmp_path / name).write_text(text, encoding="utf-8")
        if ours:
            assert writable_folder(tmp_path, files=(name,)) == tmp_path
        else:
            with pytest.raises(OSError, match="not a speclab report"):
                writable_folder(tmp_path, files=(name,))
        assert (tmp_path / name).read_text(encoding="utf-8") == text


def test_a_refused_start_leaves_a_lock_another_process_holds(tmp_path):
    """Two handouts builds into a new folder: the refused one's clean-up removed the lock the
    first held, and then the folder, under the running build."""
    fcntl = pytest.importorskip("fcntl")
    from speclab.report_files import remove_if_unused

    folder = tmp_path / "new"
    folder.mkdir()
    with (folder / ".lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        remove_if_unused(folder, folder)
        assert (folder / ".lock").exists()
    remove_if_unused(folder, folder)  # no longer held: the lock and the folder go
    assert not folder.exists()


@pytest.mark.skipif(os.name == "nt", reason="symbolic links need rights on Windows")
def test_a_link_loop_or_a_link_to_nothing_is_named_not_file_exists(tmp_path):
    """mkdir says "File exists" of both, which sent a user looking for a file that is not there."""
    from speclab.handouts import HandoutError, build_all

    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    (tmp_path / "dangle").symlink_to(tmp_path / "gone")
    loop = "leads into a symbolic link loop"
    nowhere = f"goes through a link that leads nowhere: it points to {tmp_path / 'gone'}, which"
    for folder, problem in [
        ("a", loop),
        ("dangle", nowhere),
        ("dangle/sub", "goes through a link that leads nowhere ("),
    ]:
        with pytest.raises(OSError) as refused:
            writable_folder(tmp_path / folder)
        assert f"--out {tmp_path / folder} {problem}" in str(refused.value)
        assert "File exists" not in str(refused.value)
    with pytest.raises(HandoutError, match=f"{tmp_path / 'a'} {loop}"):
        build_all(tmp_path / "a", tmp_path / "out", pdf=False)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_names_the_file_it_could_not_write(tmp_path, monkeypatch):
    """The OSError of a full disk names no file, so benchmarks/draft_cost.py blamed "the
    standard output" for the report it could not write."""
    import tempfile

    def full_disk(dir, prefix, suffix):
        return os.open("/dev/full", os.O_WRONLY), str(tmp_path / f"{prefix}x{suffix}")

    monkeypatch.setattr(tempfile, "mkstemp", full_disk)
    target = tmp_path / "draft_cost.json"
    with pytest.raises(OSError) as caught:
        write_together({target: "{}" * 100_000})
    assert caught.value.filename == str(target) and caught.value.strerror
    assert not target.exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_what_stands_where_a_folder_should_is_named_as_what_it_is(tmp_path):
    """`--out /dev/full` and `--out FIFO` were called "a file, not a folder"."""
    from speclab.report_files import kind_of

    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "file").write_text("", "utf-8")
    assert kind_of(tmp_path / "pipe") == "a pipe" and kind_of(tmp_path / "file") == "a file"
    with pytest.raises(OSError, match="--out .*pipe is a pipe, not a folder"):
        writable_folder(tmp_path / "pipe")
    if os.path.exists("/dev/null"):
        assert kind_of(Path("/dev/null")) == "a device"


def test_a_lock_file_removed_between_its_open_and_its_lock_is_not_held(tmp_path, monkeypatch):
    """A run that ends removes its lock file (speclab train, beside --out). Another run that
    had opened the file just before then locked a file no longer at the path, and a third run
    locked a new one: both wrote the same --out (a review)."""
    fcntl = pytest.importorskip("fcntl")
    from speclab.report_files import one_at_a_time

    real, removed = fcntl.flock, []

    def flock(fd, operation):  # the first run ends between the second's open and its lock
        if not removed:
            removed.append(True)
            os.unlink(tmp_path / ".lock")
        return real(fd, operation)

    monkeypatch.setattr(fcntl, "flock", flock)
    with one_at_a_time(tmp_path, "busy", "--out"):
        monkeypatch.setattr(fcntl, "flock", real)
        assert removed and (tmp_path / ".lock").is_file()  # it holds the file at the path
        with pytest.raises(ValueError, match="busy"), one_at_a_time(tmp_path, "busy", "--out"):
            pass  # a third run is refused


def test_folders_made_on_the_way_to_a_name_too_long_are_found_and_removed(tmp_path):
    """mkdir(parents=True) makes new/ before it fails on the 300-letter name below it; listing
    the folder below new/ raised OSError, and the cleanup stopped there (new/ stayed)."""
    from speclab.report_files import first_missing, remove_if_unused

    target = tmp_path / "new" / ("a" * 300) / "sub"
    assert first_missing(target) == tmp_path / "new"  # new/ is not there: the lookup stops
    with pytest.raises(OSError):
        target.mkdir(parents=True)
    assert (tmp_path / "new").is_dir()
    remove_if_unused(target, tmp_path / "new")
    assert not (tmp_path / "new").exists() and tmp_path.is_dir()
