"""The browser edition (`python kit.py site`) in Debian's Chromium: every notebook runs in Pyodide, offline.

The test builds the site with `site/build.py` (which reuses the last build when the package,
the notebooks and `site/` are unchanged), serves `_site/` on a free 127.0.0.1 port and opens
it in Chromium through Playwright, one page at a time in one browser context. Chromium
resolves no name but 127.0.0.1, and every request the pages, their workers and the service
worker make is logged: a request to any other host fails the notebook it happened in. Each
notebook is opened in JupyterLite and run with Run All; the test then reads every code cell's
prompt and outputs from the page. Kernel-ready and Run All times are printed at the end, not
asserted. Screenshots go to `screenshots/site-*.png` (git-ignored).
"""

from __future__ import annotations

import functools
import hashlib
import html
import http.server
import json
import re
import subprocess
import sys
import threading
import time
import urllib.parse
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Locator, Page, Request, expect, sync_playwright

from mini_agent import (
    AssistantMessage,
    ContextBudgetError,
    Message,
    SessionFormatError,
    ToolCall,
    ToolMessage,
    UserMessage,
    append_session,
    load_session,
    to_record,
    trim_context,
)
from mini_agent.context import EMPTY_CONTEXT, SMALLEST_UNIT_TOO_BIG
from mini_agent.session import INVALID_JSON, INVALID_RECORD
from teaching.explorer_logic import scan_position_text
from teaching.explorers import SessionEditor
from teaching.samples import (
    chapter_picture,
    expected_failure,
    sample_files,
    says_as_named,
    what_loading_says,
)
from teaching.trace import scan_steps

from .budget_slider import drag_budget_slider
from .helpers import CHROMIUM, CHROMIUM_FLAGS, stored_output_text
from .timings import measured

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_site"
SCREENSHOTS = ROOT / "screenshots"
LOOPBACK = "127.0.0.1"
# the status bar's kernel entry once idle; the site's menus are Chinese (jupyter/overrides.json)
KERNEL_IDLE = re.compile(r"Python \(Pyodide\) \| (?:空闲|Idle)\b")
# The chapter's error phrases, with the line number where there is one.
PHRASES = re.compile(
    "|".join(
        [
            re.escape(INVALID_JSON) + r" \d+",
            re.escape(INVALID_RECORD) + r" \d+",
            re.escape(SMALLEST_UNIT_TOO_BIG),
            re.escape(EMPTY_CONTEXT),
            r"unknown tool: [\w.-]+",
        ]
    )
)
EDITOR_NOTEBOOK = "03_corrupted_records.ipynb"  # SessionEditor() shown, then a cell edits another
BUDGET_NOTEBOOK = "05_character_budget.ipynb"  # BudgetExplorer() over sample_session()
STEPPER_NOTEBOOK = "04_context_units.ipynb"  # UnitScanStepper(history), history = chapter_picture()
NOTEBOOKS = sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb"))
CURRENT = ".jp-NotebookPanel:not(.lm-mod-hidden)"  # the notebook in front; the others stay open
CELLS_JS = """() => Array.from(document.querySelectorAll(
  '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell')).map(cell => ({
  prompt: (cell.querySelector('.jp-InputPrompt')?.textContent ?? '').trim(),
  outputs: Array.from(cell.querySelectorAll('.jp-OutputArea-output')).map(out => ({
    mime: out.getAttribute('data-mime-type') ?? '', text: out.textContent ?? ''})),
}))"""


# The site, served on loopback


@pytest.fixture(scope="module")
def site() -> Path:
    """`_site/`, built from this checkout unless the last build had the same inputs; a build's
    wall time is measured (a first one when the build's caches were not there before)."""
    first = not (ROOT / ".site-cache").exists()
    started = time.monotonic()
    build = subprocess.run(
        [sys.executable, str(ROOT / "site" / "build.py"), "--out", str(SITE)],
        capture_output=True,
        encoding="utf-8",
        timeout=600,
        check=False,
    )
    assert build.returncode == 0, f"the site build failed:\n{build.stdout}\n{build.stderr}"
    assert (SITE / "index.html").is_file()
    if "is up to date" not in build.stdout:
        measured("site_build_first" if first else "site_build_again", time.monotonic() - started)
    return SITE


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass  # the browser's log is the one the test reads


