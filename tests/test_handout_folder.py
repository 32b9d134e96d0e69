"""speclab.handout_folder: reading a lesson as UTF-8 text, the list of files a build wrote,
which --out a build may write into, and what a rebuild removes there.

The whole `speclab handouts` command is tested in test_handouts.py; these tests call the
folder rules directly, on folders made by hand.
"""

import os
from pathlib import Path

import pytest

from speclab.handout_folder import (
    MARKER,
    MAX_LESSON_BYTES,
    STAGE_PREFIX,
    HandoutError,
    check_out_dir,
    clear_earlier_build,
    list_written_files,
    read_text_file,
)

EARLIER_INDEX = "<html><head><title>speclab handouts</title></head></html>"


def make(folder: Path, *names: str, text: str = "x") -> list[Path]:
    paths = [folder / name for name in names]
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return paths


def files_in(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


# --- read_text_file -----------------------------------------------------------------------


def test_a_file_of_exactly_the_size_limit_is_read_and_one_byte_more_is_refused(tmp_path):
    lesson = tmp_path / "big.md"
    lesson.write_bytes(b"a" * MAX_LESSON_BYTES)
    assert len(read_text_file(lesson)) == MAX_LESSON_BYTES
    lesson.write_bytes(b"a" * (MAX_LESSON_BYTES + 1))
    with pytest.raises(HandoutError, match=r"big\.md is 2\.0 MB, more than the 2 MB"):
        read_text_file(lesson)


def test_text_that_is_not_utf8_names_the_first_bad_byte(tmp_path):
    lesson = tmp_path / "latin1.md"
    lesson.write_bytes("# Caf\u00e9\n".encode("latin-1"))  # é is the single byte 0xE9, at 5
    with pytest.raises(HandoutError) as raised:
        read_text_file(lesson)
    assert str(raised.value) == f"{lesson} is not UTF-8 text (byte 5); save it as UTF-8"


def test_a_missing_file_cannot_be_read_and_is_not_called_a_pipe_or_a_device(tmp_path):
    with pytest.raises(HandoutError) as raised:
        read_text_file(tmp_path / "gone.md")
    assert str(raised.value) == f"cannot read {tmp_path / 'gone.md'}: No such file or directory"


def test_a_path_that_cannot_be_read_gives_the_systems_reason_alone(tmp_path):
    (tmp_path / "notes.md").write_text("# T\n", encoding="utf-8")
    inside_a_file = tmp_path / "notes.md" / "lesson.md"
    with pytest.raises(HandoutError) as raised:
        read_text_file(inside_a_file)
    assert str(raised.value) == f"cannot read {inside_a_file}: Not a directory"


def test_a_folder_is_refused_as_not_a_regular_file(tmp_path):
    with pytest.raises(HandoutError, match="is not a regular file"):
        read_text_file(tmp_path)


# --- the list of written files ------------------------------------------------------------


def test_the_list_names_each_file_relative_to_out_one_a_line_sorted(tmp_path):
    out = tmp_path / "out"
    written = make(out, "b.html", "answers/a.html", "a-a4.pdf", "zh/answers/c.html")
    list_written_files(out, written + [written[0]])  # a name given twice is listed once
    assert (out / MARKER).read_text(encoding="utf-8") == (
        "a-a4.pdf\nanswers/a.html\nb.html\nzh/answers/c.html\n"
    )
    assert sorted(check_out_dir(out, tmp_path / "lessons", [])) == sorted(written)


def test_a_list_edited_by_hand_is_read_without_its_last_line_break(tmp_path):
    out = tmp_path / "out"
    make(out, "a.html", "b.html")
    (out / MARKER).write_text("a.html\n\nnotes.txt\nb.html", encoding="utf-8")
    assert check_out_dir(out, tmp_path / "lessons", []) == [out / "a.html", out / "b.html"]


# --- check_out_dir ------------------------------------------------------------------------


def test_a_killed_builds_leftover_beside_a_file_of_ones_own_is_not_an_empty_folder(tmp_path):
    out = tmp_path / "out"
    (out / f"{STAGE_PREFIX}killed").mkdir(parents=True)
    make(out, "thesis.html")
    with pytest.raises(HandoutError, match="is not empty and holds no earlier build"):
        check_out_dir(out, tmp_path / "lessons", [out / "thesis.html"])


def test_a_build_without_its_list_gives_back_only_this_builds_files_that_exist(tmp_path):
    out = tmp_path / "out"
    make(out, "index.html", text=EARLIER_INDEX)
    make(out, "99_x.html", "answers/99_x.html", "mine.html")
    names = ("index.html", "99_x.html", "99_x-a4.pdf", "answers/99_x.html", "answers/99_x-a4.pdf")
    this_build = [out / name for name in names]
    assert check_out_dir(out, tmp_path / "lessons", this_build) == [
        out / "index.html",
        out / "99_x.html",
        out / "answers/99_x.html",
    ]


def test_an_index_page_with_bytes_that_are_not_utf8_still_shows_an_earlier_build(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "index.html").write_bytes(EARLIER_INDEX.encode() + b"\xff\xfe")
    assert check_out_dir(out, tmp_path / "lessons", [out / "index.html"]) == [out / "index.html"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
@pytest.mark.timeout(10)  # reading the pipe would wait for ever
def test_a_named_pipe_called_index_html_is_not_read(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "index.html")
    with pytest.raises(HandoutError, match="is not empty and holds no earlier build"):
        check_out_dir(out, tmp_path / "lessons", [out / "index.html"])


# --- clear_earlier_build ------------------------------------------------------------------


def test_clearing_removes_the_listed_files_and_then_the_folders_they_emptied(tmp_path):
    """zh/ holds only zh/answers/ once zh/a.html is gone: zh/answers/ must go first."""
    out = tmp_path / "out"
    earlier = make(out, "index.html", "zh/a.html", "zh/answers/b.html", "figures/f.svg")
    make(out, "figures/photo.svg", "mine.html")
    list_written_files(out, earlier)
    clear_earlier_build(out, earlier)
    assert files_in(out) == ["figures", "figures/photo.svg", "mine.html"]


def test_clearing_everything_in_out_keeps_out_itself(tmp_path):
    out = tmp_path / "out"
    earlier = make(out, "index.html", "answers/k.html")
    clear_earlier_build(out, earlier)
    assert out.is_dir() and files_in(out) == []


def test_clearing_passes_over_listed_files_that_are_gone_or_are_folders(tmp_path):
    out = tmp_path / "out"
    (out / "answers" / "k.html").mkdir(parents=True)  # a folder where the list names a file
    earlier = [out / "gone.html", out / "answers" / "k.html"]
    clear_earlier_build(out, earlier)
    assert files_in(out) == ["answers", "answers/k.html"]


def test_clearing_does_not_follow_a_link_out_of_out(tmp_path):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    make(elsewhere, "k.html", text="the teacher's")
    out.mkdir()
    (out / "answers").symlink_to(elsewhere, target_is_directory=True)
    clear_earlier_build(out, [out / "answers" / "k.html"])
    assert (elsewhere / "k.html").read_text(encoding="utf-8") == "the teacher's"
    assert (out / "answers").is_symlink()


def test_clearing_keeps_a_link_to_an_empty_folder_inside_out(tmp_path):
    """A link is not one of the build's folders: it is neither removed nor a cause to fail."""
    out = tmp_path / "out"
    (out / "old").mkdir(parents=True)
    (out / "answers").symlink_to(out / "old", target_is_directory=True)
    clear_earlier_build(out, [out / "answers" / "k.html"])
    assert (out / "answers").is_symlink() and (out / "old").is_dir()
