"""A one-line Chinese gloss of an error's English detail, printed under a shown error.

The exception text stays exactly as the library writes it (the chapter's phrase and line
number are what logs and tests match); the gloss only tells a Chinese reader what the English
after the phrase means. `gloss(err)` is `None` for an error this table does not know.
"""

from __future__ import annotations

import json
import re

from .context import CANNOT_SERIALIZE, EMPTY_CONTEXT, SMALLEST_UNIT_TOO_BIG
from .repair import ADVICE
from .session import INVALID_JSON, INVALID_RECORD, READS_AS_GBK, SessionFormatError
from .visible import visible_text

# (pattern of the detail, its Chinese meaning); `\1`… refer to the pattern's groups
DETAILS: tuple[tuple[str, str], ...] = (
    (
        r"Unterminated string starting at column (\d+)",
        r"从第 \1 列开始的字符串没有收尾的引号（常见于写到一半的行）",
    ),
    (r"Expecting value at column (\d+)", r"第 \1 列应当出现一个 JSON 值"),
    (
        r"Expecting ',' delimiter at column (\d+)",
        r"第 \1 列这里应当还有逗号或右括号（常见于 JSON 没写完）",
    ),
    (r"Expecting ':' delimiter at column (\d+)", r"第 \1 列少了一个冒号"),
    (
        r"Expecting property name enclosed in double quotes at column (\d+)",
        r"第 \1 列应当是带双引号的键",
    ),
    (r"Illegal trailing comma before end of \w+ at column (\d+)", r"第 \1 列多了一个结尾逗号"),
    (r"Extra data at column (\d+)", r"第 \1 列起，一个完整的 JSON 值后面还有多余的内容"),
    (r"Invalid control character at column (\d+)", r"第 \1 列的字符串里有未转义的控制字符"),
    (
        r"byte-order mark \(U\+FEFF\) at column (\d+).*",
        r"第 \1 列有字节顺序标记（BOM），请存成不带 BOM 的 UTF-8",
    ),
    (r"not UTF-8 at column (\d+)", r"第 \1 列起的字节不是 UTF-8"),
    (
        re.escape(READS_AS_GBK),
        "它像是 GBK 编码（中文 Windows 记事本的“ANSI”）：请用“另存为”选 UTF-8 编码保存",
    ),
    (r"expected a JSON object, got an array", "这一行是数组，不是 JSON 对象"),
    (r"expected a JSON object, got a string", "这一行是字符串，不是 JSON 对象"),
    (r"expected a JSON object, got a number", "这一行是数字，不是 JSON 对象"),
    (r"expected a JSON object, got a boolean", "这一行是布尔值，不是 JSON 对象"),
    (r"expected a JSON object, got null", "这一行是 null，不是 JSON 对象"),
    (r"(role|content) must be a string", r"\1 必须是字符串"),
    (
        r"assistant needs toolCalls.*",
        "assistant 必须带 toolCalls（由 {id, name, input} 组成的数组）",
    ),
    (r"tool needs toolCallId.*", r"tool 必须带字符串 toolCallId"),
    (r"tool needs isError.*", r"tool 必须带布尔值 isError"),
    (r"unknown role (.*)", r"role \1 不是 user、assistant、tool 之一"),
)

PHRASES: tuple[tuple[str, str], ...] = (
    (INVALID_JSON, "第 {line} 行不是合法的 JSON"),
    (INVALID_RECORD, "第 {line} 行是 JSON，却不是一条合法的消息"),
)

_CHECKED_BY_CONSTRUCTORS = (
    "；本包的消息构造函数会检查类型（本章的对象字面量不查：在 TypeScript 里这会悄悄返回一条坏消息）"
)

