"""The session on disk: one JSON line per message, appended; loaded strictly, line by line.

Chapter 34, sections "JSONL 的判别式读取", "写入与恢复的正常路径" and "损坏记录的错误路径".
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
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
        self.phrase = phrase
        self.path = path
        self.line = line
        self.detail = detail

    def __reduce__(self) -> tuple[type[SessionFormatError], tuple[str, PathLike, int, str]]:
        # pickles (multiprocessing, concurrent.futures) carry it whole, not as a TypeError
        return (type(self), (self.phrase, self.path, self.line, self.detail))


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


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # 1e999: JSON.parse makes it Infinity, which no JSON can hold
        raise ValueError(f"number {text} is out of range")
    return value


_decoder = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)
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
    return parse_session_bytes(data, path)


def parse_session_bytes(data: bytes, path: PathLike) -> list[Message]:
    """The messages of a session file's bytes, strictly: `load_session` without the I/O."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line_start = data.rfind(b"\n", 0, err.start) + 1
        parse_session_bytes(data[:line_start], path)  # a bad line before it is the first error
        line = 1 + data.count(b"\n", 0, line_start)
        raise SessionFormatError(INVALID_JSON, path, line, "not UTF-8") from err
    return parse_session_text(text, path)


def parse_session_text(text: str, path: PathLike = "<text>") -> list[Message]:
    """The messages of a session file's text, checked line by line as `load_session` does.

    An editor can call it on what is typed; `path` only labels the errors.
    """
    messages: list[Message] = []
    for number, line_text in enumerate(text.split("\n"), start=1):
        message = parse_session_line(line_text, path, number)
        if message is not None:
            messages.append(message)
    return messages


def parse_session_line(line_text: str, path: PathLike, number: int) -> Message | None:
    """One physical line: a message, `None` for a blank line, or `SessionFormatError`."""
    if line_text.endswith("\r"):
        line_text = line_text[:-1]  # CRLF files
    if not line_text:
        return None
    try:
        value = _decode_line(line_text)
    except (ValueError, RecursionError) as err:
        raise SessionFormatError(INVALID_JSON, path, number, _decode_detail(err)) from err
    result = _narrow(value)
    if isinstance(result, str):
        raise SessionFormatError(INVALID_RECORD, path, number, result)
    return result


def _decode_detail(err: BaseException) -> str:
    if isinstance(err, json.JSONDecodeError):
        # "Unterminated string starting at" + " at column 38" would say "at" twice
        return f"{err.msg.removesuffix(' at')} at column {err.colno}"
    if isinstance(err, RecursionError):
        return "nested too deeply"
    return str(err)


def append_session(path: PathLike, message: Message, *, fsync: bool = False) -> None:
    """Append one message as one line, in one write; history is never rewritten.

    The message is checked first: a record that a later load would refuse is never written.
    If the file's last line is a complete record without its newline, one is written first,
    so the new record is not glued onto it; if that last line is torn (an interrupted
    write), the append is refused with `SessionFormatError`, so the torn line stays the last
    one and `repair` can cut it. A failed write is rolled back (see `_write_record`) and its
    `OSError` propagates. New files are created with mode 0600: transcripts are private.
    """
    line = record_line(message)
    if parse_session_message(_decode_line(line)) != message:
        # e.g. a tuple or non-str keys in a tool input, a non-bool isError, a surrogate pair
        raise ValueError(
            f"refusing to append a {message.role} message that would not load back unchanged"
        )
    payload = (line + "\n").encode("utf-8")
    fd = open_locked(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        size = os.fstat(fd).st_size
        if size > 0 and os.pread(fd, 1, size - 1) != b"\n":
            _check_unterminated_last_line(fd, size, path)
            payload = b"\n" + payload
        _write_record(fd, payload, size)
        if fsync:
            os.fsync(fd)
            if size == 0:  # a new file: its name in the folder must survive a crash too
                sync_folder(os.path.dirname(os.path.abspath(path)))
    finally:
        os.close(fd)  # closing releases the lock


def sync_folder(folder: PathLike) -> None:
    """fsync a folder, so that a file created or renamed in it survives a crash."""
    fd = os.open(folder, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _check_unterminated_last_line(fd: int, size: int, path: PathLike) -> None:
    """Raise `SessionFormatError` unless the last line, lacking its newline, is a record.

    The rare path: it reads the whole file to name the line as an editor numbers it.
    """
    data = read_all(fd, size)
    start = data.rfind(b"\n") + 1
    number = data.count(b"\n", 0, start) + 1
    try:
        parse_session_bytes(data[start:], path)
    except SessionFormatError as err:
        # Not JSON: a torn write, which `repair` cuts (its test too). Valid JSON that is not a
        # record is damage `repair` refuses, so it is not offered.
        reason = (
            "refusing to append after an incomplete last line "
            "(`python -m mini_agent repair` can cut it)"
            if err.phrase == INVALID_JSON
            else "refusing to append after an invalid last line"
        )
        raise SessionFormatError(err.phrase, path, number, f"{err.detail}; {reason}") from err


def _write_record(fd: int, payload: bytes, size: int) -> None:
    """Write `payload` at the end of a file that held `size` bytes, or leave it as it was.

    One write is the normal case. A short write (disk full, a signal) is continued while
    the lock keeps other appenders out; if that fails too, or anything interrupts us, the
    partial record is cut off again and the error propagates: the caller sees the failure
    and the file holds exactly its complete records. Should even the cut fail, the torn
    record stays as the file's last line, where `repair` can cut it.
    """
    try:
        view = memoryview(payload)
        while view:
            written = os.write(fd, view)
            if written == 0:
                raise OSError(errno.EIO, "write made no progress")
            view = view[written:]
    except BaseException:
        with contextlib.suppress(OSError):
            if os.fstat(fd).st_size > size:
                os.ftruncate(fd, size)
        raise


def read_all(fd: int, size: int) -> bytes:
    """The first `size` bytes of an open file (pread may return fewer than asked)."""
    chunks, offset = [], 0
    while offset < size:
        chunk = os.pread(fd, size - offset, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory lock
    fcntl = None  # type: ignore[assignment]

_REOPEN_ATTEMPTS = 100


def open_locked(path: PathLike, flags: int) -> int:
    """Open `path` and hold an exclusive advisory lock on it (closing the fd releases it).

    The lock serialises cooperating appenders and `repair`. Since `repair` replaces the
    file by renaming a new one over it, a lock won on the old file is worthless: check that
    the path still names the locked file, and open again if it does not.
    """
    for _ in range(_REOPEN_ATTEMPTS):
        fd = os.open(path, flags | os.O_CLOEXEC, 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            if _names_same_file(path, os.fstat(fd)):
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    raise OSError(errno.EAGAIN, "session file kept being replaced while opening it", str(path))


def _names_same_file(path: PathLike, opened: os.stat_result) -> bool:
    try:
        current = os.stat(path)
    except FileNotFoundError:
        return False
    return (current.st_dev, current.st_ino) == (opened.st_dev, opened.st_ino)


__all__ = [
    "INVALID_JSON",
    "INVALID_RECORD",
    "JSON",
    "SessionFormatError",
    "append_session",
    "calls",
    "load_session",
    "open_locked",
    "parse_session_bytes",
    "parse_session_line",
    "parse_session_message",
    "parse_session_text",
    "read_all",
    "record",
    "sync_folder",
]
