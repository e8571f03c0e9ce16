# 注释用中文全角标点，和本章一样
"""本章的 src/session.ts，写成 Python：`record`、`calls`、`parse_session_message`、
`load_session`、`append_session`，名字、顺序和分支都是本章的。

本包多做的事各是一次调用：`store.read_lines`、`store.append_line`（锁、换行守卫、回滚）和 `json_form`
（与 `JSON.parse`/`JSON.stringify` 逐字节一致）；与本章的不同见 docs/ARCHITECTURE.md 的差异表。
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeGuard

from . import store
from .json_form import describe_error, error_column, json_type, parse, stringify, stringify_exactly
from .messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage, to_record
from .store import INVALID_JSON as INVALID_JSON  # 本章的两句短语、本包的错误类型，从这里导出
from .store import INVALID_RECORD as INVALID_RECORD
from .store import PathLike as PathLike
from .store import SessionFormatError as SessionFormatError


def record(value: object) -> dict[str, Any] | None:
    # 非 null、不是数组的对象才当记录访问字段；JSON 对象在 Python 里是 dict
    return value if isinstance(value, dict) else None


def calls(value: object) -> TypeGuard[list[dict[str, Any]]]:
    # 类型守卫：返回 True 时，类型检查器就知道 value 是“每项都是对象”的列表
    return isinstance(value, list) and all(
        (item := record(call)) is not None
        and isinstance(item.get("id"), str)
        and isinstance(item.get("name"), str)
        and "input" in item  # input 可以是任意 JSON（包括 null），只要字段存在
        for call in value
    )


def parse_session_message(value: object) -> Message | None:
    # 合法就返回 Message，不合法就返回 None（本章的 undefined）；从不因为坏数据抛错
    message = discriminate(value)
    return None if isinstance(message, str) else message


def discriminate(value: object) -> Message | str:
    # parse_session_message 的分支；本章每个 `return undefined`，这里返回一句为什么（报错时用）
    item = record(value)
    # 公共前提：对象、role 是 string、content 是 string，三个分支共享
    if item is None:
        return f"expected a JSON object, got {json_type(value)}"
    if not isinstance(item.get("role"), str):
        return "role must be a string"
    if not isinstance(item.get("content"), str):
        return "content must be a string"
    if item["role"] == "user":
        return UserMessage(item["content"])
    if item["role"] == "assistant":
        if not calls(item.get("toolCalls")):
            return "assistant needs toolCalls: an array of {id, name, input}"
        # toolCalls: item.toolCalls：每个调用原样留下，多余的键也在
        return AssistantMessage(
            item["content"], [ToolCall.from_record(c) for c in item["toolCalls"]]
        )
    if item["role"] == "tool":
        if not isinstance(item.get("toolCallId"), str):
            return "tool needs toolCallId: a string"
        if not isinstance(item.get("isError"), bool):  # Python 的 True 也是 int，所以查 bool
            return "tool needs isError: a boolean"
        return ToolMessage(item["toolCallId"], item["content"], item["isError"])
    return f"unknown role {stringify(item['role'])}"  # 没有兜底：未知 role 落到这里


def load_session(path: PathLike) -> list[Message]:
    try:
        # readFile + split("\n").filter(Boolean)，持共享锁；每行带着编辑器里的行号
        lines = store.read_lines(path)
    except FileNotFoundError:
        return []  # ENOENT：首次启动，空会话
    # 其他错误（权限、IO）原样向上抛，不吞
    return parse_session_lines(lines, path)


def parse_session_lines(lines: Iterable[tuple[int, str | bytes]], path: PathLike) -> list[Message]:
    # load_session 的“逐行 map”：number 是物理行号（空行也算，本章的 filter(Boolean) 不算）
    messages: list[Message] = []
    for number, line in lines:
        if isinstance(line, bytes):  # 不是 UTF-8：本章的 readFile 会把它读成 U+FFFD
            raise not_utf8(line, number, path)
        line = line.removesuffix("\r")  # CRLF：JSON.parse 也把行尾的 \r 当空白
        if not line:
            continue
        try:
            value = parse(line)  # JSON.parse(line)
        except (ValueError, RecursionError) as err:
            detail, column = describe_error(err), error_column(err)
            raise SessionFormatError(INVALID_JSON, path, number, detail, column) from err
        message = discriminate(value)  # parseSessionMessage(value) ?? throw
        if isinstance(message, str):
            raise SessionFormatError(INVALID_RECORD, path, number, message)
        messages.append(message)
    return messages


def append_session(path: PathLike, message: Message, *, fsync: bool = False) -> None:
    # appendFile(path, `${JSON.stringify(message)}\n`)：一条消息一行，追加到末尾
    line = message_line(message)  # JSON.stringify(message)
    store.append_line(path, line, fsync, parse_session_bytes)  # 锁、换行守卫、回滚：都在 store 里


# --- 本章之外 ----------------------------------------------------------------------------------


def message_line(message: Message) -> str:
    """`JSON.stringify(message)`, refused (`ValueError`) when a load would not give it back."""
    strings_only = not (isinstance(message, AssistantMessage) and message.tool_calls)
    line, exact = stringify_exactly(to_record(message), known_plain=strings_only)
    if not exact and parse_session_message(parse(line)) != message:
        raise ValueError(
            f"refusing to append this {message.role} message: it would not load back unchanged: "
            "a tuple, a non-str key, a surrogate pair as two code points (see js_string)?"
        )
    return line


def parse_session_bytes(data: bytes, path: PathLike) -> list[Message]:
    # 已经读到手的字节（store 查最后一行、repair 时用：store 只懂字节和文件，不懂消息）
    return parse_session_lines(store.split_lines((data,)), path)


READS_AS_GBK = "it reads as GBK (Notepad's ANSI on Chinese Windows): save it as UTF-8"


def not_utf8(line: bytes, number: int, path: PathLike) -> SessionFormatError:
    # 第 number 行不是 UTF-8：报出断在第几列（按字符数）；读得通 GBK 时说该怎么办
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as err:
        column = len(line[: err.start].decode("utf-8")) + 1
        detail = f"not UTF-8 at column {column}"
        try:
            line.decode("gbk")  # 随机字节很少读得通 GBK
            detail += f"; {READS_AS_GBK}"
        except UnicodeDecodeError:
            pass
        error = SessionFormatError(INVALID_JSON, path, number, detail, column)
        error.__cause__ = err
        return error
    raise ValueError("this line is UTF-8")