@pytest.fixture(scope="module")
def base_url(site: Path) -> Iterator[str]:
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer((LOOPBACK, 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{LOOPBACK}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    assert not thread.is_alive()


# One browser context for every notebook; every request logged


@dataclass
class RequestLog:
    urls: list[str] = field(default_factory=list)

    def record(self, request: Request) -> None:
        self.urls.append(request.url)

    def since(self, start: int) -> list[str]:
        return self.urls[start:]


@dataclass
class Timings:
    kernel_ready: dict[str, float] = field(default_factory=dict)
    run_all: dict[str, float] = field(default_factory=dict)
    single: dict[str, float] = field(default_factory=dict)  # landing link → kernel idle


@dataclass
class Browser:
    context: BrowserContext
    log: RequestLog
    timings: Timings


def foreign(urls: list[str]) -> list[str]:
    """The URLs of `urls` that went anywhere but the loopback address (data: and blob: stay)."""
    hosts = [(url, urllib.parse.urlsplit(url)) for url in urls]
    return [url for url, part in hosts if part.scheme in {"http", "https", "ws", "wss"}
            and part.hostname != LOOPBACK]  # fmt: skip


@pytest.fixture(scope="module")
def browser(base_url: str, pytestconfig: pytest.Config) -> Iterator[Browser]:
    assert CHROMIUM.exists(), "install Debian's Chromium: apt-get install -y chromium"
    SCREENSHOTS.mkdir(exist_ok=True)
    log, timings = RequestLog(), Timings()
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        try:
            context = chromium.new_context(viewport={"width": 1400, "height": 1600})
            # pages and the service worker; a page's dedicated workers report on the page
            context.on("request", log.record)
            yield Browser(context, log, timings)
        finally:
            chromium.close()
    report(pytestconfig, log, timings)


def report(config: pytest.Config, log: RequestLog, timings: Timings) -> None:
    """Print the figures the browser edition is measured by (never asserted on)."""
    lines = ["", "browser edition (site test):"]
    for name, seconds in timings.kernel_ready.items():
        run_all = timings.run_all.get(name)
        shown = f"{run_all:5.1f} s" if run_all is not None else "  -  "
        lines.append(f"  {name:36} kernel ready {seconds:5.1f} s   Run All {shown}")
    for name, seconds in timings.single.items():
        lines.append(f"  landing link → {name:28} kernel ready {seconds:5.1f} s")
    lines.append(f"  requests: {len(log.urls)}, to a host other than {LOOPBACK}: "
                 f"{len(foreign(log.urls))}")  # fmt: skip
    capture = config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print("\n".join(lines), flush=True)


# Driving JupyterLite: one lab page for every notebook, each opened from the file browser


def open_page(browser: Browser, url: str) -> tuple[Page, int]:
    page = browser.context.new_page()
    start = len(browser.log.urls)
    page.goto(url)
    return page, start


def status_bar(page: Page) -> str:
    return page.locator("#jp-main-statusbar").inner_text().replace("\n", " | ")


# The kernel of the notebook in front, as the app sees it
FRONT_KERNEL = """() => {
  const kernel = window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel;
  return kernel ? { id: kernel.id, status: kernel.status, link: kernel.connectionStatus } : null;
}"""


def wait_for_new_kernel(page: Page, before: set[str], timeout: float = 120) -> None:
    """Until the notebook in front has a kernel none of `before` (a notebook opened beside
    others must not see theirs), connected and idle, as the status bar then says. A kernel
    from a warm spare can be idle before a poll ever sees it busy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        kernel = page.evaluate(FRONT_KERNEL)
        new = kernel is not None and kernel["id"] not in before
        ready = new and kernel["status"] == "idle" and kernel["link"] == "connected"
        if ready and KERNEL_IDLE.search(status_bar(page)):
            return
        page.wait_for_timeout(100)
    pytest.fail(f"the kernel did not start in {timeout} s: {status_bar(page)!r}")


@dataclass
class Lab:
    page: Page
    opened: dict[str, int] = field(default_factory=dict)  # notebook: log position when opened


@pytest.fixture(scope="module")
def lab(browser: Browser, base_url: str) -> Iterator[Lab]:
    """JupyterLite's lab opened by the first page's start button (00_guide in a fresh full
    interface), every notebook then opened from its file browser."""
    landing = browser.context.new_page()
    landing.goto(f"{base_url}/")
    entry = landing.get_by_role("link", name="从导读开始").get_attribute("href")
    landing.close()
    assert entry == "lab/index.html?reset&open=00_guide.ipynb", entry
    started = time.monotonic()
    page, start = open_page(browser, f"{base_url}/{entry}")
    wait_for_new_kernel(page, set())
    expect(current_tab(page)).to_contain_text("00_guide.ipynb")
    browser.timings.kernel_ready["00_guide.ipynb"] = time.monotonic() - started
    measured("site_lab_first", time.monotonic() - started)
    try:
        yield Lab(page, {"00_guide.ipynb": start})
        workers = page.evaluate("window.__kitKernels")["workers"]
        measured("site_page_js", workers[0]["handed"] / 1000)
        for worker in workers:
            if worker["loaded"] is not None:
                measured("site_pyodide", (worker["loaded"] - worker["started"]) / 1000)
    finally:
        page.close()


def lab_kernels(page: Page) -> list[str]:
    """The ids of the kernels running in a lab page."""
    found: list[str] = page.evaluate(
        "Array.from(window.jupyterapp.serviceManager.kernels.running()).map(k => k.id)"
    )
    return found


def current_tab(page: Page) -> Locator:
    return page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current")


def open_notebook(browser: Browser, lab: Lab, name: str) -> None:
    if name not in lab.opened:
        started = time.monotonic()
        lab.opened[name] = len(browser.log.urls)
        before = set(lab_kernels(lab.page))
        lab.page.locator(".jp-DirListing-itemText", has_text=name).dblclick()
        expect(current_tab(lab.page)).to_contain_text(name)
        wait_for_new_kernel(lab.page, before)
        browser.timings.kernel_ready[name] = time.monotonic() - started
        measured("site_lab_later", time.monotonic() - started)
        # opened and connected, not yet touched: not "changed" (the site's copy names the
        # browser's kernel, which JupyterLab would otherwise write in and mark unsaved)
        expect(current_tab(lab.page)).not_to_have_class(re.compile(r"\bjp-mod-dirty\b"))
    expect(current_tab(lab.page)).to_contain_text(name)


def command(page: Page, name: str) -> None:
    """A menu's command by its id (the menus' words follow the site's language: Chinese);
    the site's jupyter-lite.json sets exposeAppInBrowser, so window.jupyterapp is the app."""
    page.evaluate(f"window.jupyterapp.commands.execute({name!r})")


def run_all_cells(page: Page) -> None:
    """Run All from blank prompts (编辑 → 清除所有单元格的输出, then 运行 → 运行所有单元格): the
    site's notebooks carry their stored outputs and counts, which a fresh run numbers alike."""
    command(page, "notebook:clear-all-cell-outputs")
    expect(page.locator(f"{CURRENT} .jp-CodeCell .jp-OutputArea-output")).to_have_count(0)
    expect(page.locator(f"{CURRENT} .jp-InputPrompt", has_text=re.compile(r"\d"))).to_have_count(0)
    command(page, "notebook:run-all-cells")


def stored_notebook(name: str) -> list[dict[str, Any]]:
    notebook = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))
    return [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]


