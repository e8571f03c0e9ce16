"""How every view draws: one palette, sizes that follow JupyterLab's content font size.

The projector switch is JupyterLab's own: *Settings → Theme → Increase Content Font Size*
(the CSS variable `--jp-content-font-size1`). Every view's HTML (`page()`) and every explorer's
widgets (`WIDGET_CSS`) are sized from that variable in `em`, so one switch in the browser
reaches every notebook, every kernel, the widgets and the slides, and survives a kernel
restart; *Decrease Content Font Size* (or the Settings Editor's "Theme" → reset) undoes it.

`set_display(scale, contrast)` is older and narrower: it scales and darkens the views drawn
afterwards by *this* kernel only (not other notebooks, not the ipywidgets controls). It stays
for notebooks that call it. Only HTML changes; the plain text (what nbval compares) never.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Literal

from mini_agent.visible import visible_text

from .text import words

Contrast = Literal["normal", "high"]


def visible_html(text: str) -> str:
    """`visible_text(text)` as HTML text: `<`, `>`, `&` and quotes escaped too."""
    return escape(visible_text(text), quote=True)


@dataclass(frozen=True)
class Palette:
    """The colours of one contrast level (CSS colour strings)."""

    user: str
    assistant: str
    tool: str
    error: str
    text: str
    muted: str
    border: str
    kept: str  # background of a kept unit
    dropped: str  # background of a dropped unit
    dropped_text: str  # text of a dropped unit: dimmer than kept, still easy to read
    current: str  # the message the scan stands on (outline)
    found: str  # the assistant the search found (outline)
    found_fill: str
    searched: str  # messages the inner search looked at
    swept: str  # messages swept into the unit between the assistant and the result
    marked_line: str  # a line an error points at
    sent: str  # ● in RunView
    trimmed: str  # ○ in RunView
    bar: str
    bar_track: str


NORMAL = Palette(
    user="#2563eb", assistant="#7c3aed", tool="#059669", error="#dc2626", text="#111827",
    muted="#4b5563", border="#9ca3af", kept="#ecfdf5", dropped="#f3f4f6", dropped_text="#374151",
    current="#f59e0b", found="#7c3aed", found_fill="#f5f3ff", searched="#fef3c7",
    swept="#fef9c3", marked_line="#fee2e2", sent="#047857", trimmed="#374151", bar="#10b981",
    bar_track="#e5e7eb",
)  # fmt: skip
HIGH = Palette(
    user="#1e3a8a", assistant="#4c1d95", tool="#065f46", error="#991b1b", text="#000000",
    muted="#1f2937", border="#111827", kept="#d1fae5", dropped="#e5e7eb", dropped_text="#111827",
    current="#b45309", found="#4c1d95", found_fill="#ede9fe", searched="#fde68a",
    swept="#fef08a", marked_line="#fecaca", sent="#065f46", trimmed="#1f2937", bar="#047857",
    bar_track="#9ca3af",
)  # fmt: skip


@dataclass(frozen=True)
class Display:
    """The display settings in force: a font scale and a contrast level."""

    scale: float = 1.0
    contrast: Contrast = "normal"

    @property
    def palette(self) -> Palette:
        return HIGH if self.contrast == "high" else NORMAL

    def __repr__(self) -> str:
        # a notebook cell ending in set_display(...) echoes this line
        return words().display(self.scale, self.contrast == "high")


_settings = Display()


def set_display(scale: float = 1.0, contrast: Contrast = "normal") -> Display:
    """Draw every view from now on at `scale` times the font size, in `contrast` colours.

    `set_display(1.5, "high")` suits a projector; `set_display()` restores the default.
    Returns the settings now in force; a notebook cell shows them in one line
    (`显示：放大 1.5 倍，高对比度`).
    """
    global _settings
    if not 0.5 <= scale <= 4:
        raise ValueError(f"scale must be between 0.5 and 4, got {scale}")
    if contrast not in ("normal", "high"):
        raise ValueError(f'contrast must be "normal" or "high", got {contrast!r}')
    _settings = Display(float(scale), contrast)
    return _settings


def palette() -> Palette:
    return _settings.palette


def box() -> str:
    """The CSS of one unit's box."""
    width = 2 if _settings.contrast == "high" else 1
    return (
        f"border:{width}px solid {palette().border};border-radius:6px;padding:4px 6px;margin:3px 0"
    )


_FOLLOW_SCALE = {
    "code": "font-size:1em",
    "pre": "font-size:1em",
    "table": "font-size:1em;border-collapse:collapse",
}


