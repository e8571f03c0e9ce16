"""Tests that cannot run on every system, marked with their reason, skipped and counted.

- `@posix_only("why")`: the test checks a POSIX facility itself (SIGKILL, `fcntl`, mode bits,
  `fork`, a tmpfs), which Windows does not have: skipped on Windows.
- `@not_under_wine("why")`: the test holds on real Windows, but Wine's emulation cannot show
  it (Wine here runs as root, who ignores the read-only attribute): skipped under Wine only,
  so it still runs on a real Windows machine.

Anywhere else the marks do nothing: the test runs. A skip they make has a reason starting with
"POSIX-only: " or "Wine cannot show: "; `--fail-on-skip` (tests.strict_skips) lets exactly
those through, and the run ends with how many were skipped for each reason (the windows part
of `kit.py test` repeats that count).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from functools import cache

import pytest


@cache
def under_wine() -> bool:
    """Whether this is Windows emulated by Wine (its ntdll exports wine_get_version)."""
    if sys.platform != "win32":
        return False
    import ctypes

    return hasattr(ctypes.WinDLL("ntdll"), "wine_get_version")


def _on_windows() -> bool:
    return sys.platform == "win32"


# The reasons, one wording each, so that the count by reason adds up what belongs together.
SIGNALS_AND_RLIMITS = "POSIX signals (SIGKILL, SIGXFSZ) and resource limits: Windows has neither"
TMPFS = "mounts a tmpfs: Linux only"
FORK_AND_SETUID = "fork and a drop to an unprivileged user: POSIX only"
PEAK_MEMORY = "peak memory through resource.getrusage: POSIX only"
MODE_BITS = "mode bits: Windows keeps only a read-only flag (no 0600, no denied read)"
SYMLINKS = "symbolic links: Windows makes them only with a privilege, and Wine makes none"
RENAME_OVER_OPEN = "renaming a file over one held open: Windows refuses it"
HOSTILE_NAMES = "control characters and a non-UTF-8 byte in a file name: Windows forbids both"
SIMULATION = "hides POSIX pieces to act Windows and Pyodide: on Windows the suite is the real thing"
ROOT_IGNORES_READ_ONLY = "Wine runs as root here, and root ignores the read-only attribute"
REAL_FAULTS = "real faults: FIFOs, SIGKILL, tmpfs and bind mounts, another user (the faults part)"

# mark name -> (the skip reason's first words, whether this system skips it)
MARKS: dict[str, tuple[str, Callable[[], bool]]] = {
    "posix_only": ("POSIX-only: ", _on_windows),
    "not_under_wine": ("Wine cannot show: ", under_wine),
}


def _mark(name: str, reason: str) -> pytest.MarkDecorator:
    if not reason.strip():
        raise ValueError(f"@{name} names its reason")
    mark: pytest.MarkDecorator = getattr(pytest.mark, name)(reason)
    return mark


def posix_only(reason: str) -> pytest.MarkDecorator:
    """`@posix_only("SIGKILL: Windows has no POSIX signals")`, or a module's `pytestmark`."""
    return _mark("posix_only", reason)


def not_under_wine(reason: str) -> pytest.MarkDecorator:
    """`@not_under_wine("root ignores the read-only attribute")`: runs on real Windows."""
    return _mark("not_under_wine", reason)


def posix_only_module(reason: str) -> None:
    """A whole test file of POSIX facilities: on Windows, skip it at collection.

    Follow it with `assert sys.platform != "win32"`, which tells mypy --platform win32 that
    the rest of the file is POSIX only (mypy reads the assert, not this call).
    """
    if _on_windows():
        pytest.skip(MARKS["posix_only"][0] + reason, allow_module_level=True)


def skipped_here(item: pytest.Item) -> str | None:
    """The skip reason one of these marks gives the item on this system, or None."""
    for name, (prefix, skips) in MARKS.items():
        mark = item.get_closest_marker(name)
        if mark is not None and skips():
            return prefix + str(mark.args[0])
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "posix_only(reason): tests a facility only POSIX has")
    config.addinivalue_line("markers", "not_under_wine(reason): holds on Windows, not in Wine")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        reason = skipped_here(item)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=reason))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    reasons: Counter[str] = Counter()
    prefixes = tuple(f"Skipped: {prefix}" for prefix, _ in MARKS.values())
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = getattr(report, "longrepr", None)
        if isinstance(longrepr, tuple) and str(longrepr[2]).startswith(prefixes):
            reasons[str(longrepr[2]).removeprefix("Skipped: ")] += 1
    if not reasons:
        return
    terminalreporter.write_line(f"platform skips: {sum(reasons.values())}, by reason:")
    for reason, count in sorted(reasons.items(), key=lambda pair: (-pair[1], pair[0])):
        terminalreporter.write_line(f"  {count:3} {reason}")