def cells_after_run_all(page: Page, count: int, timeout: float = 120) -> list[dict[str, Any]]:
    """The code cells once Run All is over: every prompt numbered, or it stopped (a cell that
    raised leaves the rest unnumbered) and the page has been still for two seconds."""
    deadline, still_since, last = time.monotonic() + timeout, time.monotonic(), None
    while time.monotonic() < deadline:
        cells: list[dict[str, Any]] = page.evaluate(CELLS_JS)
        numbered = [re.fullmatch(r"\[\d+\]:", cell["prompt"]) for cell in cells]
        if len(cells) == count and all(numbered):
            return cells
        if cells != last:
            still_since, last = time.monotonic(), cells
        busy = any(cell["prompt"] == "[*]:" for cell in cells)
        still = time.monotonic() - still_since > 2
        if not busy and still and KERNEL_IDLE.search(status_bar(page)):
            return cells
        page.wait_for_timeout(250)
    return page.evaluate(CELLS_JS)  # type: ignore[no-any-return]


def check_run_all(name: str, cells: list[dict[str, Any]]) -> list[str]:
    """What is wrong with the page's cells, against the notebook as stored."""
    stored = stored_notebook(name)
    if len(cells) != len(stored):
        return [f"the page shows {len(cells)} code cells, the notebook has {len(stored)}"]
    problems = []
    for number, (cell, kept) in enumerate(zip(cells, stored, strict=True), start=1):
        shown = "\n".join(output["text"] for output in cell["outputs"])
        if cell["prompt"] != f"[{number}]:":  # a fresh kernel numbers the cells it runs 1, 2, …
            problems.append(f"code cell {number} did not run in turn (prompt {cell['prompt']!r})")
            continue
        for output in cell["outputs"]:
            if output["mime"] == "application/vnd.jupyter.stderr" and not PHRASES.search(
                output["text"]
            ):
                problems.append(f"code cell {number} shows an error: {output['text'][:300]!r}")
        for phrase in sorted(set(PHRASES.findall(stored_output_text(kept)))):
            if phrase not in shown:
                problems.append(f"code cell {number} should show {phrase!r}: {shown[:300]!r}")
    return problems


# What the explorers show when moved, as the package computes it


def move_budget_slider(page: Page) -> None:
    outputs = page.locator(f"{CURRENT} .jp-OutputArea-output")
    explorer = outputs.filter(has=page.locator(".widget-slider"))
    shots = SCREENSHOTS / "site-05-budget-before.png", SCREENSHOTS / "site-05-budget-moved.png"
    drag_budget_slider(page, explorer, *shots)


def press_unit_stepper(page: Page) -> None:
    history = chapter_picture()
    steps = list(scan_steps(history))
    texts = [scan_position_text(history, steps, at).splitlines() for at in range(len(steps) + 1)]
    outputs = page.locator(f"{CURRENT} .jp-OutputArea-output")
    explorer = outputs.filter(has=page.locator("button", has_text="▶"))
    expect(explorer).to_have_count(1)
    explorer.scroll_into_view_if_needed()
    prev: Locator = explorer.locator("button", has_text="◀")
    next_: Locator = explorer.locator("button", has_text="▶")
    position = explorer.locator(".widget-readout")  # the stepper's position slider
    expect(position).to_have_text(re.compile(r"^\d+$"))
    at = int(position.text_content() or "")  # where the notebook's cells left it
    for line in texts[at]:
        expect(explorer).to_contain_text(line)
    # one press each way, each view checked against the package's text for that position
    moves = [(prev, at - 1), (next_, at)] if at > 0 else [(next_, 1), (prev, 0)]
    for button, landed in moves:
        button.click()
        expect(position).to_have_text(str(landed))
        for line in texts[landed]:
            expect(explorer).to_contain_text(line, timeout=30_000)
    explorer.screenshot(path=SCREENSHOTS / "site-04-stepper.png")


def editor_keeps_its_sample(page: Page) -> None:
    """03's SessionEditor still holds its sample after Run All (a later cell edits its own)."""
    editor = page.locator(f"{CURRENT} .jp-OutputArea-output textarea").first
    expect(editor).to_have_value(SessionEditor().text.value)
    assert len(editor.input_value().splitlines()) == 15


INTERACTIONS: dict[str, Callable[[Page], None]] = {
    EDITOR_NOTEBOOK: editor_keeps_its_sample,
    BUDGET_NOTEBOOK: move_budget_slider,
    STEPPER_NOTEBOOK: press_unit_stepper,
}


# The tests


