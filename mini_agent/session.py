"""The session on disk: one JSON line per message, appended; loaded strictly, line by line.

Chapter 34, sections "JSONL 的判别式读取", "写入与恢复的正常路径" and "损坏记录的错误路径", in the
chapter's order. What the kit adds is one call each, in rooms of their own: `durable` (the
lock, the newline guard, the rollback) and `json_form` (JSON.stringify's exact bytes).
"""

from __future__ import annotations

from typing import Any

from . import durable
from .json_form import describe_error, error_column, json_type, parse, stringify
from .messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage, same_message

INVALID_JSON = "invalid session JSON at line"
INVALID_RECORD = "invalid session record at line"

PathLike = durable.PathLike


class SessionFormatError(ValueError):
    """A line that cannot be restored: `path`, the physical 1-based `line`, and the `column`
    (1-based, in characters) when the JSON decoder knows it — as `json.JSONDecodeError` does."""

    def __init__(
        self, phrase: str, path: PathLike, line: int, detail: str, column: int | None = None
    ) -> None:
        super().__init__(f"{phrase} {line}: {detail}")
        self.phrase, self.path, self.line = phrase, path, line
        self.detail, self.column = detail, column

    def __reduce__(self) -> tuple[Any, ...]:  # pickles carry it whole, not as a TypeError
        return (type(self), (self.phrase, self.path, self.line, self.detail, self.column))


def record(value: object) -> dict[str, Any] | None:
    """The chapter's `record()`: a JSON object (not null, not an array) or `None`."""
    return value if isinstance(value, dict) else None


def calls(value: object) -> tuple[ToolCall, ...] | None:
    """The chapter's `calls()`: a list whose every item narrows to an object with str id, str
    name and an `input` key (any JSON value, `null` included); the calls as written, or `None`."""
    if not isinstance(value, list):
        return None
    for call in value:
        item = record(call)
        if not (
            item is not None
            and isinstance(item.get("id"), str)
            and isinstance(item.get("name"), str)
            and "input" in item
        ):
            return None
    return tuple(ToolCall.from_record(call) for call in value)  # `item.toolCalls`, kept whole


def parse_session_message(value: object) -> Message | None:
    """The chapter's `parseSessionMessage`: a message, or `None`; it never raises for bad data."""
    message = discriminate(value)
    return None if isinstance(message, str) else message


def discriminate(value: object) -> Message | str:
    """The one definition of a record: the chapter's checks in its order (the common
    precondition, then each role's own fields), each `return undefined` saying why."""
    item = record(value)
    if item is None:
        return f"expected a JSON object, got {json_type(value)}"
    if not isinstance(item.get("role"), str):
        return "role must be a string"
    if not isinstance(item.get("content"), str):
        return "content must be a string"
    if item["role"] == "user":
        return UserMessage(item["content"])
    if item["role"] == "assistant":
        tool_calls = calls(item.get("toolCalls"))
        if tool_calls is None:
            return "assistant needs toolCalls: an array of {id, name, input}"
        return AssistantMessage(item["content"], tool_calls)
    if item["role"] == "tool":
        if not isinstance(item.get("toolCallId"), str):
            return "tool needs toolCallId: a string"
        if not isinstance(item.get("isError"), bool):
            return "tool needs isError: a boolean"
        return ToolMessage(item["toolCallId"], item["content"], item["isError"])
    return f"unknown role {stringify(item['role'])}"


def why_not_a_message(value: object) -> str:
    """Why `parse_session_message(value)` is `None` ("" when it is a message)."""
    message = discriminate(value)
    return message if isinstance(message, str) else ""


def load_session(path: PathLike) -> list[Message]:
    """Every message of the session file, or `[]` when the file does not exist.

    Any other OS error propagates. A line that is not JSON raises
    `invalid session JSON at line N`; a JSON line that is not a message raises
    `invalid session record at line N`. N is the physical line; no bad line is skipped.
    """
    try:
        data = durable.read_session_file(path)  # readFile; the kit reads under a shared lock
    except FileNotFoundError:
        return []  # ENOENT: no file yet, a session that has not started
    return parse_session_bytes(data, path)


def parse_session_text(text: str, path: PathLike = "<text>") -> list[Message]:
    """`load_session` after the read: the chapter's split, skip, parse and discriminate.

    Split on "\\n" only (`splitlines()` also splits inside JSON strings); a blank line is
    skipped but counted, so N is the line an editor shows (the chapter's `filter(Boolean)`
    counts only non-blank lines). One trailing "\\r" (a CRLF file) is dropped.
    """
    messages: list[Message] = []
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line:
            continue
        try:
            value = parse(line)
        except (ValueError, RecursionError) as err:
            detail, column = describe_error(err), error_column(err)
            raise SessionFormatError(INVALID_JSON, path, number, detail, column) from err
        message = discriminate(value)
        if isinstance(message, str):
            raise SessionFormatError(INVALID_RECORD, path, number, message)
        messages.append(message)
    return messages


def parse_session_bytes(data: bytes, path: PathLike) -> list[Message]:
    """`parse_session_text` of a file's bytes; bytes that are not UTF-8 are invalid JSON at
    their line, unless an earlier line is already bad."""
    try:
        return parse_session_text(data.decode("utf-8"), path)
    except UnicodeDecodeError as err:
        start = data.rfind(b"\n", 0, err.start) + 1
        parse_session_bytes(data[:start], path)  # a bad line before it is the first error
        column = len(data[start : err.start].decode("utf-8")) + 1
        line = 1 + data.count(b"\n", 0, start)
        detail = f"not UTF-8 at column {column}"
        raise SessionFormatError(INVALID_JSON, path, line, detail, column) from err


def append_session(path: PathLike, message: Message, *, fsync: bool = False) -> None:
    """The chapter's `appendSession`: `JSON.stringify(message)` and a newline, appended.

    The kit's one call, `durable.append_line`, appends under a lock, never onto a last line
    that lacks its newline (nor after a torn one), rolled back if the write fails.
    """
    line = checked_line(message)  # JSON.stringify(message), refused if it would not load back
    durable.append_line(path, f"{line}\n".encode(), _last_line_check(path), fsync)


def checked_line(message: Message) -> str:
    """`message.line`, after checking that a later load gives this message back."""
    line = message.line
    if not same_message(parse_session_message(parse(line)), message):
        # e.g. a tuple or non-str keys in a tool input, a non-bool in it where a bool was meant
        raise ValueError(
            f"refusing to append a {message.role} message that would not load back unchanged: "
            f"its tool input holds a value JSON writes differently (a tuple, a non-str key)"
        )
    return line


def _last_line_check(path: PathLike) -> durable.LastLineCheck:
    """What the newline guard does with an unterminated last line: accept a record, refuse a
    torn line (`repair` cuts it) or an invalid one."""

    def check(line: bytes, number: int) -> None:
        try:
            parse_session_bytes(line, path)
        except SessionFormatError as err:
            torn = err.phrase == INVALID_JSON
            reason = (
                "refusing to append after an incomplete last line "
                "(`python -m mini_agent repair` can cut it)"
                if torn
                else "refusing to append after an invalid last line"
            )
            detail = f"{err.detail}; {reason}"
            raise SessionFormatError(err.phrase, path, number, detail, err.column) from err

    return check
