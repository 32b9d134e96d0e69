"""Handouts: every lesson page builds, no handout carries its answers, figures and PDFs work.

The lesson files are globbed, so handouts for new lessons are tested as they land. The
PDF tests need /usr/bin/chromium and are skipped without it (CI installs it).
"""

import html
import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

import speclab.chromium
from speclab import cli
from speclab.answer_check import answer_leaks
from speclab.chromium import chromium_available
from speclab.handout_folder import HandoutError
from speclab.handouts import LONG_TABLE_ROWS, build_all, build_page, render_body
from speclab.paths import repo_root

LESSONS = repo_root() / "lessons"
HANDOUTS = sorted(LESSONS.glob("*.md"))
KEYS = sorted((LESSONS / "answers").glob("*.md"))
PAIRS = [(LESSONS / key.name, key) for key in KEYS]
# PDF page sizes in points (1/72 inch): A4 is 210 x 297 mm, Letter 8.5 x 11 in.
PAPER_POINTS = {"a4": (595.28, 841.89), "letter": (612.0, 792.0)}

needs_chromium = pytest.mark.skipif(not chromium_available(), reason="no /usr/bin/chromium")


def visible_text(page: str) -> str:
    """What a reader of the HTML sees: no tags, no style sheet, entities decoded, one space."""
    page = re.sub(r"<(style|script)\b.*?</\1>", " ", page, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page))).strip()


def sentences(markdown_text: str) -> list[str]:
    """Prose sentences of a key, as written (used as an oracle beside `answer_leaks`)."""
    prose = [
        line
        for line in markdown_text.splitlines()
        if line.strip() and not line.lstrip().startswith(("|", "#", "<!--"))
    ]
    plain = re.sub(r"[*_`]", "", " ".join(prose))
    return [s for s in re.split(r"(?<=[.!?])\s+", plain) if len(s) >= 40]


def test_there_are_handouts_and_keys():
    assert HANDOUTS and KEYS


@pytest.mark.parametrize("source", HANDOUTS + KEYS, ids=lambda path: path.relative_to(LESSONS))
def test_every_page_builds_to_html(source, tmp_path):
    built = build_page(source, tmp_path / "out", tmp_path / "figures", pdf=False)
    page = built.html.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "@media print" in page
    assert built.pdfs == ()
    markdown_text = source.read_text(encoding="utf-8")
    for heading in re.findall(r"^#{1,3} (.+)$", markdown_text, flags=re.M):
        plain = re.sub(r"[*_`]", "", heading).strip()
        assert plain in visible_text(page), f"heading {plain!r} missing"
    assert len(re.findall(r"<table[ >]", page)) == len(
        re.findall(r"^\|[-:| ]+\|\s*$", markdown_text, re.M)
    )
    assert "figure:" not in page  # every figure address was replaced by a drawn file
    for src in re.findall(r'<img src="([^"]+)"', page):
        assert (built.html.parent / src).is_file(), src


def test_every_answer_key_has_its_handout():
    missing = [key.name for key in KEYS if not (LESSONS / key.name).exists()]
    assert not missing, f"answer keys without a handout of the same name: {missing}"


@pytest.mark.parametrize("handout, key", PAIRS, ids=lambda path: path.name)
def test_no_handout_contains_its_answers(handout, key, tmp_path):
    handout_md, key_md = handout.read_text("utf-8"), key.read_text("utf-8")
    assert answer_leaks(handout_md, key_md) == []
    printed = visible_text(
        build_page(handout, tmp_path, tmp_path / "f", pdf=False).html.read_text()
    )
    key_printed = visible_text(
        build_page(key, tmp_path / "k", tmp_path / "f", pdf=False).html.read_text()
    )
    answers = sentences(key_md)
    assert answers, f"{key.name}: no answer sentences found, so this test would check nothing"
    found_in_key = [s for s in answers if s in key_printed]
    assert len(found_in_key) >= len(answers) // 2, "the oracle does not read the key as printed"
    leaked = [s for s in found_in_key if s in printed]
    assert not leaked, f"{handout.name} prints its answers: {leaked[:3]}"
    assert not re.search(r"<h[1-6][^>]*>\s*(answer key|answers?|solutions?)\b", printed, re.I)


def test_build_stops_on_a_leaking_handout(tmp_path):
    lessons = tmp_path / "lessons"
    (lessons / "answers").mkdir(parents=True)
    table = "| accepted m | tokens |\n|---|---|\n| 0 | 1 |\n"
    (lessons / "99_x.md").write_text("# Lesson 99\n\n" + table, "utf-8")  # the key's filled row
    (lessons / "answers" / "99_x.md").write_text("# Lesson 99 · key\n\n" + table, "utf-8")
    with pytest.raises(HandoutError, match="99_x.md.*table row"):
        build_all(lessons, tmp_path / "out", pdf=False)
    assert not (tmp_path / "out" / "99_x.html").exists()


def test_build_all_keeps_answers_apart(tmp_path):
    lessons = tmp_path / "lessons"
    shutil.copytree(LESSONS, lessons)
    out = tmp_path / "out"
    status = cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(out)])
    assert status == 0
    assert sorted(p.stem for p in out.glob("*.html")) == sorted(
        [p.stem for p in HANDOUTS] + ["index"]
    )
    assert sorted(p.stem for p in (out / "answers").glob("*.html")) == [p.stem for p in KEYS]
    for page in out.glob("*.html"):
        if page.name != "index.html":
            assert 'href="answers/' not in page.read_text("utf-8"), f"{page.name} links a key"
            assert "Answer key: for the teacher" not in page.read_text("utf-8")
            banner = "Teacher guide: for the teacher, not for handing out"
            assert (banner in page.read_text("utf-8")) == (page.stem == "teacher-guide")
    for page in (out / "answers").glob("*.html"):
        assert "Answer key: for the teacher" in page.read_text("utf-8")
    index = (out / "index.html").read_text("utf-8")
    assert all(f'href="answers/{key.stem}.html"' in index for key in KEYS)
    english = index.split("<h2><span lang=")[0]
    students, teachers = english.split("<h2>For the teacher")  # the guide gives answers away
    assert 'href="teacher-guide.html"' in teachers and "teacher-guide" not in students
    assert 'href="glossary.html"' in students
    for lang in ("zh", "fa"):  # each language's keys apart from its handouts, as in English
        section = index.split(f"<h2><span lang='{lang}'>")[1].split("<h2>")[0]
        students, teachers = section.split("For the teacher")
        assert f'href="{lang}/answers/' in teachers and "answers/" not in students
        assert f'href="{lang}/01_quiz_game.html"' in students


