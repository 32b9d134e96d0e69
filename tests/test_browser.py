"""Every lesson notebook as a learner meets it: JupyterLab in headless Chromium.

Run with `make test-browser` (`pytest -m browser`); `make test` leaves it out. For each
notebook in notebooks/ (globbed, so new lessons are tested as they land): open it in
JupyterLab, run all cells, wait for the kernel, then assert that no cell shows an error,
that every widget output renders as a widget (no "Error displaying widget", no
"Model not found", no plain-text `IntSlider(...)` where a slider should be), and that
moving the notebook's first slider one step (arrow key on its handle) changes the text or
picture in that cell; a notebook without sliders gets a character typed into its first
text box instead. Last, JupyterLab's log console must show no error: a widget callback
that raises shows its traceback only there. Screenshots go to build/screenshots/: NAME.png (the whole notebook after
run-all), NAME-widget.png (one screen at the first widget) and NAME-after-change.png.

Without /usr/bin/chromium these tests are skipped, unless SPECLAB_REQUIRE_BROWSER=1 (as
in .ci/run), where a missing browser is a failure. `SPECLAB_README_SCREENSHOT=1 make
test-browser` also copies README_FROM's widget screenshot to docs/screenshot.png, the image
README.md opens with (commit it when a lesson's look changes).
"""

import os
import re
import shutil
import time
from pathlib import Path

import pytest
from browser_support import (
    CHROMIUM,
    SLIDER,
    TEXT_BOX,
    WIDGET_ERRORS,
    WIDGET_MIME,
    chromium,
    edit_text_box,
    federated_extensions,
    jupyter_lab,
    logged_errors,
    move_slider,
    notebook_report,
    open_notebook,
    run_all_cells,
    screenshot_at,
    screenshot_notebook,
)

from speclab.paths import repo_root

pytestmark = pytest.mark.browser

# SPECLAB_BROWSER_NOTEBOOKS=DIR tests the notebooks in another folder (for debugging).
NOTEBOOK_DIR = Path(os.environ.get("SPECLAB_BROWSER_NOTEBOOKS") or repo_root() / "notebooks")
NOTEBOOKS = sorted(NOTEBOOK_DIR.rglob("*.ipynb"))  # the zh/ and fa/ translations too
TRANSLATED = ("zh", "fa")
# A lower-case English word of three letters or more (capitals alone are path symbols).
ENGLISH_WORD = re.compile(r"\b(?![A-Z]+\b)[A-Za-z]{3,}\b")
SCREENSHOTS = repo_root() / "build" / "screenshots"
README_SCREENSHOT = repo_root() / "docs" / "screenshot.png"
README_FROM = "03_forward_arithmetic"  # its sliders over Eq. 1: what README.md opens with
WIDGETS_EXTENSION = "@jupyter-widgets/jupyterlab-manager"  # the lab extension of ipywidgets
RUN_TIMEOUT_S = 900.0  # per notebook; lessons 04-07 time real forwards on 2 cores
# In a widget's plain-text repr (what shows when the widget extension is missing).
SLIDER_REPR = re.compile(r"\b(?:Int|Float|FloatLog)(?:Range)?Slider\(")


def _require_chromium():
    if CHROMIUM.exists():
        return
    message = f"{CHROMIUM} is missing (Debian: apt-get install chromium)"
    if os.environ.get("SPECLAB_REQUIRE_BROWSER") == "1":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    _require_chromium()
    with jupyter_lab(NOTEBOOKS, tmp_path_factory.mktemp("jupyter"), base=NOTEBOOK_DIR) as server:
        yield server


@pytest.fixture(scope="module")
def browser(lab, tmp_path_factory):
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as context:
        yield context


@pytest.fixture
def page(browser, lab):
    page = browser.new_page()
    try:
        yield page
    finally:
        page.close()
        lab.shut_down_sessions()


def test_there_are_notebooks_to_open():
    assert NOTEBOOKS, f"no notebooks in {NOTEBOOK_DIR}"


