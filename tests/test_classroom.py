"""Notebook 95's 45-minute route, driven in JupyterLab as an instructor drives it.

- `test_the_route_runs_stop_by_stop_from_a_fresh_kernel`: each stop in a fresh kernel, running
  exactly the cells 95 names, in its order, with the projector switch on (the browser zoomed to
  150 % on a 1280x720 projector: an 853x480 CSS-pixel window at 1.5 device pixels per pixel);
  each cell run as 95 says (click its code, Ctrl+Enter; a display cell's output then scrolled
  to the top); no error output, and the figures 95 quotes appear — on screen where the stop is
  about them (00's file lines and kept units, the edited line beside the loader's error and
  its 释义, 04's units beside the index table, the unit that does not fit, RunView's ○ in row
  0, the responsibility table's header), with no news toast over them. Nothing is saved into the notebooks, though autosave would
  have fired. Each stop's wall time goes to `screenshots/route-timing.json` (measured, never
  asserted).
- `test_layouts_fit_at_tablet_and_projector_sizes`: screenshots of 03-06 at 1280x720 and
  768x1024; the RunStepper's disk listing and model input never overlap at 1024-1920 px; every
  explorer fits the notebook's width with the file browser open at 768 px (00's stated minimum).
- `test_slides_show_05s_live_slider_and_stay_on_loopback`: 05's budget slider is the one
  explorer with a slide; run there in RISE it moves (the pinned widget manager loads in RISE's
  page), reached as 95 says (a click on the slide, the on-screen arrows, Space); no English
  placeholder and no request off loopback.

Copies of the notebooks run in a temp dir; the repository's notebooks never change.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Browser, FloatRect, Locator, Page, expect, sync_playwright

from teaching.explorer_logic import scan_position_text
from teaching.route import Stop as RouteStop
from teaching.route import named_cells, read_cells, stops_in
from teaching.samples import chapter_picture
from teaching.text import words
from teaching.trace import scan_steps

from .helpers import CHROMIUM, CHROMIUM_FLAGS
from .test_browser import (
    ROOT,
    SCREENSHOTS,
    TOKEN,
    Lab,
    kernel_idle,
    run_all_cells,
    running_lab,
)
from .timings import measured

ROUTE_NOTEBOOK = ROOT / "notebooks" / "95_instructor.ipynb"
# the notebooks 95's stops open (teaching.route finds the stops in 95; none is counted here)
ROUTE = tuple(sorted({stop.notebook for stop in stops_in(ROUTE_NOTEBOOK)}))
BUDGET_ERROR = "context budget cannot contain the smallest consistent message unit"
PROJECTOR = {"viewport": {"width": 853, "height": 480}, "device_scale_factor": 1.5}
RUN_KEY = "Control+Enter"  # 95: "上课时运行单元格用 `Ctrl+Enter`"
SETTINGS: dict[str, dict[str, object]] = {
    # every cell in the page, so a cell found by its text is there to click
    "notebook-extension/tracker": {"windowingMode": "none"},
    # were autosave on, it would save a changed notebook within a second (the kit's
    # jupyter/overrides.json turns it off; this setting leaves that alone)
    "docmanager-extension/plugin": {"autosaveInterval": 1},
}


def notebook(name: str) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((ROOT / "notebooks" / name).read_text("utf-8"))
    return loaded


def route_text() -> str:
    cells = notebook("95_instructor.ipynb")["cells"]
    assert isinstance(cells, list)
    return "\n".join("".join(cell["source"]) for cell in cells)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with running_lab(tmp_path_factory.mktemp("class"), ROUTE, SETTINGS, kernels_left=False) as lab:
        yield lab


def end_every_session(lab: Lab) -> None:
    """Shut down every kernel, so the next stop starts from a fresh one."""
    headers = {"Authorization": f"token {TOKEN}"}
    with urllib.request.urlopen(
        urllib.request.Request(f"{lab.url}/api/sessions", headers=headers), timeout=10
    ) as answer:
        sessions = json.load(answer)
    for session in sessions:
        request = urllib.request.Request(
            f"{lab.url}/api/sessions/{session['id']}", method="DELETE", headers=headers
        )
        urllib.request.urlopen(request, timeout=20).close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the module's walks; each walk gets a fresh context of it."""
    assert CHROMIUM.exists(), "install Debian's Chromium: apt-get install -y chromium"
    SCREENSHOTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        try:
            yield launched
        finally:
            launched.close()


@contextmanager
def chromium(browser: Browser, **context: object) -> Iterator[tuple[Page, list[str]]]:
    """A fresh page in a fresh context (no storage, cache or cookies from an earlier walk),
    and the list of every URL it (or its frames) asked."""
    fresh = browser.new_context(**context)  # type: ignore[arg-type]
    try:
        page = fresh.new_page()
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        yield page, requests
    finally:
        fresh.close()