def test_no_text_file_of_the_site_names_a_cdn(site: Path) -> None:
    never = json.loads((ROOT / "site" / "site.json").read_text(encoding="utf-8"))["never_named"]
    named = re.compile(r"https?://(?:" + "|".join(map(re.escape, never)) + r")\b")
    hits = []
    for path in site.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            if b"\0" not in data[:8192] and named.search(data.decode("utf-8", "replace")):
                hits.append(path.relative_to(site).as_posix())
    assert hits == []


def test_the_sample_sessions_say_what_their_names_say(site: Path) -> None:
    """samples/ in the file browser: every session file in teaching/sample_sessions/ (the kit's
    sample, the chapter's picture, copies broken the chapter's two ways, and any an instructor
    drops in), to double-click (text) and to load (the chapter's phrase, its line), and each
    listed on the first page with what loading it says."""
    folder = site / "files" / "samples"
    assert sorted(path.name for path in folder.iterdir()) == [p.name for p in sample_files()]
    landing = (site / "index.html").read_text(encoding="utf-8")
    for path in sample_files():
        assert (folder / path.name).read_bytes() == path.read_bytes(), path.name
        said = what_loading_says(folder / path.name)
        assert says_as_named(path.name, said), said
        assert f"<code>samples/{path.name}</code>：{html.escape(said)}" in landing
    assert len(load_session(folder / "session.jsonl")) == 15
    listed = json.loads((site / "api" / "contents" / "samples" / "all.json").read_text("utf-8"))
    assert sorted(item["name"] for item in listed["content"]) == sorted(
        path.name for path in folder.iterdir()
    )


# The kernel's start: the build's prepared wheels (site/prepare_wheels.py), checked under node

KERNEL_START = ROOT / "tests" / "pyodide" / "site_kernel.mjs"
# the kernel extension's own wheels: its package index lists their hashes, so they stay as built
EXTENSION_WHEELS = ("piplite", "pyodide_kernel")


def lock_of(site: Path) -> tuple[Path, dict[str, Any]]:
    folder = site / "static" / "pyodide-lock"
    return folder, json.loads((folder / "pyodide-lock.json").read_text(encoding="utf-8"))[
        "packages"
    ]


def test_every_locked_wheel_matches_its_hash_and_its_record(site: Path) -> None:
    folder, packages = lock_of(site)
    for name, package in packages.items():
        wheel = (folder / package["file_name"]).resolve()
        assert hashlib.sha256(wheel.read_bytes()).hexdigest() == package["sha256"], name
        with zipfile.ZipFile(wheel) as archive:
            names = set(archive.namelist())
            record = next(n for n in names if n.endswith(".dist-info/RECORD"))
            listed = {line.split(",")[0] for line in archive.read(record).decode().splitlines()}
        assert listed == names, f"{name}: RECORD and the wheel disagree on {listed ^ names}"


