"""Printable handouts: the lessons' Markdown as print-ready HTML, and PDF on A4 and Letter.

`make handouts` (or `speclab handouts`) turns every `lessons/*.md` into
`build/handouts/NAME.html`, and every answer key `lessons/answers/*.md` into
`build/handouts/answers/NAME.html`, so a teacher can print the exercises without the
answers. Where `/usr/bin/chromium` exists (Debian's package), each page is also printed to
`NAME-a4.pdf` and `NAME-letter.pdf` by headless Chromium. `build/handouts/index.html`
links everything. Which folder `--out` may name, and what a rebuild removes there:
`speclab.handout_folder`.

Figures: a handout asks for a figure from `speclab.figures` with an image whose address
starts with `figure:`, naming the function without its `_figure` suffix and giving its
keyword arguments as a query string:

    ![One round: draft 4, verify 4, accept 2](figure:draft_verify?k=4&accepted=2)

draws `speclab.figures.draft_verify_figure(k=4, accepted=2)` into
`build/handouts/figures/` as SVG (crisp in print) and shows it with the alt text as its
caption. Values are read as int, float, `true`/`false`, a comma list of numbers
(`cases=0,2,4`) or else text (`draft=ABX`, `prefix=`); `%20` is a space. Reading, naming and drawing
a figure: `speclab.handout_figures`. Pasted
screenshots are not needed and not wanted: the figure is redrawn from the code. An image
file (`![x](photo.png)`) is refused, naming its line: the build does not copy it, so it would
show broken; a web address is linked as it is.

Answers stay out of handouts: the build stops when a handout shares anything with its answer
key (`speclab.answer_check`).

Print rules (CSS `@media print`): A4 and Letter, 16 mm margins, page numbers in the
page footer; an "Exercise ..." section (from its `##` heading to the next) on one page
when it fits; no table or figure split, no heading or its first paragraph split from
what follows, and no paragraph split from the table it leads to; runs of four or more underscores become writing lines, and so does a line
of only underscores (Markdown's thematic break). Left out: other paper sizes, two-sided
layout, fonts beyond the system's DejaVu/Liberation and Noto families, any network access.

Languages: `lessons/zh/` and `lessons/fa/` (with their own `answers/`) are built the same
way into `build/handouts/zh/` and `build/handouts/fa/`, each page with `lang` and `dir` on
<html> (Persian right to left: Chromium shapes and orders it itself), the Noto CJK or Noto
Arabic fonts first, and its banner and page footer in its language.
"""

import argparse
import contextlib
import errno
import html
import os
import re
import shutil
import sys
import tempfile
import unicodedata
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from speclab import chromium, i18n
from speclab.answer_check import check_no_answers, markdown_parser
from speclab.cli import path_argument, sigterm_stops_cleanly
from speclab.handout_figures import FIGURE_SCHEME, available_figures, draw_figure, parse_figure
from speclab.handout_folder import (
    LOCK,
    STAGE_PREFIX,
    TRANSLATED,
    HandoutError,
    check_out_dir,
    clear_earlier_build,
    list_written_files,
    read_text_file,
)
from speclab.render import counted
from speclab.report_files import first_missing, one_at_a_time, remove_if_unused, unlisted
from speclab.student_files import printable, shown

PAPERS = {"a4": "A4", "letter": "letter"}  # file suffix -> CSS @page size
BLANK = re.compile(r"_{4,}")
LONG_TABLE_ROWS = 20  # a table with more rows may break across pages (the glossary's)
# An exercise's section is printed on one page if it fits: its heading in each language.
EXERCISE_HEADING = re.compile(r"\s*(?:exercise\b|练习|تمرین)", re.IGNORECASE)


