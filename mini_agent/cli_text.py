"""Every word the command line prints, in Chinese (argparse's too); English only in names, JSON,
the chapter's phrases and what the system says. Help is wrapped by hand to 80 columns."""

import argparse
from collections.abc import Callable
from typing import Final, TypeVar

from .context import ContextBudgetError
from .glosses import gloss, gloss_text

# argparse's own words, keyed by the string it hands to gettext (a test checks every key)
ARGPARSE: Final[dict[str, str]] = {
    "usage: ": "用法：",
    "positional arguments": "位置参数",
    "options": "选项",
    "show this help message and exit": "显示这段帮助并退出",
    "%(prog)s: error: %(message)s\n": "%(prog)s: 错误：%(message)s\n",
    "argument %(argument_name)s: %(message)s": "参数 %(argument_name)s: %(message)s",
    "the following arguments are required: %s": "缺少必需的参数：%s",
    "unrecognized arguments: %s": "不认识的参数：%s",
    "invalid choice: %(value)r (choose from %(choices)s)": "没有这个选择：%(value)r（可选：%(choices)s）",
    "invalid %(type)s value: %(value)r": "不是有效的 %(type)s 值：%(value)r",
    "expected one argument": "后面要跟一个值",
    "expected at most one argument": "后面最多跟一个值",
    "expected at least one argument": "后面至少要跟一个值",
    "ignored explicit argument %r": "这个选项不带值，却给了 %r",
    "ambiguous option: %(option)s could match %(matches)s": "选项有歧义：%(option)s 可能是 %(matches)s",
}

PROGRAM_DESCRIPTION: Final = (
    "第 34 章的会话文件（JSONL），在命令行里查看和处理。\n每个命令的用法：COMMAND --help。"
)
EXIT_CODES: Final = """\
退出码：
  0  成功：会话能加载，上下文装得下，修复已完成或无需修复
  1  会话有问题（坏行、拒绝修复）、预算装不下，或者操作系统报错
     （文件不存在、没有权限、是目录……）：stderr 上说明原因，附中文释义
  2  用法错误（不认识的选项、不对的参数）"""
FILE_HELP: Final = "会话文件（JSONL）"


# each subcommand's line in the program's help, and the head of its own `--help`
COMMANDS: Final[dict[str, tuple[str, str]]] = {
    "check": (
        "严格加载每一行；按角色统计消息数",
        "严格加载 FILE，按角色统计消息数。遇到坏行，按编辑器和 CI 认得的格式\n"
        "输出 FILE:LINE: 和本章的错误原话，下面是本包补充的英文细节、中文释义\n"
        "和这一行的摘录（控制字符和格式字符显示成转义）。FILE 不存在时报错\n"
        "（退出码 1）：load_session 把不存在的文件当作空会话，check 要查的是\n"
        "一个真有的文件。",
    ),
    "show": (
        "逐条列出消息（或加 --units：一致单元）",
        "列出 FILE 的每条消息和它的字符数（本章量的 JSON.stringify 长度，不是\n"
        "文件的字节数）；加 --units，则列出 trim_context 整个保留或整个丢弃的\n"
        "一致单元。",
    ),
    "trim": (
        "看一个预算逐单元保留、丢弃了什么",
        "输出 trim_context(messages, N) 会发送什么：保留和丢弃的单元、用了多少\n"
        "字符；或者本章的预算错误（退出码 1），并说明最新的一致单元要多少字符。",
    ),
    "chat": ("对接真实的 OpenAI 兼容模型：本章的循环，手工装配", ""),  # described by `chat`
    "repair": (
        "把写到一半的最后一行剪进备份文件；其他损坏一律拒绝",
        "最后一行是被打断的追加留下的半条记录时（以 `{` 开头、没有换行、写到\n"
        "一半就断了），先把它复制到 FILE.torn（已有就用 FILE.torn.2……）并同步\n"
        "到磁盘，再从 FILE 原地剪掉它并同步。其他损坏一律拒绝（退出码 1，FILE\n"
        "不动）。没有可剪的：退出码 0，FILE 不动。修复失败时 FILE 保持原样，\n"
        "旁边也不留东西；被杀掉的修复留下的，下一次运行会清掉或用上。",
    ),
}
UNITS_HELP: Final = "按一致单元分组列出"
TRIM_BUDGET_HELP: Final = "预算（字符数）"