def test_underscores_become_writing_lines(tmp_path):
    body = render_body("Name: ______ Date: ____\n\n" + "_" * 60 + "\n", tmp_path, "f")
    assert body.count('class="blank"') == 2 and "<hr />" in body and "____" not in body


# --- PDFs ---------------------------------------------------------------------------------


def media_boxes(pdf: bytes) -> list[tuple[float, float]]:
    boxes = re.findall(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", pdf)
    return [(float(width), float(height)) for width, height in boxes]


@needs_chromium
def test_pdf_on_a4_and_letter(tmp_path):
    source = tmp_path / "99_figure.md"
    source.write_text(
        "# Lesson 99\n\n## Exercise 1\n\nName: ________\n\n"
        "![One round](figure:draft_verify?k=4&accepted=2)\n\n" + "More text. " * 400,
        "utf-8",
    )
    built = build_page(source, tmp_path / "out", tmp_path / "out" / "figures", pdf=True)
    assert [pdf.name for pdf in built.pdfs] == ["99_figure-a4.pdf", "99_figure-letter.pdf"]
    for pdf_path in built.pdfs:
        pdf = pdf_path.read_bytes()
        assert pdf.startswith(b"%PDF-")
        boxes = media_boxes(pdf)
        assert len(boxes) >= 2, "the long text should need a second page"
        expected = PAPER_POINTS[pdf_path.stem.rsplit("-", 1)[1]]
        for box in boxes:
            assert box == pytest.approx(expected, abs=2.0), pdf_path.name
    assert not list((tmp_path / "out").glob(".*.html")), "temporary print pages left behind"


@needs_chromium
def test_a_tmpdir_that_does_not_exist_does_not_stop_the_pdfs(tmp_path, monkeypatch):
    """TMPDIR=/nonexistent: Python's temporary files fall back to /tmp, but Chromium, given
    the variable as it was, failed with "Failed to create a ProcessSingleton"."""
    import tempfile

    tempfile.gettempdir()  # found before the variable changes, as in a fresh process
    monkeypatch.setenv("TMPDIR", str(tmp_path / "no-such-folder"))
    built = build_page(HANDOUTS[0], tmp_path / "out", tmp_path / "figures", pdf=True)
    assert len(built.pdfs) == 2 and all(pdf.stat().st_size > 1000 for pdf in built.pdfs)


@needs_chromium
def test_a_real_handout_prints(tmp_path):
    handout = HANDOUTS[0]
    built = build_page(handout, tmp_path, tmp_path / "figures", pdf=True)
    assert len(built.pdfs) == 2 and all(pdf.stat().st_size > 1000 for pdf in built.pdfs)


@needs_chromium
@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="no pdftotext (poppler-utils)")
def test_the_teacher_guide_prints_each_lesson_plan_with_its_timing_table(tmp_path):
    """A lesson's Goal and Materials had ended one page and its timing table begun the next
    (three lessons on A4): a teacher reads them together."""
    import subprocess

    built = build_page(LESSONS / "teacher-guide.md", tmp_path, tmp_path / "figures", pdf=True)
    for pdf in built.pdfs:
        text = subprocess.run(
            ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
        ).stdout
        pages = text.split("\f")
        plans = [(number, page) for number, page in enumerate(pages, 1) if "Materials." in page]
        assert len(plans) >= 8, pdf.name  # one plan per lesson: the test reads the guide
        for number, page in plans:
            for materials in re.finditer(r"Materials\.", page):
                assert re.search(r"time\s+activity", page[materials.end() :]), (
                    f"{pdf.name}, page {number}: a lesson's Materials without its timing table"
                )


# --- the output folder and hostile input --------------------------------------------------


def _small_lessons(tmp_path):
    lessons = tmp_path / "lessons"
    (lessons / "answers").mkdir(parents=True)
    (lessons / "99_x.md").write_text("# Handout\n\nA question? ______\n", "utf-8")
    (lessons / "answers" / "99_x.md").write_text("# Key\n\nThe answer is 4.\n", "utf-8")
    return lessons


def test_a_folder_that_is_not_a_build_is_refused_and_kept(tmp_path, capsys):
    lessons = _small_lessons(tmp_path)
    mine = tmp_path / "mine"
    for name in ("thesis.pdf", "home.html", "answers/notes.html", "figures/photo.svg"):
        (mine / name).parent.mkdir(parents=True, exist_ok=True)
        (mine / name).write_text("a student's own file", "utf-8")
    before = sorted(p.relative_to(mine) for p in mine.rglob("*"))
    status = cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(mine)])
    assert status == 1 and "not empty" in capsys.readouterr().err
    assert sorted(p.relative_to(mine) for p in mine.rglob("*")) == before


@pytest.mark.parametrize("inside", [".", "answers", "sub"])
def test_out_inside_the_lessons_is_refused(tmp_path, inside, capsys):
    lessons = _small_lessons(tmp_path)
    sources = sorted(p.read_bytes() for p in lessons.rglob("*.md"))
    out = lessons / inside
    status = cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(out)])
    assert status == 1 and "inside the lesson folder" in capsys.readouterr().err
    assert sorted(p.read_bytes() for p in lessons.rglob("*.md")) == sources


def test_a_rebuild_removes_only_what_the_last_build_wrote(tmp_path):
    lessons = _small_lessons(tmp_path)
    out = tmp_path / "out"
    build_all(lessons, out, pdf=False)
    (out / "my-notes.html").write_text("kept", "utf-8")  # added by hand after the build
    (lessons / "98_y.md").write_text("# Another\n\nText.\n", "utf-8")
    build_all(lessons, out, pdf=False)
    assert (out / "my-notes.html").read_text("utf-8") == "kept"
    assert (out / "98_y.html").is_file() and (out / "99_x.html").is_file()
    (lessons / "98_y.md").unlink()
    build_all(lessons, out, pdf=False)
    assert not (out / "98_y.html").exists(), "a page whose lesson is gone is removed"
    assert (out / "my-notes.html").is_file()


