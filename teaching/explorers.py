"""Live explorers for the notebooks: ipywidgets wired to the package, nothing more.

Each explorer computes with `explorer_logic` / `views` and writes by setting widget values
(never by printing), so strict nbval sees no stray output. Each has a plain-text `summary` of
what it shows, so a checked cell can drive it from code:

    explorer = BudgetExplorer()
    explorer.slider.value = 500
    print(explorer.summary)

Needs the `notebooks` extra (ipywidgets); the rest of the package needs only the standard
library.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets

from mini_agent.context import estimate_context_chars
from mini_agent.session import AssistantMessage, Message, ToolCall
from mini_agent.tools import Tool
from mini_agent.visible import visible_line

from .explorer_logic import (
    RunFrame,
    check_session_text,
    frame_text,
    record_run,
    scan_position_text,
)
from .samples import file_reader, sample_session, sample_session_text
from .style import CELL, EXPLORER_CLASS, NUMBER_CELL, WIDGET_CSS, WRAP, page, palette, visible_html
from .text import words
from .trace import ScanStep, label, scan_steps
from .views import SessionView, TrimView, UnitsView, line_table

_PRE = f"{WRAP};font-family:monospace;font-size:0.9em;margin:4px 0"


def _pre(text: str, colour: str | None = None) -> str:
    colour = colour or palette().text
    return f'<pre class="explorer-summary" style="{_PRE};color:{colour}">{visible_html(text)}</pre>'


SLIDER_MAX_WIDTH = "min(48em, calc(100% - 2 * var(--jp-widgets-margin, 2px)))"


def _box(children: Sequence[Any]) -> Any:
    """The explorer's widgets in one box that follows the notebook's content font size and
    shrinks to the notebook's width (`style.WIDGET_CSS`)."""
    css = widgets.HTML(WIDGET_CSS, layout=widgets.Layout(display="none"))
    box = widgets.VBox([css, *children], layout=widgets.Layout(width="100%", min_width="0"))
    box.add_class(EXPLORER_CLASS)
    return box


def _gutter(text: str, mark: int | None = None) -> str:
    """The editor's text again, invisible, one block per physical line with its number.

    It lies under the text box (`style.WIDGET_CSS`) and wraps exactly as the box does (same
    font, width and padding), so number n stands at the first row of line n however many
    rows a long line wraps into: "line N" in an error is the line numbered N. Line `mark`
    (the one an error names) is shaded, and the shade shows through the box."""
    shade = f' style="background:{palette().marked_line}"'
    rows = "".join(
        f'<div class="mini-agent-line"{shade if number == mark else ""}>'
        f'<span class="mini-agent-number">{number}</span>{html.escape(line) or " "}</div>'
        for number, line in enumerate(text.split("\n"), start=1)
    )
    return f'<div class="mini-agent-lines">{rows}</div>'


