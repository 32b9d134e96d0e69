"""JupyterLab in headless Chromium, for the browser tests in `tests/test_browser.py`.

What the helpers here do, and why:
- `jupyter_lab(...)` starts JupyterLab from the running interpreter's environment (the
  project's `.venv`, so the `python3` kernel is the venv's) on 127.0.0.1, a free port and
  a random token, with its config, data and runtime folders in a temporary folder. The
  venv's `share/jupyter` stays on Jupyter's data path, so the ipywidgets lab extension
  (`jupyterlab_widgets`) is still found. Settings overrides turn off cell windowing
  (JupyterLab 4.2+ leaves off-screen cells out of the page), autosave, news and update
  checks, and start the kernel without asking. The server serves a copy of the notebooks,
  so running them never writes into the repository. It is always shut down: its kernels
  through the REST API, then its process group, then any process it left behind.
- `chromium(...)` drives Debian's `/usr/bin/chromium` with Playwright (no browser
  download): headless, no sandbox, no GPU, no background networking, component updates
  or sync, and a fresh profile folder, so it works on a machine without internet.
- The page helpers run JavaScript against `window.jupyterapp` (needs
  `--LabApp.expose_app_in_browser=True`) and read the notebook model and its rendered DOM.

Left out: anything about a particular lesson (the test decides what to assert).
"""

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",  # small /dev/shm in containers crashes renderers otherwise
]
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
WIDGET_ERRORS = ("Error displaying widget", "Model not found")

# JupyterLab settings for tests: every cell in the page, no autosave, no network, no dialog.
LAB_OVERRIDES = {
    "@jupyterlab/notebook-extension:tracker": {
        "windowingMode": "none",
        "autoStartDefaultKernel": True,
    },
    "@jupyterlab/docmanager-extension:plugin": {"autosave": False},
    "@jupyterlab/apputils-extension:notification": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LabServer:
    """A running JupyterLab: where it listens and how to ask it things."""

    base_url: str
    token: str
    root_dir: Path
    log_path: Path
    process: subprocess.Popen

    def url(self, path: str) -> str:
        """A Lab page for a path under root_dir, with a fresh (reset) workspace."""
        return f"{self.base_url}/lab/tree/{path}?reset&token={self.token}"

    def api(self, method: str, path: str):
        """Call the server's REST API; returns the decoded JSON (None when empty)."""
        request = urllib.request.Request(
            f"{self.base_url}/api/{path}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None

    def log_tail(self, n_chars: int = 4000) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-n_chars:]

    def shut_down_sessions(self) -> None:
        """End every notebook session (and its kernel), so the next notebook starts alone."""
        for session in self.api("GET", "sessions"):
            with contextlib.suppress(urllib.error.URLError):
                self.api("DELETE", f"sessions/{session['id']}")


def _descendants(pid: int) -> list[int]:
    """Process ids below pid (Linux /proc), found before the parent goes away."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _stop(process: subprocess.Popen, grace_seconds: float = 15.0) -> None:
    """SIGTERM the process group, wait, then SIGKILL it and every process it left."""
    leftovers = _descendants(process.pid)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=grace_seconds)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    for pid in leftovers:  # kernels run in their own sessions, outside the group
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def lab_environment(home: Path) -> dict[str, str]:
    """Environment for the server: Jupyter's own folders under home, the venv first on PATH."""
    env = dict(os.environ)
    for name in ("config", "data", "runtime"):
        (home / name).mkdir(parents=True, exist_ok=True)
        env[f"JUPYTER_{name.upper()}_DIR"] = str(home / name)
    env.pop("JUPYTERLAB_SETTINGS_DIR", None)
    env.pop("JUPYTERLAB_WORKSPACES_DIR", None)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"
    return env


@contextlib.contextmanager
def jupyter_lab(
    notebooks: list[Path], home: Path, start_timeout: float = 180.0, base: Path | None = None
):
    """Serve copies of `notebooks` from home/notebooks; yields a LabServer; always stops it.

    With `base`, each copy keeps its path under it (notebooks/zh/01_quiz_game.ipynb is served
    as zh/01_quiz_game.ipynb, beside the English 01_quiz_game.ipynb).
    """
    root_dir = home / "notebooks"
    root_dir.mkdir(parents=True)
    for notebook in notebooks:
        target = root_dir / (notebook.relative_to(base) if base else notebook.name)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(notebook, target)
    settings_dir = home / "lab-settings"
    settings_dir.mkdir()
    (settings_dir / "overrides.json").write_text(json.dumps(LAB_OVERRIDES), encoding="utf-8")
    port, token = free_port(), secrets.token_hex(24)
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--port-retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root_dir}",
        f"--LabApp.app_settings_dir={settings_dir}",
        "--LabApp.expose_app_in_browser=True",
        "--ServerApp.terminals_enabled=False",
        "--LabApp.extension_manager=readonly",  # no PyPI look-ups
    ]
    if os.geteuid() == 0:  # CI containers run as root
        command.append("--allow-root")
    log_path = home / "jupyterlab.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command,
            cwd=root_dir,
            env=lab_environment(home),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, killed as one
        )
    server = LabServer(f"http://127.0.0.1:{port}", token, root_dir, log_path, process)
    try:
        _wait_until_ready(server, start_timeout)
        yield server
    finally:
        with contextlib.suppress(Exception):
            server.shut_down_sessions()
        _stop(process)