def open_notebook(page: Page, lab: Lab, name: str) -> None:
    workspace = Path(name).stem.replace("_", "-")
    page.goto(f"{lab.url}/lab/workspaces/{workspace}/tree/{name}?reset&token={TOKEN}")
    page.locator(".jp-Notebook").wait_for(timeout=60_000)
    expect(kernel_idle(page)).to_be_visible(timeout=60_000)


# the output's first line a few pixels under the notebook's top edge, as a wheel leaves it
TO_THE_TOP = """n => {
    n.scrollIntoView();
    let box = n.parentElement;
    while (box && !(box.scrollHeight > box.clientHeight
                    && /auto|scroll/.test(getComputedStyle(box).overflowY))) {
        box = box.parentElement;
    }
    if (box) box.scrollBy(0, -6);
}"""


class Stop:
    """One stop of the route: cells run by their text, in a fresh kernel, counted."""

    def __init__(self, page: Page) -> None:
        self.page, self.runs = page, 0

    def cell(self, text: str) -> Locator:
        editor = self.page.locator(".jp-InputArea-editor", has_text=text)
        cell = self.page.locator(".jp-CodeCell").filter(has=editor)
        expect(cell).to_have_count(1)
        return cell

    def run(self, text: str, key: str = RUN_KEY) -> Locator:
        """Run the one code cell whose code contains `text` as 95 says (click its code, press
        Ctrl+Enter: it runs in place and the screen stays put); fail on any error output."""
        cell = self.cell(text)
        cell.locator(".jp-InputArea-editor").click()
        self.page.keyboard.press(key)
        self.runs += 1  # a fresh kernel numbers its runs 1, 2, 3 …
        prompt = cell.locator(".jp-InputPrompt")
        expect(prompt).to_have_text(f"[{self.runs}]:", timeout=60_000)
        expect(kernel_idle(self.page)).to_be_visible(timeout=60_000)
        errors = cell.locator('[data-mime-type="application/vnd.jupyter.stderr"]')
        expect(errors).to_have_count(0)
        return cell

    def show(self, text: str) -> Locator:
        """Run a display cell as 95 says, then scroll its output's first line to the top of
        the notebook (the mouse wheel, in class). Ctrl+Enter left the screen where it was, so
        the output's top is in view before the scroll (Shift+Enter scrolls it off the top)."""
        cell = self.run(text)
        output = cell.locator(".jp-OutputArea-output").first
        top = output.evaluate("n => n.getBoundingClientRect().top")
        window = self.page.viewport_size
        assert window is not None
        assert 0 <= top < window["height"], "the output's top is off-screen"
        output.evaluate(TO_THE_TOP)
        return cell


# Inside an output: what scrolls sideways, or shows past the output's right edge (a part cut
# off by a box that clips it, as a line ending in …, shows only up to that box's edge)
SIDEWAYS = """out => {
    const edge = out.getBoundingClientRect().right + 1, found = [];
    for (const node of [out, ...out.querySelectorAll("*")]) {
        const style = getComputedStyle(node), box = node.getBoundingClientRect();
        const name = `${node.tagName.toLowerCase()}.${[...node.classList].join(".")}`;
        let shown = box.right;
        for (let up = node.parentElement; up && up !== out.parentElement; up = up.parentElement) {
            if (getComputedStyle(up).overflowX !== "visible") {
                shown = Math.min(shown, up.getBoundingClientRect().right);
            }
        }
        if (/auto|scroll/.test(style.overflowX) && node.scrollWidth > node.clientWidth + 1) {
            found.push(`${name} scrolls ${node.scrollWidth - node.clientWidth} px sideways`);
        } else if (box.width > 0 && shown > edge && style.visibility !== "hidden") {
            found.push(`${name} ends ${Math.round(shown - edge)} px past the output`);
        }
    }
    return found;
}"""

# Text smaller than the notebook's body text, whose contrast with what is behind it is under
# 4.5:1 (WCAG AA for body text): a caption must be body size or that dark
FAINT = """(out, body) => {
    const rgb = c => (c.match(/[\\d.]+/g) || []).map(Number);
    const lum = ([r, g, b]) => [r, g, b].map(v => {
        v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    }).reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
    const behind = node => {
        for (let n = node; n; n = n.parentElement) {
            const c = rgb(getComputedStyle(n).backgroundColor);
            if (c.length >= 3 && (c.length < 4 || c[3] > 0)) return c;
        }
        return [255, 255, 255];
    };
    const found = [];
    for (const node of [out, ...out.querySelectorAll("*")]) {
        const own = [...node.childNodes].some(c => c.nodeType === 3 && c.data.trim());
        const style = getComputedStyle(node);
        if (!own || parseFloat(style.fontSize) >= body) continue;
        const [a, b] = [lum(rgb(style.color)), lum(behind(node))];
        const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
        if (ratio < 4.5) found.push(`${node.textContent.trim().slice(0, 30)}: ${style.fontSize}, ${ratio.toFixed(2)}:1`);
    }
    return found;
}"""