WHOLE: tuple[tuple[str, str], ...] = (
    (re.escape(SMALLEST_UNIT_TOO_BIG), "预算连最新的那个一致单元都装不下"),
    (re.escape(EMPTY_CONTEXT), "裁剪后一个单元也没有（历史为空），上下文不能为空"),
    (
        r"refusing to append this (\w+) message: it would not load back unchanged",
        r"拒绝追加：这条 \1 消息写下去再读回来就不是原样了",
    ),
    (
        r".*refusing to append after an incomplete last line.*",
        "拒绝追加：文件的最后一行写到一半，可以用 repair 剪掉这一行",
    ),
    (
        r".*refusing to append after an invalid last line.*",
        "拒绝追加：文件的最后一行不是合法的记录",
    ),
    (r"'NoneType' object is not subscriptable", "对 None 取下标：没有先确认它是对象"),
    (
        r"'(list|str|int|float|bool|NoneType)' object has no attribute 'get'",
        r"对 \1 调用了 .get：它不是对象（dict），先用 isinstance(value, dict) 确认（JavaScript 里 value.role 只会得到 undefined）",
    ),
    (
        r"list indices must be integers or slices, not str",
        "用字符串给数组取下标：没有先确认它是对象",
    ),
    # the package's message constructors check their fields' types (a TypeScript object
    # literal does not), so a parser that skips a check meets one of these
    (
        r"(\w+)\.(\w+) must be a str, not (\w+)",
        r"构造 \1 时，\2 必须是字符串，这里是 \3" + _CHECKED_BY_CONSTRUCTORS,
    ),
    (
        r"(\w+)\.(\w+) must be a bool, not (\w+)",
        r"构造 \1 时，\2 必须是布尔值，这里是 \3" + _CHECKED_BY_CONSTRUCTORS,
    ),
    (
        r"AssistantMessage\.tool_calls must be a sequence of ToolCall, not (\w+)",
        r"构造 AssistantMessage 时，tool_calls 必须是 ToolCall 的序列，这里是 \1",
    ),
    (
        r"AssistantMessage\.tool_calls\[(\d+)\] must be a ToolCall, not (\w+).*",
        r"构造 AssistantMessage 时，tool_calls 的第 \1 项（从 0 数起）必须是 ToolCall，这里是 \2",
    ),
    # the demos' read tool (`samples.file_reader`), whose errors 01 and 06 show
    (r"read needs \{path: string\}", "read 工具的输入必须是带字符串 path 的对象"),
    (r"no such file: (.*)", r"没有文件 \1"),
    (r"Is a directory", "这个路径是目录，不是文件"),
    (r"Permission denied", "没有读（或写）这个文件的权限"),
    (r"No such file or directory", "文件不存在"),
    (r"max_chars must be positive, got (-?\d+)", r"预算必须是正数，这里是 \1"),
    (r"max_chars must be an int, not (\w+)", r"预算必须是整数，这里是 \1"),
    (
        rf"message (\d+) {re.escape(CANNOT_SERIALIZE)}.*",
        r"第 \1 条消息（从 0 数起）写不成 JSON",
    ),
    (r"message (\d+) is not a session message.*", r"第 \1 条消息（从 0 数起）不是会话消息"),
    (
        r"agent stopped after (\d+) model turns.*",
        r"模型连续 \1 轮都没有给出最终回答，run_agent 停下了",
    ),
    (r"Out of range float values are not JSON compliant.*", "NaN、Infinity 不是 JSON，拒绝写入"),
    (r"(NaN|-?Infinity) is not JSON", r"\1 不是 JSON"),
    (r"Circular reference detected", "有循环引用，写不成 JSON"),
    (r"Object of type (\w+) is not JSON serializable", r"\1 类型的值写不成 JSON"),
    (
        r"integer .* is beyond ±2\^53 and not a double.*",
        "整数超出 ±2^53：JavaScript 读回来会是另一个数",
    ),
    (
        r".* is out of range \(JavaScript reads it as Infinity\)",
        "数字太大：JavaScript 会把它读成 Infinity",
    ),
    (
        r"(?:a FIFO|a character device|a block device|a socket|not a regular file)"
        r"(?:, not a regular file)?: a session cannot be kept there",
        "这个路径不是普通文件，会话不能放在这里",
    ),
    (r"No space left on device", "磁盘已满"),
    (r"File too large", "文件超过了允许的大小上限"),
    (r"Read-only file system", "文件系统是只读的"),
    # the store's refusals of a path: what to do is the point
    (
        r"a symbolic link: sessions are not followed through links.*",
        "这是符号链接：会话从不经过链接读写（在共享文件夹里，链接可能指向你的某个文件）；"
        "请写文件本身的路径，并放在只有你能写的文件夹里",
    ),
    (
        r"the file has (\d+) names \(hard links\).*",
        r"这个文件有 \1 个名字（硬链接）：追加会同时改动另外那些文件；"
        r"把它复制成单独的一个文件（`cp FILE NEW`）再用",
    ),
    (
        r"owned by uid (\d+), not by you \(uid (\d+)\).*",
        r"文件属于 uid \1，不是你（uid \2）：拒绝写入别的用户掌控的会话；"
        r"把会话放在只有你能写的文件夹里",
    ),
    (
        r"mode (\d+) lets others write it.*",
        r"权限 \1 允许别人写它，里面的内容可能是别人写的：拒绝追加；"
        r"如果你信任它的内容，先 `chmod 600` 它",
    ),
)