def start_site_kernel(site: Path, check: Path, start: str) -> dict[str, Any]:
    """Start the site's kernel under node (`start`: "ordinary", or "snapshot" as the browser's
    workers do) and return what `check` reports."""
    run = subprocess.run(
        ["node", str(KERNEL_START), str(site), str(check), start],
        capture_output=True,
        encoding="utf-8",
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    report: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return report


@pytest.mark.parametrize("start", ["ordinary", "snapshot"])
def test_the_site_kernel_starts_from_bytecode_and_keeps_sources_and_completion(
    site: Path, start: str
) -> None:
    config = json.loads((site / "jupyter-lite.json").read_text(encoding="utf-8"))
    settings = config["jupyter-config-data"]["litePluginSettings"]
    preloaded = settings["@jupyterlite/pyodide-kernel-extension:kernel"]["loadPyodideOptions"]
    # everything the kernel's worker would otherwise install one by one through piplite
    assert {"ipykernel", "comm", "pyodide-kernel", "jedi", "ipython", "micropip", "piplite"} <= set(
        preloaded["packages"]
    )
    report = start_site_kernel(site, KERNEL_START.with_name("site_kernel_check.py"), start)
    assert report["loaded"] > 150  # IPython, traitlets, ipywidgets, comm, the kit …
    assert {m.split(".")[0] for m in report["without_bytecode"]} <= set(EXTENSION_WHEELS)
    assert report["changed_source_ran"] is False
    assert "context.py" in report["traceback"] and "raise ContextBudgetError" in report["traceback"]
    assert "loads" in report["completes_module"] and "upper" in report["completes_builtin"]
    assert report["completes_inferred"] == ["append"]
    assert report["jedi_stubs"] == ["typeshed"]  # the standard library's stubs, nothing else
    cells = report["cells"]  # an error in a reader's cell, in the browser kernel's IPython
    assert cells["import"] is None  # no error
    assert cells["budget"]["evalue"] == "context budget cannot be empty"
    assert cells["budget"]["traceback"][-1] == "  释义：裁剪后一个单元也没有，上下文不能为空"
    assert not any("释义" in line for line in cells["division"]["traceback"])


def test_kernels_restored_from_the_one_snapshot_still_draw_their_own_random_numbers(
    site: Path, tmp_path: Path
) -> None:
    """The snapshot holds `random` already seeded (Python imports it on start): without the
    worker's reseed every kernel would draw the same numbers."""
    check = tmp_path / "draw.py"
    check.write_text("import json, random\njson.dumps(random.getrandbits(64))\n", "utf-8")
    draws = [start_site_kernel(site, check, "snapshot") for _ in range(2)]
    assert draws[0] != draws[1], draws


def test_the_first_page_lists_the_notebooks_in_order_in_chinese(
    site: Path, browser: Browser, base_url: str
) -> None:
    page, start = open_page(browser, f"{base_url}/")
    try:
        expect(page.locator("html")).to_have_attribute("lang", "zh-CN")
        links = page.locator("ol li a").evaluate_all("links => links.map(a => a.href)")
        in_site = sorted(path.name for path in (site / "files").glob("*.ipynb"))
        assert [urllib.parse.parse_qs(urllib.parse.urlsplit(u).query)["path"][0] for u in links] \
            == in_site  # fmt: skip
        assert in_site[0] == "00_guide.ipynb"
        for name in sorted(set(NOTEBOOKS) - set(in_site)):  # left out: the page says why
            expect(page.locator("body")).to_contain_text(Path(name).stem)
        page.screenshot(path=SCREENSHOTS / "site-landing.png", full_page=True)
        assert foreign(browser.log.since(start)) == []
    finally:
        page.close()


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_notebook_runs_all_cells_in_pyodide_offline(
    name: str, site: Path, browser: Browser, lab: Lab
) -> None:
    if not (site / "files" / name).exists():
        landing = (site / "index.html").read_text(encoding="utf-8")
        assert Path(name).stem in landing.split("不在浏览器版里的笔记本", 1)[1], (
            f"{name} is neither in the site nor listed as left out on the first page"
        )
        return
    open_notebook(browser, lab, name)
    page = lab.page
    ran = time.monotonic()
    run_all_cells(page)
    cells = cells_after_run_all(page, len(stored_notebook(name)))
    browser.timings.run_all[name] = time.monotonic() - ran
    page.screenshot(path=SCREENSHOTS / f"site-{Path(name).stem}.png")
    assert check_run_all(name, cells) == []
    if name in INTERACTIONS:
        INTERACTIONS[name](page)
    urls = browser.log.since(lab.opened[name])
    assert any(url.endswith("/pyodide.asm.wasm") for url in urls), "the kernel's worker is logged"
    assert foreign(urls) == []


def test_every_kernel_in_lab_took_the_pyodide_its_worker_began_loading_at_once(
    lab: Lab,
) -> None:
    """site/kernel_early.js: each kernel's worker had started loading Pyodide before the kernel
    asked (with the page, or as lab/'s spare), from the site's snapshot, and the kernel took
    that Pyodide ("warm"), never loading one of its own ("cold"); lab/ keeps at most one spare
    worker besides them."""
    head_start = lab.page.evaluate("window.__kitKernels")
    running = lab_kernels(lab.page)
    assert len(running) == len(lab.opened) and head_start["cold"] == 0, head_start
    assert head_start["warm"] == len(running), head_start
    handed = [worker for worker in head_start["workers"] if worker["handed"] is not None]
    assert len(handed) == len(running) and len(head_start["workers"]) <= len(running) + 1
    assert all(worker["restored"] is True for worker in handed), handed


def test_a_kernel_starts_the_ordinary_way_when_the_snapshot_cannot_be_had(
    browser: Browser, base_url: str
) -> None:
    """A server without the snapshot (or a browser without DecompressionStream): the worker
    starts Python itself, and the kernel runs as before, only later. A context of its own, with
    no service worker: the site's would fetch the snapshot where no route sees it."""
    shared = browser.context.browser
    assert shared is not None
    context = shared.new_context(service_workers="block")
    page = context.new_page()
    try:
        context.route("**/kit-snapshot.bin.gz", lambda route: route.fulfill(status=404))
        query = urllib.parse.urlencode({"kernel": "python", "code": "print(6 * 7)"})
        page.goto(f"{base_url}/repl/index.html?{query}")
        expect(page.locator(".jp-OutputArea-output", has_text="42")).to_have_count(
            1, timeout=120_000
        )
        head_start = page.evaluate("window.__kitKernels")
        assert [w["restored"] for w in head_start["workers"]] == [False], head_start
        assert head_start["warm"] == 1 and head_start["cold"] == 0, head_start
    finally:
        context.close()


# What the kernel behind an open notebook prints for `code` (run without a prompt number)
IN_KERNEL = """async ([path, code]) => {
  const panel = Array.from(window.jupyterapp.shell.widgets('main'))
    .find(widget => widget.context && widget.context.path === path);
  const future = panel.sessionContext.session.kernel.requestExecute({code, store_history: false});
  let printed = '';
  future.onIOPub = msg => {
    if (msg.header.msg_type === 'stream') printed += msg.content.text;
    if (msg.header.msg_type === 'error') printed += `${msg.content.ename}: ${msg.content.evalue}`;
  };
  await future.done;
  return printed;
}"""


def in_kernel(page: Page, notebook: str, code: str) -> str:
    return str(page.evaluate(IN_KERNEL, [notebook, code]))


LOAD_EACH = """
import json, pathlib
from mini_agent import SessionFormatError, load_session
found = {}
for name in NAMES:
    try:
        said = f"{len(load_session(name))} messages"
    except SessionFormatError as error:
        said = str(error)
    found[name] = [pathlib.Path(name).read_text(encoding="utf-8"), said]
print("LOADED " + json.dumps(found, ensure_ascii=False))
"""


def loaded_on_the_desktop(path: Path) -> str:
    try:
        return f"{len(load_session(path))} messages"
    except SessionFormatError as error:
        return str(error)


def test_every_shipped_jsonl_opens_as_text_and_loads_in_the_browser_kernel(
    site: Path, browser: Browser, lab: Lab
) -> None:
    """Each `.jsonl` the site ships, double-clicked in the file browser, opens in the text
    editor with its lines as they are, and `load_session` in the browser's kernel (00's,
    cwd /drive) reads that very file: the sample's 15 messages, the broken copies' errors
    with their line numbers — never the empty session a missing file would give."""
    files = site / "files"
    shipped = sorted(path.relative_to(files).as_posix() for path in files.rglob("*.jsonl"))
    assert shipped == [f"samples/{path.name}" for path in sample_files()]  # found, not listed
    page, start = lab.page, len(browser.log.urls)
    expect(page.locator(".jp-Dialog")).to_have_count(0)
    for folder in sorted({Path(name).parent.as_posix() for name in shipped}):
        page.locator(".jp-DirListing-itemText", has_text=re.compile(f"^{folder}$")).dblclick()
        for name in (n for n in shipped if Path(n).parent.as_posix() == folder):
            page.locator(".jp-DirListing-itemText", has_text=Path(name).name).dblclick()
            expect(current_tab(page)).to_contain_text(Path(name).name)
            editor = page.locator(".jp-MainAreaWidget:not(.lm-mod-hidden) .jp-FileEditor")
            for line in (files / name).read_text(encoding="utf-8").splitlines():
                expect(editor).to_contain_text(line)  # the torn line too, as it is
            expect(page.locator(".jp-Dialog")).to_have_count(0)  # no JSON parser's complaint
            page.screenshot(path=SCREENSHOTS / f"site-{Path(name).stem}-as-text.png")
        page.locator(".jp-FileBrowser .jp-BreadCrumbs-home").click()  # back to the notebooks
    code = f"NAMES = {shipped!r}\n{LOAD_EACH}"
    printed = in_kernel(page, "00_guide.ipynb", code)
    assert "LOADED " in printed, printed
    found = json.loads(printed.split("LOADED ", 1)[1])
    for name in shipped:
        text, said = found[name]
        assert text == (files / name).read_text(encoding="utf-8"), f"{name} is not the file shipped"
        assert said == loaded_on_the_desktop(files / name), name
    assert found["samples/session.jsonl"][1] == "15 messages"
    for name in shipped:  # each says what its name says, in the browser too
        failure = expected_failure(Path(name).name)
        said = found[name][1]
        assert said.startswith(f"{failure}:") if failure else said.endswith(" messages"), said
    assert foreign(browser.log.since(start)) == []


BUDGETS = (20, 40, 210, 1000)  # too small for the newest unit, then one, two, all three units
HONESTY_CODE = (
    f"BUDGETS = {BUDGETS!r}\n"
    + """
import json, os, sys, tempfile, fcntl
from pathlib import Path
from mini_agent import AssistantMessage, ToolCall, ToolMessage, UserMessage
from mini_agent import append_session, load_session, to_record, trim_context
from mini_agent.store import has_lock
from mini_agent.repair import repair_session

history = [UserMessage("读一下 a.txt"), AssistantMessage("好的", (ToolCall("a", "read", {"path": "a.txt"}),)),
           ToolMessage("a", "内容 ✓"), UserMessage("再读 b.txt")]
report = {"platform": sys.platform, "flock": hasattr(fcntl, "flock"), "link": hasattr(os, "link"),
          "has_lock": has_lock()}
path = Path(tempfile.mkdtemp()) / "session.jsonl"

def attempt(name, action):
    try:
        report[name] = action()
    except Exception as error:
        report[name] = f"{type(error).__name__}: {error}"

def append():
    for message in history:
        append_session(path, message)
    return path.read_text(encoding="utf-8")

def repair():
    with path.open("ab") as file:
        file.write(b'{"role":"user","con')  # a torn last line
    repaired = repair_session(path)
    return [repaired.repaired, load_session(path) == history]

attempt("append", append)
attempt("load", lambda: load_session(path) == history)
def trims():
    found = {}
    for budget in BUDGETS:
        try:
            found[budget] = [to_record(m) for m in trim_context(load_session(path), budget)]
        except Exception as error:
            found[budget] = f"{type(error).__name__}: {error}"
    return found

attempt("trim", trims)
attempt("repair", repair)
print("HONESTY " + json.dumps(report, ensure_ascii=False))
"""
)


def trimmed(history: list[Message], budget: int) -> list[dict[str, Any]] | str:
    try:
        return [to_record(message) for message in trim_context(history, budget)]
    except ContextBudgetError as error:
        return f"ContextBudgetError: {error}"


def test_the_package_appends_loads_trims_and_repairs_in_pyodide(
    browser: Browser, base_url: str, tmp_path: Path
) -> None:
    """In the browser `fcntl` has no `flock` and `os` no `link`: the package must still work."""
    history: list[Message] = [
        UserMessage("读一下 a.txt"),
        AssistantMessage("好的", (ToolCall("a", "read", {"path": "a.txt"}),)),
        ToolMessage("a", "内容 ✓"),
        UserMessage("再读 b.txt"),
    ]
    results = [trimmed(history, budget) for budget in BUDGETS]
    assert len({json.dumps(result) for result in results}) == len(BUDGETS)  # each budget differs
    for message in history:  # what CPython writes, to compare byte for byte
        append_session(tmp_path / "session.jsonl", message)
    query = urllib.parse.urlencode({"kernel": "python", "toolbar": "1", "code": HONESTY_CODE})
    page, start = open_page(browser, f"{base_url}/repl/index.html?{query}")
    try:
        output = page.locator(".jp-OutputArea-output", has_text="HONESTY ")
        expect(output).to_have_count(1, timeout=120_000)
        page.screenshot(path=SCREENSHOTS / "site-repl-package.png")
        report = json.loads((output.text_content() or "").split("HONESTY ", 1)[1])
        assert report["platform"] == "emscripten"
        assert (report["flock"], report["link"]) == (False, False), "the browser's limits"
        assert report["has_lock"] is False  # the package knows it appends without a lock here
        assert report["append"] == (tmp_path / "session.jsonl").read_text(encoding="utf-8")
        assert report["load"] is True
        assert report["trim"] == {str(budget): trimmed(history, budget) for budget in BUDGETS}
        assert report["repair"] == [True, True], f"repair_session in Pyodide: {report['repair']}"
        assert foreign(browser.log.since(start)) == []
    finally:
        page.close()


def test_desktop_jupyterlab_opens_jsonl_as_text_with_the_kits_settings(tmp_path: Path) -> None:
    """`jupyter lab --LabApp.app_settings_dir=jupyter` reads jupyter/overrides.json: the text
    editor becomes the default viewer for `.jsonl`, as in the site (whose build checks it)."""
    from jupyterlab.commands import get_app_dir  # type: ignore[import-untyped]
    from jupyterlab_server.settings_utils import get_settings

    plugin = "@jupyterlab/docmanager-extension:plugin"
    schemas = str(Path(get_app_dir()) / "schemas")
    kit, _ = get_settings(str(ROOT / "jupyter"), schemas, str(tmp_path), schema_name=plugin)
    plain, _ = get_settings(str(tmp_path), schemas, str(tmp_path), schema_name=plugin)
    viewers = kit["schema"]["properties"]["defaultViewers"]["default"]
    assert viewers["jsonl"] == "Editor"
    assert plain["schema"]["properties"]["defaultViewers"]["default"].get("jsonl") != "Editor"


def test_the_kits_lab_command_passes_that_settings_folder() -> None:
    import kit

    assert f"--LabApp.app_settings_dir={ROOT / 'jupyter'}" in kit.lab_options()
    # the tabs it reopens are this checkout's, in a folder git ignores
    assert f"--LabApp.workspaces_dir={ROOT / '.jupyter-workspaces'}" in kit.lab_options()
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", ".jupyter-workspaces/default.jupyterlab-workspace"],
        cwd=ROOT, check=False,
    )  # fmt: skip
    assert ignored.returncode == 0


