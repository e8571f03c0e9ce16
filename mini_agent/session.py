"""The session on disk: one JSON line per message, appended; loaded strictly, line by line.

Chapter 34, sections "JSONL 的判别式读取", "写入与恢复的正常路径" and "损坏记录的错误路径".
Beyond the chapter, in rooms of their own: `durable` (lock, newline guard, rollback) and
`json_form` (JSON.stringify's exact bytes).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from . import durable, json_form
from .json_form import describe_error, error_column, json_type, parse, stringify
from .messages import (
    CALL_ID,
    CALL_INPUT,
    CALL_NAME,
    CONTENT,
    IS_ERROR,
    ROLE,
    TOOL_CALL_ID,
    TOOL_CALLS,
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    record_line,
    same_message,
)

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
    """The chapter's `calls()`: a list whose every item narrows to an object with str id,
    str name and an `input` key (any JSON value, `null` included). Structure, not meaning."""
    if not isinstance(value, list):
        return None
    result = []
    for call in value:
        item = record(call)
        if item is None or not isinstance(item.get(CALL_ID), str):
            return None
        if not isinstance(item.get(CALL_NAME), str) or CALL_INPUT not in item:
            return None
        result.append(ToolCall(item[CALL_ID], item[CALL_NAME], item[CALL_INPUT]))
    return tuple(result)


def parse_session_message(value: object) -> Message | None:
    """What is this line? A message, or `None` — it never raises for bad data.

    The common precondition first (an object, str role, str content), then each role's own
    fields; an unknown role or a missing field falls through to `None`.
    """
    item = record(value)
    if item is None or not isinstance(item.get(ROLE), str):
        return None
    if not isinstance(item.get(CONTENT), str):
        return None
    role, content = item[ROLE], item[CONTENT]
    if role == "user":
        return UserMessage(content)
    if role == "assistant" and (tool_calls := calls(item.get(TOOL_CALLS))) is not None:
        return AssistantMessage(content, tool_calls)
    call_id, is_error = item.get(TOOL_CALL_ID), item.get(IS_ERROR)
    if role == "tool" and isinstance(call_id, str) and isinstance(is_error, bool):
        return ToolMessage(call_id, content, is_error)
    return None


def why_not_a_message(value: object) -> str:
    """Why `parse_session_message(value)` is `None`, for the error message (same order)."""
    item = record(value)
    if item is None:
        return f"expected a JSON object, got {json_type(value)}"
    for key in (ROLE, CONTENT):
        if not isinstance(item.get(key), str):
            return f"{key} must be a string"
    role = item[ROLE]
    if role == "assistant":
        return "assistant needs toolCalls: an array of {id, name, input}"
    if role == "tool" and not isinstance(item.get(TOOL_CALL_ID), str):
        return "tool needs toolCallId: a string"
    if role == "tool":
        return "tool needs isError: a boolean"
    return f"unknown role {stringify(role)}"


def load_session(path: PathLike) -> list[Message]:
    """Every message of the session file, or `[]` when the file does not exist.

    Any other OS error propagates. A line that is not JSON raises
    `invalid session JSON at line N`; a JSON line that is not a message raises
    `invalid session record at line N`. N is the physical line; no bad line is skipped.
    """
    try:
        data = durable.read_session_file(path)  # a regular file, under the shared lock
    except FileNotFoundError:
        return []  # no file yet: a session that has not started
    with json_form.many_values():  # a session holds no cycles: skip the collector's passes
        return parse_session_bytes(data, path)


def parse_session_bytes(data: bytes, path: PathLike) -> list[Message]:
    """The messages of a session file's bytes, strictly: `load_session` without the I/O."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        start = data.rfind(b"\n", 0, err.start) + 1
        parse_session_bytes(data[:start], path)  # a bad line before it is the first error
        column = len(data[start : err.start].decode("utf-8")) + 1
        line = 1 + data.count(b"\n", 0, start)
        detail = f"not UTF-8 at column {column}"
        raise SessionFormatError(INVALID_JSON, path, line, detail, column) from err
    return parse_session_text(text, path)


def parse_session_text(text: str, path: PathLike = "<text>") -> list[Message]:
    """The messages of a session file's text; `path` only labels the errors.

    Split on "\\n" only (never `splitlines()`, which also splits inside JSON strings); a blank
    line is skipped but counted, so N is the line an editor shows (the chapter's
    `split("\\n").filter(Boolean)` counts only non-blank lines).
    """
    messages: list[Message] = []
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")  # CRLF files
        if not line:
            continue
        try:
            value = parse(line)
        except (ValueError, RecursionError) as err:
            detail, column = describe_error(err), error_column(err)
            raise SessionFormatError(INVALID_JSON, path, number, detail, column) from err
        message = parse_session_message(value)
        if message is None:
            raise SessionFormatError(INVALID_RECORD, path, number, why_not_a_message(value))
        messages.append(message)
    return messages


def append_session(path: PathLike, message: Message, *, fsync: bool = False) -> None:
    """The chapter's `appendSession`: `JSON.stringify(message)` and a newline, appended.

    The message is checked first: a record a later load would refuse is never written. The
    append itself is `durable.append_line`: under a lock, never glued onto a last line that
    lacks its newline, refused after a torn one, rolled back if the write fails.
    """
    line = record_line(message)
    loaded = parse_session_message(parse(line))
    if not same_message(loaded, message):
        # e.g. a tuple or non-str keys in a tool input, a non-bool isError, a surrogate pair
        raise ValueError(
            f"refusing to append a {message.role} message that would not load back unchanged"
        )
    check = partial(_check_last_line, path)
    durable.append_line(path, (line + "\n").encode("utf-8"), check, fsync)


def _check_last_line(path: PathLike, line: bytes, number: int) -> None:
    """Accept an unterminated last line that is a record; refuse a torn or invalid one."""
    try:
        parse_session_bytes(line, path)
    except SessionFormatError as err:
        # Not JSON: a torn write, which `repair` cuts. Valid JSON that is not a record is
        # damage `repair` refuses, so it is not offered.
        reason = (
            "refusing to append after an incomplete last line "
            "(`python -m mini_agent repair` can cut it)"
            if err.phrase == INVALID_JSON
            else "refusing to append after an invalid last line"
        )
        detail = f"{err.detail}; {reason}"
        raise SessionFormatError(err.phrase, path, number, detail, err.column) from err
