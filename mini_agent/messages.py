"""The chapter's `Message` union as frozen dataclasses that check their fields' types when made,
and their one on-disk form: `to_record` (the chapter's keys, in its order), `line`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Literal, TypeAlias

from .json_form import JSON, is_array_index, js_length, stringify

Role = Literal["user", "assistant", "tool"]
_CALL_KEYS = ("id", "name", "input")


_set = object.__setattr__  # how a frozen dataclass sets its fields: here by hand, checked first


def _refuse_non_str(kind: str, **fields: object) -> None:
    for name, value in fields.items():
        if not isinstance(value, str):
            raise TypeError(f"{kind}.{name} must be a str, not {type(value).__name__}")


def _js_key_rank(key: str) -> tuple[int, int]:
    """JavaScript's property order: array indexes first, ascending, then insertion order."""
    return (0, int(key)) if is_array_index(key) else (1, 0)


@dataclass(frozen=True, init=False)
class ToolCall:
    """One tool call; `input` is any JSON value. `extra` and `keys` keep other keys and the order
    written (as the chapter keeps `item.toolCalls` whole); equality ignores that order."""

    id: str
    name: str
    input: JSON
    extra: tuple[tuple[str, JSON], ...] = field(default=(), repr=False)  # shown when there is some
    keys: tuple[str, ...] = field(default=(), repr=False)

    def __init__(
        self,
        id: str,
        name: str,
        input: JSON,
        extra: tuple[tuple[str, JSON], ...] = (),
        keys: tuple[str, ...] = (),
    ) -> None:
        if type(id) is not str or type(name) is not str:
            _refuse_non_str("ToolCall", id=id, name=name)
        _set(self, "id", id)
        _set(self, "name", name)
        _set(self, "input", input)
        if not (extra or keys):
            return  # the common case, at once: `extra` and `keys` keep their defaults
        extra_keys = [pair[0] for pair in extra]
        if len(set(extra_keys)) != len(extra_keys) or set(extra_keys) & set(_CALL_KEYS):
            raise ValueError(
                f"ToolCall.extra must hold other keys than id/name/input, once each: {extra_keys}"
            )
        if keys and sorted(keys) != sorted([*_CALL_KEYS, *extra_keys]):
            raise ValueError(f"ToolCall.keys must order id, name, input and extra: {keys}")
        _set(self, "extra", tuple(extra))
        _set(self, "keys", tuple(keys))

    @classmethod
    def from_record(cls, item: dict[str, JSON]) -> ToolCall:
        """The call as written: `item` has str `id` and `name` and an `input` key (see `calls`)."""
        if tuple(item) == _CALL_KEYS:  # id, name and input alone, in order: the common case
            return cls(item["id"], item["name"], item["input"])  # type: ignore[arg-type]
        keys = tuple(sorted(item, key=_js_key_rank))  # in the order JavaScript holds them
        extra = tuple((key, item[key]) for key in keys if key not in _CALL_KEYS)
        default = keys == (*_CALL_KEYS, *(key for key, _ in extra))
        return cls(item["id"], item["name"], item["input"], extra, () if default else keys)  # type: ignore[arg-type]

    def __eq__(self, other: object) -> bool:
        """As JSON objects compare: the order of the keys (`extra`'s, `keys`) plays no part."""
        if not isinstance(other, ToolCall):
            return NotImplemented
        return (self.id, self.name, self.input, dict(self.extra)) == (
            other.id,
            other.name,
            other.input,
            dict(other.extra),
        )

    def __hash__(self) -> int:
        """Of id and name only: equal calls hash alike, and no input (any JSON, of any size
        and depth, dicts included) is walked; calls are told apart by their ids."""
        return hash((self.id, self.name))

    def __repr__(self) -> str:
        extra = f", extra={self.extra!r}" if self.extra else ""
        return f"ToolCall(id={self.id!r}, name={self.name!r}, input={self.input!r}{extra})"

    def to_record(self) -> dict[str, JSON]:
        """The call's object on disk: id, name, input and extra, in the order written."""
        fields: dict[str, JSON] = {"id": self.id, "name": self.name, "input": self.input}
        fields.update(self.extra)
        return {key: fields[key] for key in self.keys} if self.keys else fields


