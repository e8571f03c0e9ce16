"""The session on disk: one JSON line per message, appended; loaded strictly, line by line.

Chapter 34, sections "JSONL 的判别式读取", "写入与恢复的正常路径" and "损坏记录的错误路径".
"""

from __future__ import annotations

import json
import os
from json.scanner import make_scanner
from typing import Any

from .messages import (
    CALL_ID,
    CALL_INPUT,
    CALL_NAME,
    CONTENT,
    IS_ERROR,
    JSON,
    ROLE,
    TOOL_CALL_ID,
    TOOL_CALLS,
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    record_line,
)

INVALID_JSON = "invalid session JSON at line"
INVALID_RECORD = "invalid session record at line"

PathLike = str | os.PathLike[str]


class SessionFormatError(ValueError):
    """A session file line that cannot be restored; `line` is the physical, 1-based line."""

    def __init__(self, phrase: str, path: PathLike, line: int, detail: str) -> None:
        super().__init__(f"{phrase} {line}: {detail}")
        self.path = path
        self.line = line
        self.detail = detail


def record(value: object) -> dict[str, Any] | None:
    """The chapter's `record()`: a JSON object (not null, not an array) or `None`."""
    return value if isinstance(value, dict) else None


def calls(value: object) -> tuple[ToolCall, ...] | None:
    """The chapter's `calls()`: a list whose every item is an object with str id, str name
    and an `input` key (any JSON value, `null` included). Structure only, not meaning."""
    if not isinstance(value, list):
        return None
    result = []
    for item in value:
        if not isinstance(item, dict) or CALL_INPUT not in item:  # record(), inlined: hot path
            return None
        call_id, name = item.get(CALL_ID), item.get(CALL_NAME)
        if not isinstance(call_id, str) or not isinstance(name, str):
            return None
        result.append(ToolCall(call_id, name, item[CALL_INPUT]))
    return tuple(result)


def _narrow(value: object) -> Message | str:
    """A message, or why the value is not one (used only to explain a refused line)."""
    if not isinstance(value, dict):  # record(), inlined: this runs once per loaded line
        return f"expected a JSON object, got {_json_type(value)}"
    item: dict[str, Any] = value
    role, content = item.get(ROLE), item.get(CONTENT)
    if not isinstance(role, str):
        return "role must be a string"
    if not isinstance(content, str):
        return "content must be a string"
    if role == "user":
        return UserMessage(content)
    if role == "assistant":
        tool_calls = calls(item.get(TOOL_CALLS))
        if tool_calls is None:
            return "assistant needs toolCalls: an array of {id, name, input}"
        return AssistantMessage(content, tool_calls)
    if role == "tool":
        call_id, is_error = item.get(TOOL_CALL_ID), item.get(IS_ERROR)
        if not isinstance(call_id, str):
            return "tool needs toolCallId: a string"
        if not isinstance(is_error, bool):
            return "tool needs isError: a boolean"
        return ToolMessage(call_id, content, is_error)
    return f"unknown role {json.dumps(role, ensure_ascii=False)}"


def parse_session_message(value: object) -> Message | None:
    """What is this line? A message, or `None` — it never raises for bad data.

    Common precondition first (an object with str role and str content), then the role's
    own fields; an unknown role or a missing field is `None`, never a silent default.
    """
    result = _narrow(value)
    return None if isinstance(result, str) else result


def _json_type(value: object) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


_decoder = json.JSONDecoder(parse_constant=_reject_constant)
_scan = make_scanner(_decoder)  # type: ignore[arg-type]  # typeshed: "context" is duck-typed


def _decode_line(line: str) -> object:
    """`_decoder.decode(line)`, without its two regex passes when the line is exactly one
    JSON value (every line we write): a third of the loading time on a large file."""
    try:
        value, end = _scan(line, 0)
    except StopIteration:  # no value at column 1 (leading space, or not JSON): the full path
        end = -1
    if end == len(line):
        return value
    return _decoder.decode(line)  # whitespace around the value, or an error to report


def load_session(path: PathLike) -> list[Message]:
    """Every message of the session file, or `[]` when the file does not exist.

    Any other OS error propagates. A line that is not JSON raises
    `invalid session JSON at line N`; a JSON line that is not a message raises
    `invalid session record at line N`. N is the physical line; no bad line is skipped.
    """
    try:
        with open(path, "rb") as file:
            data = file.read()
    except FileNotFoundError:
        return []  # no file yet: a session that has not started
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise SessionFormatError(INVALID_JSON, path, line, "not UTF-8") from err
    messages: list[Message] = []
    for number, line_text in enumerate(text.split("\n"), start=1):
        if line_text.endswith("\r"):
            line_text = line_text[:-1]  # CRLF files
        if not line_text:
            continue
        try:
            value = _decode_line(line_text)
        except (ValueError, RecursionError) as err:
            raise SessionFormatError(INVALID_JSON, path, number, _decode_detail(err)) from err
        result = _narrow(value)
        if isinstance(result, str):
            raise SessionFormatError(INVALID_RECORD, path, number, result)
        messages.append(result)
    return messages


def _decode_detail(err: BaseException) -> str:
    if isinstance(err, json.JSONDecodeError):
        return f"{err.msg} (column {err.colno})"
    if isinstance(err, RecursionError):
        return "nested too deeply"
    return str(err)


def _ends_without_newline(fd: int) -> bool:
    size = os.fstat(fd).st_size
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"


def append_session(path: PathLike, message: Message, *, fsync: bool = False) -> None:
    """Append one message as one line, in one write; history is never rewritten.

    The message is checked first: a record that a later load would refuse is never written.
    If the file's last line lacks its newline, one is written first, so the new record is
    not glued onto it. New files are created with mode 0600: transcripts are private.
    """
    line = record_line(message)
    if parse_session_message(json.loads(line)) != message:
        # e.g. a str subclass, a tuple or non-str keys in a tool input, a non-bool isError
        raise ValueError(
            f"refusing to append a {message.role} message that would not load back unchanged"
        )
    payload = (line + "\n").encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        _lock(fd)
        if _ends_without_newline(fd):
            payload = b"\n" + payload
        _write_all(fd, payload)
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)  # closing releases the lock


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        written = os.write(fd, view)
        view = view[written:]


try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory lock
    fcntl = None  # type: ignore[assignment]


def _lock(fd: int) -> None:
    # Serialises the newline check and the write between cooperating appenders.
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)


__all__ = [
    "INVALID_JSON",
    "INVALID_RECORD",
    "JSON",
    "SessionFormatError",
    "append_session",
    "calls",
    "load_session",
    "parse_session_message",
    "record",
]