def _timeout_for(notebook) -> float:
    import json

    metadata = json.loads(notebook.read_text(encoding="utf-8")).get("metadata", {})
    return float(metadata.get("execution", {}).get("timeout") or RUN_TIMEOUT_S)


def _name(notebook: Path) -> str:
    return notebook.relative_to(NOTEBOOK_DIR).as_posix()


_LAYOUT = """
(name) => {
  const panel = [...window.jupyterapp.shell.widgets('main')]
    .find((w) => w.context && w.context.path === name && w.content);
  const node = panel.content.node;
  const blocks = [...node.querySelectorAll('.jp-MarkdownOutput > div[dir]')].map((block) => {
    const paragraph = [...block.querySelectorAll('p, li')].find((p) => p.innerText.trim());
    let textRight = null, boxRight = null, boxLeft = null, textLeft = null;
    if (paragraph) {
      const range = document.createRange();
      range.selectNodeContents(paragraph);
      const lines = [...range.getClientRects()];
      const box = paragraph.getBoundingClientRect();
      textRight = Math.max(...lines.map((r) => r.right));
      textLeft = Math.min(...lines.map((r) => r.left));
      boxRight = box.right; boxLeft = box.left;
    }
    const ltr = [...block.querySelectorAll('code')]
      .map((e) => [e.innerText, getComputedStyle(e).direction,
                   getComputedStyle(e).unicodeBidi]);
    return {dir: block.getAttribute('dir'), lang: block.getAttribute('lang'),
            direction: getComputedStyle(block).direction, text: block.innerText.slice(0, 80),
            textRight, boxRight, textLeft, boxLeft, ltr,
            align: paragraph ? getComputedStyle(paragraph).textAlign : null,
            blockAlign: getComputedStyle(block).textAlign};
  });
  const markdown = node.querySelectorAll('.jp-MarkdownCell').length;
  const widgets = [...node.querySelectorAll('.jp-OutputArea-output > .jupyter-widgets')]
    .map((w) => w.innerText);
  return {blocks, markdown, widgets};
}
"""


def _language_problems(page, name: str, lang: str) -> list[str]:
    """A translated notebook as laid out: Persian Markdown right to left, no English widget."""
    shown = page.evaluate(_LAYOUT, name)
    problems = []
    if lang == "fa":
        if len(shown["blocks"]) < shown["markdown"]:
            problems.append(
                f"{shown['markdown']} Markdown cells, {len(shown['blocks'])} rtl blocks"
            )
        for block in shown["blocks"]:
            if block["dir"] != "rtl" or block["direction"] != "rtl" or block["lang"] != "fa":
                problems.append(f"not laid out right to left: {block}")
            elif block["textRight"] is not None and abs(block["textRight"] - block["boxRight"]) > 3:
                problems.append(f"text does not start at the right edge: {block}")
            # `8, 56, 5, 90` read "90 ,5 ,56 ,8" in a right-to-left paragraph
            problems += [
                f"code {text!r} is not kept left to right ({direction}, {bidi})"
                for text, direction, bidi in block["ltr"]
                if (direction, bidi) != ("ltr", "isolate")
            ]
    if not shown["widgets"]:
        problems.append("no widget is shown")
    for text in shown["widgets"]:
        english = ENGLISH_WORD.findall(text)
        if english:
            problems.append(f"a widget shows English {english[:5]}: {text[:200]!r}")
    return problems


def _errors_shown(cells: list[dict]) -> list[str]:
    problems = []
    for cell in cells:
        where = f"cell {cell['index']}"
        for output in cell["outputs"]:
            if output["output_type"] == "error":
                problems.append(f"{where}: {output['ename']}: {output['evalue']}")
        for text in cell["stderr"]:
            if "Error" in text or "Traceback" in text:
                problems.append(f"{where} stderr: {text[:500]}")
    return problems