# errors whose message alone says nothing: their meaning is their type's (`KeyError: 'input'`)
BY_TYPE: tuple[tuple[str, str, str], ...] = (
    ("KeyError", r"'(.*)'", r"字典里没有键 '\1'：取值之前没有先确认这个键在不在"),
)

# `repair`'s refusals: what is damaged, then what repair cuts and how to keep what is readable
REPAIR_REASONS: tuple[tuple[str, str], ...] = (
    (
        r"line (\d+) is damaged, not only the torn last line (\d+)",
        r"第 \1 行坏了，坏的不只是写到一半的最后一行（第 \2 行）",
    ),
    (
        r"line (\d+), the last line, is damaged but complete: it ends with its newline, "
        r"which a torn write never does",
        r"最后一行（第 \1 行）坏了，却是完整的：它以换行结尾，写到一半的行不会这样",
    ),
    (r"line (\d+) is damaged, and it is not the last line", r"第 \1 行坏了，而它不是最后一行"),
)
_NOT_TORN_LINE = re.compile(r"the last line (\d+) is not a torn record: (.*)", re.S)
NOT_TORN: tuple[tuple[str, str], ...] = (  # why a last line is not a torn record (`store`)
    (r"it is complete JSON, but not a record", "它是完整的 JSON，却不是一条记录"),
    (r"it does not start with `\{`, as every record does", "每条记录都以 `{` 开头，它不是"),
    (
        r"it holds a control byte \(a NUL\?\), which no record holds",
        "它含有控制字节（NUL？），记录里不会有",
    ),
    (r"it is not UTF-8", "它不是 UTF-8"),
    (r"a complete JSON value is followed by more bytes", "一个完整的 JSON 值后面还跟着别的字节"),
    (r"it breaks at column (\d+), not where it ends", r"它断在第 \1 列，而不是断在行尾"),
    (
        r"every byte of the file is NUL: no record survived; move the file away",
        "文件的每个字节都是 NUL：一条记录也没留下；把这个文件挪走",
    ),
)
REPAIR_NULS = " (NUL bytes where records should be: a crash of a file system lost them)"
REPAIR_ONLY = ": repair only cuts a torn last line"
REPAIR_ADVICE = f"; {ADVICE}"
REPAIR_ADVICE_GLOSS = (
    "要保留还能读的部分：先复制这个文件，再在编辑器里删掉坏的行"
    "（`python -m mini_agent check FILE` 会指出每一行）"
)
# a step of `repair_session` that the system refused, as its OSError names it
REPAIR_STEPS: tuple[tuple[str, str], ...] = (
    ("cannot write a backup of its torn last line", "写不了写到一半的最后一行的备份"),
    ("cannot cut its torn last line", "剪不掉写到一半的最后一行"),
    (
        "cut its torn last line, but cannot sync the cut",
        "剪掉了写到一半的最后一行，却没能同步到磁盘",
    ),
)

_PHRASED = re.compile(
    f"^({re.escape(INVALID_JSON)}|{re.escape(INVALID_RECORD)}) (\\d+)(?:: (.*))?$", re.S
)


# an OSError as `str()` writes it (`[Errno 21] Is a directory: 'a-directory'`): its strerror
_OS_ERROR = re.compile(r"\[Errno -?\d+\] (.*?)(?:: '[^']*')?", re.S)

# a streamed tool call whose pieces of `arguments` do not join into JSON (live client)
_ARGUMENTS = re.compile(r"invalid JSON arguments for tool (\S+): (.*)", re.S)


def _first(table: tuple[tuple[str, str], ...], text: str) -> str | None:
    for pattern, meaning in table:
        match = re.fullmatch(pattern, text, re.S)
        if match is not None:
            return match.expand(meaning)
    return None


