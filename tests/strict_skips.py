"""`-p tests.strict_skips --fail-on-skip`: a skipped test fails the run (`python kit.py test --strict`).

CI proves the full tier, so a test that skips there (no Chromium, no node, not root, a tmpfs it
could not mount) has proven nothing and must fail, with its reason. Two skips are by design and
pass: a notebook cell tagged `nbval-skip` (none is now; a live-model cell would be), which nbval
reports as skipped without a reason, and on Windows a test marked `@posix_only(reason)`
(tests/platforms.py), which the run counts by reason.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fail-on-skip",
        action="store_true",
        help="a skipped test fails (except notebook cells tagged nbval-skip)",
    )


def _tagged_nbval_skip(item: pytest.Item) -> bool:
    options: Any = getattr(item, "options", None)  # nbval's NotebookCell keeps its cell's tags here
    return isinstance(options, dict) and bool(options.get("skip"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[Any, Any, None]:
    from .platforms import skipped_here  # here: conftest registers it, unrewritten otherwise

    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if not (report.skipped and item.config.getoption("--fail-on-skip")):
        return
    if _tagged_nbval_skip(item) or hasattr(report, "wasxfail") or skipped_here(item):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = f"skipped in a strict run (--fail-on-skip): {reason}"