class _Explorer:
    """Shown as its widget in a notebook; its plain text (what nbval compares) is `summary`.

    The display bundle holds the widget's view (only its model id changes from run to run),
    the summary as text, and `html` — what the widget shows now, drawn once — for a reader
    without a kernel (a rendered notebook on the web, or a Lab whose widget state is gone).
    Both show the current position only: a stepper's every step at once would bury the one
    the prose talks about (the cell after it prints the same `summary` a step further on).
    """

    widget: Any

    @property
    def summary(self) -> str:
        raise NotImplementedError

    @property
    def html(self) -> str:
        """The explorer's current view as static HTML."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.summary

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle: dict[str, Any] = dict(self.widget._repr_mimebundle_(**kwargs))
        bundle["text/plain"] = self.summary
        bundle["text/html"] = self.html
        return bundle


class _Steps:
    """Prev / Next buttons, a position slider and a play control, kept in step."""

    def __init__(self, last: int, description: str) -> None:
        w = words()
        self.position = widgets.IntSlider(0, min=0, max=last, description=description)
        self.prev = widgets.Button(description=w.prev)
        self.next = widgets.Button(description=w.next)
        self.play = widgets.Play(value=0, min=0, max=last, interval=1200, description=w.play)
        widgets.link((self.play, "value"), (self.position, "value"))
        self.prev.on_click(lambda _: self._move(-1))
        self.next.on_click(lambda _: self._move(+1))
        self.position.observe(lambda _: self._enable(), names="value")
        self._enable()
        self.position.layout = widgets.Layout(width="auto", flex="1 1 12em", min_width="10em")
        self.bar = widgets.HBox(
            [self.prev, self.next, self.play, self.position],
            layout=widgets.Layout(flex_flow="row wrap", width="100%"),
        )

    def _move(self, by: int) -> None:
        self.position.value = min(self.position.max, max(0, self.position.value + by))

    def _enable(self) -> None:
        self.prev.disabled = self.position.value == 0
        self.next.disabled = self.position.value == self.position.max


# 1. Session editor -----------------------------------------------------------------------


class SessionEditor(_Explorer):
    """Type JSONL; every edit is checked by the package's session parser.

    The loader's verdict sits above the text box and the box is a few rows tall (it scrolls
    with its line numbers), so on a projector the line being edited and the error are on
    screen together; long lines wrap, the numbers count physical lines."""

    def __init__(self, text: str | None = None) -> None:
        value = sample_session_text() if text is None else text
        self.text = widgets.Textarea(
            value=value, rows=1, layout=widgets.Layout(width="100%", min_width="0")
        )
        self.text.add_class("mini-agent-editor")
        self.gutter = widgets.HTML(_gutter(value), layout=widgets.Layout(min_width="0"))
        self.gutter.add_class("mini-agent-gutter")
        self.status = widgets.HTML(layout=widgets.Layout(min_width="0"))
        self.status.add_class("mini-agent-status")
        self.view = widgets.HTML(layout=widgets.Layout(min_width="0", overflow="auto"))
        self.text.observe(lambda _: self._update(), names="value")
        frame = widgets.Box([self.gutter, self.text], layout=widgets.Layout(width="100%"))
        frame.add_class("mini-agent-frame")
        self.widget = _box([self.status, frame, self.view])
        self._update()

    @property
    def summary(self) -> str:
        return check_session_text(self.text.value).summary

    @property
    def html(self) -> str:
        check = check_session_text(self.text.value)
        if check.error is None:
            return str(self.status.value) + _pre(str(self.text.value)) + str(self.view.value)
        # no text box without a kernel: the lines as a table, the bad one shaded
        bad, marked = check.error.line, palette().marked_line
        lines = [visible_line(line) for line in str(self.text.value).split("\n")]
        table = line_table(lines, lambda number: marked if number == bad else None)
        return str(self.status.value) + page(table)

    def _update(self) -> None:
        value = str(self.text.value)
        check = check_session_text(value)
        colours = palette()
        self.gutter.value = _gutter(value, check.error.line if check.error else None)
        if check.error is None:
            self.status.value = page(_pre(check.status, colours.sent))
            self.view.value = SessionView(check.messages)._repr_html_()
            return
        # the error above the box, its line shaded in the box: nothing more to draw below
        self.status.value = page(_pre(check.status, colours.error))
        self.view.value = ""


# 2. Unit-scan stepper --------------------------------------------------------------------


class UnitScanStepper(_Explorer):
    """Step through `context_units`' backward scan, as the chapter draws it."""

    def __init__(self, messages: Sequence[Message] | None = None) -> None:
        self.messages = list(sample_session() if messages is None else messages)
        self.steps: list[ScanStep] = list(scan_steps(self.messages))
        self.controls = _Steps(len(self.steps), words().step_slider)
        self.position, self.prev, self.next, self.play = (
            self.controls.position,
            self.controls.prev,
            self.controls.next,
            self.controls.play,
        )
        self.view = widgets.HTML()
        self.position.observe(lambda _: self._update(), names="value")
        self.widget = _box([self.controls.bar, self.view])
        self._update()

    @property
    def step(self) -> ScanStep | None:
        """The step shown, or `None` before the scan starts."""
        at = self.position.value
        return self.steps[at - 1] if at else None

    @property
    def summary(self) -> str:
        return scan_position_text(self.messages, self.steps, self.position.value)

    @property
    def html(self) -> str:
        return str(self.view.value)

    def _row_style(self, index: int) -> str:
        colours = palette()
        step = self.step
        if step is None or index < step.start:
            return "background:transparent"  # not scanned yet
        if index == step.index:
            return f"background:{colours.searched};font-weight:600"  # the scan is here
        if index == step.found:
            return f"background:{colours.found_fill};font-weight:600"  # the assistant found
        if index >= step.start and index < step.index:
            return f"background:{colours.swept}"  # comes along inside the slice
        return f"background:{colours.dropped};color:{colours.dropped_text}"  # already in a unit

    def _update(self) -> None:
        w = words()
        rows = "".join(
            f"<tr style='{self._row_style(index)}'><td style='{NUMBER_CELL}'>{index}</td>"
            f"<td style='{CELL}'>{visible_html(label(message))}</td></tr>"
            for index, message in enumerate(self.messages)
        )
        step = self.step
        units = UnitsView(step.units if step else [])._repr_html_()
        head = (
            f"<th style='{CELL}'>index</th><th style='{CELL}'>{visible_html(w.column_message)}</th>"
        )
        self.view.value = page(
            _pre(self.summary)
            + '<div style="display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start">'
            + f"<table><thead><tr>{head}</tr></thead>{rows}</table>"
            # the units beside the table (under it when the notebook is narrow): after a
            # step, the units the talk is about are in view with the table on a projector
            + f"<div style='flex:1 1 14em;min-width:0'><b>{visible_html(w.units_heading)}</b>"
            + f"{units}</div></div>"
        )


