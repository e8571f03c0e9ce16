"""The session on disk: one JSON line per message, appended; loaded strictly, line by line.

Chapter 34, "JSONL 的判别式读取" to "损坏记录的错误路径", in the chapter's order; what the kit adds
is one call each, into `durable` (lock, newline guard, rollback) and `json_form` (exact JSON).
"""

from __future__ import annotations

from typing import Any

from . import durable
from .collector import cycle_collector_paused
from .durable import PathLike as PathLike  # the kit's path type, re-exported
from .json_form import describe_error, error_column, exact_json, json_type, parse, stringify
from .messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    same_message,
    to_record,
)
from .session_errors import INVALID_JSON as INVALID_JSON  # re-exported: the chapter's
from .session_errors import INVALID_RECORD as INVALID_RECORD  # phrases, the kit's error
from .session_errors import SessionFormatError as SessionFormatError


def record(value: object) -> dict[str, Any] | None:
    """The chapter's `record()`: a JSON object (not null, not an array) or `None`."""
    return value if isinstance(value, dict) else None


def calls(value: object) -> tuple[ToolCall, ...] | None:
    """The chapter's `calls()`: a list whose every item narrows to an object with str id, str
    name and an `input` key (any JSON value, `null` included); the calls as written, or `None`."""
    if not isinstance(value, list):
        return None
    tool_calls = []
    for call in value:
        item = record(call)
        if not (
            item is not None
            and isinstance(item.get("id"), str)
            and isinstance(item.get("name"), str)
            and "input" in item
        ):
            return None
        tool_calls.append(ToolCall.from_record(item))  # the call as written, extra keys too
    return tuple(tool_calls)


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
    role, content = item.get("role"), item.get("content")
    if not isinstance(role, str):
        return "role must be a string"
    if not isinstance(content, str):
        return "content must be a string"
    if role == "user":
        return UserMessage(content)
    if role == "assistant":
        tool_calls = calls(item.get("toolCalls"))
        if tool_calls is None:
            return "assistant needs toolCalls: an array of {id, name, input}"
        return AssistantMessage(content, tool_calls)
    if role == "tool":
        if not isinstance(item.get("toolCallId"), str):
            return "tool needs toolCallId: a string"
        if not isinstance(item.get("isError"), bool):
            return "tool needs isError: a boolean"
        return ToolMessage(item["toolCallId"], content, item["isError"])
    return f"unknown role {stringify(role)}"


def load_session(path: PathLike) -> list[Message]:
    """Every message of the session file, or `[]` when the file does not exist; any other OS
    error propagates. A bad line raises `invalid session JSON at line N` (not JSON) or
    `invalid session record at line N` (not a message): N is the physical line."""
    try:
        data = durable.read_session_file(path)  # readFile; the kit reads under a shared lock
    except FileNotFoundError:
        return []  # ENOENT: no file yet, a session that has not started
    with cycle_collector_paused():  # process-wide, for the parse only: a session has no cycles
        return parse_session_bytes(data, path)


def parse_session_text(text: str, path: PathLike = "<text>") -> list[Message]:
    """`load_session` after the read: split on "\\n" only (`splitlines()` splits inside JSON
    strings too), skip blank lines but count them (the line an editor shows; the chapter's
    `filter(Boolean)` counts only the others), drop one "\\r" (CRLF), parse, discriminate."""
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
    """The chapter's `appendSession`: `JSON.stringify(message)` and a newline, appended; each
    step one call into the kit (`checked_line`: only what loads back; `append_file`: safely)."""
    line = checked_line(message)  # JSON.stringify(message)
    append_file(path, f"{line}\n", fsync)  # appendFile(path, `${line}\n`, "utf8")


def checked_line(message: Message) -> str:
    """`JSON.stringify(message)`, after checking that a later load gives this message back."""
    fields = to_record(message)
    line = stringify(fields)
    if exact_json(fields) and "\\ud" not in line:  # read back as written: no need to look
        return line
    if not same_message(parse_session_message(parse(line)), message):
        raise ValueError(
            f"refusing to append this {message.role} message: it would not load back unchanged: "
            "a tuple, a non-str key, a surrogate pair as two code points (see js_string)?"
        )
    return line


def append_file(path: PathLike, text: str, fsync: bool = False) -> None:
    """`durable.append_line`, told what an unterminated last line may be: a record (a newline
    goes first); a torn line (`repair` cuts it) or an invalid one refuses the append."""

    def check(line: bytes, number: int) -> None:
        try:
            parse_session_bytes(line, path)
        except SessionFormatError as err:
            from .repair import repair_would_cut  # repair imports session: asked only here

            reason = "an invalid last line"
            if repair_would_cut(line, number, path):  # offer repair only when it would cut
                reason = "an incomplete last line (`python -m mini_agent repair` can cut it)"
            detail = f"{err.detail}; refusing to append after {reason}"
            raise SessionFormatError(err.phrase, path, number, detail, err.column) from err

    durable.append_line(path, text.encode("utf-8"), check, fsync)