FONTS = {
    "en": '"DejaVu Sans", "Liberation Sans", Arial, sans-serif',
    "zh": '"Noto Sans CJK SC", "Noto Sans SC", "DejaVu Sans", sans-serif',
    "fa": '"Noto Naskh Arabic", "Noto Sans Arabic", "DejaVu Sans", sans-serif',
}
WORDS = {  # the words a page itself adds, per language
    "en": ("Answer key: for the teacher, not for handing out.", "page", "of"),
    "zh": ("答案：供教师使用，不要发给学生。", "第", "页，共"),
    "fa": ("پاسخ‌نامه: برای معلم، نه برای پخش میان دانش‌آموزان.", "صفحهٔ", "از"),
}
# Pages for the teacher that are not answer keys: listed apart in the index, with a banner.
TEACHER_PAGES = {"teacher-guide": "Teacher guide: for the teacher, not for handing out (it gives answers away)."}  # fmt: skip
RTL_STYLE = """
html[dir="rtl"] th, html[dir="rtl"] td { text-align: right; }
html[dir="rtl"] code, html[dir="rtl"] pre { direction: ltr; unicode-bidi: isolate; }
/* <bdi> holds a formula or a board typed as data: left to right, never split over two lines
   (its halves would swap places); a table cell of numbers alone (a board) reads left to right. */
html[dir="rtl"] bdi { direction: ltr; white-space: nowrap; }
html[dir="rtl"] td { unicode-bidi: plaintext; }
"""


STYLE = """
:root { --ink: #111; --rule: #888; --answers: #D55E00; }
html { font-family: "DejaVu Sans", "Liberation Sans", Arial, sans-serif; color: var(--ink); }
body { max-width: 52em; margin: 2em auto; padding: 0 1.5em; line-height: 1.45; font-size: 12pt; }
h1 { font-size: 1.6em; margin: 0 0 0.6em; border-bottom: 2px solid var(--ink); }
h2 { font-size: 1.2em; margin: 1.4em 0 0.4em; }
h3 { font-size: 1.05em; margin: 1.1em 0 0.3em; }
code { font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 0.92em; }
pre { background: #f4f4f4; padding: 0.6em; overflow-x: auto; white-space: pre-wrap; }
table { border-collapse: collapse; margin: 0.6em 0 1em; }
th, td { border: 1px solid var(--rule); padding: 0.3em 0.6em; text-align: left;
  vertical-align: top; }
th[dir="rtl"], td[dir="rtl"] { text-align: right; }
th { background: #eee; }
.blank { display: inline-block; border-bottom: 1px solid var(--ink); height: 1.1em;
  vertical-align: bottom; max-width: 100%; }
p.write { margin-top: 1.6em; }
/* A line of ____ is a Markdown <hr>: where to write an answer. Alone, it is drawn as two lines
   1.9em apart (a "why?" needs more than one line of handwriting); a run of them, as drawn. */
hr { border: 0; border-top: 1px solid var(--ink); border-bottom: 1px solid var(--ink);
  height: 1.9em; margin: 2em 0 0.5em; }
hr:has(+ hr), hr + hr { border-bottom: 0; height: 0; margin-bottom: 1.9em; }
hr + hr { margin-top: 0; }
p.write .blank { width: 100% !important; }
.figure { display: block; margin: 0.8em 0 1.2em; text-align: center; }
.figure img { max-width: 100%; max-height: 11cm; }
.figure .caption { display: block; font-size: 0.9em; font-style: italic; margin-top: 0.3em; }
.answers-banner { border: 2px solid var(--answers); color: var(--answers); font-weight: bold;
  padding: 0.3em 0.6em; margin-bottom: 1em; }
nav.index li { margin: 0.3em 0; }
@page { margin: 16mm 16mm 18mm; }
@media print {
  body { max-width: none; margin: 0; padding: 0 1px; font-size: 11pt; } /* 1px: table borders */
  h1, h2, h3 { break-after: avoid; page-break-after: avoid; }
  section.exercise, table, tr, .figure, pre, blockquote {
    break-inside: avoid; page-break-inside: avoid; }
  table.long { break-inside: auto; page-break-inside: auto; } /* its header repeats instead */
  /* a heading, its first paragraphs and the table they lead to stay together (the teacher
     guide's Goal, Materials and timing table) */
  h2 + p, h3 + p, p:has(+ table) { break-after: avoid; page-break-after: avoid; }
  h2 + p, h3 + p, h2 + p + p:has(+ table) { break-inside: avoid; page-break-inside: avoid; }
  p, li { orphans: 3; widows: 3; }
  a { color: inherit; text-decoration: none; }
  th { background: #eee; -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"""


def _blank_lines(escaped: str) -> str:
    """Runs of underscores become writing lines about as long as the run."""
    return BLANK.sub(
        lambda run: f'<span class="blank" style="width: {0.62 * len(run.group()):.1f}em"></span>',
        escaped,
    )


