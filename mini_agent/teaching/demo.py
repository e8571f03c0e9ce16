"""`python -m mini_agent demo`: a scripted multi-tool conversation on a session file; run it
again to resume.

Each run sends one prompt through `run_agent` with a scripted model and two small tools,
appending every message to --session FILE. A second run loads what the first one wrote
and goes on with the next scripted prompt (three in turn), so the session grows across
runs. For every model request it prints what is on disk beside what was sent: with
--max-chars, the context is trimmed to that budget and the two differ; `smallest_budget()`
is the least every run fits, which its --help says. What it prints is worded in `cli_text`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..agent import run_agent
from ..context import ContextBudgetError, context_units, estimate_context_chars
from ..json_form import JSON
from ..messages import AssistantMessage, Message, ToolCall, UserMessage
from ..model_client import ScriptedClient
from ..session import load_session
from ..tools import Tool, as_object
from ..visible import visible
from . import cli_text as text
from .cli_arguments import positive_int
from .samples import file_reader
from .text import request_line
from .views import shorten
from .watch import DiskWatchingClient, Watched

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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    budget = smallest_budget()
    parser.description = text.demo_description(budget)
    parser.add_argument("--session", required=True, metavar="FILE", help=text.DEMO_SESSION_HELP)
    parser.add_argument(
        "--max-chars", type=positive_int, metavar="N", help=text.demo_budget_help(budget)
    )


def run(args: argparse.Namespace) -> int:
    path = Path(args.session)
    before = load_session(path)
    script = script_for(before)
    client = DiskWatchingClient(ScriptedClient(script.turns), path)
    shown = visible(str(path))  # a path is any bytes but `/` and NUL: ESC included
    print(text.demo_before(shown, len(before)))
    print(text.said_by("user", shorten(script.prompt)))
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
        print("\n".join(text.budget_error(shown, err, args.max_chars)), file=sys.stderr)
        return 1
    _print_requests(client.requests, args.max_chars)
    print(text.said_by("assistant", shorten(result.final.content)))
    after = result.messages  # what run_agent holds is what it wrote: no need to read it back
    print(text.demo_after(shown, len(after), estimate_context_chars(after)))
    return 0


def _print_requests(requests: Sequence[Watched], budget: int | None) -> None:
    for number, request in enumerate(requests, start=1):
        print(request_line(number, request.disk, request.sent, budget))