# The first page's links, what persists, and `.jsonl` as text (a student's walk)

WALK = ("00_guide.ipynb", "03_corrupted_records.ipynb", "05_character_budget.ipynb")
CORRUPTED = '{"role":"user","content":"读一下 a.txt"}\n{"role":"assistant","content":"我来读。"}\n{"role":"user","con\n'


# Each Pyodide kernel is one dedicated worker of the page that started it; count those alive.
COUNT_KERNELS = """(() => {
  const Original = window.Worker;
  window.__kernels = 0;
  window.Worker = class extends Original {
    constructor(url, options) {
      super(url, options);
      if (String(url).includes("comlink.worker")) {
        window.__kernels += 1;
        const terminate = this.terminate.bind(this);
        this.terminate = () => { window.__kernels -= 1; terminate(); };
      }
    }
  };
})();"""


NOTEBOOK_KERNEL_IDLE = """() => {
  const kernel = window.jupyterapp?.shell?.currentWidget?.sessionContext?.session?.kernel;
  return kernel?.status === 'idle' && kernel.connectionStatus === 'connected'
    && document.querySelector('.jp-NotebookKernelStatus')?.textContent === '';
}"""


def kernels(context: BrowserContext) -> int:
    return sum(int(page.evaluate("() => window.__kernels ?? 0")) for page in context.pages)


