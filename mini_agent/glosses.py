"""A one-line Chinese gloss (释义) of an error's English, shown under it; the message stays as written."""

import re
from collections.abc import Callable

from .context import EMPTY_CONTEXT, SMALLEST_UNIT_TOO_BIG
from .repair import ADVICE, ENCODING_ADVICE
from .session import INVALID_JSON, INVALID_RECORD, READS_AS_GBK, SessionFormatError
from .visible import visible_text

Table = tuple[tuple[str, str], ...]  # (pattern, its Chinese meaning; `\1`… its groups)


def table(rows: str) -> Table:
    """`pattern => meaning`, one a line."""
    return tuple((p, m) for p, _, m in (row.partition(" => ") for row in rows.strip().split("\n")))


_AS_UTF8 = "它像是 GBK 编码（中文 Windows 记事本的“ANSI”）：请用“另存为”选 UTF-8 编码保存"
# the detail after a bad line's phrase
DETAILS = (
    *table(r"""
Unterminated string starting at column (\d+) => 从第 \1 列开始的字符串没有收尾的引号（常见于写到一半的行）
Expecting value at column (\d+) => 第 \1 列应当出现一个 JSON 值
Expecting ',' delimiter at column (\d+) => 第 \1 列这里应当还有逗号或右括号（常见于 JSON 没写完）
Expecting ':' delimiter at column (\d+) => 第 \1 列少了一个冒号
Expecting property name enclosed in double quotes at column (\d+) => 第 \1 列应当是带双引号的键
Illegal trailing comma before end of \w+ at column (\d+) => 第 \1 列多了一个结尾逗号
Extra data at column (\d+) => 第 \1 列起，一个完整的 JSON 值后面还有多余的内容
Invalid control character at column (\d+) => 第 \1 列的字符串里有未转义的控制字符
byte-order mark \(U\+FEFF\) at column (\d+).* => 第 \1 列有字节顺序标记（BOM），请存成不带 BOM 的 UTF-8（记事本“另存为”时编码选“UTF-8”，不选“带有 BOM 的 UTF-8”）
not UTF-8 at column (\d+) => 第 \1 列起的字节不是 UTF-8
expected a JSON object, got an array => 这一行是数组，不是 JSON 对象
expected a JSON object, got a string => 这一行是字符串，不是 JSON 对象
expected a JSON object, got a number => 这一行是数字，不是 JSON 对象
expected a JSON object, got a boolean => 这一行是布尔值，不是 JSON 对象
expected a JSON object, got null => 这一行是 null，不是 JSON 对象
(role|content) must be a string => \1 必须是字符串
assistant needs toolCalls.* => assistant 必须带 toolCalls（由 {id, name, input} 组成的数组）
tool needs toolCallId.* => tool 必须带字符串 toolCallId
tool needs isError.* => tool 必须带布尔值 isError
unknown role (.*) => role \1 不是 user、assistant、tool 之一
"""),
    (re.escape(READS_AS_GBK), _AS_UTF8),
)
PHRASES = {
    INVALID_JSON: "第 {} 行不是合法的 JSON",
    INVALID_RECORD: "第 {} 行是 JSON，却不是一条合法的消息",
}
_PHRASED = re.compile(f"({'|'.join(map(re.escape, PHRASES))}) (\\d+)(?:: (.*))?", re.S)
# a whole message (an OSError: its strerror) that the CLI and `chat` may show; the store's
# refusals of a path say what to do
WHOLE = (
    (re.escape(SMALLEST_UNIT_TOO_BIG), "预算连最新的那个一致单元都装不下"),
    (re.escape(EMPTY_CONTEXT), "裁剪后一个单元也没有，上下文不能为空"),
    *table(r"""
.*refusing to append after an incomplete last line.* => 拒绝追加：文件的最后一行写到一半，可以用 repair 剪掉这一行
.*refusing to append after an invalid last line.* => 拒绝追加：文件的最后一行不是合法的记录
agent stopped after (\d+) model turns.* => 模型连续 \1 轮都没有给出最终回答，run_agent 停下了
Is a directory => 这个路径是目录，不是文件
Permission denied => 没有读（或写）这个文件的权限
No such file or directory => 文件不存在
No space left on device => 磁盘已满
File too large => 文件超过了允许的大小上限
Read-only file system => 文件系统是只读的
(?:a FIFO|a character device|a block device|a socket|not a regular file)(?:, not a regular file)?: a session cannot be kept there => 这个路径不是普通文件，会话不能放在这里
a symbolic link: sessions are not followed through links.* => 这是符号链接：会话从不经过链接读写（在共享文件夹里，链接可能指向你的某个文件）；请写文件本身的路径，并放在只有你能写的文件夹里
the file has (\d+) names \(hard links\).* => 这个文件有 \1 个名字（硬链接）：追加会同时改动另外那些文件；把它复制成单独的一个文件（`cp FILE NEW`）再用
owned by uid (\d+), not by you \(uid (\d+)\).* => 文件属于 uid \1，不是你（uid \2）：拒绝写入别的用户掌控的会话；把会话放在只有你能写的文件夹里
mode (\d+) lets others write it.* => 权限 \1 允许别人写它，里面的内容可能是别人写的：拒绝追加；如果你信任它的内容，先 `chmod 600` 它
"""),
)
EMPTY_PATH = "路径是空字符串：没有给出文件名"
# `repair`'s refusals: what is damaged, then what repair cuts and how to keep what is readable
REPAIR_REASONS = table(r"""
line (\d+) is damaged, not only the torn last line (\d+) => 第 \1 行坏了，坏的不只是写到一半的最后一行（第 \2 行）
line (\d+), the last line, is damaged but complete: it ends with its newline, which a torn write never does => 最后一行（第 \1 行）坏了，却是完整的：它以换行结尾，写到一半的行不会这样
line (\d+) is damaged, and it is not the last line => 第 \1 行坏了，而它不是最后一行
line (\d+) is not plain UTF-8 => 第 \1 行读不成纯 UTF-8：是 GBK 之类的别的编码，或者开头多了 BOM（记事本的“带有 BOM 的 UTF-8”）
""")
_NOT_TORN_LINE = re.compile(r"the last line (\d+) is not a torn record: (.*)", re.S)
NOT_TORN = table(r"""
it is complete JSON, but not a record => 它是完整的 JSON，却不是一条记录
it does not start with `\{`, as every record does => 每条记录都以 `{` 开头，它不是
it holds a control byte \(a NUL\?\), which no record holds => 它含有控制字节（NUL？），记录里不会有
it is not UTF-8 => 它不是 UTF-8
a complete JSON value is followed by more bytes => 一个完整的 JSON 值后面还跟着别的字节
it breaks at column (\d+), not where it ends => 它断在第 \1 列，而不是断在行尾
every byte of the file is NUL: no record survived; move the file away => 文件的每个字节都是 NUL：一条记录也没留下；把这个文件挪走
""")  # why a last line is not a torn record (`store`)
# what `repair` adds to a refusal's reason (the innermost first), and its Chinese
REPAIR_SUFFIXES = (
    (
        " (NUL bytes where records should be: a crash of a file system lost them)",
        "（本该是记录的地方是 NUL 字节：文件系统崩溃时丢了它们）",
    ),
    (": repair only cuts a torn last line", "：repair 只剪掉写到一半的最后一行"),
    (f"; {ENCODING_ADVICE}", "；是文件的编码不对：用编辑器打开，另存为不带 BOM 的 UTF-8；不要删行"),
    (
        f"; {ADVICE}",
        "；要保留还能读的部分：先复制这个文件，再在编辑器里删掉坏的行"
        "（`python -m mini_agent check FILE` 会指出第一处坏行：删掉它再查，直到没有）",
    ),
)
# a step of `repair_session` that the system refused, as its OSError names it
REPAIR_STEPS = table("""
cannot write a backup of its torn last line => 写不了写到一半的最后一行的备份
cannot cut its torn last line => 剪不掉写到一半的最后一行
cut its torn last line, but cannot sync the cut => 剪掉了写到一半的最后一行，却没能同步到磁盘
""")


