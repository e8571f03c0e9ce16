"""talk to a live OpenAI-compatible model: the chapter's loop, assembled by hand

The chapter leaves the assembly for later ("装配是下一章的事"): `run_agent` resumes and trims
only when it is given `session_path` and `context_max_chars`. This command passes both, reads
one prompt per line from stdin, streams the model's text to stdout, and reports on stderr,
per model request, how many messages are on disk and how many were sent.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

from ..agent import AgentTurnLimitError, run_agent
from ..arguments import positive_float, positive_int
from ..context import ContextBudgetError
from ..json_form import JSON, stringify
from ..messages import Message
from ..model_client import ModelClient, StreamEvent, TextDelta
from ..session import load_session
from ..teaching.text import ENGLISH, request_line
from ..tools import Tool, as_object
from .openai_client import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_TIMEOUT,
    ModelClientError,
    OpenAICompatibleClient,
)


def _count_chars(value: JSON) -> str:
    args = as_object(value)  # untrusted model JSON: narrow first, then read the field
    text = args.get("text") if args is not None else None
    if not isinstance(text, str):
        raise ValueError("count_chars needs {text: string}")
    return str(len(text))


DEMO_TOOLS = (
    Tool(
        "count_chars",
        "Count the characters (Unicode code points) of a text.",
        _count_chars,
        {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    ),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `chat` subcommand's options."""
    parser.add_argument(
        "--session", required=True, type=Path, help="JSONL session file: loaded, then appended"
    )
    parser.add_argument(
        "--max-chars",
        type=positive_int,
        default=None,
        help="context budget in characters for each request (default: send everything)",
    )
    parser.add_argument(
        "--base-url",
        required=True,
        help="OpenAI-compatible API root, e.g. http://127.0.0.1:8080/v1 (llama.cpp), "
        "http://127.0.0.1:11434/v1 (Ollama), http://127.0.0.1:8000/v1 (vLLM)",
    )
    parser.add_argument("--model", required=True, help="model name the server knows")
    parser.add_argument(
        "--api-key-env",
        default=DEFAULT_API_KEY_ENV,
        metavar="NAME",
        help="environment variable holding the API key; unset: no key is sent "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--demo-tools",
        action="store_true",
        help="offer the model a harmless count_chars tool, so tool units appear in the session",
    )
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help="give up when the server sends nothing for this long (default: %(default)s)",
    )


class _Echo:
    """Passes a client's events on, writing text to `out` as it streams in."""

    def __init__(self, inner: ModelClient, out: TextIO, notes: TextIO) -> None:
        self.inner, self.out, self.notes = inner, out, notes

    def stream(self, messages: Sequence[Message], tools: Sequence[Tool]) -> Iterator[StreamEvent]:
        printed = False
        try:
            for event in self.inner.stream(messages, tools):
                if isinstance(event, TextDelta):
                    self.out.write(_printable(event.text))
                    self.out.flush()
                    printed = True
                else:
                    call = event.call
                    self.notes.write(f"[tool call] {call.name} {stringify(call.input)}\n")
                yield event
        finally:
            if printed:
                self.out.write("\n")
                self.out.flush()


def _printable(text: str) -> str:
    # A lone surrogate (valid in JSON) cannot be written to a UTF-8 terminal.
    return text.encode("utf-8", "replace").decode("utf-8")


def run(args: argparse.Namespace) -> int:
    """Chat until stdin ends; 0 when every prompt got its answer, 1 at the first failure."""
    out, notes = sys.stdout, sys.stderr
    session: Path = args.session
    budget: int | None = args.max_chars
    on_disk = load_session(session)  # a bad file: `main` reports FILE:LINE and the bad line
    notes.write(f"session {session}: {len(on_disk)} messages on disk\n")
    try:
        live = OpenAICompatibleClient(
            args.base_url, args.model, api_key_env=args.api_key_env, timeout=args.timeout
        )
    except ModuleNotFoundError as err:
        notes.write(f"error: {err}\n")
        return 1
    requests = 0

    def summarise(messages: Sequence[Message], context: Sequence[Message]) -> None:
        nonlocal requests
        requests += 1
        notes.write(request_line(requests, messages, context, budget, ENGLISH) + "\n")
        notes.flush()

    with live:
        client = _Echo(live, out, notes)
        for line in sys.stdin:
            prompt = line.rstrip("\r\n")
            if not prompt.strip():
                continue
            try:
                run_agent(
                    prompt,
                    client=client,
                    tools=DEMO_TOOLS if args.demo_tools else (),
                    session_path=session,
                    context_max_chars=budget,
                    on_request=summarise,
                )
            except (ModelClientError, AgentTurnLimitError) as err:
                notes.write(
                    f"error: {err}\nnothing of the failed reply was recorded; "
                    f"run the same command again to resume from {session}\n"
                )
                return 1
            except ContextBudgetError as err:
                notes.write(
                    f"error: {err}\nthe prompt is on disk, unanswered; "
                    f"resume with a larger --max-chars\n"
                )
                return 1
            except KeyboardInterrupt:
                notes.write(f"interrupted; resume from {session}\n")
                return 130
    return 0