def fits_width(cell: Locator) -> None:
    """The cell's output is no wider than the notebook shows: nothing clipped off the right."""
    output = cell.locator(".jp-OutputArea-output").last
    overflow = output.evaluate("node => node.scrollWidth - node.clientWidth")
    assert overflow <= 1, f"the output is {overflow} px wider than the notebook"


def fits_the_projector(cell: Locator) -> None:
    """On the projector (853x480 CSS px): nothing in the cell's output scrolls sideways or
    shows past its right edge, and its small print is dark enough to read from the back."""
    output = cell.locator(".jp-OutputArea-output").last
    assert output.evaluate(SIDEWAYS) == []
    body = cell.page.locator(".jp-RenderedMarkdown p").first.evaluate(
        "n => parseFloat(getComputedStyle(n).fontSize)"
    )
    assert output.evaluate(FAINT, body) == []


# The element at the top of its scrolling panel, a pixel below the panel's edge: the cells
# above it have fractional heights, and a scroll position rounded the other way clips a
# fraction of a pixel off its top (which `on_screen` counts as off the screen).
SCROLL_TO_TOP = """n => {
    n.scrollIntoView();
    for (let p = n.parentElement; p; p = p.parentElement) {
        if (p.scrollHeight > p.clientHeight && getComputedStyle(p).overflowY !== "visible") {
            p.scrollTop -= 1;
            return;
        }
    }
}"""


def on_screen(*shown: Locator) -> None:
    """Each of `shown` wholly inside the window, together: nothing to scroll to see them."""
    for locator in shown:
        expect(locator).to_be_in_viewport(ratio=1)


def stop_1(stop: Stop) -> None:
    # the data flow's three lines, each on one line of the projector, nothing scrolled sideways
    pre = stop.page.locator(".jp-RenderedMarkdown pre", has_text="trim_context")
    flow = pre.filter(has_text="append_session")
    flow.scroll_into_view_if_needed()
    shown = flow.evaluate(
        "n => [n.textContent.trimEnd().split('\\n').length,"
        " n.querySelector('code').getClientRects().length, n.scrollWidth - n.clientWidth]"
    )
    assert shown[:2] == [3, 3] and shown[2] <= 1, f"lines, rows, px past the edge: {shown}"
    stop.run("from mini_agent import (")
    stop.run("workdir = tempfile.TemporaryDirectory()")
    side = stop.show("messages = load_session(session_path)")
    # the file's nine lines, one row each (cut with …, never a sideways scrollbar), and the
    # kept units 4-6 the instructor points at, with the dropped ones counted in one line
    rows = side.locator("table").first.locator("tr")
    expect(rows).to_have_count(9)
    for row in rows.all():
        assert row.evaluate("n => n.getClientRects()[0].height") < 40, "a line wraps"
    assert side.locator("td[title]").first.evaluate("n => n.scrollWidth > n.clientWidth")
    # readable from the back at 150 %: the file's lines in the body text's size, not smaller
    size = "n => parseFloat(getComputedStyle(n).fontSize)"
    body = stop.page.locator(".jp-RenderedMarkdown p").first.evaluate(size)
    assert min(line.evaluate(size) for line in side.locator("td[title]").all()) >= body
    fits_the_projector(side)
    kept = [side.get_by_text(f"单元 {n} · ") for n in (4, 5, 6)]
    on_screen(rows.first, rows.last, side.get_by_text("更早的 3 个单元已丢弃"), *kept)
    on_screen(side.locator(".mini-agent-view > div > div").nth(1))  # the whole context column
    stop.page.screenshot(path=SCREENSHOTS / "route-00-side-by-side-projector.png")
    expect(stop.run("context = trim_context(messages, budget)")).to_contain_text(
        "磁盘上 9 条消息，发给模型 5 条"
    )
    view = stop.show("TrimView(messages, 60)")
    fits_the_projector(view)
    on_screen(view.get_by_text(BUDGET_ERROR), view.get_by_text("单元 6 · 83 字符"))
    stop.page.screenshot(path=SCREENSHOTS / "route-00-budget-60-projector.png")
    # a stray Shift+Enter or two more: no cell deletes what the stop's cells read
    for _ in range(3):
        stop.page.keyboard.press("Shift+Enter")
    stop.runs += 1  # the first one ran the budget-60 cell again (Ctrl+Enter stayed on it)
    stop.run("messages = load_session(session_path)")


