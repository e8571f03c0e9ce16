"""The core checks inside real Pyodide (the browser edition's Python), run by node.

`python kit.py test` installs the npm package `pyodide` at the version kit.py pins (the one
jupyterlite-pyodide-kernel loads) into the git-ignored `.cache/pyodide` before it runs this. The package's source is copied into Pyodide's in-memory filesystem, nothing installed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from . import portable_checks

ROOT = Path(__file__).resolve().parent.parent
PYODIDE = ROOT / ".cache" / "pyodide" / "node_modules" / "pyodide"
RUNNER = Path(__file__).with_name("pyodide") / "run_checks.mjs"


def pinned_version() -> str:
    match = re.search(
        r'^PYODIDE_VERSION = "(\S+)"$', (ROOT / "kit.py").read_text(encoding="utf-8"), re.M
    )
    assert match, "kit.py pins the Pyodide version"
    return match.group(1)


def test_the_core_checks_pass_inside_pyodide() -> None:
    node = shutil.which("node")
    if node is None or not (PYODIDE / "pyodide.mjs").exists():
        pytest.skip("needs node and `python kit.py test` (npm install into .cache/pyodide)")
    installed = json.loads((PYODIDE / "package.json").read_text(encoding="utf-8"))["version"]
    assert installed == pinned_version(), "run `python kit.py test` again: the pin changed"
    run = subprocess.run(
        [node, str(RUNNER), str(PYODIDE), str(ROOT)],
        capture_output=True,
        encoding="utf-8",
        timeout=180,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["passed"] == [check.__name__ for check in portable_checks.CHECKS]
    assert report["platform"] == "emscripten" and report["python"].startswith("3.")
    assert report["has_lock"] is False  # one process, one thread: the documented fallback
