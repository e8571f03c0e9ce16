"""The 释义 of errors that notebooks show and the command line never does: `mini_agent.glosses`
extended (a reader's parser's slips, JSON serialization, the demos' read tool …)."""

from __future__ import annotations

import json
import re

from mini_agent import glosses
from mini_agent.context import CANNOT_SERIALIZE

# a reader's parser's slips (the message constructors check types, as a TypeScript object
# literal does not), JSON serialization, the demos' read tool
WHOLE = (
    *glosses.WHOLE,
    *glosses.table(r"""
refusing to append this (\w+) message: it would not load back unchanged => 拒绝追加：这条 \1 消息写下去再读回来就不是原样了
'NoneType' object is not subscriptable => 对 None 取下标：没有先确认它是对象
'(list|str|int|float|bool|NoneType)' object has no attribute 'get' => 对 \1 调用了 .get：它不是对象（dict），先用 isinstance(value, dict) 确认（JavaScript 里 value.role 只会得到 undefined）
list indices must be integers or slices, not str => 用字符串给数组取下标：没有先确认它是对象
argument of type '(\w+)' is not iterable => 对 \1 用了 in：它不是对象（dict），先用 isinstance(item, dict) 确认（本章的 record(item)）
(\w+)\.(\w+) must be a str, not (\w+) => 构造 \1 时，\2 必须是字符串，这里是 \3；本包的消息构造函数会检查类型（本章的对象字面量不查：在 TypeScript 里这会悄悄返回一条坏消息）
(\w+)\.(\w+) must be a bool, not (\w+) => 构造 \1 时，\2 必须是布尔值，这里是 \3；本包的消息构造函数会检查类型（本章的对象字面量不查：在 TypeScript 里这会悄悄返回一条坏消息）
AssistantMessage\.tool_calls must be a sequence of ToolCall, not (\w+) => 构造 AssistantMessage 时，tool_calls 必须是 ToolCall 的序列，这里是 \1
AssistantMessage\.tool_calls\[(\d+)\] must be a ToolCall, not (\w+).* => 构造 AssistantMessage 时，tool_calls 的第 \1 项（从 0 数起）必须是 ToolCall，这里是 \2
(?:\w+: )?path should be string, bytes.*, not (\w+) => 文件路径必须是字符串或 pathlib.Path，这里是 \1
expected str, bytes or os.PathLike object, not NoneType => 路径是 None：没有会话时 session_path 是 None，写盘之前要先判断 if session_path is not None
expected str, bytes or os.PathLike object, not (\w+) => 文件路径必须是字符串或 pathlib.Path，这里是 \1
string indices must be integers.* => 用字符串给字符串取下标：它不是对象（dict），先用 isinstance(value, dict) 确认
not a session message: (\w+) => append_session 要的是消息对象 UserMessage / AssistantMessage / ToolMessage，不是 \1；本章的对象字面量在本包里是这几个类
messages must be a list of messages, not (str|PosixPath|WindowsPath) => messages 应当是消息的列表，这里是 \1；如果这是会话文件的路径，先用 load_session(路径) 读出消息
messages must be a list of messages, not (\w+) => messages 应当是消息的列表，这里是 \1
read needs \{path: string\} => read 工具的输入必须是带字符串 path 的对象
(check_\w+)\(\) missing 1 required positional argument: '\w+' => \1 要你把写好的函数交给它：\1(你的函数名)，不加引号，函数名后面不加括号
no such file: (.*) => 没有文件 \1
max_chars must be positive, got (-?\d+) => 预算必须是正数，这里是 \1
max_chars must be an int, not (\w+) => 预算必须是整数，这里是 \1
context_max_chars must be an int, not (\w+) => 预算 context_max_chars 必须是整数（不要引号、不要小数点），这里是 \1
max_turns must be an int, not (\w+) => max_turns 必须是整数，这里是 \1
max_turns must be at least 1, got (-?\d+) => max_turns 至少是 1，这里是 \1
prompt must be a str, not (\w+) => 提示 prompt 必须是字符串，这里是 \1
prompt=None answers a session on disk: give session_path too => prompt=None 表示接着回答磁盘上的会话：要同时给出 session_path
tools must be a sequence of Tool => tools 应当是 Tool 的列表（或元组），每一项都是 Tool
tool names must be unique => 工具名不能重复
session_path must be a path, not (\w+) => session_path 应当是路径（str 或 pathlib.Path），这里是 \1
scripted client has no reply for request (\d+): only (\d+) turn\(s\) were scripted => 剧本用完了：第 \1 次请求没有写好的回答（剧本只有 \2 轮）。剧本的最后一轮应当是不调用工具的最终回答；或者你给的 ScriptedClient 已经在上一次运行里用过，新建一个再跑
message (\d+) is not a session message: \{.* => 第 \1 条消息（从 0 数起）不是会话消息，是 dict：先把它变成消息对象，用 parse_session_message(dict)，或者直接写 UserMessage(...)
message (\d+) is not a session message.* => 第 \1 条消息（从 0 数起）不是会话消息：列表里要放 UserMessage、AssistantMessage、ToolMessage
Out of range float values are not JSON compliant.* => NaN、Infinity 不是 JSON，拒绝写入
(NaN|-?Infinity) is not JSON => \1 不是 JSON
Circular reference detected => 有循环引用，写不成 JSON
Object of type (\w+) is not JSON serializable => \1 类型的值写不成 JSON
integer .* is beyond ±2\^53 and not a double.* => 整数超出 ±2^53：JavaScript 读回来会是另一个数
.* is out of range \(JavaScript reads it as Infinity\) => 数字太大：JavaScript 会把它读成 Infinity
"""),
    (rf"message (\d+) {re.escape(CANNOT_SERIALIZE)}.*", r"第 \1 条消息（从 0 数起）写不成 JSON"),
)
# errors whose message alone says nothing: their meaning is their type's (`KeyError: 'input'`)
BY_TYPE: dict[str, glosses.Table] = {
    "KeyError": ((r"'(.*)'", r"字典里没有键 '\1'：取值之前没有先确认这个键在不在"),),
}
# `session_path=""`: the chapter's `if (options.sessionPath)` would have kept no session at all
EMPTY_PATH = (
    f'{glosses.EMPTY_PATH}。本章的 TypeScript 写 if (options.sessionPath)，会把 "" 当成没有会话；'
    "本包把任何 str 都当成路径：不要会话就传 None（或者不传 session_path）"
)
# a name a cell above defines (or imports), asked for before that cell ran in this kernel
_NOT_DEFINED = re.compile(r"name '(\w+)' is not defined")
# an OSError as `str()` writes it (`[Errno 21] Is a directory: 'a-directory'`): its strerror
_OS_ERROR = re.compile(r"\[Errno -?\d+\] (.*?)(?:: '[^']*')?", re.S)
# a streamed tool call whose pieces of `arguments` do not join into JSON (live client)
_ARGUMENTS = re.compile(r"invalid JSON arguments for tool (\S+): (.*)", re.S)