def _repair_reason(text: str) -> str | None:
    """The Chinese of a `RepairRefusedError.reason`, or `None` when it is not one."""
    advice = text.endswith(REPAIR_ADVICE)
    text = text.removesuffix(REPAIR_ADVICE)
    last = _NOT_TORN_LINE.fullmatch(text)
    if last is not None:
        why = _first(NOT_TORN, last.group(2))
        said = (
            None if why is None else f"最后一行（第 {last.group(1)} 行）不是写到一半的记录：{why}"
        )
    else:
        rest = text.removesuffix(REPAIR_ONLY)
        core = rest.removesuffix(REPAIR_NULS)
        said = _first(REPAIR_REASONS, core)
        if said is not None:
            said += (
                "（本该是记录的地方是 NUL 字节：文件系统崩溃时丢了它们）" if rest != core else ""
            )
            said += "：repair 只剪掉写到一半的最后一行" if text != rest else ""
    if said is None:
        return None
    return f"{said}；{REPAIR_ADVICE_GLOSS}" if advice else said


def _os_strerror(text: str) -> str | None:
    """An OSError's text: the system's words, or a repair step and then the system's words."""
    for step, meaning in REPAIR_STEPS:
        if text.startswith(f"{step}: "):
            reason = _first(WHOLE, text.removeprefix(f"{step}: "))
            return f"{meaning}：{reason}" if reason else meaning
    return _first(WHOLE, text)


def gloss_text(text: str) -> str | None:
    """The Chinese meaning of an error message, or `None` when it is not one we know."""
    repair = _repair_reason(text)
    if repair is not None:
        return repair
    arguments = _ARGUMENTS.fullmatch(text)
    if arguments is not None:
        tool, detail = arguments.groups()
        head = f"模型给工具 {tool} 的参数拼起来不是合法的 JSON"
        reason = _first(DETAILS, detail)
        return f"{head}：{reason}" if reason else head
    os_error = _OS_ERROR.fullmatch(text)
    if os_error is not None:
        return _os_strerror(os_error.group(1))
    phrased = _PHRASED.match(text)
    if phrased is None:
        return _first(WHOLE, text)
    phrase, line, detail = phrased.groups()
    head = dict(PHRASES)[phrase].format(line=line)
    if detail is None:
        return head
    reasons = [_first(DETAILS, part) or _first(WHOLE, part) for part in detail.split("; ")]
    said = [reason for reason in reasons if reason is not None]
    return "：".join([head, "；".join(said)]) if said else head


def _by_type(kind: str, text: str) -> str | None:
    for name, pattern, meaning in BY_TYPE:
        match = re.fullmatch(pattern, text, re.S) if kind == name else None
        if match is not None:
            return match.expand(meaning)
    return None


def gloss_shown(text: str) -> str | None:
    """The Chinese meaning of an error written `Type: message`, as a traceback's last line and
    an exercise report write it: by its type where `BY_TYPE` knows it, else by its message."""
    kind, _, message = text.partition(": ")
    return _by_type(kind, message) or gloss_text(message)


def gloss(error: BaseException) -> str | None:
    """The Chinese gloss of `error`'s message (an OSError: of its strerror; a `json` decoding
    error: of its message and column, as the session's details say them)."""
    if isinstance(error, OSError) and error.strerror:
        return _os_strerror(error.strerror)
    if isinstance(error, json.JSONDecodeError):
        return _first(DETAILS, f"{error.msg} at column {error.colno}")
    return _by_type(type(error).__name__, str(error)) or gloss_text(str(error))


KIT_DETAIL = "本包补充"
"""The mark of the kit's own English detail, on its line under the chapter's phrase."""


def phrase_first(error: BaseException) -> list[str]:
    """How a notebook and the CLI show `error`, one line each, not yet indented or escaped:
    first what the chapter would say — a `SessionFormatError`'s phrase and line alone
    (`invalid session record at line 3`), any other error's message — then, for a
    `SessionFormatError`, the kit's detail marked as the kit's (`本包补充：…`), then the
    `释义：…` (when `gloss` knows it). `str(error)` itself stays the library's one line."""
    if isinstance(error, SessionFormatError):
        lines = [f"{error.phrase} {error.line}", f"{KIT_DETAIL}：{error.detail}"]
    else:
        lines = [str(error)]
    meaning = gloss(error)
    return lines if meaning is None else [*lines, f"释义：{meaning}"]


def gloss_line(error: BaseException) -> str | None:
    """The line shown under an error: `释义：` and its gloss, hidden characters escaped (the
    gloss may quote the file), or `None` when there is no gloss."""
    meaning = gloss(error)
    return None if meaning is None else f"释义：{visible_text(meaning)}"
