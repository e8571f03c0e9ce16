"""Views for notebooks: sessions, units and trim results as HTML, with readable plain text.

Jupyter shows `_repr_html_`; nbval compares both it and the plain `repr`, so both are
deterministic: no ids, no addresses, no timings.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

from mini_agent.context import (
    ContextBudgetError,
    context_units,
    estimate_context_chars,
    trim_context,
)
from mini_agent.listing import (
    Row,
    SessionListing,
    TrimListing,
    UnitsListing,
    detail,
    display_width,
    label,
    label_width,
    pad,
    unit_text,
)
from mini_agent.listing import shorten as shorten  # the demo's and the tests'
from mini_agent.model_client import ScriptedClient
from mini_agent.session import Message, PathLike, ToolMessage, load_session
from mini_agent.visible import visible, visible_text
from mini_agent.visible import visible_line as visible_line  # one escaping for every excerpt

from .glosses import gloss_line
from .style import CELL, NUMBER_CELL, box, page, palette, visible_html
from .text import UNSTATED, Budget, request_line, words
from .trace import ScanStep, scan_steps


def _role_colour(message: Message) -> str:
    colours = palette()
    return {"user": colours.user, "assistant": colours.assistant, "tool": colours.tool}[
        message.role
    ]


def _message_html(message: Message) -> str:
    error = (
        f' <b style="color:{palette().error}">isError</b>'
        if isinstance(message, ToolMessage) and message.is_error
        else ""
    )
    return (
        f'<span style="color:{_role_colour(message)};font-weight:600">'
        f"{visible_html(label(message))}</span>{error} "
        f"<code>{visible_html(detail(message))}</code>"
    )


def _head(*names: str) -> str:
    cells = "".join(f"<th style='{CELL};white-space:nowrap'>{visible_html(n)}</th>" for n in names)
    return f"<thead><tr>{cells}</tr></thead>"


def _refuse_no_messages(messages: object) -> None:
    """Refuse what is no list of messages (a path, a str, dicts) as `trim_context` does, when
    the view is made: its error and 释义 at once, not a traceback while the view is drawn."""
    with contextlib.suppress(ContextBudgetError):
        trim_context(messages, 1)  # type: ignore[arg-type]


@dataclass(frozen=True, repr=False)
class SessionView(SessionListing):
    """A session's messages, one row each, with the characters each takes on disk."""

    def __post_init__(self) -> None:
        _refuse_no_messages(self.messages)

    def _repr_html_(self) -> str:
        w = words()
        rows = "".join(
            f"<tr><td style='{NUMBER_CELL}'>{index}</td>"
            f"<td style='{CELL}'>{_message_html(message)}</td>"
            f"<td style='{NUMBER_CELL}'>{estimate_context_chars([message])}</td></tr>"
            for index, message in enumerate(self.messages)
        )
        return page(
            f"<table>{_head(w.column_index, w.column_message, w.column_chars)}"
            f"<tbody>{rows}</tbody></table><p>{visible_html(self.summary())}</p>"
        )


def _unit_html(unit: Sequence[Message], note: str, kept: bool | None = None) -> str:
    colours = palette()
    background = {True: colours.kept, False: colours.dropped, None: "transparent"}[kept]
    # a dropped unit stays legible on a projector: dashed and grey, never faded out
    style = f"{box()};background:{background}"
    if kept is False:
        style += f";border-style:dashed;color:{colours.dropped_text}"
    items = "".join(f"<div>{_message_html(message)}</div>" for message in unit)
    return (
        f'<div style="{style}">'
        f'<div style="font-size:smaller;color:{colours.muted}">{visible_html(note)}</div>'
        f"{items}</div>"
    )


