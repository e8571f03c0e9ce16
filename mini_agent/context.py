"""The context sent to the model: whole message units, newest first, within a character budget.

Chapter 34, sections "上下文单元而不是消息切片", "单位构造的逐步过程" and
"字符预算的正常和失败路径". The result equals the chapter's algorithm's, quirks included,
in linear time at worst; when results sit near their assistant (no orphan to search past),
a trim costs time in proportion to what it keeps, not to the length of the history.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence

from .messages import AssistantMessage, Message, ToolMessage

SMALLEST_UNIT_TOO_BIG = "context budget cannot contain the smallest consistent message unit"
EMPTY_CONTEXT = "context budget cannot be empty"


class ContextBudgetError(ValueError):
    """The budget cannot hold a consistent, non-empty context."""


def _chars(messages: Sequence[Message], index: int) -> int:
    message = messages[index]
    try:
        return message.record_chars
    except AttributeError as err:  # e.g. a dict from json.loads, not a parsed message
        raise TypeError(f"message {index} is not a session message: {message!r}") from err
    except (TypeError, ValueError, RecursionError) as err:
        raise ValueError(f"message {index} cannot be serialized to JSON: {err}") from err


def check_budget(max_chars: int) -> None:
    """A budget is a positive int (a bool is not)."""
    if isinstance(max_chars, bool) or not isinstance(max_chars, int):
        raise TypeError(f"max_chars must be an int, not {type(max_chars).__name__}")
    if max_chars <= 0:
        raise ValueError(f"max_chars must be positive, got {max_chars}")


def estimate_context_chars(messages: Sequence[Message]) -> int:
    """Characters these messages occupy in a session file: each JSON line plus its newline.

    Characters are code points, not tokens (and not JavaScript's UTF-16 units).
    """
    return sum(_chars(messages, index) for index in range(len(messages)))


def _unit_starts(messages: Sequence[Message]) -> Iterator[int]:
    """Start index of each unit, newest unit first; a unit ends where the previous one began.

    A tool result joins the nearest earlier assistant that declares its call id, together
    with everything in between; a tool result with no such assistant stays alone.
    Declarations are indexed while scanning back, so each message is looked at once.
    """
    # A deque per call id would cost a large allocation per tool call; ids rarely repeat, so
    # the nearest declaration is a plain int and only repeats queue up behind it.
    nearest: dict[str, int] = {}  # call id -> nearest declaring assistant indexed so far
    older: dict[str, deque[int]] = {}  # call id -> the ones before it, nearest first
    scanned = len(messages)  # messages[scanned:] are indexed or no longer needed
    index = len(messages) - 1
    while index >= 0:
        message = messages[index]
        start = index
        if isinstance(message, ToolMessage):
            scanned = min(scanned, index)
            wanted = message.tool_call_id
            found = nearest.get(wanted)
            while found is not None and found >= index:  # inside a unit already taken
                queue = older.get(wanted)
                if queue:
                    found = nearest[wanted] = queue.popleft()
                else:
                    del nearest[wanted]
                    found = None
            while found is None and scanned > 0:
                scanned -= 1
                candidate = messages[scanned]
                if isinstance(candidate, AssistantMessage):
                    for call in candidate.tool_calls:
                        if call.id in nearest:
                            older.setdefault(call.id, deque()).append(scanned)
                        else:
                            nearest[call.id] = scanned
                found = nearest.get(wanted)
            if found is not None:
                start = found
            if nearest and scanned >= start:
                # Everything indexed lies in units already taken: forget it, so the index
                # stays as small as the search, however long the history.
                nearest.clear()
                older.clear()
        yield start
        index = start - 1


def context_units(messages: Sequence[Message]) -> list[list[Message]]:
    """The consistent units of the history, oldest first (the chapter's `units`)."""
    units: list[list[Message]] = []
    end = len(messages)
    for start in _unit_starts(messages):
        units.append(list(messages[start:end]))
        end = start
    units.reverse()
    return units


def trim_context(messages: Sequence[Message], max_chars: int) -> list[Message]:
    """The newest whole units whose total estimate stays within `max_chars`.

    Raises `ContextBudgetError` when the newest unit alone does not fit, or when there is
    nothing to send: an empty or half context is never returned.
    """
    check_budget(max_chars)
    used = 0
    kept_from = end = len(messages)
    for start in _unit_starts(messages):
        size = 0
        for index in range(start, end):  # a plain loop: no generator object per unit
            size += _chars(messages, index)
        if used + size > max_chars:
            if kept_from == len(messages):
                raise ContextBudgetError(SMALLEST_UNIT_TOO_BIG)
            break
        used += size
        kept_from = end = start
    if kept_from == len(messages):
        raise ContextBudgetError(EMPTY_CONTEXT)
    return list(messages[kept_from:])
