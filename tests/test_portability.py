"""Every public function where Unix-only pieces are missing: Pyodide's, Windows' one by one.

Each case runs `portable_checks` in a fresh interpreter whose `os` and `fcntl` have been made to
look like the platform's before the package is imported: Pyodide's `fcntl` has no `flock` and
its `os` no `link`; without `os.pread`, `os.O_CLOEXEC`, `os.fchmod`, `os.geteuid`, … the
fallbacks Windows takes run on Linux too. Windows itself is not imitated: the `windows` part of
`kit.py test` runs the suite under a real Windows CPython.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from . import portable_checks
from .platforms import SIMULATION, posix_only

ROOT = Path(__file__).resolve().parent.parent
CHECKS = Path(__file__).with_name("portable_checks.py")

WINDOWS_OS = (
    "pread", "pwrite", "O_CLOEXEC", "O_NONBLOCK", "O_NOFOLLOW", "fchmod", "fchown",
    "geteuid", "getuid", "register_at_fork",
)  # fmt: skip

# name -> (what to hide from os, how fcntl looks: "real" | "missing" | "no-flock", has_lock)
PLATFORMS = {
    "no-pread-cloexec-fchmod": (WINDOWS_OS, "real", True),
    "fcntl-without-flock": ((), "no-flock", False),
    "no-os-link": (("link",), "real", True),
    "pyodide": (("link",), "no-flock", False),
}  # Windows itself: the `windows` part runs these checks under a real Windows CPython

PRELUDE = textwrap.dedent(
    """
    import os, runpy, sys, types
    import json, pathlib, tempfile, threading  # the standard library's own, loaded as it is
    hidden, fcntl_kind, checks, folder = {hidden!r}, {fcntl!r}, {checks!r}, {folder!r}
    for name in hidden:
        delattr(os, name)
    if fcntl_kind == "missing":
        sys.modules["fcntl"] = None  # import fcntl raises ImportError
    elif fcntl_kind == "no-flock":
        sys.modules["fcntl"] = types.ModuleType("fcntl")  # Pyodide's: importable, empty
    sys.argv = [checks, folder]
    runpy.run_path(checks, run_name="__main__")
    """
)


@posix_only(SIMULATION)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_public_function_works_without_the_unix_only_pieces(
    tmp_path: Path, platform: str
) -> None:
    hidden, fcntl_kind, has_lock = PLATFORMS[platform]
    code = PRELUDE.format(hidden=hidden, fcntl=fcntl_kind, checks=str(CHECKS), folder=str(tmp_path))
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, encoding="utf-8", timeout=120
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["passed"] == [check.__name__ for check in portable_checks.CHECKS]
    assert report["has_lock"] is has_lock  # no flock: the documented fallback, not a crash


def test_every_public_function_works_here_with_nothing_hidden(tmp_path: Path) -> None:
    # the same checks on this system as it is: under Windows CPython, the real Windows case
    run = subprocess.run(
        [sys.executable, str(CHECKS), str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        encoding="utf-8",
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["passed"] == [check.__name__ for check in portable_checks.CHECKS]
    assert report["platform"] == sys.platform


@posix_only(SIMULATION)
def test_the_prelude_really_hides_what_it_names(tmp_path: Path) -> None:
    # A check that cannot fail is worthless: the same prelude, then try the hidden pieces.
    code = PRELUDE.format(hidden=(*WINDOWS_OS, "link"), fcntl="missing", checks="", folder="")
    code = code.split("sys.argv =")[0] + textwrap.dedent(
        """
        missing = [name for name in hidden if hasattr(os, name)]
        try:
            import fcntl
        except ImportError:
            missing.append("fcntl is gone")
        print(missing)
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, encoding="utf-8", timeout=60
    )
    assert run.stdout.strip() == "['fcntl is gone']", run.stderr