@dataclass(frozen=True, repr=False)
class UnitsView(UnitsListing):
    """Consistent units (oldest first), each drawn as one box."""

    @classmethod
    def of(cls, messages: Sequence[Message]) -> UnitsView:
        _refuse_no_messages(messages)
        return cls(context_units(messages))

    def _repr_html_(self) -> str:
        w = words()
        boxes = "".join(
            _unit_html(unit, w.unit_note(number, estimate_context_chars(unit)))
            for number, unit in enumerate(self.units, start=1)
        )
        return page(f"{boxes}<p>{visible_html(w.units(len(self.units)))}</p>")


@dataclass(frozen=True, repr=False)
class TrimView(TrimListing):
    """What `trim_context(messages, max_chars)` keeps and drops, unit by unit, or its error,
    drawn as boxes; the plain text is `TrimListing`'s."""

    window: int | None = None
    """List only this many units on each side of the cut; count the others in one line each
    (a 2,000-message session stays readable). `None`: every unit."""
    kept_first: bool = False
    """Draw the kept units above the dropped ones, and those newest first (05's explorer: the
    units the model gets, and the first that did not fit, stay in view on a projector). The
    plain text keeps the conversation's order either way."""
    fold_dropped: bool = False
    """Count the dropped units in one line above the kept ones instead of drawing them (00's
    side-by-side view: the kept units, the ones the instructor points at, fit on a projector).
    The plain text still lists every unit."""

    def __post_init__(self) -> None:
        _refuse_no_messages(self.messages)

    @property
    def error(self) -> str | None:
        """The chapter's budget error (or a budget's type error), when no context came out."""
        return str(self._outcome) if isinstance(self._outcome, Exception) else None

    def gloss_line(self, error: Exception) -> str | None:
        return gloss_line(error)

    def shown(self) -> tuple[list[Row], str, str]:
        """The rows to list, and the lines counting older dropped / newer kept units."""
        rows = self.rows
        if self.window is None:
            return rows, "", ""
        cut = next((i for i, (*_, is_kept) in enumerate(rows) if is_kept), len(rows))
        low, high = max(0, cut - self.window), min(len(rows), cut + self.window)
        older, newer = rows[:low], rows[high:]
        before = words().older_dropped(len(older), sum(r[2] for r in older))
        after = words().newer_kept(len(newer), sum(r[2] for r in newer))
        return rows[low:high], before if older else "", after if newer else ""

    def _repr_html_(self) -> str:
        w, colours = words(), palette()
        shown, before, after = self.shown()

        def draw(rows: list[tuple[int, list[Message], int, bool]]) -> str:
            return "".join(
                _unit_html(unit, w.unit_note(n, chars, w.kept if is_kept else w.dropped), is_kept)
                for n, unit, chars, is_kept in rows
            )

        note = f'<p style="color:{colours.muted};margin:2px 0">{{}}</p>'
        older = note.format(visible_html(before)) if before else ""
        newer = note.format(visible_html(after)) if after else ""
        kept = self.kept
        if kept is None and self.failure is None:
            boxes = ""  # a budget that is no int (400.5): its error and 释义 are the whole story
        elif kept is None and self.rows:
            # the error is the point: it, and the one unit it is about (the newest, the
            # smallest consistent unit), fit on a projector; the older units are counted
            *rest, (n, unit, chars, _) = self.rows
            older = note.format(visible_html(w.older_unsent(len(rest), sum(r[2] for r in rest))))
            boxes = _unit_html(unit, w.unit_note(n, chars, w.too_big), False)
            boxes += older if rest else ""
        elif self.kept_first:
            # the kept units, then the dropped ones newest first: the unit the scan stopped
            # at (the first that does not fit) sits right under the last one kept
            dropped = [row for row in reversed(shown) if not row[3]]
            stop = (
                _unit_html(
                    dropped[0][1], w.unit_note(dropped[0][0], dropped[0][2], w.stopped_here), False
                )
                if dropped
                else ""
            )
            boxes = draw([r for r in shown if r[3]]) + newer + stop + draw(dropped[1:]) + older
        elif self.fold_dropped:
            dropped = [row for row in self.rows if not row[3]]
            folded = w.older_dropped(len(dropped), sum(r[2] for r in dropped))
            boxes = (note.format(visible_html(folded)) if dropped else "") + draw(
                [r for r in self.rows if r[3]]
            )
        else:
            boxes = older + draw(shown) + newer
        used = estimate_context_chars(kept) if kept is not None else 0
        share = min(100, round(100 * used / self.max_chars)) if used else 0  # budget 0, "400"
        bar = (
            f'<div style="background:{colours.bar_track};width:20em;max-width:100%;height:8px;'
            f'border-radius:4px"><div style="background:{colours.bar};width:{share}%;'
            f'height:8px;border-radius:4px"></div></div>'
        )
        colour = colours.error if kept is None else colours.text
        # folded (a narrow column on a projector): no blank line between the summary and bar
        tight = ";margin:0 0 4px" if self.fold_dropped else ""
        lines = "<br>\n".join(visible_html(line) for line in self.summary().split("\n"))
        summary = f'<p style="color:{colour}{tight}">{lines}</p>'
        return page(f"{summary}{bar}{boxes}")


