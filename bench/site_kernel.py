"""Where the browser edition's first kernel spends its seconds: wall clock and CPU per thread.

    .venv-dev/bin/python -m bench.site_kernel [--site _site] [--runs 3]

Needs a built site (`python kit.py site`) and Debian's Chromium. Each run opens `lab/` on
00_guide in a fresh browser context, as the first page's start button does, and reports:
when JupyterLab asked for the kernel, when the kernel's worker had Python up, when the kernel
was idle (seconds since the page began); and the CPU seconds each kind of thread of the page's
renderer processes used until then (Linux's /proc: the main thread, the kernel's worker, V8's
background threads). Runs alternate between starting from the site's memory snapshot and
without it (the snapshot's URL answered 404), so both see the same machine. Nothing here is a
test: bench/README.md records what it printed, with the load average.
"""

from __future__ import annotations

import argparse
import collections
import functools
import http.server
import os
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import BrowserContext, sync_playwright

# CPU per thread comes from Linux's /proc (and Debian's Chromium): the rest is Linux only
assert sys.platform == "linux", "bench.site_kernel measures on Linux"

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"]  # fmt: skip
ENTRY = "lab/index.html?reset&open=00_guide.ipynb"
IDLE = """() => {
  const kernel = window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel;
  return kernel?.status === 'idle' && kernel.connectionStatus === 'connected';
}"""
THREADS = {"chromium": "main", "CrRendererMain": "main", "DedicatedWorker": "worker",
           "ThreadPoolForeg": "V8 background"}  # fmt: skip


@dataclass
class Run:
    snapshot: bool
    asked: float  # s since the page began: JupyterLab asked for a kernel
    python_up: float  # the worker's Python and the kernel's imports were up
    idle: float  # the kernel idle, from page.goto
    cpu: dict[str, float]  # CPU seconds by kind of thread, until idle


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


class Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a page closed while a file was on its way: nothing to report


@contextmanager
def served(site: Path) -> Iterator[str]:
    server = Server(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def renderers() -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and b"--type=renderer" in (entry / "cmdline").read_bytes():
                found.add(int(entry.name))
        except OSError:
            continue
    return found


def cpu_by_thread(pids: set[int]) -> dict[str, float]:
    ticks = os.sysconf("SC_CLK_TCK")
    used: dict[str, float] = collections.defaultdict(float)
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                name = (task / "comm").read_text().strip()
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            used[THREADS.get(name, "other")] += (int(fields[11]) + int(fields[12])) / ticks
    return dict(used)


def one_run(context: BrowserContext, base: str, snapshot: bool) -> Run:
    if not snapshot:
        context.route("**/kit-snapshot.bin.gz", lambda route: route.fulfill(status=404))
    before = renderers()
    page = context.new_page()
    started = time.monotonic()
    page.goto(f"{base}/{ENTRY}")
    page.wait_for_function(IDLE, timeout=120_000, polling=50)
    idle = time.monotonic() - started
    cpu = cpu_by_thread(renderers() - before)
    worker = page.evaluate("window.__kitKernels.workers[0]")
    assert worker["restored"] is snapshot, worker
    return Run(snapshot, worker["handed"] / 1000, worker["loaded"] / 1000, idle, cpu)


def spread(values: list[float]) -> str:
    return f"{min(values):.1f}\u2013{max(values):.1f}" if len(values) > 1 else f"{values[0]:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=ROOT / "_site")
    parser.add_argument("--runs", type=int, default=3, help="runs of each kind (default 3)")
    args = parser.parse_args()
    assert (args.site / "lab" / "index.html").is_file(), "build the site: python kit.py site"
    load_before = os.getloadavg()[0]
    runs: list[Run] = []
    with served(args.site) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        for _ in range(args.runs):
            for snapshot in (True, False):
                # no service worker: it would fetch the snapshot where no route sees it
                context = browser.new_context(service_workers="block")
                runs.append(one_run(context, base, snapshot))
                context.close()
        browser.close()
    print(f"load average (1 min) before, after: {load_before:.2f}, {os.getloadavg()[0]:.2f}; "
          f"{os.cpu_count()} cores; {args.runs} runs of each")  # fmt: skip
    print("| start | kernel asked for (s) | Python up (s) | kernel idle (s) | CPU s: main | worker "
          "| V8 background | all threads |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for snapshot in (True, False):
        mine = [run for run in runs if run.snapshot is snapshot]
        cpu = {kind: [run.cpu.get(kind, 0.0) for run in mine] for kind in THREADS.values()}
        total = [sum(run.cpu.values()) for run in mine]
        print(
            f"| {'snapshot' if snapshot else 'ordinary'} | {spread([r.asked for r in mine])} "
            f"| {spread([r.python_up for r in mine])} | {spread([r.idle for r in mine])} "
            f"| {spread(cpu['main'])} | {spread(cpu['worker'])} | {spread(cpu['V8 background'])} "
            f"| {spread(total)} (median {statistics.median(total):.1f}) |"
        )


if __name__ == "__main__":
    main()