# "(KV cache)" in a right-to-left cell: kept one left-to-right piece, so that its brackets do
# not turn round and its words stay in order when the cell wraps in the middle of it
LATIN_IN_BRACKETS = re.compile(r"\([^()<>]*[A-Za-z][^()<>]*\)")


def _left_to_right(bracketed: re.Match) -> str:
    """A bracketed English gloss as one left-to-right piece; Persian in brackets stays as it is
    ("(مقدار k در هر دور)" read left to right would reverse its words)."""
    if any(unicodedata.bidirectional(char) in ("R", "AL") for char in bracketed.group()):
        return bracketed.group()
    return f'<bdi dir="ltr">{bracketed.group()}</bdi>'


def right_to_left(text: str) -> bool:
    """Whether text's first strong letter (tags left out) is of a right-to-left script: a
    Persian table cell in an English page was laid out left to right, so "(KV cache)" after
    its Persian term stood on the side a Persian reader reaches first."""
    for char in re.sub(r"<[^>]*>", "", text):
        kind = unicodedata.bidirectional(char)
        if kind in ("L", "R", "AL"):
            return kind != "L"
    return False


def render_body(markdown: str, figure_dir: Path, figure_href: str) -> str:
    """The Markdown as HTML (body only), figures drawn into figure_dir and linked by figure_href."""
    md = markdown_parser()

    def text(renderer, tokens, index, options, env):
        escaped = _blank_lines(html.escape(tokens[index].content, quote=False))
        if env.get("rtl_cell"):  # text alone: no attribute, no code span, no link address
            escaped = LATIN_IN_BRACKETS.sub(_left_to_right, escaped)
        return escaped

    def image(renderer, tokens, index, options, env):
        token = tokens[index]
        src = token.attrGet("src") or ""
        caption = html.escape(token.content)
        if src.startswith(FIGURE_SCHEME):
            try:
                path = draw_figure(parse_figure(src), figure_dir)
            except HandoutError as error:
                line = env.get("line")
                raise HandoutError(f"line {line}: {error}" if line else str(error)) from error
            src = f"{figure_href}/{path.name}"
        elif not src.startswith(("http://", "https://", "data:")):  # a file: never copied in
            line = env.get("line")
            raise HandoutError(
                f"{f'line {line}: ' if line else ''}image {src!r}: a build does not copy image "
                "files, so it would show broken; draw a speclab figure with figure:NAME "
                "(speclab handouts --list-figures) or give a web address"
            )
        return (
            f'<span class="figure"><img src="{html.escape(src)}" alt="{caption}">'
            f'<span class="caption">{caption}</span></span>'
        )

    md.add_render_rule("text", text)
    md.add_render_rule("image", image)
    parts, in_section = [], False
    tokens = md.parse(markdown)
    for index, token in enumerate(tokens):  # block by block, so an error can name its line
        if token.type == "heading_open" and token.tag == "h2":  # each h2 opens a section
            exercise = EXERCISE_HEADING.match(tokens[index + 1].content)
            parts.append("</section>\n" if in_section else "")
            parts.append('<section class="exercise">\n' if exercise else "<section>\n")
            in_section = True
        if token.type == "table_open":
            end = next(i for i in range(index, len(tokens)) if tokens[i].type == "table_close")
            rows = sum(t.type == "tr_open" for t in tokens[index:end])
            if rows > LONG_TABLE_ROWS:  # kept whole, it would leave a page blank before it
                token.attrSet("class", "long")
        if token.type in ("td_open", "th_open") and right_to_left(tokens[index + 1].content):
            token.attrSet("dir", "rtl")  # the glossary's Persian cells read from the right
        in_rtl_cell = index > 0 and tokens[index - 1].attrGet("dir") == "rtl"  # its text, next
        env = {"line": token.map[0] + 1 if token.map else None, "rtl_cell": in_rtl_cell}
        parts.append(md.renderer.render([token], md.options, env))
    if in_section:
        parts.append("</section>\n")
    # A paragraph that is only writing lines gets room to write in.
    return re.sub(
        r"<p>((?:<span class=\"blank\"[^>]*></span>\s*)+)</p>",
        r'<p class="write">\1</p>',
        "".join(parts),
    )


def page_title(markdown: str, fallback: str) -> str:
    match = re.search(r"^#\s+(.+?)\s*#*\s*$", markdown, flags=re.M)
    return match.group(1) if match else fallback


