"""The context sent to the model: whole message units within a character budget. Chapter 34,
"上下文单元而不是消息切片" to "字符预算的正常和失败路径": the chapter's loops; the inner search is
answered by one forward pass, the budget loop keeps a running total: linear at worst."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from .messages import AssistantMessage, Message, ToolMessage

SMALLEST_UNIT_TOO_BIG = "context budget cannot contain the smallest consistent message unit"
EMPTY_CONTEXT = "context budget cannot be empty"
CANNOT_SERIALIZE = "cannot be serialized to JSON"  # after `message {index}`: which one, 0-based


class ContextBudgetError(ValueError):
    """The budget cannot hold a consistent, non-empty context; `needed`, when known, is how
    many characters the newest unit takes (the smallest budget that would hold it)."""

    def __init__(self, message: str, needed: int | None = None) -> None:
        super().__init__(message)
        self.needed = needed

    def __reduce__(self) -> tuple[object, ...]:  # pickles carry `needed` too
        return (type(self), (str(self), self.needed))


def check_budget(max_chars: int) -> None:
    """A budget is an int, not a bool; 0 or less fits nothing, as in the chapter."""
    if isinstance(max_chars, bool) or not isinstance(max_chars, int):
        raise TypeError(f"max_chars must be an int, not {type(max_chars).__name__}")


def estimate_context_chars(messages: Sequence[Message], first_index: int = 0) -> int:
    """每条消息 `JSON.stringify(message)` 的长度加 1（行末的换行），按码点数：
    不是 token，也不是 UTF-16 码元（05 把它显示在本章的文字旁边，所以用中文写）。"""
    total = 0
    for index, message in enumerate(messages, start=first_index):
        try:
            total += message.record_chars
        except AttributeError as err:  # e.g. a dict from json.loads, not a message
            raise TypeError(f"message {index} is not a session message: {message!r}") from err
        except (TypeError, ValueError, RecursionError) as err:
            raise ValueError(f"message {index} {CANNOT_SERIALIZE}: {err}") from err
    return total


def declaring_assistants(messages: Sequence[Message]) -> list[int]:
    """For each index, what the chapter's inner search finds: the nearest earlier assistant
    that declares that tool result's call id, or -1 (an orphan, or not a tool result)."""
    latest: dict[str, int] = {}  # call id -> the latest assistant declaring it, so far
    found = [-1] * len(messages)
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            found[index] = latest.get(message.tool_call_id, -1)
        elif isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                latest[call.id] = index
    return found


def context_units(messages: Sequence[Message]) -> list[list[Message]]:
    """The chapter's `units`: the consistent units of the history, oldest first."""
    return list(units_newest_first(messages))[::-1]


def units_newest_first(messages: Sequence[Message]) -> Iterator[list[Message]]:
    """The chapter's reverse scan, each unit as it is cut (its `units.unshift(unit)`)."""
    assistant_for = declaring_assistants(messages)
    index = len(messages) - 1
    while index >= 0:
        message = messages[index]
        if isinstance(message, ToolMessage):
            # 向前找声明该 toolCallId 的 assistant（the inner search, answered in advance）
            assistant_index = assistant_for[index]
            if assistant_index >= 0:
                yield list(messages[assistant_index : index + 1])
                index = assistant_index - 1
                continue
        yield [message]
        index -= 1


def trim_context(messages: Sequence[Message], max_chars: int) -> list[Message]:
    """The newest whole units within `max_chars`: never an empty or half context."""
    check_budget(max_chars)
    kept: list[list[Message]] = []  # whole units, newest first
    used, start = 0, len(messages)  # estimate_context_chars(kept), as a running total
    for unit in units_newest_first(messages):  # the chapter's `units.reverse()`
        start -= len(unit)
        size = estimate_context_chars(unit, start)
        if used + size > max_chars:
            if not kept:
                raise ContextBudgetError(SMALLEST_UNIT_TOO_BIG, size)
            break
        kept.append(unit)
        used += size
    if not kept:
        raise ContextBudgetError(EMPTY_CONTEXT)
    return [message for unit in reversed(kept) for message in unit]