# A line with blanks, `name = "…{}…".format`: `name(values…)` fills them in order.
# argument types (`positive_int`, `positive_float`, `chat`'s own)
INTEGER: Final = "整数"
NUMBER: Final = "数"
FILE_PATH: Final = "文件路径"
MODEL_NAME: Final = "模型名"
VARIABLE_NAME: Final = "环境变量名"

not_a = "不是{}：{}".format  # kind, the argument as typed (quoted, escaped)
not_positive = "必须大于 0，这里是 {!r}".format
BAD_BASE_URL: Final = "不是可用的地址"
bad_base_url = f"{BAD_BASE_URL}：{{}}".format  # the live client's reason, in English


check_summary = "{}: {} 条消息，{} 字符；按角色：{}".format  # path, messages, characters, by role
by_role = "{} {} 条".format  # role, messages


def gloss_lines(error: BaseException | str) -> list[str]:
    """`  释义：…` under a shown error (or an error's text); none when `glosses` lacks it."""
    meaning = gloss_text(error) if isinstance(error, str) else gloss(error)
    return [] if meaning is None else [f"  释义：{meaning}"]


def repair_refused(path: str, reason: str) -> str:  # repair's English reason, said in Chinese
    return f"{path}: 拒绝修复，文件原样未动：{gloss_text(reason) or reason}"


torn_hint = "  最后一行不完整（写的时候被打断了？）：`{}` 会把它移进备份文件".format  # the repair


def budget_error(
    where: str, error: ContextBudgetError, budget: int | None, listed: bool = False
) -> list[str]:
    """The chapter's phrase and its 释义 (unless a listing above showed them), and the smallest
    budget that holds the newest unit (or why no budget holds anything)."""
    lines = [] if listed else [f"{where}: {error}", *gloss_lines(error)]
    said = f"预算 {budget} 字符装不下：" if budget is not None else ""
    needed = f"{said}最新的一致单元要 {error.needed} 个字符，--max-chars 至少 {error.needed}"
    if error.needed is None:  # no unit at all
        needed = "会话里没有消息：多大的预算都装不出一个不空的上下文"
    return [*lines, f"{where}: {needed}" if listed else f"  {needed}"]


# path, line, bytes cut, backup, messages loaded
repair_cut = "{}: 已把写到一半的最后一行（第 {} 行，{} 字节）剪进 {}；现在能加载 {} 条消息".format
repair_nothing = "{}: 没有要修复的地方；能加载 {} 条消息".format  # path, messages loaded
OS_ERROR: Final = "操作系统报错"
MISSING_FILE: Final = (
    "  说明：load_session 本身遇到不存在的文件不报错，返回 []（一个空会话：首次启动就是这样）；"
    "命令行拒绝，是因为你点名了一个文件，它应当存在"
)
REFUSED_FILE: Final = "拒绝使用这个文件"
os_error = "{}: {}：{}".format  # program, lead-in, what the system said