def stop_2(stop: Stop) -> None:
    stop.run("from teaching.explorers import SessionEditor")
    editor = stop.run("editor = SessionEditor()")
    text = editor.locator("textarea")
    assert text.evaluate("node => getComputedStyle(node).whiteSpace") == "pre-wrap"
    lines = text.input_value().split("\n")
    rows = editor.locator(".mini-agent-line")
    expect(rows).to_have_count(len(lines))
    numbers = editor.locator(".mini-agent-number")
    expect(numbers).to_have_text([str(n) for n in range(1, len(lines) + 1)])
    # the numbered copy under the box wraps as the box does: the same height, so number n
    # stands at line n's first row; the box never scrolls sideways
    mirror = editor.locator(".mini-agent-lines")
    own_height = "n => { const h = n.style.height; n.style.height = '0px'; " + (
        "const s = n.scrollHeight; n.style.height = h; return s; }"
    )
    assert abs(text.evaluate(own_height) - mirror.evaluate("n => n.offsetHeight")) <= 1
    assert text.evaluate("n => n.scrollWidth - n.clientWidth") <= 0
    line_2 = rows.nth(1)
    assert line_2.evaluate("n => n.getClientRects()[0].height") > 30, "line 2 wraps"
    status = editor.locator(".mini-agent-status")
    status.evaluate(SCROLL_TO_TOP)  # the top of the explorer at the window's top
    # the box stays where it is while the message above it changes (95's three steps)
    frame = editor.locator(".mini-agent-frame")
    box_top = frame.evaluate("n => n.getBoundingClientRect().top")

    def box_stays() -> None:
        top = frame.evaluate("n => n.getBoundingClientRect().top")
        assert abs(top - box_top) <= 1, f"the text box moved from {box_top} to {top}"

    # the instructor clicks at the end of line 2 and deletes its `}`
    box = line_2.bounding_box()
    assert box is not None
    stop.page.mouse.click(box["x"] + box["width"] - 3, box["y"] + box["height"] - 8)
    stop.page.keyboard.press("End")
    stop.page.keyboard.press("Backspace")
    expect(status).to_contain_text("invalid session JSON at line 2")
    expect(status).to_contain_text("释义：第 2 行不是合法的 JSON")
    assert text.input_value().split("\n")[1] == lines[1][:-1]
    on_screen(status, line_2.locator(".mini-agent-number"))
    box_stays()
    stop.page.screenshot(path=SCREENSHOTS / "route-03-editor-line-2-projector.png")
    stop.page.keyboard.type("}")
    expect(status).to_contain_text(f"{len(lines) - 1} 条消息")
    # step 2, as 95 says: double-click line 1's `user` (the word is selected), type `nope`
    assert "双击第 1 行里的 `user`" in route_text() and "输入 `nope`" in route_text()
    for old, new, said in (("user", "nope", 'unknown role "nope"'), ("nope", "user", "条消息")):
        spot = rows.nth(0).evaluate(WORD_AT, f'"{old}"')
        assert spot is not None, f"line 1 shows no {old}"
        stop.page.mouse.dblclick(spot["x"], spot["y"])
        stop.page.keyboard.type(new)
        assert text.input_value().split("\n")[0] == lines[0].replace(f'"{old}"', f'"{new}"', 1)
        expect(status).to_contain_text(said)
        if new == "nope":
            expect(status).to_contain_text("invalid session record at line 1")
            on_screen(status, rows.nth(0).locator(".mini-agent-number"))
        box_stays()
    assert text.input_value().split("\n") == lines
    # step 3: line 4's "toolCalls" deleted; the long error wraps inside the window
    key = ',"toolCalls":[]'
    assert f"第 4 行是 `{lines[3]}`" in route_text() and "按 15 次退格" in route_text()
    assert len(key) == 15 and f"`{key}`" in route_text()
    assert lines[3].endswith(key + "}")
    # as 95 says: click at the end of line 4, one ← to before its `}`, 15 backspaces
    line_4 = rows.nth(3).bounding_box()
    assert line_4 is not None
    stop.page.mouse.click(line_4["x"] + line_4["width"] - 3, line_4["y"] + line_4["height"] - 8)
    stop.page.keyboard.press("End")
    stop.page.keyboard.press("ArrowLeft")
    for _ in range(len(key)):
        stop.page.keyboard.press("Backspace")
    assert text.input_value().split("\n")[3] == lines[3].removesuffix(key + "}") + "}"
    expect(status).to_contain_text("invalid session record at line 4")
    expect(status).to_contain_text("本包补充：assistant needs toolCalls")  # the kit's, marked
    expect(status).to_contain_text("释义：第 4 行是 JSON，却不是一条合法的消息")
    on_screen(status, rows.nth(3).locator(".mini-agent-number"))
    box_stays()
    assert status.evaluate("n => n.scrollWidth - n.clientWidth") <= 1, "the error is clipped"
    stop.page.screenshot(path=SCREENSHOTS / "route-03-editor-line-4-projector.png")
    fits_the_projector(editor)


# the middle of the first `word` in a line of the editor's numbered copy, which lies under the
# text box and wraps as it does: a double-click there selects that word in the box
WORD_AT = """(row, word) => {
    const walker = document.createTreeWalker(row, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const at = node.data.indexOf(word);
        if (at < 0) continue;
        const range = document.createRange();
        range.setStart(node, at + 1);
        range.setEnd(node, at + word.length - 1);
        const box = range.getClientRects()[0];
        return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
    }
    return null;
}"""