# --- notebooks 04 and 06: the reverse scan, and disk beside what the model was sent ---------


def _chip(index: int, message: Message, style: str) -> str:
    return (
        f'<span title="{visible_html(detail(message))}" '
        f'style="display:inline-block;{box()};margin-right:4px;{style}">'
        f'<span style="color:{palette().muted};font-size:smaller">{index}</span> '
        f'<span style="color:{_role_colour(message)};font-weight:600">'
        f"{visible_html(label(message))}</span></span>"
    )


@dataclass(frozen=True)
class ScanView:
    """The chapter's reverse scan over `messages`, one row of the history per step.

    In each row: the message under `index` is outlined, the messages the inner search looked
    at are shaded, the found assistant is outlined in purple, and messages already cut into
    units are struck through. `step_html(n)` draws one step (for a stepper widget).
    """

    messages: Sequence[Message]

    @cached_property
    def steps(self) -> list[ScanStep]:
        return list(scan_steps(self.messages))

    def __repr__(self) -> str:
        head = words().history + " ".join(f"[{label(message)}]" for message in self.messages)
        return "\n".join([head, *(repr(step) for step in self.steps)])

    def step_html(self, number: int) -> str:
        """Step `number` (1-based) as HTML: the history row, what happened, the units so far."""
        colours = palette()
        step = self.steps[number - 1]
        chips = []
        for index, message in enumerate(self.messages):
            if index > step.index:
                # already cut into units by earlier steps: struck through, still legible
                style = f"background:{colours.dropped};text-decoration:line-through"
            elif index == step.index:
                style = f"outline:3px solid {colours.current}"
            elif index == step.found:
                style = f"outline:3px solid {colours.found};background:{colours.found_fill}"
            elif index in step.looked_at:
                style = f"background:{colours.searched}"
            else:
                style = ""
            chips.append(_chip(index, message, style))
        units = " ".join(
            f'<span style="{box()};display:inline-block;background:{colours.kept}">'
            f"{visible_html(unit_text(unit))}</span>"
            for unit in step.units
        )
        return page(
            f"<div style='margin:6px 0'><b>{visible_html(words().step(step.number))}</b>："
            f"{visible_html(step.explain())}<div>{''.join(chips)}</div>"
            f"<div>units = {units}；index → {step.next_index}</div></div>"
        )

    def _repr_html_(self) -> str:
        return "".join(self.step_html(step.number) for step in self.steps)


def align_requests(
    disk: Sequence[Message], requests: Sequence[Sequence[Message]]
) -> list[tuple[int, int]]:
    """Where each request sits in the session file: `disk[start:end] == request`.

    `end` is how many messages were on disk when the request was sent (everything in memory
    had been recorded), `start` where the trimmed context began. Each request ends later than
    the one before. Raises `ValueError` if a request is not such a slice of `disk`.
    """
    spans: list[tuple[int, int]] = []
    previous_end = 0
    for number, request in enumerate(requests, start=1):
        sent = list(request)
        for end in range(max(previous_end + 1, len(sent)), len(disk) + 1):
            if list(disk[end - len(sent) : end]) == sent:
                spans.append((end - len(sent), end))
                previous_end = end
                break
        else:
            raise ValueError(f"request {number} is not a slice of the session on disk")
    return spans


