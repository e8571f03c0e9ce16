"""The three messages of a session and their one on-disk form (one JSON object per line).

The on-disk key names and their order live here and nowhere else; `json_form.stringify`
writes them byte for byte as the chapter's `JSON.stringify(message)` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar, Literal, TypeAlias

from .json_form import JSON, same_json, stringify

Role = Literal["user", "assistant", "tool"]

# The chapter's on-disk keys (camelCase, as JavaScript writes them).
ROLE, CONTENT, TOOL_CALLS, TOOL_CALL_ID, IS_ERROR = (
    "role",
    "content",
    "toolCalls",
    "toolCallId",
    "isError",
)
CALL_ID, CALL_NAME, CALL_INPUT = "id", "name", "input"


@dataclass(frozen=True)
class ToolCall:
    """One tool call an assistant asks for; `input` may be any JSON value, `None` included."""

    id: str
    name: str
    input: JSON


@dataclass(frozen=True)
class _MessageBase:
    role: ClassVar[Role]

    @cached_property
    def line(self) -> str:
        """This message's line in a session file, without the newline.

        Cached: messages are immutable, so a long-running agent writes and measures each one
        from one serialisation. A tool call's `input` is a plain JSON value the message cannot
        freeze: do not mutate it after the message is made, or this line goes stale.
        """
        return stringify(to_record(self))  # type: ignore[arg-type]

    @property
    def record_chars(self) -> int:
        """Characters of this message's line in a session file, newline included."""
        return len(self.line) + 1


@dataclass(frozen=True)
class UserMessage(_MessageBase):
    content: str
    role: ClassVar[Literal["user"]] = "user"


@dataclass(frozen=True)
class AssistantMessage(_MessageBase):
    content: str
    tool_calls: Sequence[ToolCall] = field(default=())
    role: ClassVar[Literal["assistant"]] = "assistant"

    def __post_init__(self) -> None:
        if not isinstance(self.tool_calls, tuple):
            object.__setattr__(self, "tool_calls", tuple(self.tool_calls))


@dataclass(frozen=True)
class ToolMessage(_MessageBase):
    tool_call_id: str
    content: str
    is_error: bool = False
    role: ClassVar[Literal["tool"]] = "tool"


Message: TypeAlias = UserMessage | AssistantMessage | ToolMessage


def to_record(message: Message) -> dict[str, JSON]:
    """The dict written to disk: the chapter's keys, in the order role, content, own fields."""
    if isinstance(message, UserMessage):
        return {ROLE: "user", CONTENT: message.content}
    if isinstance(message, AssistantMessage):
        calls: list[JSON] = [
            {CALL_ID: call.id, CALL_NAME: call.name, CALL_INPUT: call.input}
            for call in message.tool_calls
        ]
        return {ROLE: "assistant", CONTENT: message.content, TOOL_CALLS: calls}
    if isinstance(message, ToolMessage):
        return {
            ROLE: "tool",
            CONTENT: message.content,
            TOOL_CALL_ID: message.tool_call_id,
            IS_ERROR: message.is_error,
        }
    raise TypeError(f"not a session message: {type(message).__name__}")


def record_line(message: Message) -> str:
    """The message's line in a session file, without the newline."""
    return message.line


def same_message(loaded: Message | None, message: Message) -> bool:
    """`loaded == message`, at any depth: with little stack left, compare without recursion."""
    try:
        return loaded == message
    except RecursionError:  # a deep tool input
        return loaded is not None and same_json(to_record(loaded), to_record(message))
