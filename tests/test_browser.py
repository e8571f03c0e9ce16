"""The explorers in a real browser: JupyterLab headless, Debian's Chromium through Playwright.

The test writes a notebook into a temp dir, runs all its cells in JupyterLab, moves the budget
slider and presses the unit stepper's Next, and checks that the page then shows what the
package computes for the new values. Screenshots go to `screenshots/` (git-ignored). Every
process the test starts (JupyterLab, its kernel, Chromium) is stopped, pass or fail.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from mini_agent.explorer_logic import scan_position_text, unit_scan_steps
from mini_agent.explorers import BudgetExplorer
from mini_agent.samples import sample_session
from mini_agent.views import TrimView

ROOT = Path(__file__).resolve().parent.parent
SCREENSHOTS = ROOT / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
TOKEN = "explorers-browser-test"
NOTEBOOK = "explorers.ipynb"
FIXTURE_CELLS = [  # later: notebooks/05 (budget slider) and notebooks/04 (unit stepper)
    "from mini_agent.explorers import BudgetExplorer, UnitScanStepper",
    "budget = BudgetExplorer()\nbudget",
    "stepper = UnitScanStepper()\nstepper",
]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def descendants(pid: int) -> set[int]:
    """Every live process below `pid` (Linux /proc), e.g. the kernels JupyterLab started."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
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
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has already stopped


@dataclass
class Lab:
    url: str
    process: subprocess.Popen[bytes]
    log: Path


def write_fixture_notebook(folder: Path) -> None:
    cells: list[dict[str, object]] = [
        {"cell_type": "code", "metadata": {}, "source": source, "outputs": [],
         "execution_count": None}
        for source in FIXTURE_CELLS
    ]  # fmt: skip
    kernel = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    notebook = {"cells": cells, "metadata": {"kernelspec": kernel}, "nbformat": 4,
                "nbformat_minor": 5}  # fmt: skip
    (folder / NOTEBOOK).write_text(json.dumps(notebook), encoding="utf-8")


def write_lab_settings(settings: Path) -> None:
    """Start the notebook's kernel without asking; no news or update toast, no outside request."""
    for plugin, values in {
        "apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
        "notebook-extension/tracker": {"autoStartDefaultKernel": True},
    }.items():
        target = settings / "@jupyterlab" / f"{plugin}.jupyterlab-settings"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values), encoding="utf-8")


def wait_until_serving(lab: Lab, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if lab.process.poll() is not None:
            pytest.fail(f"JupyterLab exited early:\n{lab.log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{lab.url}/api/status?token={TOKEN}", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"JupyterLab did not answer in {timeout} s:\n{lab.log.read_text()[-3000:]}")


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
            os.kill(pid, signal.SIGKILL)
    return started


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    notebooks, settings = tmp_path / "notebooks", tmp_path / "settings"
    notebooks.mkdir()
    write_fixture_notebook(notebooks)
    write_lab_settings(settings)
    port = free_port()
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(settings),
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
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = tmp_path / "jupyterlab.log"
    with log.open("wb") as output:
        process = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT)
    running = Lab(f"http://127.0.0.1:{port}", process, log)
    stopped: set[int] = set()
    try:
        wait_until_serving(running)
        yield running
    finally:
        stopped = stop(running)
    assert len(stopped) >= 2, "the server and at least its kernel"
    assert not any(alive(pid) for pid in stopped)


def run_all_cells(page: Page) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    item = page.locator(".lm-Menu-item", has=page.get_by_text("Run All Cells", exact=True))
    item.click()


def test_explorers_respond_in_jupyterlab(lab: Lab) -> None:
    assert CHROMIUM.exists(), "install Debian's Chromium: apt-get install -y chromium"
    SCREENSHOTS.mkdir(exist_ok=True)
    messages = sample_session()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1600})
            page.goto(f"{lab.url}/lab/tree/{NOTEBOOK}?token={TOKEN}")
            page.locator(".jp-Notebook").wait_for(timeout=60_000)
            kernel = page.get_by_text("Python 3 (ipykernel) | Idle")
            expect(kernel).to_be_visible(timeout=60_000)
            run_all_cells(page)
            page.screenshot(path=SCREENSHOTS / "explorers-0-run-all.png", full_page=True)
            outputs = page.locator(".jp-Notebook")
            initial = BudgetExplorer().slider.value
            start = TrimView(messages, initial).summary()
            expect(outputs.first).to_contain_text(start, timeout=60_000)
            expect(page.get_by_text("start: index=14, units = []")).to_be_visible()
            page.screenshot(path=SCREENSHOTS / "explorers-1-loaded.png", full_page=True)

            handle = page.locator(".widget-slider .noUi-handle").first
            box = handle.bounding_box()
            assert box is not None
            x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
            page.mouse.move(x, y)
            page.mouse.down()
            page.mouse.move(x - 200, y, steps=10)
            page.mouse.up()
            readout = page.locator(".widget-readout").first
            expect(readout).not_to_have_text(str(initial))
            moved = int(readout.inner_text())
            expected = TrimView(messages, moved).summary()
            assert expected != start
            expect(outputs.first).to_contain_text(expected, timeout=30_000)
            page.screenshot(path=SCREENSHOTS / "explorers-2-budget-moved.png", full_page=True)

            page.get_by_role("button", name="Next ▶").first.click()
            steps = unit_scan_steps(messages)
            first_step = scan_position_text(messages, steps, 1).splitlines()[0]
            expect(page.get_by_text(first_step)).to_be_visible(timeout=30_000)
            page.screenshot(path=SCREENSHOTS / "explorers-3-stepper-next.png", full_page=True)
        finally:
            browser.close()
