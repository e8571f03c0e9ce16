"""Views for notebooks: sessions, units and trim results as HTML, with readable plain text.

Jupyter shows `_repr_html_`; nbval compares both it and the plain `repr`, so both are
deterministic: no ids, no addresses, no timings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from html import escape

from .context import ContextBudgetError, context_units, estimate_context_chars, trim_context
from .messages import AssistantMessage, Message, ToolMessage, dumps_json

_ROLE_COLOURS = {"user": "#2563eb", "assistant": "#7c3aed", "tool": "#059669"}
_BOX = "border:1px solid #d1d5db;border-radius:6px;padding:4px 6px;margin:3px 0"
_MAX_TEXT = 60


def shorten(text: str, limit: int = _MAX_TEXT) -> str:
    """One line of at most `limit` characters, control characters made visible."""
    return _clip(dumps_json(text)[1:-1], limit)  # JSON escapes show \n, \t, \u0000 …


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def label(message: Message) -> str:
    """A short tag such as `assistant(a,b)`, `tool a!` (error) or `user`."""
    if isinstance(message, AssistantMessage) and message.tool_calls:
        return f"assistant({','.join(call.id for call in message.tool_calls)})"
    if isinstance(message, ToolMessage):
        return f"tool {message.tool_call_id}{'!' if message.is_error else ''}"
    return message.role


def _detail(message: Message) -> str:
    if isinstance(message, AssistantMessage) and message.tool_calls:
        calls = ", ".join(f"{call.id}:{call.name}({_clip(dumps_json(call.input), 30)})"
                          for call in message.tool_calls)  # fmt: skip
        return f"{shorten(message.content, 30)!s} → {calls}"
    return shorten(message.content)


def _message_html(message: Message) -> str:
    colour = _ROLE_COLOURS[message.role]
    error = (
        ' <b style="color:#dc2626">isError</b>'
        if isinstance(message, ToolMessage) and message.is_error
        else ""
    )
    return (
        f'<span style="color:{colour};font-weight:600">{escape(label(message))}</span>{error} '
        f"<code>{escape(_detail(message))}</code>"
    )


@dataclass(frozen=True)
class SessionView:
    """A session's messages, one row each, with the characters each takes on disk."""

    messages: Sequence[Message]

    def __repr__(self) -> str:
        rows = [f"{len(self.messages)} messages, {estimate_context_chars(self.messages)} chars"]
        for index, message in enumerate(self.messages):
            rows.append(f"  [{index}] {label(message):<16} {_detail(message)}")
        return "\n".join(rows)

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{index}</td><td>{_message_html(message)}</td>"
            f"<td style='text-align:right'>{estimate_context_chars([message])}</td></tr>"
            for index, message in enumerate(self.messages)
        )
        return (
            f"<table><thead><tr><th>#</th><th>message</th><th>chars</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
            f"<p>{len(self.messages)} messages, {estimate_context_chars(self.messages)} chars</p>"
        )


def _unit_text(unit: Sequence[Message]) -> str:
    return "[" + " | ".join(label(message) for message in unit) + "]"


def _unit_html(unit: Sequence[Message], note: str, kept: bool | None = None) -> str:
    background = {True: "#ecfdf5", False: "#f3f4f6", None: "#ffffff"}[kept]
    opacity = "0.55" if kept is False else "1"
    items = "".join(f"<div>{_message_html(message)}</div>" for message in unit)
    return (
        f'<div style="{_BOX};background:{background};opacity:{opacity}">'
        f'<div style="font-size:smaller;color:#6b7280">{escape(note)}</div>{items}</div>'
    )


@dataclass(frozen=True)
class UnitsView:
    """Consistent units (oldest first), each drawn as one box."""

    units: Sequence[Sequence[Message]]

    @classmethod
    def of(cls, messages: Sequence[Message]) -> UnitsView:
        return cls(context_units(messages))

    def __repr__(self) -> str:
        rows = [f"{len(self.units)} units"]
        for number, unit in enumerate(self.units, start=1):
            chars = estimate_context_chars(unit)
            rows.append(f"  unit {number}: {_unit_text(unit)}  {chars} chars")
        return "\n".join(rows)

    def _repr_html_(self) -> str:
        boxes = "".join(
            _unit_html(unit, f"unit {number} · {estimate_context_chars(unit)} chars")
            for number, unit in enumerate(self.units, start=1)
        )
        return f"<div>{boxes}<p>{len(self.units)} units</p></div>"