def css_string(text: str) -> str:
    """text inside a CSS string ("..."): a <style> element decodes no HTML entities, so the
    04b footer had printed "where a forward&#x27;s time goes"; quotes, backslashes, line
    breaks and "<" (no "</style>" can end the element) are CSS escapes instead."""
    escapes = {"\\": "\\\\", '"': '\\"', "\n": "\\A ", "<": "\\3C "}
    return "".join(escapes.get(char, char) for char in text)


def html_document(
    title: str,
    body: str,
    paper: str | None = None,
    answers: bool = False,
    lang: str = "en",
    teacher_banner: str = "",
) -> str:
    """A whole page; paper (a PAPERS key) fixes the printed page size, None leaves it to the printer.

    lang ("en", "zh", "fa") sets <html lang dir>, the fonts and the page's own words;
    teacher_banner, a page for the teacher that is not an answer key (TEACHER_PAGES).
    """
    from speclab.i18n import DIRECTION

    size = f"@page {{ size: {PAPERS[paper]}; }}" if paper else ""
    footer = css_string(title)
    banner_text, page_word, of_word = WORDS[lang]
    banner_text = banner_text if answers else html.escape(teacher_banner)
    banner = f'<div class="answers-banner">{banner_text}</div>' if banner_text else ""
    corner = "bottom-left" if DIRECTION[lang] == "rtl" else "bottom-right"
    digits = ", persian" if lang == "fa" else ""  # the page number as the prose writes it
    between = "\\2014" if lang == "fa" else "\\00B7"  # a · beside Persian text reads as ۰
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="{lang}" dir="{DIRECTION[lang]}">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>{STYLE}{RTL_STYLE}\nhtml {{ font-family: {FONTS[lang]}; }}\n{size}\n"
        f'@page {{ @{corner} {{ content: "{footer} {between}  {page_word} " counter(page{digits}) '
        f'" {of_word} " counter(pages{digits}); font-size: 8pt; color: #555; }} }}\n'
        "</style>\n</head>\n"
        f'<body class="{"answers" if answers else "handout"}">\n{banner}{body}</body>\n</html>\n'
    )


# --- building -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Built:
    """One page built: its source, its HTML and the PDFs printed from it."""

    source: Path
    html: Path
    pdfs: tuple[Path, ...]
    title: str
    lang: str = "en"


def build_page(
    source: Path,
    out_dir: Path,
    figure_dir: Path,
    pdf: bool,
    answers: bool = False,
    lang: str = "en",
) -> Built:
    """One Markdown file -> out_dir/NAME.html (+ NAME-a4.pdf, NAME-letter.pdf when pdf)."""
    markdown = read_text_file(source)
    title = page_title(markdown, source.stem)
    out_dir.mkdir(parents=True, exist_ok=True)
    figure_href = Path(*[".."] * len(out_dir.relative_to(figure_dir.parent).parts), "figures")
    try:
        body = render_body(markdown, figure_dir, figure_href.as_posix())
    except HandoutError as error:
        raise HandoutError(f"{source}: {error}") from error
    html_path = out_dir / f"{source.stem}.html"
    teacher = "" if answers else TEACHER_PAGES.get(source.stem, "")
    html_path.write_text(
        html_document(title, body, answers=answers, lang=lang, teacher_banner=teacher),
        encoding="utf-8",
    )
    pdfs = []
    if pdf:
        for paper in PAPERS:
            page = out_dir / f".{source.stem}.{paper}.html"  # with its paper size
            page.write_text(
                html_document(title, body, paper, answers, lang, teacher), encoding="utf-8"
            )
            try:
                pdf_path = out_dir / f"{source.stem}-{paper}.pdf"
                chromium.print_pdf(page, pdf_path)
                pdfs.append(pdf_path)
            finally:
                page.unlink(missing_ok=True)
    return Built(source, html_path, tuple(pdfs), title, lang)


