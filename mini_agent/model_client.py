"""The model behind the loop: a streaming protocol, and a scripted client for tests and notebooks."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeAlias

from .session import AssistantMessage, Message, ToolCall
from .tools import Tool


@dataclass(frozen=True)
class TextDelta:
    """A piece of the assistant's text, as it streams in."""

    text: str


@dataclass(frozen=True)
class ToolCallEvent:
    """One complete tool call; `input_error` says why it must not run (its `input` then keeps
    the model's raw text as a JSON string: the file shows what was sent, and still loads)."""

    call: ToolCall
    input_error: str | None = None


StreamEvent: TypeAlias = TextDelta | ToolCallEvent


class ModelClient(Protocol):
    """The chapter's `client.stream`: one model request, answered as a stream of events."""

    def stream(self, messages: Sequence[Message], tools: Sequence[Tool]) -> Iterator[StreamEvent]:
        """Send `messages` (the possibly trimmed context) and stream the reply."""
        ...


class ScriptExhaustedError(RuntimeError):
    """A `ScriptedClient` was asked for more replies than it was given."""


class ScriptedClient:
    """Replays one scripted assistant reply per model request and keeps every request."""

    def __init__(self, turns: Sequence[AssistantMessage]) -> None:
        self.turns = tuple(turns)
        self.requests: list[list[Message]] = []

    def stream(self, messages: Sequence[Message], tools: Sequence[Tool]) -> Iterator[StreamEvent]:
        number = len(self.requests)
        self.requests.append(list(messages))  # a copy, as sent
        if number >= len(self.turns):
            raise ScriptExhaustedError(
                f"scripted client has no reply for request {number + 1}: "
                f"only {len(self.turns)} turn(s) were scripted"
            )
        reply = self.turns[number]
        return iter(_events(reply))

    def __repr__(self) -> str:
        return f"ScriptedClient({len(self.turns)} turns, {len(self.requests)} requests so far)"


def _events(reply: AssistantMessage) -> list[StreamEvent]:
    events: list[StreamEvent] = [TextDelta(reply.content)] if reply.content else []
    events.extend(ToolCallEvent(call) for call in reply.tool_calls)
    return events
