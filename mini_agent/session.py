"""The session on disk: one JSON line per message, appended; loaded strictly, line by line.

Chapter 34, "JSONL 的判别式读取" to "损坏记录的错误路径", in the chapter's order; what the kit adds
is one call each, into `store` (read the numbered lines; append one line: lock, newline guard,
roll-back) and `json_form` (exact JSON).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import store
from .json_form import describe_error, error_column, json_type, parse, stringify, stringify_exactly
from .messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage, to_record
from .store import INVALID_JSON as INVALID_JSON  # re-exported: the chapter's phrases,
from .store import INVALID_RECORD as INVALID_RECORD  # the kit's error, its path type
from .store import PathLike as PathLike
from .store import SessionFormatError as SessionFormatError


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
        lines = store.read_lines(path)  # readFile + split("\n") + filter(Boolean), locked
    except FileNotFoundError:
        return []  # ENOENT: no file yet, a session that has not started
    return parse_session_lines(lines, path)


def parse_session_lines(lines: Iterable[tuple[int, str | bytes]], path: PathLike) -> list[Message]:
    """`load_session` after the read: each non-blank line with its physical number (the line
    an editor shows; the chapter's `filter(Boolean)` counts only the others), parsed and
    discriminated; the first bad line raises (a line still in bytes is not UTF-8)."""
    messages: list[Message] = []
    for number, line in lines:
        if type(line) is not str:
            raise not_utf8(line, number, path)  # type: ignore[arg-type]  # still bytes
        message = parse_line(line, number, path)
        if message is not None:
            messages.append(message)
    return messages


READS_AS_GBK = "it reads as GBK (Notepad's ANSI on Chinese Windows): save it as UTF-8"


def _reads_as_gbk(line: bytes) -> bool:
    """Plausibly a line saved as GBK: it decodes as GBK (random bytes seldom do)."""
    try:
        line.decode("gbk")
    except UnicodeDecodeError:
        return False
    return True


def not_utf8(line: bytes, number: int, path: PathLike) -> SessionFormatError:
    """The error for line `number` that is not UTF-8: the column, in characters, where it breaks."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as err:
        column = len(line[: err.start].decode("utf-8")) + 1
        detail = f"not UTF-8 at column {column}"
        if _reads_as_gbk(line):  # as the BOM's detail does, say what to do
            detail += f"; {READS_AS_GBK}"
        error = SessionFormatError(INVALID_JSON, path, number, detail, column)
        error.__cause__ = err  # as `raise … from err` would
        return error
    raise ValueError("this line is UTF-8")


def parse_line(line: str, number: int, path: PathLike) -> Message | None:
    """One line of a session file: its message, `None` for a blank line, or the error."""
    line = line.removesuffix("\r")
    if not line:
        return None
    try:
        value = parse(line)  # JSON.parse(line)
    except (ValueError, RecursionError) as err:
        detail, column = describe_error(err), error_column(err)
        raise SessionFormatError(INVALID_JSON, path, number, detail, column) from err
    message = discriminate(value)  # parseSessionMessage(value) ?? throw
    if isinstance(message, str):
        raise SessionFormatError(INVALID_RECORD, path, number, message)
    return message


def parse_session_text(text: str, path: PathLike = "<text>") -> list[Message]:
    """`load_session` of a text already read: split on "\\n" only (`splitlines()` splits
    inside JSON strings too), blank lines skipped but counted."""
    messages: list[Message] = []
    for number, line in enumerate(text.split("\n"), start=1):
        message = parse_line(line, number, path) if line else None
        if message is not None:
            messages.append(message)
    return messages


def parse_session_bytes(data: bytes, path: PathLike) -> list[Message]:
    """`load_session` of a file's bytes already read."""
    return parse_session_lines(store.split_lines((data,)), path)


def append_session(path: PathLike, message: Message, *, fsync: bool = False) -> None:
    """The chapter's `appendSession`: `JSON.stringify(message)` and a newline, appended — safely,
    in one call into the store. If it raises, the record is not in the file, unless
    `store.written_anyway(error)`."""
    line = _stringify_checked(message)  # JSON.stringify(message)
    store.append_line(path, line, fsync, parse_session_bytes)  # appendFile(path, `${line}\n`)


def _stringify_checked(message: Message) -> str:
    """`JSON.stringify(message)`, after checking that a later load gives this message back."""
    strings_only = not (isinstance(message, AssistantMessage) and message.tool_calls)
    line, exact = stringify_exactly(to_record(message), known_plain=strings_only)
    if not exact and parse_session_message(parse(line)) != message:
        raise ValueError(
            f"refusing to append this {message.role} message: it would not load back unchanged: "
            "a tuple, a non-str key, a surrogate pair as two code points (see js_string)?"
        )
    return line