def repl(context: BrowserContext, base_url: str, code: str) -> str:
    """Run `code` in a fresh REPL page of the site (cwd /drive) and return what it printed."""
    query = urllib.parse.urlencode({"kernel": "python", "code": code + "\nprint('DONE')"})
    page = context.new_page()
    try:
        page.goto(f"{base_url}/repl/index.html?{query}")
        expect(page.locator(".jp-OutputArea-output", has_text="DONE")).to_have_count(
            1, timeout=120_000
        )
        return "\n".join(page.locator(".jp-OutputArea-output").all_text_contents())
    finally:
        page.close()


def test_a_student_walks_the_first_page_and_finds_what_the_guide_says_persists(
    site: Path, browser: Browser, base_url: str
) -> None:
    cells = json.loads((site / "files" / "00_guide.ipynb").read_text("utf-8"))["cells"]
    guide = "".join(cells[-1]["source"])  # the guide's last section, 在浏览器里
    assert guide.startswith("## 在浏览器里")
    assert "关掉浏览器再打开都还在" in guide and "/drive" in guide and "tempfile" in guide
    assert "08_performance_and_tokens.ipynb" not in (site / "files" / "00_guide.ipynb").read_text(
        "utf-8"
    )
    context = browser.context.browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[union-attr]
    context.on("request", browser.log.record)
    context.add_init_script(COUNT_KERNELS)
    start = len(browser.log.urls)
    try:
        landing = context.new_page()
        landing.goto(f"{base_url}/")
        for name in WALK:  # one notebook per page: a link opens it in this tab, Back returns
            started = time.monotonic()
            href = landing.locator(f'ol a[href$="?path={name}"]').get_attribute("href")
            landing.goto(f"{base_url}/{href}")  # as a click does (Playwright then sees its workers)
            # the notebook's kernel answered (idle), and the app's "Kernel Connecting" is gone
            landing.wait_for_function(NOTEBOOK_KERNEL_IDLE, timeout=120_000)
            browser.timings.single[name] = time.monotonic() - started
            measured("site_link", time.monotonic() - started)
            expect(landing.locator(".jp-Notebook")).to_have_count(1)
            assert kernels(context) == 1, f"{kernels(context)} kernels with {name} open"
            landing.goto(f"{base_url}/")  # back to the first page: the notebook's page is gone
            expect(landing.get_by_role("link", name="从导读开始")).to_be_visible()
        assert kernels(context) == 0
        # what the guide says persists: a file written beside the notebooks survives a reload
        # (a new page and kernel); one in a tempfile folder lives only in its kernel
        written = repl(context, base_url, "import pathlib, tempfile\n"
                       f"pathlib.Path('broken.jsonl').write_text({CORRUPTED!r}, encoding='utf-8')\n"
                       "folder = tempfile.mkdtemp(); pathlib.Path(folder, 's.jsonl').write_text('x')\n"
                       "print('TMP', folder)")  # fmt: skip
        folder = re.search(r"TMP (\S+)", written).group(1)  # type: ignore[union-attr]
        full = landing.get_by_role("link", name="完整界面").first.get_attribute("href")
        lab = context.new_page()
        lab.goto(f"{base_url}/{full}")  # the full interface, without an earlier visit's tabs
        item = lab.locator(".jp-DirListing-itemText", has_text="broken.jsonl")
        lab.reload()
        item.dblclick()
        editor = lab.locator(".jp-FileEditor")
        expect(editor).to_contain_text('{"role":"user","con', timeout=30_000)
        expect(lab.locator(".jp-Dialog")).to_have_count(0)
        lab.screenshot(path=SCREENSHOTS / "site-jsonl-as-text.png")
        lab.close()
        after = repl(context, base_url, "import os\n"
                     f"print('KEPT', os.path.exists('broken.jsonl'), os.path.exists({folder!r}))")  # fmt: skip
        assert "KEPT True False" in after
        # a saved copy hides the site's notebook; deleting it brings the site's back
        shadow = repl(context, base_url, "import json, os, pathlib\np = pathlib.Path('00_guide.ipynb')\n"
                      "nb = json.loads(p.read_text()); nb['cells'][0]['source'] = ['# 我的']\n"
                      "p.write_text(json.dumps(nb)); print('MINE', json.loads(p.read_text())['cells'][0]['source'])\n"
                      "os.remove(p); print('SITE', ''.join(json.loads(p.read_text())['cells'][0]['source'])[:6])")  # fmt: skip
        assert "MINE ['# 我的']" in shadow and "SITE # 00 导" in shadow, shadow
        # the first page's reset clears what the browser keeps
        landing.on("dialog", lambda dialog: dialog.accept())
        landing.get_by_role("button", name="清空本站存在这个浏览器里的文件").click()
        expect(landing.locator("#reset-status")).to_contain_text("已清空")
        cleared = repl(
            context,
            base_url,
            "import os\nprint('GONE', os.path.exists('broken.jsonl'), os.path.exists('00_guide.ipynb'))",
        )
        assert "GONE False True" in cleared
        landing.close()
    finally:
        context.close()
    assert foreign(browser.log.since(start)) == []