def test_a_build_stopped_halfway_can_be_run_again(tmp_path):
    lessons = _small_lessons(tmp_path)
    (lessons / "99_z_bad.md").write_text("# Bad\n\n![x](figure:no_such_thing)\n", "utf-8")
    out = tmp_path / "out"
    with pytest.raises(HandoutError, match="unknown figure"):
        build_all(lessons, out, pdf=False)  # stops halfway
    (lessons / "99_z_bad.md").unlink()
    build_all(lessons, out, pdf=False)
    assert (out / "99_x.html").is_file() and (out / "index.html").is_file()


def test_a_rebuild_that_stops_halfway_leaves_the_earlier_build_whole(tmp_path):
    """The pages are built beside --out and moved in at the end: a bad figure (or Ctrl-C)
    halfway through a rebuild costs nothing of the build before it."""
    lessons = _small_lessons(tmp_path)
    out = tmp_path / "out"
    build_all(lessons, out, pdf=False)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    (lessons / "99_z_bad.md").write_text("# Bad\n\n![x](figure:no_such_thing)\n", "utf-8")
    with pytest.raises(HandoutError, match="unknown figure"):
        build_all(lessons, out, pdf=False)
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert [p.name for p in out.iterdir() if "building" in p.name] == []  # no leftovers


@pytest.mark.skipif(sys.platform == "win32", reason="no SIGTERM to send on Windows")
def test_sigterm_halfway_leaves_no_hidden_build_folder(tmp_path):
    """`kill` or `timeout` (SIGTERM) in the middle of a build cleans up as Ctrl-C does."""
    import subprocess
    import textwrap

    lessons, out = _small_lessons(tmp_path), tmp_path / "out"
    script = textwrap.dedent(f"""
        import os, signal, sys, time
        from speclab import cli, handouts
        def build_page(*args, **kwargs):  # the build is under way: its hidden folder exists
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        handouts.build_page = build_page
        sys.exit(cli.main(["handouts", "--lessons", {str(lessons)!r}, "--out", {str(out)!r},
                           "--no-pdf"]))
    """)  # fmt: skip
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 143, done.stderr  # SIGTERM's own status, not killed outright
    said = f"handouts: stopped; the pages built so far are discarded and {out} is left as it was"
    assert done.stderr.strip() == f"{said}\ninterrupted"  # it said "interrupted" alone
    assert not out.exists()  # the hidden folder the build was made in, and --out it made, gone


@pytest.mark.skipif(sys.platform == "win32", reason="no SIGTERM to send on Windows")
def test_a_stop_after_the_build_is_in_place_says_so(tmp_path):
    """A stop on the way out, the new build already moved into --out, had said that the
    pages were discarded and --out left as it was (a hostile review: 3 in 80 tries)."""
    import subprocess
    import textwrap

    lessons, out = _small_lessons(tmp_path), tmp_path / "out"
    script = textwrap.dedent(f"""
        import os, signal, sys, time
        from speclab import cli, handouts
        real = handouts.Built
        def built(source, html, *rest):  # after the move: the list of pages in --out is made
            if handouts.STAGE_PREFIX not in str(html):  # not build_page's, in the hidden folder
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
            return real(source, html, *rest)
        handouts.Built = built
        sys.exit(cli.main(["handouts", "--lessons", {str(lessons)!r}, "--out", {str(out)!r},
                           "--no-pdf"]))
    """)  # fmt: skip
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 143, done.stderr
    said = f"handouts: stopped after the build was written; {out} holds it whole"
    assert done.stderr.strip() == f"{said}\ninterrupted"
    assert (out / "index.html").is_file() and (out / "99_x.html").is_file()
    assert [p.name for p in out.iterdir() if "building" in p.name] == []


@pytest.mark.skipif(sys.platform == "win32", reason="os.kill(SIGINT) ends the process there")
def test_ctrl_c_in_the_modules_own_entry_point_is_the_commands_message(tmp_path):
    """`python -m speclab.handouts` parsed its own arguments and ran without the command's
    manners: a Ctrl-C while it waited for Chromium ended in a KeyboardInterrupt traceback."""
    import subprocess
    import textwrap

    lessons, out = _small_lessons(tmp_path), tmp_path / "out"
    script = textwrap.dedent(f"""
        import os, runpy, signal, sys, time, warnings
        from speclab import handouts
        def build_page(*args, **kwargs):  # Ctrl-C in the middle of the build
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        handouts.build_page = build_page
        warnings.simplefilter("ignore")  # runpy: speclab.handouts is imported already
        sys.argv = ["handouts", "--lessons", {str(lessons)!r}, "--out", {str(out)!r}, "--no-pdf"]
        runpy.run_module("speclab.handouts", run_name="__main__")
    """)  # fmt: skip
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.endswith("interrupted\n")
    assert not out.exists()


def test_out_may_be_the_current_empty_folder(tmp_path, monkeypatch, capsys):
    lessons = _small_lessons(tmp_path)
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    assert cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", "."]) == 0
    assert (tmp_path / "here" / "index.html").is_file()
    assert [p.name for p in (tmp_path / "here").iterdir() if "building" in p.name] == []


def test_a_build_from_before_the_file_list_is_still_rebuilt(tmp_path):
    """Without the list, the files a build of the current lessons writes are replaced (its
    stale PDFs too, on an HTML-only rebuild); any other file may be the teacher's: kept."""
    lessons = _small_lessons(tmp_path)
    out = tmp_path / "out"
    build_all(lessons, out, pdf=False)
    (out / ".speclab-handouts").unlink()  # as a build made before the list existed
    for name in ("99_x.html", "99_x-a4.pdf", "answers/99_x-letter.pdf", "old-page.html"):
        (out / name).write_text("stale", "utf-8")
    build_all(lessons, out, pdf=False)
    assert "A question?" in (out / "99_x.html").read_text("utf-8")
    assert not (out / "99_x-a4.pdf").exists() and not (out / "answers/99_x-letter.pdf").exists()
    assert (out / "old-page.html").read_text("utf-8") == "stale"


