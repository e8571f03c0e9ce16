"""Random but reproducible agent histories, and the one consistency rule the chapter keeps."""

from __future__ import annotations

import random
from collections.abc import Iterable

from mini_agent import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage

# Slices of one long text: cheap to make, varied in length, mostly ASCII with some Chinese.
_WORDS = (
    "read the file and grep for the failing test then patch the function "
    "读取文件 查找失败的测试 然后修改函数 "
    "def trim(messages, budget): return messages[-budget:] "
)
_PICK = random.Random(0)
_TEXT = "".join(_PICK.choice(_WORDS.split()) + " " for _ in range(20_000))
_TOOLS = ("read", "grep", "edit", "bash")


def _text(rng: random.Random, mean: int) -> str:
    length = rng.randint(mean // 4, mean * 7 // 4)
    start = rng.randrange(len(_TEXT) - length)
    return _TEXT[start : start + length]


def random_history(count: int, seed: int = 34) -> list[Message]:
    """`count` messages of turns: a user asks, the assistant calls 0-3 rounds of 1-3 tools,
    each call answered at once, then the assistant replies. About 250 characters a message."""
    rng = random.Random(seed)
    messages: list[Message] = []
    turn = 0
    while len(messages) < count:
        turn += 1
        messages.append(UserMessage(_text(rng, 80)))
        for step in range(rng.randint(0, 3)):
            calls = tuple(
                ToolCall(f"call_{turn}_{step}_{k}", rng.choice(_TOOLS), {"path": _text(rng, 20)})
                for k in range(rng.randint(1, 3))
            )
            messages.append(AssistantMessage(_text(rng, 60), calls))
            for call in calls:
                messages.append(ToolMessage(call.id, _text(rng, 400), rng.random() < 0.05))
        messages.append(AssistantMessage(_text(rng, 150)))
    return messages[:count]


def forget_sizes(messages: Iterable[Message]) -> None:
    """Nothing to forget since package v3: a message caches no line, so every trim is a cold
    start. Kept so that the tables and notebook 08 that call it still run."""
    for _ in messages:
        pass


def orphan_results(steps: Iterable[tuple[tuple[str, ...], str | None]]) -> int:
    """Tool results whose call is not declared earlier in the same context.

    Each step is (call ids the message declares, call id it answers or None).
    """
    declared: set[str] = set()
    orphans = 0
    for calls, answers in steps:
        declared.update(calls)
        if answers is not None and answers not in declared:
            orphans += 1
    return orphans


def steps_of(messages: Iterable[Message]) -> Iterable[tuple[tuple[str, ...], str | None]]:
    for message in messages:
        if isinstance(message, AssistantMessage):
            yield tuple(call.id for call in message.tool_calls), None
        elif isinstance(message, ToolMessage):
            yield (), message.tool_call_id
        else:
            yield (), None