# 3. Budget slider ------------------------------------------------------------------------


class BudgetExplorer(_Explorer):
    """Move `max_chars`; see which units `trim_context` keeps, or the chapter's error.

    On a long session only `window` units on each side of the cut are drawn, the others
    counted, so a slider move stays quick to recompute and to redraw.
    """

    def __init__(
        self,
        messages: Sequence[Message] | None = None,
        max_chars: int | None = None,
        *,
        window: int | None = 12,
    ) -> None:
        self.messages = list(sample_session() if messages is None else messages)
        self.window = window
        total = estimate_context_chars(self.messages)
        self.slider = widgets.IntSlider(
            value=total // 2 if max_chars is None else max_chars,
            min=1,
            max=max(total, 1),
            description=words().budget_slider,
            # its own margins (ipywidgets' 2 px each side) inside the explorer, so the box never
            # scrolls sideways and the readout is never cut off
            layout=widgets.Layout(width="100%", max_width=SLIDER_MAX_WIDTH, min_width="0"),
            style={"description_width": "initial"},
        )
        self.view = widgets.HTML()
        self._trim = self._view(self.slider.value)
        self.slider.observe(lambda _: self._update(), names="value")
        self.widget = _box([self.slider, self.view])
        self._update()

    @property
    def trim(self) -> TrimView:
        """The package's view of `trim_context` at the slider's value."""
        if self._trim.max_chars != self.slider.value:
            self._trim = self._view(self.slider.value)
        return self._trim

    def _view(self, max_chars: int) -> TrimView:
        # kept units drawn first: at a small budget the one kept unit is in view at 720 px
        return TrimView(self.messages, max_chars, self.window, kept_first=True)

    @property
    def summary(self) -> str:
        return repr(self.trim)

    @property
    def html(self) -> str:
        return str(self.view.value)

    def _update(self) -> None:
        self.view.value = self.trim._repr_html_()


# 4. Two-state run stepper ----------------------------------------------------------------

_FILES = {
    "setup.cfg": "[metadata]\nname = mini-agent",
    "notes.md": "# 笔记\n- TODO: 支持并发写入",
}


READ_TOOL = Tool("read", "读取示例项目里的一个文件", file_reader(_FILES))