def stop_3(stop: Stop) -> None:
    stop.run("from teaching.explorers import UnitScanStepper")
    stop.run("history = chapter_picture()")
    stepper = stop.show("stepper = UnitScanStepper(history)")  # its buttons at the top
    # the play control's buttons keep their icons at 150 % (no "▶ .." ellipsis)
    buttons = stepper.locator(".widget-play button")
    expect(buttons.first).to_be_visible()
    for button in buttons.all():
        assert button.evaluate("n => n.scrollWidth - n.clientWidth") <= 0
    stop.page.screenshot(path=SCREENSHOTS / "route-04-stepper-projector.png")
    next_ = stepper.get_by_role("button", name=words().next)
    # one click, as 95 says: step 1 is the one its words are about (tool b's assistant found,
    # slice(1, 4) one unit, tool a taken along); a second would move on to the user message
    assert "点一次 **下一步 ▶**" in route_text() and "slice(1, 4)" in route_text()
    next_.click()
    history = chapter_picture()
    for line in scan_position_text(history, list(scan_steps(history)), 1).splitlines():
        expect(stepper).to_contain_text(line)
    fits_the_projector(stepper)
    # the units the talk is about beside the index table, both on screen with the buttons
    table = stepper.locator("table", has_text="index")
    units = stepper.get_by_text(words().units_heading, exact=True).locator("..")
    stop.page.screenshot(path=SCREENSHOTS / "route-04-stepper-step-1-projector.png")
    boxes = units.locator(".mini-agent-view > div")  # one box per unit
    expect(boxes).to_have_count(1)
    expect(boxes.first).to_contain_text("tool a")
    on_screen(next_, table, units.get_by_text(words().units_heading), *boxes.all())
    table_box, units_box = table.bounding_box(), units.bounding_box()
    assert table_box is not None and units_box is not None
    assert units_box["x"] >= table_box["x"] + table_box["width"], "units under the table"
    # what the model is sent: the unit [assistant(a,b) | tool a], b's request without a result
    missing_b = stop.run("missing_b = [")
    expect(missing_b).to_contain_text("2 条消息，235 字符")
    expect(missing_b.locator("tr", has_text="tool a")).to_have_count(1)
    expect(missing_b.locator("tr", has_text="assistant(a,b)")).to_have_count(1)


def stop_4(stop: Stop) -> None:
    stop.run("from teaching.explorers import BudgetExplorer")
    explorer = stop.run("explorer = BudgetExplorer()")
    fits_the_projector(explorer)
    readout = explorer.locator(".widget-readout")
    # the widgets follow the notebook's content font size, not JupyterLab's smaller UI size
    prose = stop.page.locator(".jp-RenderedMarkdown").first
    size = "n => getComputedStyle(n).fontSize"
    assert readout.evaluate(size) == prose.evaluate(size) != "13px"
    for budget, shown in (
        (1422, "保留 10/10 个单元、15/15 条消息，用了 1422 字符"),
        (400, "保留 1/10 个单元、1/15 条消息，用了 73 字符"),
        (72, BUDGET_ERROR),
    ):
        readout.click()
        stop.page.keyboard.press("Control+A")
        stop.page.keyboard.type(str(budget))
        stop.page.keyboard.press("Enter")
        expect(explorer).to_contain_text(shown)
        if budget == 400:  # the kept unit, and the 348 that does not fit, under the slider
            explorer.locator(".widget-slider").evaluate("node => node.scrollIntoView()")
            kept = explorer.get_by_text(words().unit_note(10, 73, words().kept))
            stopped = explorer.get_by_text(words().unit_note(9, 348, words().stopped_here))
            on_screen(kept, stopped)
            stop.page.screenshot(path=SCREENSHOTS / "route-05-budget-400-projector.png")


def stop_5(stop: Stop) -> None:
    stop.run("import inspect")
    stop.run("demo.reset()")
    stop.run("client = demo.client(FIRST_RUN)")
    run_view = stop.show("demo.run(FIRST_RUN)")
    expect(run_view).to_contain_text("○")
    # the point of the stop: request 3 leaves out the first user message (row 0)
    header = run_view.locator("tr").first
    first = run_view.locator("tr", has=stop.page.locator("td", has_text=re.compile(r"^0$")))
    mark = first.locator("td", has_text="○")
    expect(mark).to_have_count(1)
    on_screen(header, mark)
    stop.page.screenshot(path=SCREENSHOTS / "route-06-runview-projector.png")
    fits_the_projector(run_view)
    stop.run("second = demo.client(RESTART)")