def _files(folder):
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_a_build_copied_without_its_list_keeps_the_teachers_files(tmp_path, capsys):
    """`cp -r build/handouts/* site/` leaves the hidden list behind; a rebuild into site/
    must not take the teacher's own pages, PDFs and pictures for old handouts."""
    lessons = _small_lessons(tmp_path)
    build_all(lessons, tmp_path / "first", pdf=False)
    site = tmp_path / "site"
    own = ("about.html", "syllabus.pdf", "private/logo.svg", "figures/photo.svg", "answers/me.html")
    for name in own:
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(f"the teacher's {name}", "utf-8")
    for item in (tmp_path / "first").iterdir():  # what `cp -r first/* site/` copies
        if item.is_dir():
            shutil.copytree(item, site / item.name, dirs_exist_ok=True)
        elif not item.name.startswith("."):  # the hidden list stays behind
            shutil.copy(item, site / item.name)
    for _ in range(2):  # the second rebuild has the list the first one wrote
        status = cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(site)])
        assert status == 0, capsys.readouterr().err
        for name in own:
            assert (site / name).read_text("utf-8") == f"the teacher's {name}", name
        assert (site / "99_x.html").is_file() and (site / "answers" / "99_x.html").is_file()


@pytest.mark.parametrize("kind", ["link", "file"])
@pytest.mark.parametrize("name", ["answers", "figures", "zh/answers"])
def test_a_build_folder_that_is_a_link_or_a_file_is_refused(tmp_path, capsys, kind, name):
    """out/answers -> elsewhere: the keys would be written (over same-named files) there; a
    file in its place: the rebuild would fail after removing the earlier build."""
    lessons = _small_lessons(tmp_path)
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    build_all(lessons, out, pdf=False)
    before = _files(out)
    elsewhere.mkdir()
    (elsewhere / "mine.html").write_text("mine", "utf-8")
    folder = out / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    if kind == "link":
        folder.symlink_to(elsewhere, target_is_directory=True)
    else:
        folder.write_text("notes", "utf-8")
    status = cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1 and f"{folder} is a {kind}" in err, err
    assert [path.name for path in elsewhere.iterdir()] == ["mine.html"]
    after = _files(out)
    assert all(after[key] == data for key, data in before.items() if not key.startswith(name))


def test_a_rebuild_removes_only_build_files_named_in_the_list(tmp_path):
    """A hand-edited or damaged list cannot make a rebuild delete what a build never writes."""
    lessons = _small_lessons(tmp_path)
    out = tmp_path / "out"
    build_all(lessons, out, pdf=False)
    own = ("notes.txt", "private/page.html", "answers/key.docx")
    for name in own:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text("mine", "utf-8")
    (tmp_path / "outside.html").write_text("mine", "utf-8")
    with (out / ".speclab-handouts").open("a", encoding="utf-8") as listed:
        listed.write("".join(f"{name}\n" for name in own + ("../outside.html",)))
    build_all(lessons, out, pdf=False)
    assert all((out / name).read_text("utf-8") == "mine" for name in own)
    assert (tmp_path / "outside.html").read_text("utf-8") == "mine"


shell_script_stands_in_for_chromium = pytest.mark.skipif(
    sys.platform == "win32", reason="a shell script stands in for Chromium"
)


@shell_script_stands_in_for_chromium
@pytest.mark.parametrize(
    "script, reason",
    [
        (
            "echo '[1:2:0101/0:ERROR:bus.cc:405] Failed to connect to the bus' >&2\n"
            "echo '[1:2:0101/0:ERROR:handler.cc:266] Failed to write file x.pdf' >&2\nexit 1\n",
            "(exit status 1: Failed to write file x.pdf); try --no-pdf",
        ),
        ("echo 'all fine' >&2\n", "(no PDF written: all fine); try --no-pdf"),
        ("exec sleep 30\n", "(no PDF after 0.5 s); try --no-pdf"),  # a Chromium that hangs
    ],
    ids=["fails", "writes no PDF", "hangs"],
)
def test_chromium_failing_is_one_line_and_keeps_the_earlier_build(
    tmp_path, monkeypatch, capsys, script, reason
):
    lessons = _small_lessons(tmp_path)
    out = tmp_path / "out"
    build_all(lessons, out, pdf=False)
    before = _files(out)
    chromium = tmp_path / "chromium"
    chromium.write_text("#!/bin/sh\n" + script, "utf-8")
    chromium.chmod(0o755)
    monkeypatch.setattr(speclab.chromium, "CHROMIUM", chromium)
    monkeypatch.setattr(speclab.chromium, "PRINT_TIMEOUT_S", 0.5)
    (lessons / "98_new.md").write_text("# New\n\nText.\n", "utf-8")
    status = cli.main(["handouts", "--pdf", "--lessons", str(lessons), "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 1
    assert err == f"handouts: Chromium could not print the PDFs {reason}\n"
    assert _files(out) == before


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"  # a zombie has ended; only its parent's wait is missing


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("ends", ["hangs", "exits"])
def test_chromium_helpers_do_not_outlive_the_print(tmp_path, monkeypatch, ends):
    """Chromium starts renderer and GPU helpers; killing Chromium alone would leave them."""
    pids = tmp_path / "helper.pid"
    chromium = tmp_path / "chromium"
    last = "exec sleep 30\n" if ends == "hangs" else "exit 1\n"
    chromium.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {pids}\n{last}", "utf-8")
    chromium.chmod(0o755)
    monkeypatch.setattr(speclab.chromium, "CHROMIUM", chromium)
    monkeypatch.setattr(speclab.chromium, "PRINT_TIMEOUT_S", 2.0)
    html_path = tmp_path / "page.html"
    html_path.write_text("<p>x</p>", "utf-8")
    with pytest.raises(HandoutError, match="Chromium could not print"):
        speclab.chromium.print_pdf(html_path, tmp_path / "page.pdf")
    helper = int(pids.read_text())
    for _ in range(50):  # SIGKILL is delivered at once; give the kernel a moment
        if not _running(helper):
            break
        time.sleep(0.02)
    assert not _running(helper)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("status", [0, 3])
def test_a_helper_holding_stderr_does_not_stall_the_print(tmp_path, monkeypatch, status):
    """A helper that inherits Chromium's stderr and outlives it: the print ends with Chromium."""
    pids = tmp_path / "helper.pid"
    chromium = tmp_path / "chromium"
    chromium.write_text(
        "#!/bin/sh\nsleep 300 &\n"  # the helper keeps Chromium's stderr open
        f"echo $! > {pids}\necho 'printed it' >&2\n"
        'for a in "$@"; do case $a in --print-to-pdf=*) echo pdf > "${a#--print-to-pdf=}";; '
        f"esac; done\nexit {status}\n",
        "utf-8",
    )
    chromium.chmod(0o755)
    monkeypatch.setattr(speclab.chromium, "CHROMIUM", chromium)
    monkeypatch.setattr(speclab.chromium, "PRINT_TIMEOUT_S", 20.0)
    html_path = tmp_path / "page.html"
    html_path.write_text("<p>x</p>", "utf-8")
    start = time.monotonic()
    if status == 0:
        speclab.chromium.print_pdf(html_path, tmp_path / "page.pdf")
        assert (tmp_path / "page.pdf").read_text() == "pdf\n"
    else:  # the reason is Chromium's own, not the time-out
        with pytest.raises(HandoutError, match=r"\(exit status 3: printed it\)"):
            speclab.chromium.print_pdf(html_path, tmp_path / "page.pdf")
    assert time.monotonic() - start < 10, "waited for the helper, not for Chromium"
    helper = int(pids.read_text())
    for _ in range(50):
        if not _running(helper):
            break
        time.sleep(0.02)
    assert not _running(helper)


def test_a_figure_title_with_dollar_signs_is_drawn_as_typed(tmp_path, capsys):
    """'$x^$' was read as a broken formula and stopped the build; figures draw text as typed."""
    lessons = _small_lessons(tmp_path)
    address = "figure:check_row?draft=ABC&target=ABD&title=%24x%5E%24"  # title $x^$
    (lessons / "98_math.md").write_text(f"# T\n\n![c]({address})\n", "utf-8")
    out = tmp_path / "out"
    assert cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(out)]) == 0
    (svg,) = [p for p in (out / "figures").glob("*.svg") if "x^" in p.read_text("utf-8")]
    assert "$x^$" in svg.read_text("utf-8")


