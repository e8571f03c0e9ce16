"""Beyond the chapter: tool calls without their results, which providers refuse.

Two places leave one: a run stopped while its tools ran (Ctrl-C, a result the disk refused, a
killed process) leaves the last assistant's calls open, and `run_agent` records an `isError`
result `interrupted: no result was recorded` for each (`interrupted_results`); a file another
writer left can hold an unanswered call, or a stray result, anywhere, and each request is built
with those closed or left out, in the request only (`closed_for_request`).
"""

from __future__ import annotations

from collections.abc import Sequence

from .messages import AssistantMessage, Message, ToolMessage

INTERRUPTED = "interrupted: no result was recorded"


def interrupted_results(messages: Sequence[Message]) -> list[ToolMessage]:
    """An error result for each call of the last assistant that no later result answers:
    what a run stopped while tools ran (Ctrl-C, a result the disk refused, a killed process)
    leaves open. Servers reject a request that holds a call without its result."""
    end = len(messages)
    while end > 0 and isinstance(messages[end - 1], ToolMessage):
        end -= 1
    last = messages[end - 1] if end > 0 else None
    calls = last.tool_calls if isinstance(last, AssistantMessage) else ()
    answered = {m.tool_call_id for m in messages[end:] if isinstance(m, ToolMessage)}
    return [ToolMessage(c.id, INTERRUPTED, True) for c in calls if c.id not in answered]


def closed_for_request(messages: Sequence[Message]) -> Sequence[Message]:
    """`messages` as a provider accepts them: each call that no result answers right after its
    assistant (a file another writer left so) gets an `INTERRUPTED` error result there, and a
    result that answers no call of the assistant just before it is left out — in the request
    only; the session on disk keeps what was written."""
    closed: list[Message] = []
    waiting: list[str] = []  # the calls of the last assistant not answered yet
    for message in [*messages, None]:  # None: the end, where open calls close too
        if isinstance(message, ToolMessage):
            if message.tool_call_id in waiting:
                waiting.remove(message.tool_call_id)
                closed.append(message)
            continue
        closed += [ToolMessage(call_id, INTERRUPTED, True) for call_id in waiting]
        waiting = (
            [c.id for c in message.tool_calls] if isinstance(message, AssistantMessage) else []
        )
        if message is not None:
            closed.append(message)
    return closed
