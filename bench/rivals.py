"""What a reader would use instead of mini_agent, written as a reader would write it.

LangChain's `trim_messages` for the context; a bare `json.loads` loop, the `jsonlines`
library and a pydantic discriminated union for the session file. Kept apart from
mini_agent: these are optional dependencies (the `bench` extra).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import jsonlines
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, trim_messages
from langchain_core.messages import ToolMessage as LCToolMessage
from langchain_core.messages.tool import tool_call
from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter, ValidationError

from mini_agent import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage

# --- LangChain: trim_messages -------------------------------------------------------------


def to_langchain(message: Message) -> BaseMessage:
    """The same message as LangChain holds it (tool calls and results included)."""
    if isinstance(message, UserMessage):
        return HumanMessage(content=message.content)
    if isinstance(message, AssistantMessage):
        calls = [tool_call(name=c.name, args=_args(c.input), id=c.id) for c in message.tool_calls]
        return AIMessage(content=message.content, tool_calls=calls)
    status: Literal["success", "error"] = "error" if message.is_error else "success"
    return LCToolMessage(content=message.content, tool_call_id=message.tool_call_id, status=status)


def _args(value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError("LangChain tool call args must be an object")
    return value


def from_langchain(message: BaseMessage) -> Message:
    text = message.content if isinstance(message.content, str) else json.dumps(message.content)
    if isinstance(message, HumanMessage):
        return UserMessage(text)
    if isinstance(message, AIMessage):
        calls = tuple(ToolCall(c["id"] or "", c["name"], c["args"]) for c in message.tool_calls)
        return AssistantMessage(text, calls)
    if isinstance(message, LCToolMessage):
        return ToolMessage(message.tool_call_id, text, message.status == "error")
    raise TypeError(f"not a chat message: {type(message).__name__}")


def record_chars(message: BaseMessage) -> int:
    """Per-message counter equal to `trim_context`'s: the message's session-file line + 1."""
    return from_langchain(message).record_chars


def count_chars(messages: Sequence[BaseMessage]) -> int:
    # What trim_messages builds itself from a per-message counter, written out.
    return sum(record_chars(message) for message in messages)


def memoised_counter() -> Callable[[Sequence[BaseMessage]], int]:
    """The same counter, remembering each message's size (as mini_agent's messages do)."""
    sizes: dict[int, int] = {}

    def count(messages: Sequence[BaseMessage]) -> int:
        total = 0
        for message in messages:
            size = sizes.get(id(message))
            if size is None:
                size = sizes[id(message)] = record_chars(message)
            total += size
        return total

    return count


def langchain_trim(
    messages: Sequence[BaseMessage],
    max_chars: int,
    counter: Callable[[Sequence[BaseMessage]], int] = count_chars,
    start_on: Literal["human"] | None = None,
) -> list[BaseMessage]:
    return trim_messages(
        messages, max_tokens=max_chars, token_counter=counter, strategy="last", start_on=start_on
    )


def langchain_steps(
    messages: Iterable[BaseMessage],
) -> Iterable[tuple[tuple[str, ...], str | None]]:
    """(declared call ids, answered call id) of each message, for `histories.orphan_results`."""
    for message in messages:
        if isinstance(message, AIMessage):
            yield tuple(call["id"] or "" for call in message.tool_calls), None
        elif isinstance(message, LCToolMessage):
            yield (), message.tool_call_id
        else:
            yield (), None


# --- Loading a session file ----------------------------------------------------------------


def bare_loop(path: Path) -> list[Any]:
    """The speed floor: one `json.loads` per line, nothing checked, no line number kept."""
    with open(path, "rb") as file:
        return [json.loads(line) for line in file]


def jsonlines_loop(path: Path) -> list[dict[str, Any]]:
    """The jsonlines library: objects only, blank lines skipped, errors carry `lineno`."""
    with jsonlines.open(path) as reader:
        return list(reader.iter(type=dict, skip_empty=True))


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, frozen=True)


class CallRecord(_Strict):
    id: str
    name: str
    input: JsonValue


class UserRecord(_Strict):
    role: Literal["user"]
    content: str


class AssistantRecord(_Strict):
    role: Literal["assistant"]
    content: str
    tool_calls: list[CallRecord] = Field(alias="toolCalls")


class ToolRecord(_Strict):
    role: Literal["tool"]
    content: str
    tool_call_id: str = Field(alias="toolCallId")
    is_error: bool = Field(alias="isError")


AnyRecord = UserRecord | AssistantRecord | ToolRecord
record_adapter: TypeAdapter[AnyRecord] = TypeAdapter(
    Annotated[AnyRecord, Field(discriminator="role")]
)


class PydanticLineError(ValueError):
    def __init__(self, line: int, detail: str) -> None:
        super().__init__(f"line {line}: {detail}")
        self.line = line


def pydantic_loop(path: Path) -> list[AnyRecord]:
    """A discriminated union on `role`, validated line by line; the loop counts the lines."""
    records: list[AnyRecord] = []
    with open(path, "rb") as file:
        for number, line in enumerate(file, start=1):
            if not line.strip():
                continue
            try:
                records.append(record_adapter.validate_json(line))
            except ValidationError as err:
                first = err.errors()[0]
                where = "".join(f"{part}." for part in first["loc"])
                raise PydanticLineError(
                    number, f"{where.rstrip('.')} {first['msg']}".strip()
                ) from err
    return records