def test_a_figure_matplotlib_cannot_save_is_one_line(tmp_path, capsys, monkeypatch):
    import matplotlib.pyplot as plt

    from speclab import figures

    def unsaveable(**_):
        figure = plt.figure()
        plt.close(figure)

        def fail(path, *args, **kwargs):
            Path(path).write_text("<svg half", "utf-8")  # half written, then the error
            raise ValueError("cannot\nsave this")

        figure.savefig = fail
        return figure

    monkeypatch.setattr(figures, "check_row_figure", unsaveable, raising=False)
    lessons = _small_lessons(tmp_path)
    address = "figure:check_row?draft=ABC&target=ABD"
    (lessons / "98_math.md").write_text(f"# T\n\n![c]({address})\n", "utf-8")
    out = tmp_path / "out"
    status = cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1
    assert "98_math.md: line 3: figure 'check_row' cannot be drawn: cannot save this" in err
    figures_dir = tmp_path / "figures"
    with pytest.raises(HandoutError, match="cannot be drawn"):
        render_body(f"![c]({address})\n", figures_dir, "figures")
    assert not list(figures_dir.glob("*.svg")), "a half-written figure would be reused"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
@pytest.mark.timeout(20)  # reading the pipe would wait for ever
@pytest.mark.parametrize("name", ["98_pipe.md", "answers/99_x.md"])
def test_a_named_pipe_among_the_lessons_is_refused(tmp_path, capsys, name):
    lessons = _small_lessons(tmp_path)
    (lessons / name).unlink(missing_ok=True)
    os.mkfifo(lessons / name)
    out = tmp_path / "out"
    status = cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(out)])
    assert status == 1 and "is not a regular file" in capsys.readouterr().err


@pytest.mark.parametrize("below", ["", "sub"])
def test_a_symlink_loop_as_out_is_one_line(tmp_path, capsys, below):
    lessons = _small_lessons(tmp_path)
    (tmp_path / "loop").symlink_to("loop")
    out = tmp_path / "loop" / below
    status = cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1 and str(tmp_path / "loop") in err
    assert "leads into a symbolic link loop" in err  # report_files.broken_link's words


def test_escape_codes_in_out_are_shown_not_obeyed(tmp_path, capsys):
    lessons = _small_lessons(tmp_path)
    out = tmp_path / "out\x1b[2Jred"  # ESC [2J clears the screen
    status = cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(out)])
    printed = capsys.readouterr().out
    assert status == 0 and "\x1b" not in printed and "out\\x1b[2Jred" in printed


@pytest.mark.parametrize(
    "setup, message",
    [
        (
            lambda lessons, out: (lessons / "99_x.md").write_bytes(b"# T\n\n\xff\xfe bad\n"),
            "not UTF-8",
        ),
        (lambda lessons, out: out.write_text("a file", "utf-8"), "is a file, not a folder"),
        (lambda lessons, out: [p.unlink() for p in lessons.rglob("*.md")], "no lessons in"),
        (lambda lessons, out: shutil.rmtree(lessons), "lessons does not exist: give --lessons"),
    ],
)
def test_bad_input_gets_a_message(tmp_path, setup, message, capsys):
    lessons = _small_lessons(tmp_path)
    out = tmp_path / "out"
    setup(lessons, out)
    status = cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(out)])
    assert status == 1 and message in capsys.readouterr().err


def test_lessons_given_as_a_file_says_so(tmp_path, capsys):
    lesson = _small_lessons(tmp_path) / "01_x.md"
    lesson.write_text("# T\n", "utf-8")
    argv = ["handouts", "--no-pdf", "--lessons", str(lesson), "--out", str(tmp_path / "out")]
    status = cli.main(argv)
    err = capsys.readouterr().err
    assert status == 1 and "01_x.md is a file: give --lessons a folder" in err
    assert "no lessons in" not in err


def test_a_file_list_naming_windows_paths_or_other_folders_names_nothing():
    """The list is written with "/" only: a backslash or a drive, which Windows would follow
    out of --out, makes a name no build file; so do folders and kinds a build never writes."""
    from speclab.handout_folder import _is_build_file

    assert _is_build_file("answers/01_quiz_game.html") and _is_build_file("fa/01_quiz_game.pdf")
    for name in ["..\\x\\a.html", "answers\\..\\..\\a.html", "C:a.html", "C:/x/a.html",
                 "private/a.html", "../a.html", "notes.txt", "answers/../../a.html"]:  # fmt: skip
        assert not _is_build_file(name), name


