"""The chapter's code beside its Python: `show_source(book.CALLS, session.calls)`.

A reader sees the chapter's TypeScript first and the function as it is in the package beside
it (`inspect.getsource`, so it can never drift from the code that runs), and reads what differs.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from unicodedata import east_asian_width

from mini_agent import agent, context, session
from mini_agent.visible import visible_text

from .book import Excerpt
from .style import WRAP, visible_html
from .text import words

Panel = tuple[str, str]  # (title, code)


def source_of(function: Callable[..., Any], part: str | None = None) -> str:
    """The source of `function`, dedented; with `part`, only the nested block whose first line
    starts with it (e.g. `part="def record"` inside `run_agent`)."""
    source = textwrap.dedent(inspect.getsource(function))
    if part is None:
        return source.rstrip("\n")
    lines = source.split("\n")
    starts = [i for i, line in enumerate(lines) if line.lstrip().startswith(part)]
    if len(starts) != 1:
        raise ValueError(f"{len(starts)} blocks start with {part!r} in {function.__qualname__}")
    first = starts[0]
    indent = len(lines[first]) - len(lines[first].lstrip())
    end = first + 1
    while end < len(lines):
        line = lines[end]
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        end += 1
    return textwrap.dedent("\n".join(lines[first:end])).strip("\n")


def columns_of(code: str) -> int:
    """The width of the longest line in monospace columns (a CJK character takes two)."""
    return max(
        (sum(2 if east_asian_width(c) in "WF" else 1 for c in line) for line in code.split("\n")),
        default=0,
    )


def _path(function: Callable[..., Any]) -> str:
    return function.__module__.replace(".", "/") + ".py"


TRANSCRIBED = "本章的代码，写成 Python"
"""Code the chapter prints (`calls()`, `appendSession()`, the unit scan), in the package."""
FROM_A_DRAWING = "照老z 的图写的 Python"
FROM_THE_WORDS = "照本章文字写的 Python"
CHAPTER_FILES = ("mini_agent.session", "mini_agent.context", "mini_agent.agent")

FROM_THE_CHAPTER: dict[Callable[..., Any], tuple[str, str]] = {
    # the chapter prints the four branches; the precondition and isError are in its words
    session.discriminate: (TRANSCRIBED, "公共前提和 isError 照正文补上；每个 undefined 说出为什么"),
    # the chapter draws these and prints none of their code
    session.load_session: (FROM_A_DRAWING, ""),
    session.parse_session_lines: (FROM_A_DRAWING, "“逐行 map”那一段"),
    context.trim_context: (FROM_A_DRAWING, ""),
    agent.run_agent: (FROM_A_DRAWING, ""),
    # the chapter only says "再加分隔开销", not how much
    context.estimate_context_chars: (FROM_THE_WORDS, "分隔开销取每条 +1"),
}
"""What a function of the chapter's files is, and a note, where it is not a plain
transcription of printed code: the one place a panel's title says so (`TRANSCRIBED` for the
rest of `CHAPTER_FILES`)."""


def _title(function: Callable[..., Any], part: str | None) -> str:
    """Whose code this is: the chapter's (in its files of the package, titled by what the
    chapter gives of it: code, a drawing or words); a deliberate mistake; the package's own
    machinery (本包); or the notebooks' example."""
    module = function.__module__
    who, note = "本包的实现", ""
    if module in CHAPTER_FILES:
        who, note = FROM_THE_CHAPTER.get(function, (TRANSCRIBED, ""))
    elif module.rsplit(".", 1)[-1] in ("mistakes", "buggy"):
        who = "故意写错的版本"
    elif module.startswith("teaching."):
        who = "本包的示例"
    name = function.__qualname__ + (f" 里的 {part.removeprefix('def ')}" if part else "")
    return f"{who}（{_path(function)}）：{name}" + (f"（{note}）" if note else "")


@dataclass(frozen=True)
class SourceView:
    """Code panels side by side (HTML: a long line wraps inside its panel rather than push the
    other below it, as JupyterLab wraps code; stacked only when the notebook is too narrow for
    two) or one after another (text)."""

    panels: tuple[Panel, ...]
    folded: bool = False
    """The panels after the first closed (HTML), under `Words.folded_twin`: the chapter's code
    stays open above an exercise that asks the reader to write its twin."""

    def __repr__(self) -> str:
        return "\n\n".join(
            f"── {visible_text(title)} ──\n{visible_text(code)}" for title, code in self.panels
        )

    def _repr_html_(self) -> str:
        columns = "".join(
            "<div style='min-width:0;text-align:left'>"
            + self._fold(
                index,
                f"<div style='font-weight:bold;margin-bottom:0.3em'>{visible_html(title)}</div>"
                f"<pre style='margin:0;padding:0.5em;border:1px solid #888;{WRAP};"
                f"text-align:left'>{visible_html(code)}</pre>",
            )
            + "</div>"
            for index, (title, code) in enumerate(self.panels)
        )
        return (
            "<div style='display:grid;gap:1em;align-items:start;grid-template-columns:"
            f"repeat(auto-fit,minmax(min(100%,{MIN_COLUMN}ch),1fr))'>{columns}</div>"
        )

    def _fold(self, index: int, panel: str) -> str:
        if not self.folded or index == 0:
            return panel
        return (
            "<details><summary style='cursor:pointer;font-weight:bold;color:#1d4ed8'>"
            f"{visible_html(words().folded_twin)}</summary>{panel}</details>"
        )


MIN_COLUMN = 36  # below this many columns each, the panels stack


def show_source(
    *items: Excerpt | Panel | Callable[..., Any], part: str | None = None, folded: bool = False
) -> SourceView:
    """Panels left to right, in the order given: a chapter excerpt (本章 or 老z 的图), a
    function's source (its nested `part` with `part=`), or a (title, code) pair. The notebooks
    put the chapter's TypeScript first and its Python twin beside it; `folded=True` closes the
    twin where an exercise below asks the reader to write it (`SourceView.folded`)."""
    panels: list[Panel] = []
    for item in items:
        if isinstance(item, Excerpt):
            panels.append((item.heading, item.text))
        elif isinstance(item, tuple):
            panels.append(item)
        else:
            panels.append((_title(item, part), source_of(item, part)))
    return SourceView(tuple(panels), folded)
