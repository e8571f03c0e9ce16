"""Notebook 95's class route, read from 95 itself: its stops are found, not counted.

A stop is a Markdown cell whose heading is `## 第 N 站（M 分钟）：…` (`，可选` after the minutes
marks a stop to skip when time is short). The notebook it opens is the first notebook its text
links to (`**打开** [04 …](04_context_units.ipynb)`), or the previous stop's when it links none
(`**还在** 06`). The cells it runs are the code cells whose first line starts with a `code span`
of its text, in the order the text names them. 95's route table (`RouteTable`) and the
classroom test (tests/test_classroom.py) both read the stops here, so a stop added to 95
appears in the table, in its totals and in the test's walk with nothing else to edit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .style import page, visible_html
from .views import Table

HEADING = re.compile(
    r"^## 第 (?P<number>\d+) 站（(?P<minutes>\d+) 分钟(?P<optional>，可选)?）：(?P<title>.+)$"
)
NOTEBOOK_LINK = re.compile(r"\]\((?P<name>\d\d\w*\.ipynb)[)#]")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
DASH = "\u2013"  # the en dash of a time range, as the guides write ranges


@dataclass(frozen=True)
class Stop:
    number: int
    minutes: int
    optional: bool
    title: str
    notebook: str  # the notebook the stop runs cells in
    text: str  # the stop's Markdown, heading included

    @property
    def name(self) -> str:
        return f"第 {self.number} 站" + ("（可选）" if self.optional else "")


def cell_source(cell: dict[str, Any]) -> str:
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def route_stops(cells: Sequence[dict[str, Any]]) -> list[Stop]:
    """The stops of a route notebook's cells, in order (numbers must run 1, 2, 3 …)."""
    stops: list[Stop] = []
    for cell in cells:
        if cell["cell_type"] != "markdown":
            continue
        text = cell_source(cell)
        found = HEADING.match(text.split("\n", 1)[0])
        if found is None:
            continue
        linked = NOTEBOOK_LINK.search(text)
        if linked is None and not stops:
            raise ValueError(f"{found['title']}: the first stop must link the notebook it opens")
        stop = Stop(
            number=int(found["number"]),
            minutes=int(found["minutes"]),
            optional=bool(found["optional"]),
            title=found["title"],
            notebook=linked["name"] if linked else stops[-1].notebook,
            text=text,
        )
        if stop.number != len(stops) + 1:
            raise ValueError(f"stop {stop.number} follows stop {len(stops)}: number them 1, 2, 3 …")
        stops.append(stop)
    return stops


def read_cells(path: str | Path) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads(Path(path).read_text(encoding="utf-8"))["cells"]
    return cells


def stops_in(path: str | Path) -> list[Stop]:
    """The stops of the route notebook at `path` (95_instructor.ipynb)."""
    return route_stops(read_cells(path))


def named_cells(stop: Stop, cells: Sequence[dict[str, Any]]) -> list[str]:
    """The first lines of the code cells the stop runs, in the order its text names them.

    95 names a cell by its first line: the whole line (`demo.reset()`), its start followed by
    开头 (`import json` 开头), or the line cut short with … ; a span followed by 不是它 names a
    cell not to run. A span names a cell only when exactly one code cell fits it."""
    first_lines = [
        cell_source(cell).split("\n", 1)[0] for cell in cells if cell["cell_type"] == "code"
    ]
    named: list[str] = []
    for span in CODE_SPAN.finditer(stop.text):
        code, after = span[1], stop.text[span.end() : span.end() + 8]
        if after.lstrip().startswith("不是它"):
            continue
        if code.endswith("…") or after.lstrip().startswith("开头"):
            fits = [line for line in first_lines if line.startswith(code.rstrip("…"))]
        else:
            fits = [line for line in first_lines if line.split("  #")[0].rstrip() == code]
        if len(fits) == 1 and fits[0] not in named:
            named.append(fits[0])
    return named


def clock(minutes: int) -> str:
    return f"{minutes // 60}:{minutes % 60:02d}"


class RouteTable:
    """The route at a glance: each stop, its notebook, its minutes and its place on the clock,
    with the totals above, all from the stops' headings."""

    def __init__(self, path: str | Path) -> None:
        self.stops = stops_in(path)
        rows: list[list[object]] = []
        elapsed = 0
        for stop in self.stops:
            rows.append(
                [stop.name, stop.notebook, stop.title, str(stop.minutes),
                 f"{clock(elapsed)}{DASH}{clock(elapsed + stop.minutes)}"]
            )  # fmt: skip
            elapsed += stop.minutes
        self.table = Table(["站", "笔记本", "内容", "分钟", "时间"], rows)

    @property
    def summary(self) -> str:
        total = sum(stop.minutes for stop in self.stops)
        optional = [stop for stop in self.stops if stop.optional]
        line = f"{len(self.stops)} 站，共 {total} 分钟"
        if optional:
            names = "、".join(f"第 {stop.number} 站" for stop in optional)
            needed = total - sum(stop.minutes for stop in optional)
            line += f"；不含可选的{names}，{needed} 分钟"
        return line

    def __repr__(self) -> str:
        return f"{self.summary}\n{self.table!r}"

    def _repr_html_(self) -> str:
        return page(f"<p>{visible_html(self.summary)}</p>") + self.table._repr_html_()
