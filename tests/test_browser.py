"""The explorers in a real browser: JupyterLab headless, Debian's Chromium through Playwright.

The test copies the real notebooks 05 (budget slider) and 04 (unit-scan stepper) into a temp
dir (the repository's copies are never opened, so nothing in the repo changes), runs all their
cells in JupyterLab, moves the slider and presses the stepper's buttons, and checks that the page
then shows what the package computes for the new values, from the inputs the notebooks use.
Screenshots go to `screenshots/` (git-ignored). Every process the test starts (JupyterLab, its
kernels, Chromium) is stopped, pass or fail.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect, sync_playwright

import kit
from teaching.explorer_logic import scan_position_text
from teaching.samples import chapter_picture
from teaching.text import words
from teaching.trace import scan_steps

from .budget_slider import drag_budget_slider
from .helpers import CHROMIUM, CHROMIUM_FLAGS, HARD_KILL, free_port, wait_until_serving

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "screenshots"
TOKEN = "explorers-browser-test"
BUDGET_NOTEBOOK = "05_character_budget.ipynb"  # BudgetExplorer() over sample_session()
STEPPER_NOTEBOOK = "04_context_units.ipynb"  # UnitScanStepper(history), history = chapter_picture()


def descendants(pid: int) -> set[int]:
    """Every live process below `pid` (Linux /proc), e.g. the kernels JupyterLab started."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="utf-8")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has already stopped


@dataclass
class Lab:
    url: str
    process: subprocess.Popen[bytes]
    log: Path


def write_lab_settings(settings: Path, extra: dict[str, dict[str, object]]) -> None:
    """Start the notebook's kernel without asking, then `extra` (plugin → values) on top.

    Everything else is the kit's own `jupyter/overrides.json` (no news or update toast, no
    autosave, `.jsonl` as text), passed as `kit.py lab` passes it."""
    plugins: dict[str, dict[str, object]] = {
        "notebook-extension/tracker": {"autoStartDefaultKernel": True},
    }
    for plugin, values in extra.items():
        plugins[plugin] = {**plugins.get(plugin, {}), **values}
    for plugin, values in plugins.items():
        target = settings / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values), encoding="utf-8")


def stop(lab: Lab) -> set[int]:
    """Shut the server down (it stops its kernels), then end whatever it left, by pid.

    Returns the pids it stopped: the server and every process it had started."""
    started = descendants(lab.process.pid) | {lab.process.pid}
    request = urllib.request.Request(
        f"{lab.url}/api/shutdown", method="POST", headers={"Authorization": f"token {TOKEN}"}
    )
    try:
        urllib.request.urlopen(request, timeout=10).close()
        lab.process.wait(timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        lab.process.terminate()
        try:
            lab.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            lab.process.kill()
            lab.process.wait()
    for pid in sorted(started):
        if alive(pid):
            os.kill(pid, HARD_KILL)
    return started


@contextmanager
def running_lab(
    tmp_path: Path,
    names: tuple[str, ...],
    settings: dict[str, dict[str, object]] | None = None,
    *,
    kernels_left: bool = True,
) -> Iterator[Lab]:
    """JupyterLab on loopback over copies of the notebooks `names`, with its own settings;
    every process it started is stopped afterwards, pass or fail (`kernels_left`: the tests
    leave kernels running, so the server must have had at least one to stop)."""
    notebooks, folder = tmp_path / "notebooks", tmp_path / "settings"
    notebooks.mkdir()
    for name in names:
        shutil.copy(ROOT / "notebooks" / name, notebooks / name)
    write_lab_settings(folder, settings or {})
    port = free_port()
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(folder),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"),
    )
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={TOKEN}",
        f"--ServerApp.root_dir={notebooks}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        # as `kit.py lab` (its settings, its save hook), with a workspace of the test's own
        *(option for option in kit.lab_options() if "workspaces_dir" not in option),
        "--LabApp.expose_app_in_browser=True",  # commands run by id, whatever the UI language
    ]
    if sys.platform != "win32" and os.geteuid() == 0:
        command.append("--allow-root")
    log = tmp_path / "jupyterlab.log"
    with log.open("wb") as output:
        process = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT)
    running = Lab(f"http://127.0.0.1:{port}", process, log)
    stopped: set[int] = set()
    try:
        wait_until_serving(running.url, TOKEN, running.process, running.log)
        yield running
    finally:
        stopped = stop(running)
    assert len(stopped) >= (2 if kernels_left else 1), "the server and at least its kernel"
    assert not any(alive(pid) for pid in stopped)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with running_lab(tmp_path_factory.mktemp("lab"), (BUDGET_NOTEBOOK, STEPPER_NOTEBOOK)) as lab:
        yield lab