@pytest.mark.parametrize("name", ["index.md", "Index.md"])
def test_a_lesson_named_index_is_refused_not_replaced_by_the_list_of_pages(tmp_path, capsys, name):
    lessons = _small_lessons(tmp_path)
    (lessons / name).write_text("# Welcome, students\n", "utf-8")
    out = tmp_path / "out"
    status = cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1
    assert f"{name}: index.html is the list of pages this build writes" in err
    assert not out.exists()


def test_a_lesson_saved_with_a_byte_order_mark_keeps_its_heading(tmp_path, capsys):
    """Notepad saves UTF-8 with a BOM; read as text it made the first line '\ufeff# Title',
    a paragraph, and the page lost its title."""
    lessons = _small_lessons(tmp_path)
    (lessons / "98_bom.md").write_bytes("\ufeff# Lesson 98 · With a mark\n\ntext\n".encode())
    out = tmp_path / "out"
    status = cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(out)])
    assert status == 0, capsys.readouterr().err
    page = (out / "98_bom.html").read_text(encoding="utf-8")
    assert "<h1" in page and "\ufeff" not in page and "<title>Lesson 98 · With a mark" in page


def test_a_figure_title_the_fonts_cannot_show_is_drawn_with_a_warning_not_refused(tmp_path):
    """Values that draw an unusable figure are errors (above); a letter missing from the
    installed fonts (an Egyptian hieroglyph here; Chinese on a machine without CJK fonts)
    is not: matplotlib draws a box and warns, as it did before warnings became errors."""
    address = (
        "figure:roofline?n_params=1000&bandwidth=2&peak_flops=3&bytes_per_param=2&name=%F0%93%80%80"
    )
    with pytest.warns(UserWarning, match="missing from font"):
        body = render_body(f"# Title\n\n![x]({address})\n", tmp_path, "figures")
    assert "<img" in body and list(tmp_path.glob("*.svg"))


def test_only_a_long_table_may_break_across_pages(tmp_path):
    # The glossary's table, kept whole, left its first page blank but for one paragraph.
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    # LONG_TABLE_ROWS rows with its header: kept whole; one row more: may break.
    table = "| a | b |\n|---|---|\n" + "".join(f"| {i} | x |\n" for i in range(LONG_TABLE_ROWS - 1))
    (lessons / "97_tables.md").write_text(
        f"# T\n\n{table}\nand\n\n{table}| one | more |\n", "utf-8"
    )
    built = build_page(lessons / "97_tables.md", tmp_path, tmp_path / "figures", pdf=False)
    page = built.html.read_text("utf-8")
    assert page.count("<table>") == 1 and page.count('<table class="long">') == 1


def test_the_closing_line_shows_a_folder_name_escaped(tmp_path, capsys):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "96_x.md").write_text("# Lesson 96\n\ntext\n", "utf-8")
    out = tmp_path / "a\nb\x1b[31m"  # a line break and a terminal's colour code in its name
    status = cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(out)])
    printed = capsys.readouterr().out
    assert status == 0 and printed.count("\n") == 1 and "\x1b" not in printed
    assert "a\\nb\\x1b[31m" in printed and (out / "index.html").is_file()


def test_a_failed_build_leaves_no_folder_it_made(tmp_path, capsys):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "95_x.md").write_text("# L\n\n![x](figure:nope)\n", "utf-8")
    out = tmp_path / "new" / "deep"
    status = cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(out)])
    assert status == 1 and "unknown figure 'nope'" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()


def test_a_missing_requirement_is_one_line_not_a_traceback(tmp_path, capsys, monkeypatch):
    """An environment made before markdown-it-py was a requirement of `speclab handouts`."""
    monkeypatch.setitem(sys.modules, "markdown_it", None)  # `import markdown_it` now fails
    assert cli.main(["handouts", "--out", str(tmp_path / "out"), "--no-pdf"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "speclab: the Python package 'markdown_it' is not installed here; install speclab's "
        "requirements again (`make lab`, or `pip install -e .` in this folder)"
    ]
    assert not (tmp_path / "out").exists()  # a failed build leaves no folder it made


def test_every_package_speclab_imports_is_a_requirement_not_a_test_extra():
    """A classroom pack installs the requirements without the test extra: every third-party
    module the package imports (markdown_it for `speclab handouts`, ...) must come from a
    requirement or from what a requirement pulls in."""
    import ast
    import tomllib
    from importlib import metadata

    def closure(names):
        seen, todo = set(), [name.lower().replace("_", "-") for name in names]
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            try:
                requires = metadata.requires(name) or []
            except metadata.PackageNotFoundError:
                continue
            todo += [re.split(r"[<>=!~ ;\[(]", r)[0].lower().replace("_", "-") for r in requires
                     if "extra ==" not in r]  # fmt: skip
        return seen

    project = tomllib.loads((repo_root() / "pyproject.toml").read_text(encoding="utf-8"))
    names = [re.split(r"[<>=!~ \[]", d)[0] for d in project["project"]["dependencies"]]
    installed = closure(names)
    distributions = metadata.packages_distributions()
    imported = set()
    for path in (repo_root() / "src" / "speclab").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"speclab"}
    for module in sorted(third_party):
        provided_by = {d.lower().replace("_", "-") for d in distributions.get(module, [])}
        assert provided_by & installed, f"{module} ({provided_by}) is not a requirement"


def test_a_missing_numpy_is_named_even_when_pandas_rewraps_it(tmp_path):
    """pandas turns numpy's ModuleNotFoundError into a plain ImportError of its own."""
    import subprocess

    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "from speclab.cli import main\n"
        f"sys.exit(main(['check-guesses', {str(tmp_path / 'x.csv')!r}]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("speclab: the Python package 'numpy' is not installed here")
    assert "Traceback" not in done.stderr


def test_a_second_build_into_the_same_folder_is_refused_while_the_first_runs(tmp_path, capsys):
    """Two builds at once into one --out: the second used to remove the first's hidden
    folder as a killed build's leftover, and the first failed halfway."""
    fcntl = pytest.importorskip("fcntl")
    from speclab.handout_folder import LOCK, STAGE_PREFIX

    lessons = _small_lessons(tmp_path)
    out = tmp_path / "out"
    build_all(lessons, out, pdf=False)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    live = out / f"{STAGE_PREFIX}first"  # the first build's folder, half made
    live.mkdir()
    (live / "99_x.html").write_text("half made", "utf-8")
    with (out / LOCK).open("w") as held:  # as the first build holds it
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        status = cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(out)])
        assert status == 1
        assert "another handouts build is writing to" in capsys.readouterr().err
        assert (live / "99_x.html").read_text("utf-8") == "half made"
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before | {Path(live.name) / "99_x.html": b"half made"}
    build_all(lessons, out, pdf=False)  # the lock gone with the first build: a killed one's
    assert not live.exists()  # leftovers are removed