def page(html: str) -> str:
    """`html` at the display's scale and text colour, left-aligned (JupyterLab right-aligns
    table cells unless told otherwise).

    JupyterLab gives `code` and tables a fixed font size and drops `<style>` from untrusted
    output, so each of them is told inline to follow the scale."""
    for tag, style in _FOLLOW_SCALE.items():
        html = html.replace(f"<{tag}>", f"<{tag} style='{style}'>")
    # the size is the notebook's text size times the scale, not the parent's: a view inside a
    # view (an explorer, SideBySide) is drawn at the same size, never scaled twice
    size = f"calc(var(--jp-content-font-size1, 14px) * {_settings.scale:g})"
    return (
        f'<div class="mini-agent-view" style="font-size:{size};'
        f'color:{palette().text};text-align:left;line-height:1.45">{html}</div>'
    )


# The explorers' widgets in the content font size, not JupyterLab's fixed 13 px UI size: the
# ipywidgets variables are redefined on the explorer's box, so they reach only its own
# controls. A `<style>` inside an HTML *widget* is applied (widget HTML is not sanitised the
# way an untrusted output is), in JupyterLab, in JupyterLite and in a RISE slide alike.
EXPLORER_CLASS = "mini-agent-explorer"
WIDGET_CSS = f"""<style>
.{EXPLORER_CLASS} {{
  --jp-widgets-font-size: var(--jp-content-font-size1, 14px);
  --jp-widgets-inline-height: 2em;
  --jp-widgets-inline-label-width: 7em;
  --jp-widgets-inline-width: 100%;
  --jp-widgets-inline-width-short: 8em;
  --jp-widgets-inline-width-tiny: 3em;
  --jp-widgets-slider-handle-size: 1.1em;
  font-size: var(--jp-content-font-size1, 14px);
  max-width: 100%;
  min-width: 0;
}}
.{EXPLORER_CLASS} .widget-button, .{EXPLORER_CLASS} .widget-readout,
.{EXPLORER_CLASS} .widget-label, .{EXPLORER_CLASS} textarea {{
  font-size: var(--jp-content-font-size1, 14px);
}}
.{EXPLORER_CLASS} .widget-button {{ width: auto; min-width: 6em; }}
.{EXPLORER_CLASS} .widget-play {{ width: auto; flex: 0 0 auto; }}
.{EXPLORER_CLASS} .widget-play .jupyter-button {{
  width: 2.4em; min-width: 2.4em; flex: 0 0 auto; padding: 0; text-overflow: clip;
}}
/* SessionEditor: room for an error and its gloss above the box, so it does not move as they come */
.{EXPLORER_CLASS} .mini-agent-status {{ min-height: calc(4 * 1.31 * 0.9em + 8px); }}
.{EXPLORER_CLASS} .mini-agent-frame {{
  display: grid; max-height: calc(8 * 1.5em + 12px); overflow-y: auto; overflow-x: hidden;
  border: 1px solid var(--jp-border-color1, #9ca3af); margin: 2px 0;
}}
.{EXPLORER_CLASS} .mini-agent-frame > * {{ grid-area: 1 / 1; margin: 0; min-width: 0; }}
.{EXPLORER_CLASS} .mini-agent-gutter .widget-html-content {{ line-height: normal; }}
.{EXPLORER_CLASS} .mini-agent-lines,
.{EXPLORER_CLASS} .mini-agent-editor textarea {{
  box-sizing: border-box; margin: 0; border: 0; padding: 4px 6px 4px 3.2em;
  font-family: var(--jp-code-font-family, monospace);
  font-size: var(--jp-content-font-size1, 14px); line-height: 1.5em;
  white-space: pre-wrap; overflow-wrap: anywhere; word-break: normal; tab-size: 8;
}}
.{EXPLORER_CLASS} .mini-agent-lines {{ color: transparent; user-select: none; }}
.{EXPLORER_CLASS} .mini-agent-line {{ position: relative; min-height: 1.5em; }}
.{EXPLORER_CLASS} .mini-agent-number {{
  position: absolute; left: -3.2em; width: 2.6em; text-align: right; color: #374151;
}}
/* RunStepper: on a narrow screen the disk's lines wrap in their column, never scroll sideways */
.{EXPLORER_CLASS} .mini-agent-disk td {{ white-space: pre-wrap !important; overflow-wrap: anywhere; }}
.{EXPLORER_CLASS} .mini-agent-disk code {{ white-space: inherit; }}
.{EXPLORER_CLASS} .mini-agent-editor {{ height: 100%; }}
.{EXPLORER_CLASS} .mini-agent-editor textarea {{
  height: 100%; overflow: hidden; resize: none; background: transparent;
  color: var(--jp-content-font-color1, #111827);
}}
</style>"""

WRAP = "white-space:pre-wrap;word-break:normal;overflow-wrap:anywhere"
"""Preformatted text that wraps between words, and inside one only when it is longer than the
line: JupyterLab's output `pre` breaks anywhere (`word-break: break-all`), which split
`invalid session JSON` mid-word at 150 %."""

CELL = "text-align:left;vertical-align:top;padding:2px 8px"
NUMBER_CELL = "text-align:right;vertical-align:top;padding:2px 8px"