def first(table: Table, text: str) -> str | None:
    """The meaning of the first pattern in `table` that `text` matches whole."""
    for pattern, meaning in table:
        match = re.fullmatch(pattern, text, re.S)
        if match is not None:
            return match.expand(meaning)
    return None


def _repair_reason(text: str) -> str | None:
    """The Chinese of a `RepairRefusedError.reason`, or `None` when it is not one."""
    added: list[str] = []
    for suffix, meaning in reversed(REPAIR_SUFFIXES):
        if text.endswith(suffix):
            text, added = text.removesuffix(suffix), [meaning, *added]
    last = _NOT_TORN_LINE.fullmatch(text)
    if last is None:
        said = first(REPAIR_REASONS, text)
    elif (why := first(NOT_TORN, last.group(2))) is not None:
        said = f"最后一行（第 {last.group(1)} 行）不是写到一半的记录：{why}"
    else:
        return None
    return None if said is None else said + "".join(added)


def os_strerror(text: str, whole: Table = WHOLE) -> str | None:
    """An OSError's strerror: the system's words, or a repair step and then the system's words."""
    for step, meaning in REPAIR_STEPS:
        if text.startswith(f"{step}: "):
            reason = first(whole, text.removeprefix(f"{step}: "))
            return f"{meaning}：{reason}" if reason else meaning
    return first(whole, text)


def gloss_text(text: str, whole: Table = WHOLE) -> str | None:
    """The Chinese meaning of an error message, or `None` when it is not one we know."""
    phrased = _PHRASED.fullmatch(text)
    if phrased is None:
        return _repair_reason(text) or first(whole, text)
    phrase, line, detail = phrased.groups()
    head = PHRASES[phrase].format(line)
    reasons = [first(DETAILS, part) or first(whole, part) for part in (detail or "").split("; ")]
    said = [reason for reason in reasons if reason is not None]
    return "：".join([head, "；".join(said)]) if said else head


def gloss(error: BaseException, whole: Table = WHOLE) -> str | None:
    """The Chinese gloss of `error`'s message (an OSError's: of its strerror)."""
    if isinstance(error, OSError) and error.filename == "":  # open("")：不是“文件不存在”
        return EMPTY_PATH
    if isinstance(error, OSError) and error.strerror:
        return os_strerror(error.strerror, whole)
    return gloss_text(str(error), whole)


Explain = Callable[[BaseException], "str | None"]
KIT_DETAIL = "本包补充"  # marks the kit's own English detail, under the chapter's phrase


def phrase_first(error: BaseException, explain: Explain = gloss) -> list[str]:
    """`error`'s lines as the CLI and notebooks show them: the chapter's phrase alone (any other
    error: its message), the kit's detail (`本包补充：…`), then `释义：` and `explain(error)`;
    not yet indented or escaped."""
    if isinstance(error, SessionFormatError):
        lines = [f"{error.phrase} {error.line}", f"{KIT_DETAIL}：{error.detail}"]
    else:
        lines = [str(error)]
    meaning = explain(error)
    return lines if meaning is None else [*lines, f"释义：{meaning}"]


def gloss_line(error: BaseException, explain: Explain = gloss) -> str | None:
    """The line shown under an error: `释义：` and its gloss, hidden characters escaped."""
    meaning = explain(error)
    return None if meaning is None else f"释义：{visible_text(meaning)}"
