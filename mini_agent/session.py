# 注释用中文全角标点，和本章一样
"""本章的 src/session.ts，写成 Python：`record`、`calls`、`parse_session_message`、
`load_session`、`append_session`，名字、顺序和分支都是本章的；后半是它们读写的 `Message`
（本章的消息类型：构造时查字段类型，`to_record` 是本章的键和顺序）。

本包多做的事各是一次调用：`store.read_lines`、`store.append_line`（锁、换行守卫、回滚）和 `json_form`
（与 `JSON.parse`/`JSON.stringify` 逐字节一致）；与本章的不同见 docs/ARCHITECTURE.md 的差异表。
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias, TypeGuard

from . import store
from .json_form import (
    JSON,
    describe_error,
    error_column,
    js_key_rank,
    js_length,
    json_type,
    parse,
    stringify,
    stringify_exactly,
)
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


# --- 本章的 Message：三种消息和它们在磁盘上的键 ----------------------------------------

Role = Literal["user", "assistant", "tool"]
_CALL_KEYS = ("id", "name", "input")

_set = object.__setattr__  # 冻结的 dataclass 就是这样给字段赋值的：这里手动赋值，先查类型


def _refuse_non_str(kind: str, **fields: object) -> None:
    for name, value in fields.items():
        if not isinstance(value, str):
            raise TypeError(f"{kind}.{name} must be a str, not {type(value).__name__}")


@dataclass(frozen=True, init=False)
class ToolCall:
    """一次工具调用；`input` 是任意 JSON 值。`extra` 和 `keys` 留下其余的键和写下时的顺序
    （本章原样留下 `item.toolCalls`）；比较是否相等时不看这个顺序。"""

    id: str
    name: str
    input: JSON
    extra: tuple[tuple[str, JSON], ...] = field(default=(), repr=False)  # 有才显示
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
            return  # 常见情形，马上返回：`extra` 和 `keys` 保持默认值
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
        """照写下的样子还原调用：`item` 有字符串 `id`、`name` 和 `input` 键（见 `calls`）。"""
        if tuple(item) == _CALL_KEYS:  # 只有 id、name、input，按这个顺序：常见情形
            return cls(item["id"], item["name"], item["input"])  # type: ignore[arg-type]
        keys = tuple(sorted(item, key=js_key_rank))  # 按 JavaScript 里键的顺序
        extra = tuple((key, item[key]) for key in keys if key not in _CALL_KEYS)
        default = keys == (*_CALL_KEYS, *(key for key, _ in extra))
        return cls(item["id"], item["name"], item["input"], extra, () if default else keys)  # type: ignore[arg-type]

    def __eq__(self, other: object) -> bool:
        """像 JSON 对象那样比较：键的顺序（`extra` 里的、`keys`）不算数。"""
        if not isinstance(other, ToolCall):
            return NotImplemented
        same = (self.id, self.name, self.input) == (other.id, other.name, other.input)
        return same and dict(self.extra) == dict(other.extra)

    def __hash__(self) -> int:
        """只取 id 和 name：相等的调用哈希相同，也不遍历 input（任意大小、任意深度的 JSON，
        dict 也在内）；调用靠 id 区分。"""
        return hash((self.id, self.name))

    def __repr__(self) -> str:
        extra = f", extra={self.extra!r}" if self.extra else ""
        return f"ToolCall(id={self.id!r}, name={self.name!r}, input={self.input!r}{extra})"

    def to_record(self) -> dict[str, JSON]:
        """调用在磁盘上的对象：id、name、input 和 extra，按写下时的顺序。"""
        fields: dict[str, JSON] = {"id": self.id, "name": self.name, "input": self.input}
        fields.update(self.extra)
        return {key: fields[key] for key in self.keys} if self.keys else fields


@dataclass(frozen=True)
class _MessageBase:
    role: ClassVar[Role]

    @property
    def line(self) -> str:
        """`JSON.stringify(message)`：会话文件里的那一行，每次现算。"""
        return stringify(to_record(self))  # type: ignore[arg-type]

    @property
    def record_chars(self) -> int:
        """`JSON.stringify(message).length + 1`：这一行的 UTF-16 码元数（和 JavaScript
        一样，emoji 算 2），再加换行。"""
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
    """工具的结果。有两个 str 字段：写上名字，`ToolMessage(tool_call_id=…, content=…,
    is_error=…)`，写反了在代码里看得出来；`is_error` 必须是真正的 bool。"""

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
    """写到磁盘上的对象：本章的键，顺序是 role、content、各自的字段。"""
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
    """消息在会话文件里的那一行，不带换行。"""
    return message.line


# --- 本章之外 ----------------------------------------------------------------------------------


def message_line(message: Message) -> str:
    """`JSON.stringify(message)`；读回来不会是原样的消息，拒绝（`ValueError`）。"""
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