def build_all(
    lessons_dir: Path, out_dir: Path, pdf: bool | None = None, done: list | None = None
) -> list[Built]:
    """lessons/*.md -> out_dir/*.html, lessons/answers/*.md -> out_dir/answers/*.html, + PDFs.

    pdf=None prints PDFs exactly when Chromium is installed. `done`, if given, gets out_dir
    appended the moment the new build is in place: a Ctrl-C after that moment, on the way
    out, must not be reported as one that left the earlier build.
    """
    if lessons_dir.exists() and not lessons_dir.is_dir():
        raise HandoutError(f"{lessons_dir} is a file: give --lessons a folder of .md files")
    if not lessons_dir.exists():
        from speclab.report_files import broken_link

        problem = broken_link(lessons_dir) or "does not exist"
        raise HandoutError(f"{lessons_dir} {problem}: give --lessons a folder of .md files")
    if reason := unlisted(lessons_dir):  # else read as a folder with no lessons
        raise HandoutError(f"{lessons_dir}: folder cannot be listed ({reason})")
    if not lessons_dir.is_dir() or not any(lessons_dir.glob("*.md")):
        raise HandoutError(f"no lessons in {lessons_dir}: give --lessons a folder of .md files")
    pdf = chromium.chromium_available() if pdf is None else pdf
    if pdf and not chromium.chromium_available():
        raise HandoutError(f"PDFs need {chromium.CHROMIUM} (Debian: apt-get install chromium)")
    languages = [("en", lessons_dir, out_dir)] + [
        (lang, lessons_dir / lang, out_dir / lang)
        for lang in TRANSLATED
        if (lessons_dir / lang).is_dir()
    ]
    for _, source_dir, _ in languages:
        check_no_answers(source_dir)
    if taken := [path for path in lessons_dir.glob("*.md") if path.stem.lower() == "index"]:
        raise HandoutError(
            f"{taken[0]}: index.html is the list of pages this build writes; "
            "give the lesson another name"
        )
    check_out_dir(out_dir, lessons_dir, _files_a_build_writes(languages))  # before mkdir
    out_dir.mkdir(parents=True, exist_ok=True)
    busy = (f"another handouts build is writing to {out_dir}; wait for it to end, or give "
            "another --out")  # fmt: skip
    with one_at_a_time(out_dir, busy, "--out", LOCK, HandoutError):
        return _build_in(out_dir, lessons_dir, languages, pdf, [] if done is None else done)


def _build_in(out_dir: Path, lessons_dir: Path, languages, pdf: bool, done: list) -> list[Built]:
    """build_all's work, with out_dir made and locked."""
    earlier = check_out_dir(out_dir, lessons_dir, _files_a_build_writes(languages))
    # Built in a hidden folder inside out_dir (the same disk: a move is a rename), then moved
    # in: a build that stops halfway (a bad figure, Ctrl-C) leaves the earlier build whole.
    for leftover in out_dir.glob(f"{STAGE_PREFIX}*"):  # from a build killed outright
        shutil.rmtree(leftover, ignore_errors=True)
    stage = None
    try:
        with _not_stopped():  # made and named at once: a stop between would leave it behind
            stage = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=out_dir))
        built = [
            build_page(
                source,
                stage / folder.relative_to(out_dir),
                stage / "figures",
                pdf,
                answers=answers,
                lang=lang,
            )  # fmt: skip
            for lang, source, folder, answers in _pages(languages)
        ]
        write_index(built, stage)
        new_files = [path.relative_to(stage) for path in stage.rglob("*") if path.is_file()]
        with _not_stopped():  # a stop between the old build's removal and the new one's move
            clear_earlier_build(out_dir, earlier)  # in would leave half of each: milliseconds
            list_written_files(out_dir, [out_dir / name for name in new_files])
            for name in new_files:
                (out_dir / name).parent.mkdir(parents=True, exist_ok=True)
                (stage / name).replace(out_dir / name)
            done.append(out_dir)
    finally:  # (a stop in the instant before this line still leaves it: the next build
        # removes it, as one from a build killed outright)
        with _not_stopped():  # a stop in the middle would leave half of it
            if stage is not None:
                shutil.rmtree(stage, ignore_errors=True)

    def moved(path: Path) -> Path:
        return out_dir / path.relative_to(stage)

    return [
        Built(page.source, moved(page.html), tuple(map(moved, page.pdfs)), page.title)
        for page in built
    ]


@contextlib.contextmanager
def _not_stopped():
    """Ctrl-C and SIGTERM ignored for the moment the new build replaces the old one, so that
    --out holds one whole build, the old or the new, as `handouts` says when it stops."""
    import signal

    stops = [signal.SIGINT] + [signal.SIGTERM] * hasattr(signal, "SIGTERM")
    try:
        earlier = {stop: signal.signal(stop, signal.SIG_IGN) for stop in stops}
    except ValueError:  # not the main thread: signals go to the main thread anyway
        earlier = {}
    try:
        yield
    finally:
        for stop, handler in earlier.items():
            signal.signal(stop, handler)


