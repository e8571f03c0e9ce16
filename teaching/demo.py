"""`python -m teaching.demo`: a scripted multi-tool conversation on a session file; run it
again to resume.

Each run sends one prompt through `run_agent` with a scripted model and two small tools,
appending every message to --session FILE. A second run loads what the first one wrote
and goes on with the next scripted prompt (three in turn), so the session grows across
runs. For every model request it prints what is on disk beside what was sent: with
--max-chars, the context is trimmed to that budget and the two differ; `smallest_budget()`
is the least every run fits, which its --help says. Its own words are here; the command
line's shared ones (a budget error, its 释义) are `mini_agent.cli_text`'s.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from mini_agent import cli, cli_text, glosses
from mini_agent.agent import run_agent
from mini_agent.cli_text import positive_int
from mini_agent.context import ContextBudgetError, context_units, estimate_context_chars
from mini_agent.json_form import JSON
from mini_agent.listing import WORDS
from mini_agent.model_client import ScriptedClient
from mini_agent.session import AssistantMessage, Message, ToolCall, UserMessage, load_session
from mini_agent.tools import Tool, as_object
from mini_agent.visible import visible

from .samples import file_reader
from .text import request_line
from .views import shorten
from .watch import DiskWatchingClient, Watched

# --- what the demo says --------------------------------------------------------------------------------------


def description(budget: int) -> str:
    return (
        "每次运行通过 run_agent 发一条提问：模型是脚本化的，有两个小工具（read、\n"
        "grep），每条消息都追加到 --session FILE。再运行一次，就读回上次写下的\n"
        "内容，接着发脚本里的下一条提问（三条轮流），会话跨运行增长。每次请求\n"
        "模型，都输出磁盘上有什么、发出了什么；加了 --max-chars，上下文先裁剪\n"
        "到这个预算，两者就不同了。\n"
        f"本演示不报错的最小预算：--max-chars {budget}（每次请求最新的一致单元都装得下）。"
    )


SESSION_HELP: Final = "会话文件（JSONL）：先加载，再追加"


def budget_help(budget: int) -> str:
    return f"每次请求都裁剪到这个预算（默认：全部发出）；\n本演示不报错的最小预算是 {budget}"


def before_run(path: str, count: int) -> str:
    return f"{path}: 这次运行前磁盘上有 {count} 条消息"


def after_run(path: str, count: int, chars: int) -> str:
    return f"{path}: 磁盘上现在有 {WORDS.messages_chars(count, chars)}"


FILES = {
    "plan.txt": "先加载会话，再把上下文裁剪到预算以内",
    "notes.txt": "预算：只保留整个单元；磁盘上的会话始终完整",
}


def _grep(value: JSON) -> str:
    arguments = as_object(value)  # 模型给的输入是不可信的 JSON：先收窄成对象
    pattern = arguments.get("pattern") if arguments is not None else None
    if not isinstance(pattern, str):
        raise ValueError("grep 需要 {pattern: 字符串}")
    hits = [f"{name}: {text}" for name, text in FILES.items() if pattern in text]
    return "\n".join(hits) or "没有匹配"


TOOLS = (
    Tool("read", "读演示里的一个文件", file_reader(FILES)),
    Tool("grep", "找出内容里含有某段文字的演示文件", _grep),
)


@dataclass(frozen=True)
class Script:
    """One run: the user's prompt and the model's scripted replies, in order."""

    prompt: str
    turns: tuple[AssistantMessage, ...]


SCRIPTS = (
    Script(
        "读一下 plan.txt 和 notes.txt",
        (
            AssistantMessage(
                "两个都读",
                (
                    ToolCall("read-1", "read", {"path": "plan.txt"}),
                    ToolCall("read-2", "read", {"path": "notes.txt"}),
                ),
            ),
            AssistantMessage("plan.txt 说要裁剪；notes.txt 说只保留整个单元"),
        ),
    ),
    Script(
        "哪个文件提到了预算？",
        (
            AssistantMessage("搜一下", (ToolCall("grep-1", "grep", {"pattern": "预算"}),)),
            AssistantMessage("两个都提到了：plan.txt 和 notes.txt"),
        ),
    ),
    Script(
        "把摘要存到 summary.txt",
        (
            AssistantMessage(
                "写文件",
                (ToolCall("write-1", "write", {"path": "summary.txt", "text": "裁剪"}),),
            ),
            AssistantMessage("这里没有写文件的工具；摘要就在这条回答里"),
        ),
    ),
)


def script_for(history: Sequence[Message]) -> Script:
    """The script of the next run: the runs so far are the user prompts on disk."""
    runs = sum(isinstance(message, UserMessage) for message in history)
    return SCRIPTS[runs % len(SCRIPTS)]


def smallest_budget() -> int:
    """The smallest --max-chars that every run of the demo fits: the largest newest unit of
    any of its requests. That unit (a prompt, or an assistant's calls with their results) is
    sent whole whatever the history before it, so the scripts alone decide it."""
    needed = 0
    for script in SCRIPTS:
        client = ScriptedClient(script.turns)
        run_agent(script.prompt, client=client, tools=TOOLS)  # in memory: no file
        for request in client.requests:
            needed = max(needed, estimate_context_chars(context_units(request)[-1]))
    return needed


def session_file(value: str) -> Path:
    """--session's argument: an empty one names no file (`Path("")` would be the folder `.`)."""
    if value == "":
        raise argparse.ArgumentTypeError(glosses.EMPTY_PATH)
    return Path(value)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    budget = smallest_budget()
    parser.description = description(budget)
    parser.add_argument(
        "--session", required=True, type=session_file, metavar="FILE", help=SESSION_HELP
    )
    parser.add_argument("--max-chars", type=positive_int, metavar="N", help=budget_help(budget))


def run(args: argparse.Namespace) -> int:
    path = args.session
    before = load_session(path)
    script = script_for(before)
    client = DiskWatchingClient(ScriptedClient(script.turns), path)
    shown = visible(str(path))  # a path is any bytes but `/` and NUL: ESC included
    print(before_run(shown, len(before)))
    print("user: " + shorten(script.prompt))
    try:
        result = run_agent(
            script.prompt,
            client=client,
            tools=TOOLS,
            session_path=path,
            context_max_chars=args.max_chars,
        )
    except ContextBudgetError as err:
        _print_requests(client.requests, args.max_chars)
        print("\n".join(cli_text.budget_error(shown, err, args.max_chars)), file=sys.stderr)
        return 1
    _print_requests(client.requests, args.max_chars)
    print("assistant: " + shorten(result.final.content))
    after = result.messages  # what run_agent holds is what it wrote: no need to read it back
    print(after_run(shown, len(after), estimate_context_chars(after)))
    return 0


def _print_requests(requests: Sequence[Watched], budget: int | None) -> None:
    for number, request in enumerate(requests, start=1):
        print(request_line(number, request.disk, request.sent, budget))


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m teaching.demo`: the demo with the command line's Chinese parser and its
    handling of a damaged session, a budget error or an OS error."""
    parser = cli.CommandParser(prog="python -m teaching.demo", epilog=cli_text.EXIT_CODES)
    add_arguments(parser)
    parser.set_defaults(run=run, prog="python -m mini_agent")  # `repair` is mini_agent's
    return cli.main(argv, parser)


if __name__ == "__main__":
    cli.program(main)