def test_a_folder_holding_only_a_killed_builds_lock_and_leftovers_is_built_into(tmp_path):
    from speclab.handout_folder import LOCK, STAGE_PREFIX

    lessons = _small_lessons(tmp_path)
    out = tmp_path / "out"
    (out / f"{STAGE_PREFIX}killed").mkdir(parents=True)
    (out / LOCK).write_text("")
    build_all(lessons, out, pdf=False)
    assert (out / "99_x.html").is_file() and not (out / f"{STAGE_PREFIX}killed").exists()


def test_an_image_from_the_web_is_linked_as_it_is(tmp_path):
    body = render_body("# T\n\n![a map](https://example.org/map.png)\n", tmp_path, "figures")
    assert '<img src="https://example.org/map.png" alt="a map">' in body


def test_a_folder_that_cannot_be_written_is_named_as_given(tmp_path, capsys, monkeypatch):
    """A read-only --out was named by the hidden build folder inside it
    (`out/.speclab-building-hmyjvxsg: Permission denied`), a name the teacher never gave."""
    import tempfile

    def refused(prefix, dir):
        raise PermissionError(13, "Permission denied", str(Path(dir) / f"{prefix}hmyjvxsg"))

    monkeypatch.setattr(tempfile, "mkdtemp", refused)
    lessons, out = _small_lessons(tmp_path), tmp_path / "out"
    status = cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 1 and f"cannot write the handouts ({out}): Permission denied" in err
    assert ".speclab-building" not in err


@pytest.mark.parametrize("locked_name", ["", "answers"])
def test_a_lessons_folder_that_cannot_be_listed_is_not_called_empty(
    tmp_path, refuse_to_list, capsys, locked_name
):
    """'no lessons in X' was said of a folder of lessons that could not be listed, and an
    answers folder that could not be listed gave handouts without their keys, silently."""
    lessons = _small_lessons(tmp_path)
    (lessons / "answers").mkdir(exist_ok=True)
    locked = lessons / locked_name if locked_name else lessons
    refuse_to_list(locked)
    out = tmp_path / "out"
    status = cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 1, err
    assert f"{locked}: folder cannot be listed (Permission denied)" in err
    assert "no lessons" not in err


def test_the_index_links_pages_whose_names_a_url_would_misread(tmp_path):
    """Lessons named q#1.md, what?.md, 50%.md and a"b.md were linked as href="q#1.html" (the
    page "q" at the anchor "1"), "what?.html", "50%.html" and a broken href="a"b.html"."""
    from urllib.parse import unquote

    lessons = tmp_path / "lessons"
    lessons.mkdir()
    names = ["q#1", "what?", "50%", 'a"b', "é"]
    for name in names:
        (lessons / f"{name}.md").write_text(f"# Page {name}\n", "utf-8")
    build_all(lessons, tmp_path / "out", pdf=False)
    index = (tmp_path / "out" / "index.html").read_text("utf-8")
    hrefs = re.findall(r'<a href="([^"]*)">HTML</a>', index)
    assert sorted(unquote(href) for href in hrefs) == sorted(f"{n}.html" for n in names)
    assert all((tmp_path / "out" / unquote(href)).is_file() for href in hrefs)
    assert not any(set(href) & set('#?"') for href in hrefs)


def test_a_lesson_whose_file_name_is_not_utf8_is_named_not_a_traceback(tmp_path, capsys):
    """A name with a byte that is not UTF-8 (from a Windows zip) ended in a UnicodeEncodeError
    traceback while the index was written."""
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    try:
        (lessons / os.fsdecode(b"\xe9.md")).write_text("# x\n", "utf-8")
    except (OSError, UnicodeError):
        pytest.skip("this file system keeps only UTF-8 names")
    status = cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(tmp_path / "out")])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 1 and "Traceback" not in err
    assert f"{lessons}/\\xe9.md: its file name is not UTF-8 text; rename it" in err


def test_a_lesson_named_in_utf8_under_an_ascii_python_says_how_to_read_it(tmp_path):
    """The C locale with PYTHONUTF8=0 reads é.md as ASCII bytes, kept as surrogates: the same
    traceback, where the cure is to read names as UTF-8."""
    import subprocess

    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "é.md").write_text("# x\n", "utf-8")
    env = os.environ | {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    result = subprocess.run(
        [sys.executable, "-m", "speclab", "handouts", "--no-pdf", "--lessons", str(lessons),
         "--out", str(tmp_path / "out")],
        capture_output=True, text=True, env=env, timeout=120, encoding="utf-8", errors="replace",
    )  # fmt: skip
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "this Python reads file names as ASCII; set PYTHONUTF8=1" in result.stderr


def test_a_lesson_of_megabytes_is_refused_before_it_is_rendered(tmp_path, capsys):
    """A 20 MB lesson took 23 s and 1.2 GB to render, and with less memory ended in a
    MemoryError traceback; a lesson is a few KB."""
    from speclab.handout_folder import MAX_LESSON_BYTES

    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "big.md").write_text("# Big\n" + "x" * MAX_LESSON_BYTES, "utf-8")
    status = cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(tmp_path / "out")])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 1 and f"{lessons / 'big.md'} is 2.0 MB, more than the 2 MB" in err
    assert not (tmp_path / "out" / "big.html").exists()


