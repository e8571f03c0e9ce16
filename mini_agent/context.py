"""The context sent to the model: whole message units, newest first, within a character budget.

Chapter 34, sections "上下文单元而不是消息切片", "单位构造的逐步过程" and
"字符预算的正常和失败路径". The chapter's loops, with one change: its inner backward search
for a tool result's assistant is answered from an index built while scanning back, so a
trim is linear at worst and, when results sit near their assistant, costs what it keeps.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence

from .messages import AssistantMessage, Message, ToolMessage

SMALLEST_UNIT_TOO_BIG = "context budget cannot contain the smallest consistent message unit"
EMPTY_CONTEXT = "context budget cannot be empty"


class ContextBudgetError(ValueError):
    """The budget cannot hold a consistent, non-empty context."""


def check_budget(max_chars: int) -> None:
    """A budget is a positive int (a bool is not)."""
    if isinstance(max_chars, bool) or not isinstance(max_chars, int):
        raise TypeError(f"max_chars must be an int, not {type(max_chars).__name__}")
    if max_chars <= 0:
        raise ValueError(f"max_chars must be positive, got {max_chars}")


def _chars(messages: Sequence[Message], index: int) -> int:
    """`JSON.stringify(message).length` plus one separator; errors name the message."""
    message = messages[index]
    try:
        return message.record_chars
    except AttributeError as err:  # e.g. a dict from json.loads, not a parsed message
        raise TypeError(f"message {index} is not a session message: {message!r}") from err
    except (TypeError, ValueError, RecursionError) as err:
        raise ValueError(f"message {index} cannot be serialized to JSON: {err}") from err


def estimate_context_chars(messages: Sequence[Message]) -> int:
    """Characters these messages occupy in a session file: each JSON line plus its newline.

    Characters are code points, not tokens (and not JavaScript's UTF-16 units).
    """
    return sum(_chars(messages, index) for index in range(len(messages)))


def _units_newest_first(messages: Sequence[Message]) -> Iterator[range]:
    """The chapter's reverse scan: each unit as a range of indexes, newest unit first.

    A tool result joins the nearest earlier assistant that declares its call id, with
    everything in between; a result no assistant declares stays alone. `declared` holds the
    assistants passed while searching back, nearest first, so no message is searched twice.
    """
    declared: dict[str, deque[int]] = {}  # call id -> declaring assistants, nearest first
    scanned = len(messages)  # messages[scanned:] are in `declared` (or need not be)
    index = len(messages) - 1
    while index >= 0:
        start = index
        message = messages[index]
        if isinstance(message, ToolMessage):
            scanned = min(scanned, index)
            nearest = declared.get(message.tool_call_id)
            while nearest and nearest[0] >= index:  # inside a unit already taken
                nearest.popleft()
            while not nearest and scanned > 0:
                scanned -= 1
                candidate = messages[scanned]
                if isinstance(candidate, AssistantMessage):
                    for call in candidate.tool_calls:
                        declared.setdefault(call.id, deque()).append(scanned)
                    nearest = declared.get(message.tool_call_id)
            if nearest:  # the chapter's `assistantIndex >= 0`
                start = nearest[0]
        yield range(start, index + 1)
        index = start - 1


def context_units(messages: Sequence[Message]) -> list[list[Message]]:
    """The consistent units of the history, oldest first (the chapter's `units`)."""
    units = [list(messages[unit.start : unit.stop]) for unit in _units_newest_first(messages)]
    units.reverse()
    return units


def trim_context(messages: Sequence[Message], max_chars: int) -> list[Message]:
    """The newest whole units whose total estimate stays within `max_chars`.

    Raises `ContextBudgetError` when the newest unit alone does not fit, or when there is
    nothing to send: an empty or half context is never returned.
    """
    check_budget(max_chars)
    kept_from, used = len(messages), 0
    for unit in _units_newest_first(messages):
        size = 0
        for index in unit:  # a plain loop: no generator object per unit
            size += _chars(messages, index)
        if used + size > max_chars:
            if kept_from == len(messages):
                raise ContextBudgetError(SMALLEST_UNIT_TOO_BIG)
            break
        kept_from, used = unit.start, used + size
    if kept_from == len(messages):
        raise ContextBudgetError(EMPTY_CONTEXT)
    return list(messages[kept_from:])
