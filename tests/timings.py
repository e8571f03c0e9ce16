"""The times the guides quote, as the tests measure them: `docs/timings.json`.

A browser test calls `measured(name, seconds)` for what it timed (a kernel starting, a page, a
build, a stop of 95's route). When the run is over, every quantity measured in it replaces
its entry in `docs/timings.json`: its samples, their range, when, on which commit, and how
loaded the machine was — provided the run had no failure and ran every test it collected (a
`-k` run or a stop at the first failure changes nothing). The file is committed, so a clean
clone has the last full run's figures; `tests/test_quoted_times.py` fails when a time that
README.md, site/README.md, the first page, 00 or 95 quotes is outside them. A run that
measures other figures rewrites the file: `git diff docs/timings.json` shows what changed.
Nothing here asserts a speed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

if sys.platform != "win32":
    import fcntl

ROOT = Path(__file__).resolve().parent.parent
TIMINGS = ROOT / "docs" / "timings.json"

# What each quantity is, said once (the file carries it for a reader who opens it).
QUANTITIES = {
    "site_build_first": "python kit.py site on a clean clone: build environment, npm, lock, wheels",
    "site_build_again": "python kit.py site with its environment and caches kept (--force)",
    "site_lab_first": "browser edition: lab/ opened on a notebook, page load to its kernel idle",
    "site_lab_later": "browser edition: a notebook double-clicked in lab/, to its kernel idle",
    "site_link": "browser edition: a first-page link (one notebook per page) to its kernel idle",
    "site_page_js": "browser edition: lab/'s page load until JupyterLab asks for the kernel",
    "site_pyodide": "browser edition: a kernel worker's start until Pyodide and its imports are up",
    "route_page": "desktop JupyterLab, 95's route: a stop's notebook opened to its kernel idle",
    "route_cells": "desktop JupyterLab, 95's route: a stop's cells run as 95 says",
    "rise_open": "desktop JupyterLab: Alt+R until the RISE slideshow shows",
}

_samples: dict[str, list[float]] = {}
_deselected = 0
_load_before = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)


def measured(name: str, seconds: float) -> None:
    """Record one measurement of `name` (a key of QUANTITIES) in this run."""
    assert name in QUANTITIES, f"{name} is not a quantity of tests/timings.py"
    _samples.setdefault(name, []).append(round(seconds, 1))


def read() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(TIMINGS.read_text(encoding="utf-8"))
    return loaded


def read_committed() -> dict[str, Any]:
    """The file as the last commit holds it: the figures the guides' quotes were taken from.
    A run that measures anew rewrites the working copy beside the tests that read this, so
    the quotes are held against what was committed with them (outside git: the working copy)."""
    try:
        shown = subprocess.run(
            ["git", "show", "HEAD:docs/timings.json"],
            cwd=ROOT,
            capture_output=True,
            encoding="utf-8",
            check=False,
        )
    except OSError:  # no git (the windows part's copy of the checkout)
        return read()
    if shown.returncode != 0:  # not a checkout, or the file not committed yet
        return read()
    loaded: dict[str, Any] = json.loads(shown.stdout)
    return loaded


def _commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        encoding="utf-8",
        check=False,
    )
    return done.stdout.strip() or "unknown"


def pytest_deselected(items: list[pytest.Item]) -> None:
    global _deselected
    _deselected += len(items)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not _samples:
        return
    complete = exitstatus == 0 and _deselected == 0 and not session.shouldstop
    capture = session.config.pluginmanager.getplugin("capturemanager")
    if not complete:
        with capture.global_and_fixture_disabled():
            print(f"\ntimings: not written ({TIMINGS.name} keeps the last full run's)")
        return
    with _only_writer():
        _write()
    lines = [f"  {name}: {min(s)} to {max(s)} s ({len(s)})" for name, s in sorted(_samples.items())]
    with capture.global_and_fixture_disabled():
        print(f"\ntimings written to {TIMINGS.relative_to(ROOT)}:\n" + "\n".join(lines))


@contextmanager
def _only_writer() -> Iterator[None]:
    """kit.py runs the browser and site parts side by side: one rewrites the file at a time, so
    neither loses the other's figures (a lock file beside it; Windows runs no browser part)."""
    with TIMINGS.with_suffix(".lock").open("w", encoding="utf-8") as lock:
        if sys.platform != "win32":
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _write() -> None:
    load_after = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    timings = read() if TIMINGS.exists() else {"quantities": {}}
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for name, samples in sorted(_samples.items()):
        timings["quantities"][name] = {
            "what": QUANTITIES[name],
            "min": min(samples),
            "max": max(samples),
            "samples": samples,
            "run": when,
            "commit": _commit(),
            "cores": os.cpu_count(),
            "load average (1 min) before, after": [
                round(_load_before[0], 2),
                round(load_after[0], 2),
            ],
        }
    timings["quantities"] = dict(sorted(timings["quantities"].items()))
    written = TIMINGS.with_suffix(".partial")  # whole or not at all: a test may be reading it
    written.write_text(json.dumps(timings, ensure_ascii=False, indent=1) + "\n", "utf-8")
    written.replace(TIMINGS)