def test_running_out_of_memory_is_one_line(tmp_path, capsys, monkeypatch):
    """A lesson too large for the memory at hand ended in a MemoryError traceback."""
    import speclab.handouts

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(speclab.handouts, "build_page", no_memory)
    lessons, out = _small_lessons(tmp_path), tmp_path / "out"
    assert cli.main(["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(out)]) == 1
    said = capsys.readouterr().err
    assert said == f"handouts: not enough memory to build the handouts; {out} is left as it was\n"


def test_a_stop_while_the_new_build_moves_in_waits_for_it(tmp_path, monkeypatch):
    """Ctrl-C between the old build's removal and the new one's move left half of each, where
    `handouts` says --out holds the earlier build whole: the move now runs to its end."""
    import signal

    import speclab.handouts

    lessons, out = _small_lessons(tmp_path), tmp_path / "out"
    build_all(lessons, out, pdf=False)
    real, seen = speclab.handouts.list_written_files, []

    def list_then_stop(*args):
        real(*args)
        seen.append(signal.getsignal(signal.SIGINT))  # what a Ctrl-C now would do

    monkeypatch.setattr(speclab.handouts, "list_written_files", list_then_stop)
    build_all(lessons, out, pdf=False)
    assert seen == [signal.SIG_IGN]  # ignored in the middle of the move
    assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN  # and back after it
    assert (out / "99_x.html").is_file() and (out / "answers" / "99_x.html").is_file()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="/dev/full is Linux's")
def test_a_full_stdout_after_the_build_says_it_was_built(tmp_path):
    """`speclab handouts > /dev/full` built the pages and then said only "cannot write the
    standard output", as if the build had failed."""
    import subprocess

    lessons, out = _small_lessons(tmp_path), tmp_path / "out"
    argv = ["handouts", "--no-pdf", "--lessons", str(lessons), "--out", str(out)]
    with open("/dev/full", "wb") as full:
        result = subprocess.run([sys.executable, "-m", "speclab", *argv], stdout=full,
                                stderr=subprocess.PIPE, timeout=120)  # fmt: skip
    assert result.returncode == 1 and (out / "index.html").is_file()
    assert result.stderr.decode().endswith(
        f"No space left on device; the files were saved: {out / 'index.html'}\n"
    )


def test_the_page_footer_prints_the_title_as_written():
    """A <style> element decodes no HTML entities: lesson 04b's footer printed "where a
    forward&#x27;s time goes" on every page. Nor can a title end the element early."""
    from speclab.handouts import html_document

    page = html_document("Lesson 04b: where a forward's time goes", "<p>x</p>", paper="a4")
    style = page[page.index("<style>") : page.index("</style>")]
    assert "content: \"Lesson 04b: where a forward's time goes " in style and "&#" not in style
    hostile = html_document('say "hi" \\ </style><script>x</script>', "<p>x</p>", paper="a4")
    assert hostile.count("</style>") == 1 and '\\"hi\\" \\\\ \\3C /style>' in hostile


def fake_fc_list(folder: Path, fonts_for: dict[str, str]) -> str:
    """A PATH whose fc-list answers `fc-list :lang=xx family` from fonts_for (else nothing)."""
    folder.mkdir(exist_ok=True)
    script = folder / "fc-list"
    cases = "".join(f'  ":lang={lang}") echo "{family}" ;;\n' for lang, family in fonts_for.items())
    script.write_text(f'#!/bin/sh\ncase "$1" in\n{cases}esac\n', encoding="utf-8")
    script.chmod(0o755)
    return f"{folder}{os.pathsep}/usr/bin{os.pathsep}/bin"


@pytest.mark.skipif(sys.platform == "win32", reason="a shell script stands in for fc-list")
def test_a_language_without_a_font_is_named_after_the_build(tmp_path, monkeypatch, capsys):
    """Without fonts-noto-cjk every Chinese letter of the zh PDFs printed as an empty box,
    and the build reported success without a word (a teacher's print run of 30 copies)."""
    import speclab.handouts as handouts
    from speclab.chromium import languages_without_a_font

    monkeypatch.setenv("PATH", fake_fc_list(tmp_path / "bin", {"fa": "DejaVu Sans"}))
    assert languages_without_a_font({"en", "zh", "fa"}) == ["zh"]
    monkeypatch.setenv("PATH", fake_fc_list(tmp_path / "bin", {"fa": "X", "zh": "Noto Sans CJK"}))
    assert languages_without_a_font({"en", "zh", "fa"}) == []
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no fontconfig at all: no telling
    assert languages_without_a_font({"zh"}) == []

    pdf = tmp_path / "out" / "zh" / "01-a4.pdf"
    built = [handouts.Built(pdf, pdf, (pdf,), "t", "zh"), handouts.Built(pdf, pdf, (), "t", "fa")]
    monkeypatch.setattr(handouts, "build_all", lambda *args, **kwargs: built)
    monkeypatch.setenv("PATH", fake_fc_list(tmp_path / "bin", {"fa": "DejaVu Sans"}))
    out = tmp_path / "out"
    assert cli.main(["handouts", "--lessons", str(LESSONS), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "no font here holds Chinese letters" in err and "apt-get install fonts-noto-cjk" in err
    assert "Persian" not in err  # its page printed no PDF: nothing to say of it


def test_a_persian_table_cell_reads_right_to_left_in_any_page(tmp_path):
    """The glossary is an English page with a Persian column: its cells were laid out left to
    right, so the English gloss in brackets came first for a Persian reader."""
    table = (
        "| term | فارسی |\n|---|---|\n"
        "| KV cache | حافظهٔ کلید و مقدار (KV cache) |\n"
        "| rollback | <bdi>برگرداندن</bdi> (rollback) |\n"
        "| α | ۰٫۵ |\n"
    )
    body = " ".join(render_body(table, tmp_path, "figures").split())
    assert '<th dir="rtl"> فارسی</th>' in body and "<th> term</th>" in body
    # the English gloss in brackets is one left-to-right piece: its brackets do not turn round
    assert '<td dir="rtl"> حافظهٔ کلید و مقدار <bdi dir="ltr">(KV cache)</bdi></td>' in body
    assert '<td dir="rtl"> <bdi>برگرداندن</bdi> <bdi dir="ltr">(rollback)</bdi></td>' in body
    assert "<td> ۰٫۵</td>" in body  # digits alone: no direction of their own
    assert "<td> KV cache</td>" in body  # an English cell as it was
    # only text is touched: not a link's address, a code span, or Persian in brackets
    hostile = (
        "| x | فارسی |\n|---|---|\n"
        "| a | [حافظه](https://en.wikipedia.org/wiki/Cache_(computing)) |\n"
        "| b | تابع `forward(params)` |\n"
        "| c | گام (مقدار k در هر دور) |\n"
    )
    body = render_body(hostile, tmp_path, "figures")
    assert 'href="https://en.wikipedia.org/wiki/Cache_(computing)"' in body
    assert "<code>forward(params)</code>" in body
    assert "گام (مقدار k در هر دور)" in body and body.count("<bdi") == 0