def resumed_run_scenario() -> dict[str, Any]:
    """A restart that resumes: four messages already on disk, a two-tool turn, a budget."""
    return {
        "prompt": "现在对比 setup.cfg 和 notes.md。",
        "history": sample_session()[:4],
        "turns": [
            AssistantMessage(
                "两个文件都读一下。",
                (
                    ToolCall("n1", "read", {"path": "setup.cfg"}),
                    ToolCall("n2", "read", {"path": "notes.md"}),
                ),
            ),
            AssistantMessage("setup.cfg 只定义了包名；notes.md 记着一个待办：支持并发写入。"),
        ],
        "tools": [READ_TOOL],
        "context_max_chars": 600,
    }


def _column(flex: str) -> Any:
    return widgets.Layout(flex=flex, min_width="0", overflow="auto", margin="0 8px 8px 0")


class RunStepper(_Explorer):
    """Step a `run_agent` run request by request: the disk's lines beside the model's input."""

    def __init__(
        self,
        prompt: str | None = None,
        turns: Sequence[AssistantMessage] | None = None,
        *,
        history: Sequence[Message] = (),
        tools: Sequence[Tool] = (),
        context_max_chars: int | None = None,
    ) -> None:
        if prompt is None or turns is None:
            scenario = resumed_run_scenario()
            prompt, turns = scenario["prompt"], scenario["turns"]
            history, tools = scenario["history"], scenario["tools"]
            context_max_chars = scenario["context_max_chars"]
        self.context_max_chars = context_max_chars
        self.frames: list[RunFrame] = record_run(
            prompt, turns, history=history, tools=tools, context_max_chars=context_max_chars
        )
        self.controls = _Steps(len(self.frames) - 1, words().moment_slider)
        self.position, self.prev, self.next, self.play = (
            self.controls.position,
            self.controls.prev,
            self.controls.next,
            self.controls.play,
        )
        # each column scrolls its own overflow and the two wrap one under the other when the
        # notebook is too narrow for both: the disk's lines never run under the model input
        self.disk = widgets.HTML(layout=_column("1 1 30em"))
        self.sent = widgets.HTML(layout=_column("1 1 20em"))
        self.disk.add_class("mini-agent-disk")
        self.sent.add_class("mini-agent-sent")
        self.position.observe(lambda _: self._update(), names="value")
        columns = widgets.HBox(
            [self.disk, self.sent],
            layout=widgets.Layout(flex_flow="row wrap", width="100%", grid_gap="16px"),
        )
        self.widget = _box([self.controls.bar, columns])
        self._update()

    @property
    def frame(self) -> RunFrame:
        at: int = self.position.value
        return self.frames[at]

    @property
    def summary(self) -> str:
        return frame_text(self.frame, self.context_max_chars)

    @property
    def html(self) -> str:
        return page(
            '<div style="display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start">'
            f'<div style="flex:1 1 30em;min-width:0;overflow-x:auto">{self.disk.value}</div>'
            f'<div style="flex:1 1 20em;min-width:0;overflow-x:auto">{self.sent.value}</div></div>'
        )

    def _update(self) -> None:
        w, colours = words(), palette()
        frame = self.frame
        first = frame.first_sent_line
        table = line_table(
            [visible_line(line, 70) for line in frame.disk_lines],
            lambda number: colours.kept if first is not None and number > first else None,
        )
        self.disk.value = page(
            _pre(self.summary.splitlines()[0]) + f"<b>{visible_html(w.session_file)}</b>" + table
        )
        if frame.sent is None:
            self.sent.value = page(
                f"<b>{visible_html(w.model_input)}</b><p>{visible_html(w.no_request)}</p>"
            )
        else:
            self.sent.value = page(
                f"<b>{visible_html(w.model_input)}</b>" + SessionView(frame.sent)._repr_html_()
            )


__all__ = [
    "READ_TOOL",
    "BudgetExplorer",
    "RunStepper",
    "SessionEditor",
    "UnitScanStepper",
    "resumed_run_scenario",
]