def kernel_idle(page: Page) -> Locator:
    """The status bar's kernel entry once idle, in English or in the kit's Chinese UI."""
    return page.get_by_text(re.compile(r"^Python 3 \(ipykernel\) \| (Idle|空闲)$"))


def run_all_cells(page: Page) -> None:
    """Run → Run All Cells, by the command's id (the menus' words follow the UI language)."""
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")


def code_cell_count(name: str) -> int:
    notebook = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))
    return sum(1 for cell in notebook["cells"] if cell["cell_type"] == "code")


@contextmanager
def notebook_page(lab: Lab, name: str) -> Iterator[Page]:
    """`name` open in JupyterLab (its own workspace), every cell run, in a fresh Chromium."""
    assert CHROMIUM.exists(), "install Debian's Chromium: apt-get install -y chromium"
    SCREENSHOTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1600})
            workspace = Path(name).stem.replace("_", "-")
            page.goto(f"{lab.url}/lab/workspaces/{workspace}/tree/{name}?reset&token={TOKEN}")
            page.locator(".jp-Notebook").wait_for(timeout=60_000)
            kernel = kernel_idle(page)
            expect(kernel).to_be_visible(timeout=60_000)
            run_all_cells(page)
            last = f"[{code_cell_count(name)}]:"  # the last cell's prompt once it has run
            expect(page.locator(".jp-InputPrompt", has_text=last)).to_have_count(1, timeout=60_000)
            expect(kernel).to_be_visible(timeout=60_000)
            yield page
        finally:
            browser.close()


def test_budget_slider_in_notebook_05_shows_what_trim_context_keeps(lab: Lab) -> None:
    with notebook_page(lab, BUDGET_NOTEBOOK) as page:
        explorer = page.locator(".jp-OutputArea-output").filter(has=page.locator(".widget-slider"))
        shots = SCREENSHOTS / "05-budget-after-run-all.png", SCREENSHOTS / "05-budget-moved.png"
        drag_budget_slider(page, explorer, *shots)


def test_unit_stepper_in_notebook_04_steps_through_the_chapters_scan(lab: Lab) -> None:
    history = chapter_picture()  # notebook 04's `history`
    steps = list(scan_steps(history))
    texts = [scan_position_text(history, steps, at).splitlines() for at in range(len(steps) + 1)]
    with notebook_page(lab, STEPPER_NOTEBOOK) as page:
        explorer = page.locator(".jp-OutputArea-output").filter(
            has=page.get_by_role("button", name=words().next)
        )
        expect(explorer).to_have_count(1)
        explorer.scroll_into_view_if_needed()
        prev = explorer.get_by_role("button", name=words().prev)
        next_ = explorer.get_by_role("button", name=words().next)
        # the notebook's checked cell clicked Next to the end of the scan, on this same widget
        expect(next_).to_be_disabled()
        for line in texts[-1]:
            expect(explorer).to_contain_text(line)
        for _ in steps:
            prev.click()
        expect(explorer).to_contain_text(texts[0][0])
        expect(prev).to_be_disabled()
        explorer.screenshot(path=SCREENSHOTS / "04-stepper-start.png")

        for at in range(1, len(steps) + 1):
            next_.click()
            for line in texts[at]:
                expect(explorer).to_contain_text(line, timeout=30_000)
            explorer.screenshot(path=SCREENSHOTS / f"04-stepper-step-{at}.png")
        expect(next_).to_be_disabled()