def gloss_text(text: str) -> str | None:
    """The Chinese meaning of an error message, or `None` when it is not one we know."""
    arguments = _ARGUMENTS.fullmatch(text)
    if arguments is not None:
        tool, detail = arguments.groups()
        head = f"模型给工具 {tool} 的参数拼起来不是合法的 JSON"
        reason = glosses.first(glosses.DETAILS, detail)
        return f"{head}：{reason}" if reason else head
    os_error = _OS_ERROR.fullmatch(text)
    if os_error is not None:
        return glosses.os_strerror(os_error.group(1), WHOLE)
    return glosses.gloss_text(text, WHOLE)


def gloss_shown(text: str) -> str | None:
    """The meaning of an error written `Type: message` (a traceback's last line, an exercise
    report): by its type where `BY_TYPE` knows it, else by its message."""
    kind, _, message = text.partition(": ")
    return glosses.first(BY_TYPE.get(kind, ()), message) or gloss_text(message)


def gloss(error: BaseException) -> str | None:
    """The Chinese gloss of `error` (a `json` decoding error: of its message and column)."""
    if isinstance(error, OSError) and error.filename == "":
        return EMPTY_PATH
    if isinstance(error, OSError) and error.strerror:
        return glosses.os_strerror(error.strerror, WHOLE)
    if isinstance(error, json.JSONDecodeError):
        return glosses.first(glosses.DETAILS, f"{error.msg} at column {error.colno}")
    return gloss_shown(f"{type(error).__name__}: {error}")


def not_defined_yet(error: BaseException) -> str | None:
    """A NameError in a notebook: most often a cell run before the one that defines the name."""
    match = _NOT_DEFINED.match(str(error)) if isinstance(error, NameError) else None
    if match is None:
        return None
    return (
        f"名字 {match.group(1)} 在这个内核里还没有定义：先运行上面的单元格（通常是第一个单元格，"
        "它导入这本笔记本要用的一切；重启内核之后，所有名字都没了，要从第一个单元格运行起）；"
        "如果上面没有哪个单元格定义它，检查一下拼写"
    )


def gloss_line(error: BaseException) -> str | None:
    """`释义：` and `error`'s gloss, hidden characters escaped; `None` when there is none."""
    return glosses.gloss_line(error, gloss)


def phrase_first(error: BaseException) -> list[str]:
    """`glosses.phrase_first`, with this module's glosses."""
    return glosses.phrase_first(error, gloss)