def _wait_until_ready(server: LabServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"jupyter lab exited early:\n{server.log_tail()}")
        with contextlib.suppress(OSError):
            server.api("GET", "status")
            return
        time.sleep(0.5)
    raise TimeoutError(f"jupyter lab did not answer within {timeout:.0f} s:\n{server.log_tail()}")


@contextlib.contextmanager
def chromium(profile_dir: Path, viewport=(1280, 800)) -> Iterator:
    """A Playwright browser context on Debian's chromium with a fresh profile; always closed."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile_dir),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": viewport[0], "height": viewport[1]},
            device_scale_factor=1,
        )
        try:
            yield context
        finally:
            context.close()


# --- the notebook as JupyterLab holds it --------------------------------------------------

_FIND_PANEL = """
(name) => {
  for (const widget of window.jupyterapp.shell.widgets('main')) {
    if (widget.context && widget.context.path === name && widget.content) return widget;
  }
  return null;
}
"""


def open_notebook(page, server: LabServer, name: str, timeout_s: float = 180.0) -> None:
    """Load Lab on the notebook and wait until its kernel is idle."""
    page.goto(server.url(name), wait_until="domcontentloaded", timeout=timeout_s * 1000)
    page.wait_for_function(
        f"() => window.jupyterapp && ({_FIND_PANEL})({json.dumps(name)}) !== null",
        timeout=timeout_s * 1000,
        polling=500,
    )
    page.evaluate(
        f"""async (name) => {{
          const panel = ({_FIND_PANEL})(name);
          await panel.context.ready;
          await panel.sessionContext.ready;
          window.jupyterapp.shell.activateById(panel.id);
          window.jupyterapp.shell.collapseLeft();
        }}""",
        name,
    )
    page.wait_for_function(
        f"""(name) => {{
          const kernel = ({_FIND_PANEL})(name).sessionContext.session?.kernel;
          return kernel && kernel.status === 'idle';
        }}""",
        arg=name,
        timeout=timeout_s * 1000,
        polling=500,
    )


def run_all_cells(page, name: str, timeout_s: float) -> bool:
    """Run every cell as the menu does; wait until the kernel has finished. True if no cell failed."""
    page.evaluate(
        """() => {
          window.__speclabRunAll = null;
          window.jupyterapp.commands.execute('notebook:run-all-cells').then(
            (ok) => { window.__speclabRunAll = {ok: ok !== false}; },
            (error) => { window.__speclabRunAll = {ok: false, error: String(error)}; });
        }"""
    )
    page.wait_for_function(
        "() => window.__speclabRunAll !== null", timeout=timeout_s * 1000, polling=500
    )
    wait_until_idle(page, name, timeout_s)
    return bool(page.evaluate("() => window.__speclabRunAll.ok"))


def wait_until_idle(page, name: str, timeout_s: float = 120.0, quiet_ms: int = 1500) -> None:
    """Wait for: kernel idle, no cell queued or running ([*]), for quiet_ms in a row."""
    page.evaluate("() => { window.__speclabQuietSince = null; }")
    page.wait_for_function(
        f"""([name, quietMs]) => {{
          const panel = ({_FIND_PANEL})(name);
          const kernel = panel.sessionContext.session?.kernel;
          const busy = !kernel || kernel.status !== 'idle' ||
            [...panel.content.node.querySelectorAll('.jp-InputArea-prompt')]
              .some((prompt) => prompt.textContent.includes('*'));
          if (busy) {{ window.__speclabQuietSince = null; return false; }}
          window.__speclabQuietSince ??= Date.now();
          return Date.now() - window.__speclabQuietSince >= quietMs;
        }}""",
        arg=[name, quiet_ms],
        timeout=timeout_s * 1000,
        polling=250,
    )


def notebook_report(page, name: str) -> list[dict]:
    """Per code cell: its execution count, its outputs (model) and what the page shows (DOM)."""
    return page.evaluate(
        f"""(name) => {{
          const panel = ({_FIND_PANEL})(name);
          const cells = [];
          panel.content.widgets.forEach((cell, index) => {{
            if (cell.model.type !== 'code') return;
            const outputs = [];
            for (let i = 0; i < cell.model.outputs.length; i++) {{
              const output = cell.model.outputs.get(i).toJSON();
              const data = output.data || {{}};
              outputs.push({{
                output_type: output.output_type,
                name: output.name || null,
                text: [].concat(output.text || []).join('').slice(0, 2000),
                ename: output.ename || null,
                evalue: output.evalue || null,
                mimes: Object.keys(data),
                plain: [].concat(data['text/plain'] || []).join('').slice(0, 4000),
              }});
            }}
            // One DOM child per model output, top level only (not inside Output widgets).
            const shown = [...cell.outputArea.node.children]
              .filter((child) => child.classList.contains('jp-OutputArea-child'))
              .map((child) => child.querySelector(':scope > .jp-OutputArea-output'))
              .map((node) => ({{
                mime: node.getAttribute('data-mime-type'),
                text: node.innerText.slice(0, 4000),
                widget_views: node.querySelectorAll('.jupyter-widgets').length,
                sliders: node.querySelectorAll('.widget-slider').length,
                height: node.getBoundingClientRect().height,
              }}));
            const stderr = [...cell.node.querySelectorAll(
              '.jp-RenderedText[data-mime-type="application/vnd.jupyter.stderr"]')]
              .map((node) => node.innerText.slice(0, 2000));
            cells.push({{index, execution_count: cell.model.executionCount, outputs, shown, stderr}});
          }});
          return cells;
        }}""",
        name,
    )


def federated_extensions(page) -> list[str]:
    """Names of the prebuilt lab extensions the page loaded (from its page config)."""
    return page.evaluate(
        """() => JSON.parse(document.getElementById('jupyter-config-data').textContent)
              .federated_extensions.map((extension) => extension.name)"""
    )


# --- sliders and text boxes ----------------------------------------------------------------

SLIDER = ".jp-Notebook .widget-slider"
TEXT_BOX = ".jp-Notebook .widget-text input"

# Everything a control's cell shows except slider readouts: its text, and a SHA-256 of
# every image's bytes (an Image widget gets a new blob URL even for equal bytes).
_OUTPUT_SIGNATURE = """
async ([selector, index]) => {
  const control = document.querySelectorAll(selector)[index];
  const area = control.closest('.jp-Cell').querySelector('.jp-OutputArea');
  const clone = area.cloneNode(true);
  clone.querySelectorAll('.widget-readout').forEach((node) => node.remove());
  const digests = [];
  for (const image of area.querySelectorAll('img')) {
    const bytes = await (await fetch(image.src)).arrayBuffer();
    const digest = await crypto.subtle.digest('SHA-256', bytes);
    digests.push([...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join(''));
  }
  return {text: clone.textContent, images: digests};
}
"""


def slider_state(page, index: int) -> dict:
    """The slider's bounds and value from its handle, and whether its readout is an integer."""
    return page.evaluate(
        """(index) => {
          const slider = document.querySelectorAll('.jp-Notebook .widget-slider')[index];
          const handle = slider.querySelector('[aria-valuenow]');
          const readout = slider.querySelector('.widget-readout');
          return {
            min: Number(handle.getAttribute('aria-valuemin')),
            max: Number(handle.getAttribute('aria-valuemax')),
            value: Number(handle.getAttribute('aria-valuenow')),
            readout: readout ? readout.textContent.trim() : null,
            description: slider.querySelector('.widget-label')?.textContent || '',
          };
        }""",
        index,
    )


def move_slider(page, name: str, index: int = 0, timeout_s: float = 120.0) -> dict:
    """Move a slider one step with the keyboard (right, or left at the end), as a learner can.

    The step keeps the value on the slider's grid, as dragging does (a value typed into the
    readout is not snapped to it). Returns the slider, and the cell's output signature,
    before and after.
    """
    slider = page.locator(SLIDER).nth(index)
    slider.scroll_into_view_if_needed()
    before_state = slider_state(page, index)
    before = page.evaluate(_OUTPUT_SIGNATURE, [SLIDER, index])
    key = "ArrowLeft" if before_state["value"] >= before_state["max"] else "ArrowRight"
    slider.locator("[aria-valuenow]").focus()
    page.keyboard.press(key)
    page.wait_for_function(
        """([index, before]) => {
          const slider = document.querySelectorAll('.jp-Notebook .widget-slider')[index];
          return slider.querySelector('.widget-readout').textContent.trim() !== before;
        }""",
        arg=[index, before_state["readout"]],
        timeout=10_000,
    )
    wait_until_idle(page, name, timeout_s)
    after = page.evaluate(_OUTPUT_SIGNATURE, [SLIDER, index])
    return {
        "key": key,
        "slider_before": before_state,
        "slider_after": slider_state(page, index),
        "before": before,
        "after": after,
    }


def logged_errors(page) -> str:
    """Errors in JupyterLab's log console for the current notebook, e.g. a widget callback's
    traceback (it belongs to no cell, so no cell output shows it). Opens and closes the console.
    """
    page.evaluate("() => window.jupyterapp.commands.execute('logconsole:open')")
    page.locator(".jp-LogConsolePanel").first.wait_for(timeout=10_000)
    page.wait_for_timeout(500)
    text = page.evaluate(
        """() => {
          const panel = document.querySelector('.jp-LogConsolePanel');
          const entries = [...panel.querySelectorAll('.jp-OutputArea-output')];
          for (const widget of window.jupyterapp.shell.widgets('down')) {
            if (widget.node.querySelector('.jp-LogConsolePanel')) widget.close();
          }
          return entries.map((node) => node.innerText).join('\\n');
        }"""
    )
    return text if re.search(r"Traceback|\b\w*(Error|Exception)\b", text) else ""


def edit_text_box(page, name: str, index: int = 0, timeout_s: float = 120.0) -> dict:
    """Type one more character at the end of a Text widget, as a learner can."""
    box = page.locator(TEXT_BOX).nth(index)
    box.scroll_into_view_if_needed()
    before_value = box.input_value()
    before = page.evaluate(_OUTPUT_SIGNATURE, [TEXT_BOX, index])
    box.click()
    page.keyboard.press("End")
    page.keyboard.type("9")
    page.keyboard.press("Enter")
    wait_until_idle(page, name, timeout_s)
    after = page.evaluate(_OUTPUT_SIGNATURE, [TEXT_BOX, index])
    return {
        "value_before": before_value,
        "value_after": box.input_value(),
        "before": before,
        "after": after,
    }


# --- screenshots --------------------------------------------------------------------------


def screenshot_notebook(page, path: Path, max_height: int = 16000) -> None:
    """The whole notebook in one image: the page is made as tall as its content, then restored."""
    path.parent.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    content = page.evaluate(
        """() => {
          const scroller = document.querySelector(
            '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
          scroller.scrollTop = 0;
          return scroller.scrollHeight - scroller.clientHeight;
        }"""
    )
    height = min(max_height, size["height"] + max(0, int(content)))
    page.set_viewport_size({"width": size["width"], "height": height})
    try:
        page.evaluate("() => new Promise((done) => setTimeout(done, 500))")
        page.screenshot(path=str(path))
    finally:
        page.set_viewport_size(size)


def screenshot_at(page, locator, path: Path) -> None:
    """One screen, as a learner sees it, with the given element near the top."""
    path.parent.mkdir(parents=True, exist_ok=True)
    locator.evaluate("(node) => node.scrollIntoView({block: 'start'})")
    page.evaluate("() => new Promise((done) => setTimeout(done, 300))")
    page.screenshot(path=str(path))