def stop_6(stop: Stop) -> None:
    stop.run("import inspect")
    broken = stop.run("demo.client(TOO_SMALL)  #")
    expect(broken).to_contain_text("invalid session JSON at line 2")
    expect(broken).to_contain_text("模型收到的请求数：0")
    # after the corruption, the notebook's display cells still run
    stop.run("demo.run(FIRST_RUN)")
    table = stop.show("first_requests = demo.clients")
    header = table.locator("tr").first
    expect(header).to_contain_text("失败语义")
    on_screen(header, table.locator("tr", has_text="完整事件"))
    stop.page.screenshot(path=SCREENSHOTS / "route-06-table-projector.png")
    fits_the_projector(table)
    fits_the_projector(stop.run("stepper = RunStepper()"))


# Stops whose figures this test knows and checks on screen, by number; every other stop 95
# has (one an instructor adds) is walked by `run_named_cells`: the cells its text names, in order.
CHECKED = {1: stop_1, 2: stop_2, 3: stop_3, 4: stop_4, 5: stop_5, 6: stop_6}


def run_named_cells(cells: list[str]) -> Callable[[Stop], None]:
    def walk(stop: Stop) -> None:
        for first_line in cells:
            stop.run(first_line)

    return walk


def the_walk(route: Path) -> list[tuple[RouteStop, Callable[[Stop], None]]]:
    """Every stop of the route notebook at `route`, with how this test drives it."""
    walk = []
    for found in stops_in(route):
        named = named_cells(found, read_cells(route.parent / found.notebook))
        assert named, f"stop {found.number} names no cell of {found.notebook} by its first line"
        walk.append((found, CHECKED.get(found.number) or run_named_cells(named)))
    return walk


def test_the_route_runs_stop_by_stop_from_a_fresh_kernel(lab: Lab, browser: Browser) -> None:
    route = route_text()
    # the test runs cells the way 95 tells the instructor to, at the top and at every stop
    assert "**上课时运行单元格用 `Ctrl+Enter`" in route
    walk = the_walk(ROUTE_NOTEBOOK)
    assert all("Ctrl+Enter" in found.text for found, _ in walk)
    for phrase in ("磁盘上 9 条消息，发给模型 5 条", "[assistant(a,b) | tool a]", "73 字符"):
        assert phrase in route  # the figures this test checks are the ones 95 quotes
    timings: dict[str, dict[str, float]] = {}
    folder = Path(lab.log).parent / "notebooks"
    for found, drive in walk:
        number, name = str(found.number), found.notebook
        end_every_session(lab)
        with chromium(browser, **PROJECTOR) as (page, _):
            started = time.monotonic()
            open_notebook(page, lab, name)
            ready = time.monotonic()
            expect(page.locator(".jp-toast-message")).to_have_count(0)  # no news toast
            if page.locator(".jp-FileBrowser").is_visible():  # 95's checklist: Ctrl+B
                page.keyboard.press("Control+b")
            expect(page.locator(".jp-FileBrowser")).to_be_hidden()
            drive(Stop(page))
            timings[f"stop {number} ({name})"] = {
                "page to kernel idle, s": round(ready - started, 1),
                "the stop's cells, s": round(time.monotonic() - ready, 1),
            }
            measured("route_page", ready - started)
            measured("route_cells", time.monotonic() - ready)
            page.screenshot(path=SCREENSHOTS / f"route-stop-{number}-projector.png")
            if number == "1":  # changed and left open past three autosave intervals: not saved
                tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-current")
                expect(tab).to_have_class(re.compile(r"\bjp-mod-dirty\b"))
                page.wait_for_timeout(3_000)
                expect(tab).to_have_class(re.compile(r"\bjp-mod-dirty\b"))
                assert (folder / name).read_bytes() == (ROOT / "notebooks" / name).read_bytes()
    SCREENSHOTS.joinpath("route-timing.json").write_text(
        json.dumps(timings, ensure_ascii=False), encoding="utf-8"
    )
    written = sorted(p.name for p in folder.iterdir() if p.name != ".ipynb_checkpoints")
    assert written == sorted(ROUTE), "the route writes nothing beside the notebooks"
    for name in ROUTE:  # and nothing into them: `git status notebooks/` stays empty
        assert (folder / name).read_bytes() == (ROOT / "notebooks" / name).read_bytes(), name


def overlap(a: FloatRect | None, b: FloatRect | None) -> bool:
    assert a is not None and b is not None
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


def run_all(page: Page) -> None:
    run_all_cells(page)
    expect(page.locator(".jp-InputPrompt", has_text="[*]:")).to_have_count(0, timeout=90_000)
    expect(kernel_idle(page)).to_be_visible(timeout=60_000)


EXPLORER_OF = {
    "03_corrupted_records.ipynb": "editor = SessionEditor()",
    "04_context_units.ipynb": "stepper = UnitScanStepper(history)",
    "05_character_budget.ipynb": "explorer = BudgetExplorer()",
    "06_session_vs_context.ipynb": "stepper = RunStepper()",
}


