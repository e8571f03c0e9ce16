"""run a scripted multi-tool conversation on a session file; run it again to resume

Each run sends one prompt through `run_agent` with a scripted model and two small tools,
appending every message to --session FILE. A second run loads what the first one wrote
and goes on with the next scripted prompt (three in turn), so the session grows across
runs. For every model request it prints what is on disk beside what was sent: with
--max-chars, the context is trimmed to that budget and the two differ.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..agent import run_agent
from ..cli_arguments import positive_int
from ..context import ContextBudgetError, estimate_context_chars
from ..json_form import JSON
from ..messages import AssistantMessage, Message, ToolCall, UserMessage
from ..model_client import ScriptedClient
from ..session import load_session
from ..tools import Tool, as_object
from ..visible import visible
from .samples import file_reader
from .text import ENGLISH, request_line
from .views import shorten
from .watch import DiskWatchingClient, Watched

FILES = {
    "plan.txt": "load the session, then trim the context to the budget",
    "notes.txt": "budget: whole units only; the session on disk stays complete",
}


def _grep(value: JSON) -> str:
    arguments = as_object(value)
    pattern = arguments.get("pattern") if arguments is not None else None
    if not isinstance(pattern, str):
        raise ValueError("grep needs {pattern: string}")
    hits = [f"{name}: {text}" for name, text in FILES.items() if pattern in text]
    return "\n".join(hits) or "no match"


TOOLS = (
    Tool("read", "read one of the demo's files", file_reader(FILES)),
    Tool("grep", "find the demo files whose text holds a pattern", _grep),
)


@dataclass(frozen=True)
class Script:
    """One run: the user's prompt and the model's scripted replies, in order."""

    prompt: str
    turns: tuple[AssistantMessage, ...]


SCRIPTS = (
    Script(
        "read plan.txt and notes.txt",
        (
            AssistantMessage(
                "reading both",
                (
                    ToolCall("read-1", "read", {"path": "plan.txt"}),
                    ToolCall("read-2", "read", {"path": "notes.txt"}),
                ),
            ),
            AssistantMessage("plan.txt says to trim; notes.txt says whole units only"),
        ),
    ),
    Script(
        "which file mentions the budget?",
        (
            AssistantMessage("searching", (ToolCall("grep-1", "grep", {"pattern": "budget"}),)),
            AssistantMessage("both do: plan.txt and notes.txt"),
        ),
    ),
    Script(
        "save a summary to summary.txt",
        (
            AssistantMessage(
                "writing",
                (ToolCall("write-1", "write", {"path": "summary.txt", "text": "trim"}),),
            ),
            AssistantMessage("I have no write tool here; the summary is in this answer"),
        ),
    ),
)


def script_for(history: Sequence[Message]) -> Script:
    """The script of the next run: the runs so far are the user prompts on disk."""
    runs = sum(isinstance(message, UserMessage) for message in history)
    return SCRIPTS[runs % len(SCRIPTS)]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", required=True, metavar="FILE", help="the session file")
    parser.add_argument(
        "--max-chars",
        type=positive_int,
        metavar="N",
        help="trim every request to this budget (default: send everything)",
    )


def run(args: argparse.Namespace) -> int:
    path = Path(args.session)
    before = load_session(path)
    script = script_for(before)
    client = DiskWatchingClient(ScriptedClient(script.turns), path)
    shown = visible(str(path))  # a path is any bytes but `/` and NUL: ESC included
    print(f"{shown}: {len(before)} messages on disk before this run")
    print(f"user: {shorten(script.prompt)}")
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
        print(f"{shown}: {visible(str(err))} (budget {args.max_chars} chars)", file=sys.stderr)
        return 1
    _print_requests(client.requests, args.max_chars)
    print(f"assistant: {shorten(result.final.content)}")
    after = result.messages  # what run_agent holds is what it wrote: no need to read it back
    print(f"{shown}: {len(after)} messages on disk, {estimate_context_chars(after)} chars")
    return 0


def _print_requests(requests: Sequence[Watched], budget: int | None) -> None:
    for number, request in enumerate(requests, start=1):
        print(request_line(number, request.disk, request.sent, budget, ENGLISH))
