"""The chapter's "最容易走错的两处", made runnable: each function is the chapter's code with
exactly one mistake injected, for notebooks 01 and 04 to run beside the right version.

Never use these for anything but watching them go wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from mini_agent.session import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    calls,
    record,
)

_M = TypeVar("_M", UserMessage, AssistantMessage, ToolMessage, ToolCall)


def like_a_typescript_literal(kind: type[_M], **fields: Any) -> _M:
    """The message TypeScript's object literal would hold: no constructor checks its fields
    (ours refuse a non-str content at once, which would hide the mistake shown here). 01's
    checker builds a reader's messages this way too (`exercises.with_unchecked_messages`)."""
    message = object.__new__(kind)
    for name, value in fields.items():
        object.__setattr__(message, name, value)
    return message


def parse_with_precondition_in_user_branch(value: object) -> Message | None:
    """错误一：公共前提里 content 的检查挪进了 user 分支（其余同本章），
    assistant 和 tool 分支再也不查 content。like_a_typescript_literal 像 TypeScript 的对象字面量
    那样照单全收：本包的消息构造函数会当场拒绝不是字符串的 content，错误就看不见了。"""
    item = record(value)
    if item is None or not isinstance(item.get("role"), str):
        return None
    content: Any = item.get("content")  # 错：content 的检查挪进了 user 分支
    if item["role"] == "user" and isinstance(content, str):
        return UserMessage(content)
    if item["role"] == "assistant" and calls(item.get("toolCalls")):
        tool_calls = tuple(
            ToolCall(call["id"], call["name"], call["input"]) for call in item["toolCalls"]
        )
        # 这里 content 没查过
        return like_a_typescript_literal(AssistantMessage, content=content, tool_calls=tool_calls)
    if (
        item["role"] == "tool"
        and isinstance(item.get("toolCallId"), str)
        and isinstance(item.get("isError"), bool)
    ):
        return like_a_typescript_literal(  # 这里也没查
            ToolMessage, tool_call_id=item["toolCallId"], content=content, is_error=item["isError"]
        )
    return None


def _units_with(
    messages: Sequence[Message], joins: Any, earliest: bool = False, adjacent: bool = False
) -> list[list[Message]]:
    """The chapter's unit scan with its `assistantIndex >= 0` test replaced (with `earliest`,
    its backward search run forwards; with `adjacent`, looking at the message before only)."""
    units: list[list[Message]] = []
    index = len(messages) - 1
    while index >= 0:
        message = messages[index]
        if isinstance(message, ToolMessage):
            assistant_index = -1
            searched = range(index) if earliest else range(index - 1, -1, -1)
            for i in searched[:1] if adjacent else searched:
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


def units_adjacent_only(messages: Sequence[Message]) -> list[list[Message]]:
    """Mistake two's other cousin: a result paired only with the message right before it, no
    inner search. A result after another result, or after a message between, stands alone."""
    return _units_with(messages, lambda assistant_index: assistant_index >= 0, adjacent=True)


def units_earliest_declarer(messages: Sequence[Message]) -> list[list[Message]]:
    """Mistake two's cousin: the declaring assistant searched from the start (`for i in
    range(index)`), not backwards from the result. With a call id used twice, the result of
    the second call joins the first declarer, and the unit swallows everything between."""
    return _units_with(messages, lambda assistant_index: assistant_index >= 0, earliest=True)