NOTEBOOK_APP = "notebooks/index.html"  # the single-document app the first page links
SAVED_NOTEBOOK = """name => new Promise((resolve, reject) => {
  const opened = indexedDB.open("JupyterLite Storage - /");
  opened.onerror = reject;
  opened.onsuccess = () => {
    const read = opened.result.transaction("files").objectStore("files").get(name);
    read.onsuccess = () => resolve(read.result ? read.result.content : null);
  };
})"""


def stream_texts(notebook: dict[str, Any]) -> list[str]:
    return [
        "".join(output["text"])
        for cell in notebook["cells"]
        for output in cell.get("outputs", [])
        if output["output_type"] == "stream"
    ]


def test_a_notebook_saved_in_the_browser_keeps_its_printed_outputs(
    site: Path, browser: Browser, base_url: str
) -> None:
    """JupyterLab turned a stream output stored as a list of lines into "line 1\\n,line 2" when
    it saved a notebook it had not run (found by a dry run: commas in every printed output
    after a reload). The site stores each as one string, as a Jupyter server sends it."""
    name = "04_context_units.ipynb"
    stored = json.loads((site / "files" / name).read_text(encoding="utf-8"))
    assert all(
        isinstance(field, str)
        for cell in stored["cells"]
        for field in [cell["source"], *(o["text"] for o in cell.get("outputs", []) if "text" in o)]
    )
    context = browser.context.browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[union-attr]
    context.on("request", browser.log.record)
    start = len(browser.log.urls)
    try:
        page = context.new_page()
        page.goto(f"{base_url}/{NOTEBOOK_APP}?path={name}")
        page.locator(".jp-Notebook .jp-MarkdownCell").first.dblclick()  # edit the title cell
        page.keyboard.press("End")
        page.keyboard.type(" ")
        page.keyboard.press("Escape")
        page.keyboard.press("Control+s")
        page.wait_for_function(f"async () => (await ({SAVED_NOTEBOOK})({name!r})) !== null")
        saved = page.evaluate(f"({SAVED_NOTEBOOK})({name!r})")
        assert stream_texts(saved) == stream_texts(stored)
        assert not any("\n," in text for text in stream_texts(saved))
    finally:
        context.close()
    assert foreign(browser.log.since(start)) == []