def _widget_problems(cells: list[dict]) -> list[str]:
    """Each widget output must render as a widget; a slider in its repr must be a slider."""
    problems = []
    for cell in cells:
        where = f"cell {cell['index']}"
        for text in (shown["text"] for shown in cell["shown"]):
            problems += [
                f"{where}: shows {error!r}: {text[:300]}"
                for error in WIDGET_ERRORS
                if error in text
            ]
        if len(cell["shown"]) != len(cell["outputs"]):
            problems.append(f"{where}: {len(cell['outputs'])} outputs, {len(cell['shown'])} shown")
            continue
        for output, shown in zip(cell["outputs"], cell["shown"], strict=True):
            if WIDGET_MIME not in output["mimes"]:
                if SLIDER_REPR.search(shown["text"]):
                    problems.append(f"{where}: a slider shown as text: {shown['text'][:300]}")
                continue
            if shown["mime"] is not None or not shown["widget_views"]:
                problems.append(
                    f"{where}: a widget shown as {shown['mime']}: {shown['text'][:300]}"
                )
            elif shown["height"] < 5:
                problems.append(f"{where}: a widget output is empty")
            elif SLIDER_REPR.search(output["plain"]) and not shown["sliders"]:
                problems.append(f"{where}: the widget has a slider, but no .widget-slider is shown")
    return problems


@pytest.mark.timeout(2 * RUN_TIMEOUT_S)  # a hung page fails the test; fixtures still clean up
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: _name(path))
def test_notebook_in_jupyterlab(notebook, lab, page):
    name = _name(notebook)  # its path under notebooks/: zh/01_quiz_game.ipynb
    shot_stem = name.removesuffix(".ipynb").replace("/", "-")  # fa-01_quiz_game
    started = time.monotonic()
    open_notebook(page, lab, name)
    assert WIDGETS_EXTENSION in federated_extensions(page), (
        f"{WIDGETS_EXTENSION} (package jupyterlab_widgets) was not loaded: "
        "is the venv's share/jupyter/labextensions on Jupyter's data path?"
    )
    finished_ok = run_all_cells(page, name, _timeout_for(notebook))
    cells = notebook_report(page, name)
    shot = SCREENSHOTS / f"{shot_stem}.png"
    screenshot_notebook(page, shot)

    errors = _errors_shown(cells)
    assert not errors, f"{name} shows errors (screenshot {shot}):\n" + "\n".join(errors)
    assert finished_ok, f"{name}: run-all stopped early (screenshot {shot})"
    not_run = [cell["index"] for cell in cells if cell["execution_count"] is None]
    assert not not_run, f"{name}: cells never ran: {not_run}"
    widget_problems = _widget_problems(cells)
    assert not widget_problems, f"{name} (screenshot {shot}):\n" + "\n".join(widget_problems)

    widgets = page.locator(".jp-Notebook .jp-OutputArea-output > .jupyter-widgets")
    if widgets.count():
        cell = widgets.first.locator("xpath=ancestor::div[contains(@class, 'jp-Cell ')][1]")
        widget_shot = SCREENSHOTS / f"{shot_stem}-widget.png"
        screenshot_at(page, cell, widget_shot)
        if os.environ.get("SPECLAB_README_SCREENSHOT") == "1" and notebook.stem == README_FROM:
            README_SCREENSHOT.parent.mkdir(exist_ok=True)
            shutil.copyfile(widget_shot, README_SCREENSHOT)

    if page.locator(SLIDER).count():
        moved = move_slider(page, name)
        label = moved["slider_before"]["description"]
        step = f"{moved['slider_before']['readout']} -> {moved['slider_after']['readout']}"
        assert moved["before"] != moved["after"], (
            f"{name}: slider {label!r} moved {step}, but its cell's text and pictures "
            f"stayed the same; kernel log: {logged_errors(page)[-1500:]}"
        )
    elif page.locator(TEXT_BOX).count():  # no slider: a text box drives the lesson's widget
        typed = edit_text_box(page, name)
        assert typed["before"] != typed["after"], (
            f"{name}: typed {typed['value_before']!r} -> {typed['value_after']!r}, but its "
            "cell's text and pictures stayed the same"
        )
    if page.locator(f"{SLIDER}, {TEXT_BOX}").count():
        later = _errors_shown(notebook_report(page, name))
        assert not later, f"{name}: errors after changing a widget:\n" + "\n".join(later)
        screenshot_notebook(page, SCREENSHOTS / f"{shot_stem}-after-change.png")
    lang = name.split("/")[0] if "/" in name else "en"
    if lang in TRANSLATED:
        problems = _language_problems(page, name, lang)
        assert not problems, f"{name} (screenshot {shot}):\n" + "\n".join(problems)
    logged = logged_errors(page)  # widget callbacks fail here, outside any cell
    assert not logged, f"{name}: JupyterLab's log console shows errors:\n{logged[-3000:]}"
    print(f"{name}: {time.monotonic() - started:.0f} s in the browser")