def _pages(languages: list[tuple[str, Path, Path]]):
    """(lang, lesson, its folder in --out, is it an answer key) for every page of a build.

    languages: (lang, lesson folder, its folder in --out), as in build_all.
    """
    for lang, source_dir, target_dir in languages:
        for folder in (source_dir, source_dir / "answers"):  # glob sees such a one as empty
            if folder.is_dir() and (reason := unlisted(folder)):
                raise HandoutError(f"{folder}: folder cannot be listed ({reason})")
        for source in sorted(source_dir.glob("*.md")):
            yield lang, _named_in_text(source), target_dir, False
        for source in sorted((source_dir / "answers").glob("*.md")):
            yield lang, _named_in_text(source), target_dir / "answers", True


def _named_in_text(source: Path) -> Path:
    """source, whose name a page and the index can write: a name whose bytes are not UTF-8
    (from a Windows zip, say) is refused, as is one that this Python cannot read as text."""
    try:
        source.name.encode("utf-8")
        return source
    except UnicodeEncodeError:  # undecodable bytes, kept as surrogates by Python
        pass
    try:
        os.fsencode(source.name).decode("utf-8")
    except UnicodeDecodeError:
        raise HandoutError(
            f"{shown(str(source))}: its file name is not UTF-8 text; rename it"
        ) from None
    raise HandoutError(  # a C locale with PYTHONUTF8=0: file names are read as ASCII
        f"{shown(str(source))}: this Python reads file names as ASCII; set PYTHONUTF8=1 (or a "
        "UTF-8 locale such as C.UTF-8) and build again"
    )


def _files_a_build_writes(languages: list[tuple[str, Path, Path]]) -> list[Path]:
    """The index, and every page and PDF a build of these lessons writes (figures aside)."""
    files = [languages[0][2] / "index.html"]
    for _, source, folder, _ in _pages(languages):
        files.append(folder / f"{source.stem}.html")
        files += [folder / f"{source.stem}-{paper}.pdf" for paper in PAPERS]
    return files


def write_index(built: list[Built], out_dir: Path) -> Path:
    """out_dir/index.html: every page with its PDFs, handouts first, answer keys apart."""

    def href(path: Path) -> str:  # a lesson named "q#1.md" or "50%.md" links to itself
        return urllib.parse.quote(path.relative_to(out_dir).as_posix())

    def item(page: Built) -> str:
        links = [f'<a href="{href(page.html)}">HTML</a>']
        links += [
            f'<a href="{href(pdf)}">PDF {pdf.stem.rsplit("-", 1)[1]}</a>' for pdf in page.pdfs
        ]
        return f"<li>{html.escape(page.title)}: {' · '.join(links)}</li>"

    def translated_section(lang: str) -> str:
        """A language's pages, its handouts apart from its answer keys as in English."""
        pages = [page for page in built if page.html.relative_to(out_dir).parts[:1] == (lang,)]
        if not pages:
            return ""
        keys_of_lang = [p for p in pages if p.html.parent.name == "answers" or _for_teacher(p)]
        handouts_of_lang = [page for page in pages if page not in keys_of_lang]
        return (
            f"<h2><span lang='{lang}'>{i18n.NAMES[lang]}</span> ({lang})</h2>\n<h3>For students</h3>\n<ul lang='{lang}'>"
            + "".join(map(item, handouts_of_lang))
            + f"</ul>\n<h3>For the teacher (print separately)</h3>\n<ul lang='{lang}'>"
            + "".join(map(item, keys_of_lang))
            + "</ul>\n"
        )

    def _for_teacher(page: Built) -> bool:  # the teacher guide (answers/ pages are keys)
        return page.html.stem in TEACHER_PAGES

    top = [page for page in built if page.html.parent == out_dir]
    handouts = [page for page in top if not _for_teacher(page)]
    for_teacher = [page for page in top if _for_teacher(page)]
    keys = [page for page in built if page.html.parent == out_dir / "answers"]
    translated = "".join(translated_section(lang) for lang in TRANSLATED)
    body = (
        "<h1>speclab handouts</h1>\n<nav class='index'>\n<h2>For students</h2>\n<ul>"
        + "".join(map(item, handouts))
        + "</ul>\n<h2>For the teacher (print separately)</h2>\n<ul>"
        + "".join(map(item, for_teacher + keys))
        + "</ul>\n"
        + translated
        + "</nav>\n"
    )
    path = out_dir / "index.html"
    path.write_text(html_document("speclab handouts", body), encoding="utf-8")
    return path


