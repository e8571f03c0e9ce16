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
    # JSON.stringify(message).length plus one separator, for every message, every time.
    return sum(len(record_line(message)) + 1 for message in messages)


def literal_units(messages: Sequence[Message]) -> list[list[Message]]:
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
            if assistant_index >= 0:
                units.insert(0, list(messages[assistant_index : index + 1]))
                index = assistant_index - 1
                continue
        units.insert(0, [message])
        index -= 1
    return units


def literal_trim(messages: Sequence[Message], max_chars: int) -> list[Message]:
    kept: list[Message] = []
    for unit in reversed(literal_units(messages)):
        if literal_estimate(unit + kept) > max_chars:
            if not kept:
                raise ContextBudgetError(SMALLEST_UNIT_TOO_BIG)
            break
        kept = unit + kept
    if not kept:
        raise ContextBudgetError(EMPTY_CONTEXT)
    return kept