# chat (`mini_agent.live.chat`)
CHAT_DESCRIPTION: Final = """\
本章把装配留给了下一章（“装配是下一章的事”）：只有给了 session_path 和
context_max_chars，run_agent 才续接、才裁剪。这个命令两样都传：从标准输入
每行读一条提问，把模型的文字流式输出到标准输出；每次请求模型，都在 stderr
上报告磁盘上有几条消息、发出了几条。

请求失败时，它的提问留在磁盘上，还没有回答。同样的命令再运行一次即可续接：
读到的第一条提问与没回答的那条相同时，回答它，不会记录两次。"""
CHAT_HELP: Final[dict[str, str]] = {
    "--session": "会话文件（JSONL）：先加载，再追加",
    "--max-chars": "每次请求的上下文预算，按字符数（默认：全部发出）",
    "--base-url": "OpenAI 兼容接口的根地址，例如\n"
    "http://127.0.0.1:8080/v1（llama.cpp）、\n"
    "http://127.0.0.1:11434/v1（Ollama）、\n"
    "http://127.0.0.1:8000/v1（vLLM）",
    "--model": "服务端认得的模型名",
    "--api-key-env": "存放 API key 的环境变量；没设置就不发 key\n（默认：%(default)s）",
    "--demo-tools": "给模型一个无害的 count_chars 工具，\n会话里就会出现工具单元",
    "--timeout": "服务端这么久没发来回复数据就放弃；\n保活注释不算（默认：%(default)s）",
    "--deadline": "一次模型请求总共超过这么久就放弃\n（默认：%(default)s）",
    "--fsync": "每条记录都先同步到磁盘再继续：断电或死机后\n它还在，代价是变慢",
}
chat_loaded = "{}: 磁盘上有 {} 条消息".format  # path, count
chat_tool_call = "[工具调用] {}".format
chat_error = "错误：{}：{}".format  # lead-in, what was said
chat_not_utf8 = "错误：标准输入不是 UTF-8 文本（{}）；这一行没有发出".format
# an HTTP 401 or 403: most often the key, in this environment variable
model_key_refused = "模型服务拒绝了请求（看看 ${} 是不是有效的 key）".format
CHAT_ANSWERING: Final = "会话以这条提问结尾，还没有回答：现在回答它"
CHAT_INTERRUPTED: Final = "已中断"

MODEL_ERRORS: Final[dict[str, str]] = {  # by the class name of a `ModelClientError`
    "ModelHTTPError": "模型服务返回了错误",
    "ModelTimeoutError": "模型服务超时",
    "ModelConnectionError": "连不上模型服务",
    "ModelReplyTooLargeError": "模型的回复超出了上限",
    "ModelStreamError": "模型的回复流有问题",
    "ModelClientError": "模型请求失败",
}

CHAT_MISSING_EXTRA: Final = "缺少可选依赖"
CHAT_BAD_BASE_URL: Final = "--base-url 不是可用的地址"
CHAT_TURN_LIMIT: Final = "模型一直在调用工具"
CHAT_REPLY_LOST: Final = "失败的这次回复一点也没有记下；它的提问已在磁盘上，还没有回答"
CHAT_TOOLS_KEPT: Final = "它的工具单元已在磁盘上，最终回答还没有"
CHAT_PROMPT_KEPT: Final = "这条提问已在磁盘上，还没有回答"
CHAT_LARGER_BUDGET: Final = "，并给一个更大的 --max-chars"


def chat_resume(session: str, prompts: int, change: str = "") -> str:
    again = "把同一条命令再运行一次" if prompts == 1 else f"先把第 {prompts} 条提问再发一次"
    return (
        f"要续接，{again}{change}：第一条提问与没回答的那条相同时，"
        f"会从 {session} 里回答它，不会记录两次"
    )


Number = TypeVar("Number", int, float)


def positive(convert: Callable[[str], Number], kind: str) -> Callable[[str], Number]:
    """An argparse type: `convert(value)` when it is a positive `kind`, else a usage error."""

    def parse(value: str) -> Number:
        try:
            number = convert(value)
        except ValueError:
            raise argparse.ArgumentTypeError(not_a(kind, repr(value))) from None
        if not number > 0:  # `not >` also refuses NaN
            raise argparse.ArgumentTypeError(not_positive(value))
        return number

    return parse


positive_int = positive(int, INTEGER)  # a budget: --max-chars
positive_float = positive(float, NUMBER)  # a time: --timeout