@dataclass(frozen=True)
class RunView:
    """The session file beside what the model was sent, request by request.

    One row per message on disk, one column per model request: `●` sent in that request,
    `○` on disk but trimmed away, blank when not yet written.
    """

    disk: Sequence[Message]
    requests: Sequence[Sequence[Message]]
    budget: Budget = UNSTATED
    """The budget the runs used, when the caller knows it (one for every request)."""
    notes: Sequence[str] = ()
    """Lines under the summary: where a run stopped, and why (06's demo)."""

    @classmethod
    def of(
        cls,
        session_path: PathLike,
        *clients: ScriptedClient,
        budget: Budget = UNSTATED,
        notes: Sequence[str] = (),
    ) -> RunView:
        """The file as it is now, and every request of `clients`, in order (runs in turn)."""
        requests = [request for client in clients for request in client.requests]
        return cls(load_session(session_path), requests, budget, tuple(notes))

    @cached_property
    def spans(self) -> list[tuple[int, int]]:
        return align_requests(self.disk, self.requests)

    def mark(self, index: int, request: int) -> str:
        """`●`, `○` or a blank for disk message `index` in request `request` (1-based)."""
        start, end = self.spans[request - 1]
        return "●" if start <= index < end else "○" if index < end else " "

    def summary(self) -> str:
        """The file, then one line per request: the shared disk-beside-sent line."""
        w = words()
        head = w.run_summary(len(self.disk), estimate_context_chars(self.disk), len(self.requests))
        rows = [head] + [
            "  "
            + request_line(
                number, self.disk[:end], self.disk[start:end], self.budget, disk_chars=False
            )
            for number, (start, end) in enumerate(self.spans, start=1)
        ]
        return "\n".join([*rows, *(f"  {note}" for note in self.notes)])

    def __repr__(self) -> str:
        w = words()
        numbers = range(1, len(self.requests) + 1)
        width = display_width(w.column_chars)
        labels = label_width(self.disk)
        rows = [
            self.summary(),
            (
                f"  {w.column_index:>3}  {pad(w.column_message, labels)} "
                f"{' ' * max(0, 5 - width)}{w.column_chars}  "
                + " ".join(f"{w.column_request_short(n):<3}" for n in numbers)
            ).rstrip(),
        ]
        for index, message in enumerate(self.disk):
            marks = " ".join(f"{self.mark(index, n):<3}" for n in numbers)
            chars = estimate_context_chars([message])
            rows.append(f"  {index:>3}  {pad(label(message), labels)} {chars:>5}  {marks}".rstrip())
        return "\n".join(rows)

    def _repr_html_(self) -> str:
        w, colours = words(), palette()
        numbers = range(1, len(self.requests) + 1)
        colour = {"●": colours.sent, "○": colours.trimmed, " ": "transparent"}
        head = _head(
            w.column_index,
            w.column_on_disk,
            w.column_chars,
            *(w.column_request(n) for n in numbers),
        )
        body = "".join(
            f"<tr><td style='{NUMBER_CELL}'>{index}</td>"
            f"<td style='{CELL}'>{_message_html(message)}</td>"
            f"<td style='{NUMBER_CELL}'>{estimate_context_chars([message])}</td>"
            + "".join(
                f"<td style='text-align:center;font-weight:700;font-size:1.2em;"
                f"color:{colour[self.mark(index, n)]}'>"
                f"{self.mark(index, n)}</td>"
                for n in numbers
            )
            + "</tr>"
            for index, message in enumerate(self.disk)
        )
        summary = "".join(
            f"<div>{visible_html(line.strip())}</div>" for line in self.summary().splitlines()
        )
        return page(
            f"{summary}<table>{head}<tbody>{body}</tbody></table>"
            f"<p style='font-size:smaller'>{visible_html(w.run_legend)}</p>"
        )


