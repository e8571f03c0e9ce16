"""The package's code beside the chapter's: `show_source(calls, CALLS)` in a notebook.

A reader sees the function as it is in the package (`inspect.getsource`, so it can never drift
from the code that runs) next to the chapter's TypeScript excerpt, and then reads what differs.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from unicodedata import east_asian_width

from ..visible import visible_html, visible_text
from .chapter import Excerpt

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


def _title(function: Callable[..., Any], part: str | None) -> str:
    name = f"{function.__module__}.{function.__qualname__}"
    # the chapter's session.ts transcribed is the chapter talking, a deliberate mistake is
    # nobody's code; 本包 is mini_agent's real implementation only
    module = function.__module__.rsplit(".", 1)[-1]
    who = {
        "chapter_session": "本章的 Python 直译",
        "chapter_reference": "本章的 Python 直译",
        "mistakes": "故意写错的版本",
        "buggy": "故意写错的版本",
    }.get(module, "本包")
    return f"{who} {name}" + (f" 里的 {part.removeprefix('def ')}()" if part else "")


@dataclass(frozen=True)
class SourceView:
    """Code panels side by side (HTML) or one after another (text)."""

    panels: tuple[Panel, ...]

    def __repr__(self) -> str:
        return "\n\n".join(
            f"── {visible_text(title)} ──\n{visible_text(code)}" for title, code in self.panels
        )

    def _repr_html_(self) -> str:
        # a panel is never narrower than its longest line: side by side when both fit, else
        # one above the other, so that neither scrolls sideways
        columns = "".join(
            f"<div style='flex:1 1 0;min-width:min(100%,{columns_of(code) + 2}ch);text-align:left'>"
            f"<div style='font-weight:bold;margin-bottom:0.3em'>{visible_html(title)}</div>"
            "<pre style='margin:0;padding:0.5em;border:1px solid #888;white-space:pre;"
            f"overflow-x:auto;text-align:left'>{visible_html(code)}</pre></div>"
            for title, code in self.panels
        )
        return f"<div style='display:flex;gap:1em;flex-wrap:wrap;align-items:flex-start'>{columns}</div>"


def show_source(
    function: Callable[..., Any], *beside: Excerpt | Panel, part: str | None = None
) -> SourceView:
    """The package's `function` (or its nested `part`) first, then each chapter excerpt or
    (title, code) panel given, left to right."""
    panels: list[Panel] = [(_title(function, part), source_of(function, part))]
    for item in beside:
        if isinstance(item, Excerpt):
            panels.append((f"本章 {item.source}：{item.title}", item.text))
        else:
            panels.append(item)
    return SourceView(tuple(panels))