def test_layouts_fit_at_tablet_and_projector_sizes(lab: Lab, browser: Browser) -> None:
    end_every_session(lab)
    for name, code in EXPLORER_OF.items():
        with chromium(browser, viewport={"width": 1280, "height": 720}) as (page, _):
            open_notebook(page, lab, name)
            run_all(page)
            stop = Stop(page)
            cell = stop.cell(code)
            stem = name[:2]
            for width, height in ((1280, 720), (768, 1024)):
                page.set_viewport_size({"width": width, "height": height})
                cell.locator(".jp-OutputArea-output").last.evaluate("n => n.scrollIntoView()")
                page.screenshot(path=SCREENSHOTS / f"{stem}-{width}x{height}.png")
            # 768 px with the file browser open: the explorer still fits (00's stated minimum)
            if not page.locator(".jp-FileBrowser").is_visible():
                page.keyboard.press("Control+Shift+F")
            expect(page.locator(".jp-FileBrowser")).to_be_visible()
            fits_width(cell)
            if name.startswith("06"):
                disk, sent = cell.locator(".mini-agent-disk"), cell.locator(".mini-agent-sent")
                # Run All left it on the 2nd request (06's checked cell): a table on each side
                for width in (1024, 1280, 1440, 1920):
                    page.set_viewport_size({"width": width, "height": 900})
                    expect(sent).to_contain_text(words().model_input)
                    disk.evaluate("n => n.scrollIntoView()")
                    assert not overlap(disk.bounding_box(), sent.bounding_box()), width
                    style = disk.evaluate("n => getComputedStyle(n).overflowX")
                    assert style in ("auto", "hidden", "scroll")  # its lines stay in its box
                    page.screenshot(path=SCREENSHOTS / f"06-runstepper-{width}.png")
        end_every_session(lab)
    # Run All of 03-06 (03's Skill-directory cell included) wrote nothing beside the notebooks
    folder = Path(lab.log).parent / "notebooks"
    written = sorted(p.name for p in folder.iterdir() if p.name != ".ipynb_checkpoints")
    assert written == sorted(ROUTE)


STALE_WIDGET = "Error displaying widget: model not found"  # ipywidgets' words for a dead model