_CELL_ORDER = """
() => [...document.querySelectorAll('pre > div')].map((div) => {
  const node = div.firstChild;
  const text = node ? node.data : '';
  const lefts = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '\\u2068') continue;
    const range = document.createRange();  // the isolated cell's first character
    range.setStart(node, i + 1);
    range.setEnd(node, i + 2);
    lefts.push(range.getBoundingClientRect().left);
  }
  return {dir: getComputedStyle(div).direction, text, lefts};
})
"""


def test_a_persian_report_in_a_notebook_keeps_its_columns_in_order(tmp_path, monkeypatch, browser):
    """check-guesses' Persian report shown right to left put the Latin cells of a row in one
    left-to-right run, so 'ABX' stood under the header's 'expected': the table lines now stay
    left to right cell by cell (as on a console), the sentences right to left."""
    import IPython.display

    from speclab.cli import command_in_notebook

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    student = tmp_path / "student.csv"
    student.write_text("prefix,guess,expected_output\n,ABX,ABC\nAB,CDX,\n,abx,\n", "utf-8")
    assert command_in_notebook(["check-guesses", "--lang", "fa", str(student)], "fa") == 1
    page_file = tmp_path / "report.html"
    page_file.write_text(f"<!doctype html><meta charset=utf-8>{shown[0].data}", "utf-8")
    page = browser.new_page()  # the module's Chromium: a second Playwright cannot start here
    try:
        page.goto(page_file.as_uri())
        lines = page.evaluate(_CELL_ORDER)
    finally:
        page.close()
    table = [line for line in lines if len(line["lefts"]) > 2]
    assert len(table) == 4, lines  # the header and three rows
    for line in table:
        assert line["dir"] == "ltr" and line["lefts"] == sorted(line["lefts"]), line
    sentences = [line for line in lines if line["text"].startswith("ردیف 4:")]
    assert sentences and all(line["dir"] == "rtl" for line in sentences), lines


def test_a_persian_table_runs_right_to_left_as_its_paper_twin(tmp_path, browser):
    """Lesson 02 in Persian asks for a prediction in a right-to-left Markdown table, then
    showed the computed DataFrame left to right: the same columns, mirrored. TableBlock lays
    it out as the Markdown table is, first column on the right."""
    import pandas as pd

    from speclab.i18n import RTL_NOTEBOOK_STYLE, TableBlock

    frame = pd.DataFrame({"پیشوند قبلی": ["خالی"], "حدس": ["ABX"], "خروجی تازه": ["ABC"]})
    page_file = tmp_path / "table.html"
    page_file.write_text(
        f"<!doctype html><meta charset=utf-8>{RTL_NOTEBOOK_STYLE}"
        f'<div class="jp-RenderedHTMLCommon">{TableBlock(frame, "fa")._repr_html_()}</div>',
        "utf-8",
    )
    page = browser.new_page()
    try:
        page.goto(page_file.as_uri())
        lefts = page.evaluate(
            "() => Object.fromEntries([...document.querySelectorAll('thead th')]"
            ".map((th) => [th.innerText.trim(), th.getBoundingClientRect().left]))"
        )
    finally:
        page.close()
    assert lefts["پیشوند قبلی"] > lefts["حدس"] > lefts["خروجی تازه"], lefts