@dataclass(frozen=True)
class TrimView:
    """What `trim_context(messages, max_chars)` keeps and drops, unit by unit, or its error."""

    messages: Sequence[Message]
    max_chars: int
    window: int | None = None
    """Draw only this many units on each side of the cut; count the others in one line each
    (a 2,000-message session stays readable and quick to redraw). `None`: draw every unit."""

    @cached_property
    def units(self) -> list[list[Message]]:
        return context_units(self.messages)

    @cached_property
    def _outcome(self) -> list[Message] | str:
        try:
            return trim_context(self.messages, self.max_chars)
        except ContextBudgetError as err:
            return str(err)

    @property
    def kept(self) -> list[Message] | None:
        """The trimmed context, or `None` when the budget cannot hold one."""
        return None if isinstance(self._outcome, str) else self._outcome

    @property
    def error(self) -> str | None:
        """The chapter's budget error, when the budget cannot hold a context."""
        return self._outcome if isinstance(self._outcome, str) else None

    def _rows(self) -> list[tuple[int, list[Message], int, bool]]:
        return self._all_rows

    @cached_property
    def _all_rows(self) -> list[tuple[int, list[Message], int, bool]]:
        kept = self.kept
        first_kept = len(self.messages) - len(kept) if kept is not None else len(self.messages)
        rows, start = [], 0
        for number, unit in enumerate(self.units, start=1):
            rows.append((number, unit, estimate_context_chars(unit), start >= first_kept))
            start += len(unit)
        return rows

    def summary(self) -> str:
        kept = self.kept
        if kept is None:
            return f"budget {self.max_chars} chars: {self.error}"
        kept_units = sum(1 for *_, is_kept in self._rows() if is_kept)
        return (
            f"budget {self.max_chars} chars: kept {kept_units} of {len(self.units)} units, "
            f"{len(kept)} of {len(self.messages)} messages, "
            f"{estimate_context_chars(kept)} chars used"
        )

    def _window(self) -> tuple[list[tuple[int, list[Message], int, bool]], str, str]:
        """The rows to draw, and the lines counting older dropped / newer kept units."""
        rows = self._rows()
        if self.window is None:
            return rows, "", ""
        cut = next((i for i, (*_, is_kept) in enumerate(rows) if is_kept), len(rows))
        low, high = max(0, cut - self.window), min(len(rows), cut + self.window)
        older, newer = rows[:low], rows[high:]
        before = f"… {len(older)} older units dropped, {sum(r[2] for r in older)} chars"
        after = f"… {len(newer)} newer units kept, {sum(r[2] for r in newer)} chars"
        return rows[low:high], before if older else "", after if newer else ""

    def __repr__(self) -> str:
        shown, before, after = self._window()
        rows = [self.summary()] + ([f"  {before}"] if before else [])
        for number, unit, chars, is_kept in shown:
            state = "kept   " if is_kept else "dropped"
            rows.append(f"  {state} unit {number}: {_unit_text(unit)}  {chars} chars")
        return "\n".join(rows + ([f"  {after}"] if after else []))

    def _repr_html_(self) -> str:
        shown, before, after = self._window()
        boxes = "".join(
            _unit_html(
                unit, f"unit {number} · {chars} chars · {'kept' if is_kept else 'dropped'}", is_kept
            )
            for number, unit, chars, is_kept in shown
        )
        note = '<p style="color:#6b7280;margin:2px 0">{}</p>'
        boxes = (note.format(escape(before)) if before else "") + boxes
        boxes += note.format(escape(after)) if after else ""
        kept = self.kept
        used = estimate_context_chars(kept) if kept is not None else 0
        share = min(100, round(100 * used / self.max_chars))
        bar = (
            f'<div style="background:#e5e7eb;width:300px;height:8px;border-radius:4px">'
            f'<div style="background:#10b981;width:{share}%;height:8px;border-radius:4px"></div>'
            f"</div>"
        )
        colour = "#dc2626" if kept is None else "#111827"
        return f'<div><p style="color:{colour}">{escape(self.summary())}</p>{bar}{boxes}</div>'