@dataclass(frozen=True)
class _MessageBase:
    role: ClassVar[Role]

    @property
    def line(self) -> str:
        """`JSON.stringify(message)`: the line in a session file, made afresh each time."""
        return stringify(to_record(self))  # type: ignore[arg-type]

    @property
    def record_chars(self) -> int:
        """`JSON.stringify(message).length + 1`: the line in UTF-16 units, as JavaScript
        counts it (an emoji is 2), and the newline."""
        return js_length(self.line) + 1


@dataclass(frozen=True, init=False)
class UserMessage(_MessageBase):
    content: str
    role: ClassVar[Literal["user"]] = "user"

    def __init__(self, content: str) -> None:
        if type(content) is not str:
            _refuse_non_str("UserMessage", content=content)
        _set(self, "content", content)


@dataclass(frozen=True, init=False)
class AssistantMessage(_MessageBase):
    content: str
    tool_calls: Sequence[ToolCall] = field(default=())
    role: ClassVar[Literal["assistant"]] = "assistant"

    def __init__(self, content: str, tool_calls: Sequence[ToolCall] = ()) -> None:
        if type(content) is not str:
            _refuse_non_str("AssistantMessage", content=content)
        if type(tool_calls) is not tuple:
            if isinstance(tool_calls, (str, bytes)) or not isinstance(tool_calls, Sequence):
                kind = type(tool_calls).__name__
                raise TypeError(
                    f"AssistantMessage.tool_calls must be a sequence of ToolCall, not {kind}"
                )
            tool_calls = tuple(tool_calls)
        for number, call in enumerate(tool_calls):
            if type(call) is not ToolCall and not isinstance(call, ToolCall):
                raise TypeError(
                    f"AssistantMessage.tool_calls[{number}] must be a ToolCall, "
                    f"not {type(call).__name__} (ToolCall.from_record reads a dict)"
                )
        _set(self, "content", content)
        _set(self, "tool_calls", tool_calls)


@dataclass(frozen=True, init=False)
class ToolMessage(_MessageBase):
    """A tool's result. Two str fields: name them, `ToolMessage(tool_call_id=…, content=…,
    is_error=…)`, so a swap shows in the code; `is_error` must be a real bool."""

    tool_call_id: str
    content: str
    is_error: bool = False
    role: ClassVar[Literal["tool"]] = "tool"

    def __init__(self, tool_call_id: str, content: str, is_error: bool = False) -> None:
        if not (type(tool_call_id) is str and type(content) is str):
            _refuse_non_str("ToolMessage", tool_call_id=tool_call_id, content=content)
        if type(is_error) is not bool:
            raise TypeError(f"ToolMessage.is_error must be a bool, not {type(is_error).__name__}")
        _set(self, "tool_call_id", tool_call_id)
        _set(self, "content", content)
        _set(self, "is_error", is_error)


Message: TypeAlias = UserMessage | AssistantMessage | ToolMessage


def to_record(message: Message) -> dict[str, JSON]:
    """The object written to disk: the chapter's keys, in the order role, content, own fields."""
    if isinstance(message, UserMessage):
        return {"role": "user", "content": message.content}
    if isinstance(message, AssistantMessage):
        calls: list[JSON] = [call.to_record() for call in message.tool_calls]
        return {"role": "assistant", "content": message.content, "toolCalls": calls}
    if isinstance(message, ToolMessage):
        return {
            "role": "tool",
            "content": message.content,
            "toolCallId": message.tool_call_id,
            "isError": message.is_error,
        }
    raise TypeError(f"not a session message: {type(message).__name__}")


def record_line(message: Message) -> str:
    """The message's line in a session file, without the newline."""
    return message.line
