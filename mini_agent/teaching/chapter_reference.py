"""A slow, literal transcription of the chapter's context.ts: the outside check of context.py.

Line for line the chapter's loops: a backward search for every tool result, and the whole
`unit + kept` re-measured at every step. Quadratic on long sessions, and obviously right.
It does not derive from `context.py`: tests/test_properties.py and tests/test_fuzz.py check
`context_units` and `trim_context` against it on random histories (context.py is this loop
with the inner search answered in advance and a running total; see its docstring).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..context import EMPTY_CONTEXT, SMALLEST_UNIT_TOO_BIG, ContextBudgetError
from ..messages import AssistantMessage, Message, ToolMessage, record_line


def literal_estimate(messages: Sequence[Message]) -> int:
    # 每条消息 JSON.stringify(message).length，再加一个分隔符；每次都从头算
    return sum(len(record_line(message)) + 1 for message in messages)


def literal_units(messages: Sequence[Message]) -> list[list[Message]]:
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
            if assistant_index >= 0:  # 找到了：从 assistant 一路切到当前 tool，成一个单元
                units.insert(0, list(messages[assistant_index : index + 1]))
                index = assistant_index - 1
                continue
        units.insert(0, [message])  # 其余消息（和找不到声明者的 tool）单独成单元
        index -= 1
    return units


def literal_trim(messages: Sequence[Message], max_chars: int) -> list[Message]:
    kept: list[Message] = []
    for unit in reversed(literal_units(messages)):  # 从最新的单元往前装
        if literal_estimate(unit + kept) > max_chars:  # estimateContextChars(unit + kept) 超限？
            if not kept:
                raise ContextBudgetError(SMALLEST_UNIT_TOO_BIG)
            break  # 已经装了一些：不再往前装
        kept = unit + kept  # kept.unshift(...unit)
    if not kept:
        raise ContextBudgetError(EMPTY_CONTEXT)
    return kept