# --- command line -------------------------------------------------------------------------


EXIT_STATUS = "0 built, 1 a lesson, figure or folder that cannot be built, 2 a bad argument"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from speclab.paths import repo_root

    root = repo_root()
    parser.add_argument(
        "--lessons",
        type=path_argument,
        default=root / "lessons",
        help="lesson folder (default: lessons/ of this checkout)",
    )
    parser.add_argument(
        "--out",
        type=path_argument,
        default=root / "build" / "handouts",
        help="output folder (default: build/handouts/ of this checkout)",
    )
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument(
        "--pdf",
        action="store_true",
        help="PDFs too (fails without Chromium; default: PDFs when Chromium is installed)",
    )
    choice.add_argument("--no-pdf", dest="pdf", action="store_false", help="HTML only")
    parser.set_defaults(pdf=None)  # PDFs exactly when Chromium is installed
    parser.add_argument(
        "--list-figures", action="store_true", help="print the names usable after figure:"
    )


def run(args: argparse.Namespace) -> int:
    if args.list_figures:
        print("\n".join(available_figures()))
        return 0
    restore = sigterm_stops_cleanly()  # `kill` or `timeout`: the hidden build folder removed too
    made = first_missing(Path(args.out))  # a failed build leaves no empty folders it made
    done = []  # args.out, once the new build is in place
    try:
        built = build_all(args.lessons, args.out, pdf=args.pdf, done=done)
        args.saved = (Path(args.out) / "index.html",)  # named by speclab's main if stdout fails
    except HandoutError as error:
        print(printable(f"handouts: {error}"), file=sys.stderr)
        return 1
    except MemoryError:
        print(f"handouts: not enough memory to build the handouts; {shown(str(args.out))} is "
              "left as it was", file=sys.stderr)  # fmt: skip
        return 1
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: speclab's main says "interrupted"
        if done:  # it came on the way out: the build was already whole in --out
            print(f"handouts: stopped after the build was written; {shown(str(args.out))} "
                  "holds it whole", file=sys.stderr)  # fmt: skip
        else:
            print(f"handouts: stopped; the pages built so far are discarded and "
                  f"{shown(str(args.out))} is left as it was", file=sys.stderr)  # fmt: skip
        raise
    except OSError as error:  # a read-only or full disk, a folder where a file must go
        if error.errno == errno.ENAMETOOLONG:  # --lessons or --out: speclab's main names it
            raise
        name = error.filename
        if name and STAGE_PREFIX in str(name):  # the hidden folder a build is made in
            name = args.out
        where = f" ({name})" if name else ""
        print(
            printable(f"handouts: cannot write the handouts{where}: {error.strerror or error}"),
            file=sys.stderr,
        )
        return 1
    finally:
        restore()
        remove_if_unused(Path(args.out), made, LOCK)
    n_pdfs = sum(len(page.pdfs) for page in built)
    printed = {page.lang for page in built if page.pdfs}
    for lang in chromium.languages_without_a_font(printed):
        print(f"handouts: no font here holds {chromium.LANGUAGE_NAMES[lang]} letters, so the "
              f"{lang} PDFs print them as empty boxes; install one (Debian and Ubuntu: "
              f"apt-get install {chromium.FONT_PACKAGES[lang]}) and build again",
              file=sys.stderr)  # fmt: skip
    note = "" if n_pdfs or args.pdf is False else f" (no PDFs: {chromium.CHROMIUM} not found)"
    where = f"in {shown(str(args.out))}{note}; open {shown(str(args.out / 'index.html'))}"
    print(
        f"{counted(len(built), 'page')}, {counted(n_pdfs, 'PDF')} {where}"
    )  # a line break in a name shown as \n
    return 0


if __name__ == "__main__":  # `speclab handouts`, with the command's manners (Ctrl-C, pipes)
    from speclab.cli import console

    sys.argv[1:1] = ["handouts"]
    sys.exit(console())
