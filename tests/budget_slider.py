"""Notebook 05's budget slider, dragged in a real browser and checked against the package.

Both browser tests use it: JupyterLab with ipykernel (`test_browser.py`) and the JupyterLite
edition (`test_site.py`).
"""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Locator, Page, expect

from teaching.samples import sample_session
from teaching.views import TrimView


def drag_budget_slider(page: Page, explorer: Locator, before: Path, after: Path) -> None:
    """Read where the slider landed, drag it, and check that the explorer shows what
    `TrimView` computes at both budgets (05's explorer is over `sample_session()`)."""
    messages = sample_session()
    expect(explorer).to_have_count(1)
    explorer.scroll_into_view_if_needed()
    readout = explorer.locator(".widget-readout")
    expect(readout).to_have_text(re.compile(r"\d+"))  # drawn a moment after the slider
    landed = int(readout.text_content() or "")  # textContent: what the wait just checked
    start = TrimView(messages, landed).summary()
    expect(explorer).to_contain_text(start, timeout=30_000)
    explorer.screenshot(path=before)
    handle = explorer.locator(".noUi-handle")
    handle.scroll_into_view_if_needed()
    box = handle.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x - 200, y, steps=10)
    page.mouse.up()
    expect(readout).not_to_have_text(str(landed))
    expect(readout).to_have_text(re.compile(r"\d+"))
    moved = int(readout.text_content() or "")
    expected = TrimView(messages, moved).summary()
    assert expected != start
    expect(explorer).to_contain_text(expected, timeout=30_000)
    explorer.screenshot(path=after)
