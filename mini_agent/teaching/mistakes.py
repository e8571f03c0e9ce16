"""The chapter's "最容易走错的两处", made runnable: each function is the chapter's code with
exactly one mistake injected, for notebooks 01 and 04 to run beside the right version.

Never use these for anything but watching them go wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from ..messages import AssistantMessage, Message, ToolMessage, UserMessage
from ..session import calls, record

_M = TypeVar("_M", AssistantMessage, ToolMessage)


def _as_typescript_holds(kind: type[_M], **fields: Any) -> _M:
    """The message TypeScript's object literal would hold: no constructor checks its fields
    (ours refuse a non-str content at once, which would hide the mistake shown here)."""
    message = object.__new__(kind)
    for name, value in fields.items():
        object.__setattr__(message, name, value)
    return message


def parse_with_precondition_in_user_branch(value: object) -> Message | None:
    """Mistake one: the common precondition (str role, str content) moved into the user
    branch, so the assistant and tool branches no longer check `content`."""
    item: dict[str, Any] | None = record(value)
    if item is None:
        return None
    role, content = item.get("role"), item.get("content")
    unchecked: Any = content  # what the unguarded branches hand on: maybe not a str at all
    if role == "user" and isinstance(content, str):
        return UserMessage(content)
    if role == "assistant" and (tool_calls := calls(item.get("toolCalls"))) is not None:
        # content was never checked
        return _as_typescript_holds(AssistantMessage, content=unchecked, tool_calls=tool_calls)
    call_id, is_error = item.get("toolCallId"), item.get("isError")
    if role == "tool" and isinstance(call_id, str) and isinstance(is_error, bool):
        return _as_typescript_holds(  # nor here
            ToolMessage, tool_call_id=call_id, content=unchecked, is_error=is_error
        )
    return None


def _units_with(messages: Sequence[Message], joins: Any) -> list[list[Message]]:
    """`chapter_reference.literal_units` with its `assistantIndex >= 0` test replaced."""
    units: list[list[Message]] = []
    index = len(messages) - 1
    while index >= 0:
        message = messages[index]
        if isinstance(message, ToolMessage):
            assistant_index = -1
            for i in range(index - 1, -1, -1):
                candidate = messages[i]
                if isinstance(candidate, AssistantMessage) and any(
                    call.id == message.tool_call_id for call in candidate.tool_calls
                ):
                    assistant_index = i
                    break
            if joins(assistant_index):
                # JavaScript's slice(-1, index + 1) and Python's [-1 : index + 1] agree
                units.insert(0, list(messages[assistant_index : index + 1]))
                index = assistant_index - 1
                continue
        units.insert(0, [message])
        index -= 1
    return units


def units_without_index_check(messages: Sequence[Message]) -> list[list[Message]]:
    """Mistake two: `if (assistantIndex >= 0)` dropped. An orphan result then slices from
    -1 (the last message) and jumps to index -2: the unit is empty or only the last message,
    and every older message is swallowed."""
    return _units_with(messages, lambda assistant_index: True)


def units_off_by_one(messages: Sequence[Message]) -> list[list[Message]]:
    """Mistake two, the quieter form: `assistantIndex > 0`. An assistant at index 0 is never
    joined to its results: a request without results and results without a request."""
    return _units_with(messages, lambda assistant_index: assistant_index > 0)