def _cell_text(value: object) -> str:
    return visible(value if isinstance(value, str) else repr(value))


_CODE_START = re.compile(r"""[{\[("']|[A-Za-z_][\w.]*\(""")  # JSON, a list, a repr, a call
_CODE_MARKS = frozenset('[]()"=\\')  # not braces: `an array of {id, name, input}` is prose
_CODE_WORDS = frozenset({"None", "True", "False", "null", "true", "false"})


def looks_like_code(cell: str) -> bool:
    """Whether a table cell is code (JSON, a repr, an identifier, a file name) and so shown in
    a monospaced font; prose, Chinese or English, is not. A cell that starts as code is code
    even with Chinese inside (`{"content":"记忆"}`); otherwise any Chinese makes it prose
    (`role === "user" 且前提满足`), and plain ASCII is code when it has code's punctuation or
    is one word with `_ . /` in it (`a.jsonl`, `test_x`) or a literal (`None`)."""
    if _CODE_START.match(cell):
        return True
    if not cell.isascii():
        return False
    if any(char in _CODE_MARKS for char in cell):
        return True
    one_word = cell != "" and not any(char.isspace() for char in cell)
    return cell in _CODE_WORDS or (one_word and any(char in "_./" for char in cell))


def _cell_html(cell: str) -> str:
    """A cell's HTML: `backticked` parts as code, else the whole cell by `looks_like_code`."""
    parts = cell.split("`")
    if len(parts) >= 3 and len(parts) % 2:  # balanced backticks: the author marked the code
        return "".join(
            f"<code>{visible_html(part)}</code>" if odd else visible_html(part)
            for odd, part in zip(itertools.cycle((False, True)), parts)
            if part
        )
    return f"<code>{visible_html(cell)}</code>" if looks_like_code(cell) else visible_html(cell)


@dataclass(frozen=True)
class Table:
    """A small table (a chapter's table filled in live): strings as themselves, others as repr.

    In HTML a cell is monospaced only when it is code (`looks_like_code`), or only its
    `backticked` parts are; Chinese prose stays in the notebook's font.
    """

    columns: Sequence[str]
    rows: Sequence[Sequence[object]]

    def _cells(self) -> list[list[str]]:
        return [[_cell_text(value) for value in row] for row in self.rows]

    def __repr__(self) -> str:
        table = [[visible(column) for column in self.columns], *self._cells()]
        widths = [max(display_width(row[i]) for row in table) for i in range(len(self.columns))]

        def line(row: list[str]) -> str:
            padded = [
                cell + " " * (width - display_width(cell))
                for cell, width in zip(row, widths, strict=True)
            ]
            return "  ".join(padded).rstrip()

        rule = "  ".join("-" * width for width in widths)
        return "\n".join([line(table[0]), rule, *(line(row) for row in table[1:])])

    def _repr_html_(self) -> str:
        body = "".join(
            "<tr>"
            + "".join(f"<td style='{CELL}'>{_cell_html(cell)}</td>" for cell in row)
            + "</tr>"
            for row in self._cells()
        )
        return page(f"<table>{_head(*self.columns)}<tbody>{body}</tbody></table>")


