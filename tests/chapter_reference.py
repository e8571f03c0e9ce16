# ruff: noqa: RUF003  # 注释用中文全角标点，和本章一样
"""The test oracle: the chapter's src/context.ts and 老z's budget loop, transcribed line for line.

Quadratic on purpose: every tool result searches backwards for its assistant, and every unit
re-measures `unit + kept` whole, as the chapter does. It is not derived from
`mini_agent.context` (which answers the inner search in advance and keeps a running total);
`test_properties.py` holds the two equal on random histories, and `test_node_differential.py`
holds this one equal to the chapter's JavaScript run by node.
"""

from __future__ import annotations

from collections.abc import Sequence

from mini_agent.context import (
    CANNOT_SERIALIZE,
    EMPTY_CONTEXT,
    SMALLEST_UNIT_TOO_BIG,
    ContextBudgetError,
)
from mini_agent.json_form import js_length
from mini_agent.session import AssistantMessage, Message, ToolMessage
from teaching.chapter_variants import chapter_stringify


def estimate_context_chars(messages: Sequence[Message]) -> int:
    # 每条消息 JSON.stringify(message).length（UTF-16 码元），再加一个分隔符；每次都从头算
    total = 0
    for index, message in enumerate(messages):
        try:
            serialized = chapter_stringify(message)
        except (TypeError, ValueError, RecursionError) as error:
            raise ValueError(f"message {index} {CANNOT_SERIALIZE}: {error}") from error
        total += js_length(serialized) + 1  # serialized.length + 1
    return total


def context_units(messages: Sequence[Message]) -> list[list[Message]]:
    units: list[list[Message]] = []
    index = len(messages) - 1
    while index >= 0:
        message = messages[index]
        if isinstance(message, ToolMessage):
            # 向前找声明该 toolCallId 的 assistant
            assistant_index = -1
            for i in range(index - 1, -1, -1):
                candidate = messages[i]
                if isinstance(candidate, AssistantMessage) and any(
                    call.id == message.tool_call_id for call in candidate.tool_calls
                ):
                    assistant_index = i
                    break
            if assistant_index >= 0:
                units.insert(0, list(messages[assistant_index : index + 1]))
                index = assistant_index - 1
                continue
        units.insert(0, [message])
        index -= 1
    return units


def trim_context(messages: Sequence[Message], max_chars: int) -> list[Message]:
    kept: list[Message] = []
    for unit in reversed(context_units(messages)):  # 从最新的单元往前装
        if estimate_context_chars(unit + kept) > max_chars:  # estimateContextChars(unit ∪ kept)
            if not kept:
                raise ContextBudgetError(SMALLEST_UNIT_TOO_BIG)
            break
        kept = unit + kept  # kept.unshift(...unit)
    if not kept:
        raise ContextBudgetError(EMPTY_CONTEXT)
    return kept