def test_slides_show_05s_live_slider_and_stay_on_loopback(lab: Lab, browser: Browser) -> None:
    route = route_text()
    assert "05 的预算滑块在幻灯片里也能动" in route
    explorer = re.compile(r"\b(SessionEditor|UnitScanStepper|BudgetExplorer|RunStepper)\(")
    for name in (*ROUTE, "95_instructor.ipynb"):
        book = notebook(name)
        assert book["metadata"]["rise"]["theme"] == "white", name  # type: ignore[index]
        for cell in book["cells"]:  # type: ignore[attr-defined]
            source = "".join(cell["source"])
            if cell["cell_type"] == "code" and explorer.search(source):
                live = source.startswith("explorer = BudgetExplorer()")  # 95's one live slide
                kind = cell["metadata"]["slideshow"]["slide_type"]
                assert kind == ("slide" if live else "skip"), name
    end_every_session(lab)
    console: list[str] = []
    with chromium(browser, viewport={"width": 1280, "height": 720}) as (page, requests):
        page.on("console", lambda message: console.append(message.text))
        open_notebook(page, lab, "05_character_budget.ipynb")
        # the explorer ran, then the kernel restarted (内核 → 重启内核): the notebook RISE saves
        # and shows still holds the old kernel's widget
        stop = Stop(page)
        stop.run("from teaching.explorers import BudgetExplorer")
        stop.run("explorer = BudgetExplorer()")
        # 内核 → 重启内核…, by its id; not awaited: it resolves once its dialog is answered
        page.evaluate("() => { window.jupyterapp.commands.execute('kernelmenu:restart'); }")
        page.locator(".jp-Dialog .jp-mod-accept").click()
        expect(page.locator(".jp-Dialog")).to_have_count(0)
        expect(kernel_idle(page)).to_be_visible(timeout=60_000)
        restarted = Stop(page)  # 95: first the import cell, in the new kernel
        restarted.run("from teaching.explorers import BudgetExplorer")
        # the tooltip 95 quotes is the one the notebook's slideshow button shows
        button = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Toolbar [title*='Reveal']")
        expect(button).to_have_count(1)
        assert f"“{button.get_attribute('title')}”" in route, button.get_attribute("title")
        page.locator(".jp-Notebook").click()
        page.keyboard.press("Escape")
        opened = time.monotonic()
        page.keyboard.press("Alt+r")
        frame = page.frame_locator("iframe").first
        expect(frame.locator(".reveal .slides")).to_be_visible(timeout=60_000)
        measured("rise_open", time.monotonic() - opened)
        expect(frame.locator(".reveal")).to_contain_text("05")
        expect(frame.get_by_text("Click to add a cell.")).not_to_be_visible()
        page.screenshot(path=SCREENSHOTS / "rise-05-first-slide.png")
        # the slideshow pane's full-screen button and checkbox, as 95 quotes them
        full_screen = page.locator(".jp-Toolbar [title='Open the slideshow in full screen']")
        expect(full_screen).to_have_count(1)
        assert "“Open the slideshow in full screen”" in route
        expect(page.locator(".jp-Toolbar", has_text="Render on Save")).to_have_count(1)
        code = frame.locator(
            ".present .jp-InputArea-editor", has_text="explorer = BudgetExplorer()"
        )
        # 95: click the slide first (the keys go to the slideshow), then Space: it walks every
        # slide in order (→ skips vertical sub-slides); the route never uses →
        assert "**先在幻灯片正文上点一下**" in route and "**别用 `→`**" in route
        heading = frame.locator(".reveal .slides section.present").get_by_role("heading").first
        # reveal.js's white theme writes headings in capitals ("THROW"); the header undoes it
        assert heading.evaluate("n => getComputedStyle(n).textTransform") == "none"
        heading.click()
        # the on-screen arrows work too: one slide on and back again
        slide = frame.locator(".reveal .slides section.present:not(.stack)")
        text_of = "n => n.innerText.replaceAll('¶', '')"  # a hovered heading shows its ¶ link
        first = slide.evaluate(text_of)

        def paged(how: str, moved: bool) -> None:
            for _ in range(20):
                if (slide.evaluate(text_of) != first) == moved:
                    break
                page.wait_for_timeout(200)
            assert (slide.evaluate(text_of) != first) == moved, how

        for arrow, moved in (("right", True), ("left", False)):
            frame.locator(f".reveal .controls .navigate-{arrow}").click()
            paged(arrow, moved)
        # 95: keys not answering after a click on something else: click the slide again
        frame.locator(".reveal .slides section.present").get_by_role("heading").first.click()
        # the keys 95 gives page one slide on and back, in order
        keys = {"PageDown": "`PageDown`", "PageUp": "`PageUp`", "Space": "**空格**",
                "Shift+Space": "`Shift+空格`"}  # fmt: skip
        for key, moved in zip(keys, (True, False, True, False), strict=True):
            assert keys[key] in route, key
            page.keyboard.press(key)
            paged(key, moved)
        for _ in range(30):  # forward to the explorer's slide
            if code.count():
                break
            page.keyboard.press("Space")
            page.wait_for_timeout(300)
        expect(code).to_have_count(1)
        # 95: a slide taller than the screen scrolls (the notebooks' rise metadata: scroll)
        assert "右边有滚动条，用鼠标滚轮在页内往下滚" in route
        scrolls = code.evaluate(
            """n => { for (let e = n; e; e = e.parentElement) {
                const y = getComputedStyle(e).overflowY;
                if ((y === 'auto' || y === 'scroll') && e.closest('.reveal')) return true; }
              return false; }"""
        )
        assert scrolls, "the explorer's slide does not scroll"
        editor = frame.locator(".jp-InputArea-editor", has_text="explorer = BudgetExplorer()")
        cell = frame.locator(".present .jp-CodeCell").filter(has=editor)
        slider = cell.locator(".widget-slider .noUi-handle")
        # after the restart the slide shows what 95 says: the old kernel's explorer as a picture
        # without a slider, since the kit saves a widget's picture, never its view (whose model
        # died with the kernel: ipywidgets' large error, which 95 names for other JupyterLabs)
        stale = cell.get_by_text(STALE_WIDGET)
        picture = cell.get_by_text(re.compile(r"^预算 \d+ 字符："))
        expect(picture).to_be_visible(timeout=30_000)
        expect(stale).to_have_count(0)
        expect(slider).to_have_count(0)
        page.screenshot(path=SCREENSHOTS / "rise-05-after-restart.png")
        assert STALE_WIDGET in route and "**先显示没有滑块的旧输出**" in route
        code.click()
        page.keyboard.press("Shift+Enter")  # 95: click its code, Shift+Enter
        expect(slider).to_be_visible(timeout=30_000)
        expect(stale).to_have_count(0)
        expect(cell.locator(".jp-OutputArea-output")).to_have_count(1)  # the live one alone
        readout = cell.locator(".widget-readout")
        before = readout.inner_text()
        box = slider.bounding_box()  # drag it: reveal.js takes the arrow keys for paging
        assert box is not None
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.down()
        page.mouse.move(box["x"] - 80, box["y"] + box["height"] / 2, steps=5)
        page.mouse.up()
        expect(readout).not_to_have_text(before)  # live: the kernel's widget answers
        expect(cell.locator(".jp-OutputArea")).to_contain_text(f"预算 {readout.inner_text()} 字符")
        page.screenshot(path=SCREENSHOTS / "rise-05-live-slider.png")
    assert not [line for line in console if "shared module" in line.lower()], console
    outside = [url for url in requests if not url.startswith(("http://127.0.0.1", "data:"))]
    assert outside == [], outside