@dataclass(frozen=True)
class FileView:
    """A session file as an editor shows it: physical line numbers, blank lines included.

    `mark` highlights one line (say, the one an error points at). Only the file's name is
    shown, never the directory it lives in.
    """

    text: str
    name: str = ""
    mark: int | None = None
    clip: bool = False
    """One row per line, cut with `…` at the view's width, the whole line in its tooltip (and
    in the plain text): for a narrow column, where a sideways scrollbar would hide the lines."""

    @classmethod
    def of(
        cls, path: str | os.PathLike[str], mark: int | None = None, clip: bool = False
    ) -> FileView:
        with open(path, "rb") as file:
            text = file.read().decode("utf-8", errors="replace")
        return cls(text, os.path.basename(os.fspath(path)), mark, clip)

    @property
    def lines(self) -> list[str]:
        """The physical lines; a final newline ends the last line, it does not start one."""
        if not self.text:
            return []
        lines = self.text.split("\n")
        if self.text.endswith("\n"):
            lines.pop()
        return lines

    def summary(self) -> str:
        newline_at_end = not self.text or self.text.endswith("\n")
        return words().file_summary(
            visible(self.name), len(self.lines), len(self.text), newline_at_end
        )

    def __repr__(self) -> str:
        rows = [self.summary()]
        for number, line in enumerate(self.lines, start=1):
            pointer = ">" if number == self.mark else " "
            rows.append(f"{pointer}{number:>3} | {visible(line)}".rstrip())
        return "\n".join(rows)

    def _repr_html_(self) -> str:
        marked = palette().marked_line
        table = line_table(
            self.lines, lambda number: marked if number == self.mark else None, self.clip
        )
        return page(f"<p><b>{visible_html(self.summary())}</b></p>{table}")


def line_table(
    lines: Sequence[str], background: Callable[[int], str | None], clip: bool = False
) -> str:
    """Lines numbered from 1 as an editor shows them, each on the background
    `background(number)` gives (`None`: none); the text as it is, hidden characters escaped.
    `clip`: the table as wide as its box, each line cut with `…`, whole in its tooltip."""
    cut = ";overflow:hidden;text-overflow:ellipsis" if clip else ""
    # a fixed layout takes its column widths from the first row: room for the numbers
    narrow = f";width:{len(str(len(lines))) + 0.6:g}em" if clip else ""
    # JupyterLab wraps `code` in rendered HTML: told to keep its line, the cell cuts it
    keep = " style='font-size:1em;white-space:pre'" if clip else ""
    rows = "".join(
        f"<tr style='background:{background(number) or 'transparent'}'>"
        f"<td style='{NUMBER_CELL};color:{palette().muted};user-select:none{narrow}'>"
        f"{number}</td>"
        f"<td style='{CELL};white-space:pre{cut}'"
        + (f" title='{visible_html(visible(line))}'" if clip else "")
        + f"><code{keep}>{visible_html(visible(line))}</code></td></tr>"
        for number, line in enumerate(lines, start=1)
    )
    fixed = "font-size:1em;border-collapse:collapse;table-layout:fixed;width:100%"
    return f"<table style='{fixed}'>{rows}</table>" if clip else f"<table>{rows}</table>"


class SideBySide:
    """Several views next to each other (one above the other in plain text).

    `weights`: each column's share of the width (equal shares by default)."""

    def __init__(self, *panels: tuple[str, object], weights: Sequence[float] | None = None) -> None:
        self.panels = panels
        self.weights = tuple(weights) if weights is not None else (1,) * len(panels)
        if len(self.weights) != len(panels):
            raise ValueError(f"{len(panels)} panels need {len(panels)} weights")

    def __repr__(self) -> str:
        return "\n\n".join(
            f"── {visible(title)} ──\n{visible_text(repr(value))}" for title, value in self.panels
        )

    def _repr_html_(self) -> str:
        columns = "".join(
            f"<div style='flex:{weight:g} 1 0;min-width:0;overflow-x:auto'>"
            f"<h4 style='margin:0 0 4px;font-size:1.1em'>{visible_html(visible(title))}</h4>"
            f"{_html_of(value)}</div>"
            for (title, value), weight in zip(self.panels, self.weights, strict=True)
        )
        return page(f"<div style='display:flex;gap:24px;align-items:flex-start'>{columns}</div>")


def _html_of(value: object) -> str:
    html = getattr(value, "_repr_html_", None)
    return str(html()) if callable(html) else f"<pre>{visible_html(repr(value))}</pre>"
