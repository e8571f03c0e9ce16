"""talk to a live OpenAI-compatible model: the chapter's loop, assembled by hand

The chapter leaves the assembly for later ("装配是下一章的事"): `run_agent` resumes and trims
only when it is given `session_path` and `context_max_chars`. This command passes both, reads
one prompt per line from stdin, streams the model's text to stdout, and reports on stderr,
per model request, how many messages are on disk and how many were sent.

A failed request leaves its prompt on disk, unanswered. Run the same command again to resume:
when the first prompt read equals the unanswered one, it is answered, not recorded twice.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TextIO

from ..agent import (
    AgentTurnLimitError,
    run_agent,
)
from ..cli_arguments import positive_float, positive_int
from ..context import ContextBudgetError
from ..json_form import JSON, stringify
from ..messages import AssistantMessage, Message, UserMessage
from ..model_client import StreamEvent, TextDelta
from ..session import load_session
from ..teaching.text import ENGLISH, request_line
from ..tools import Tool, as_object
from ..visible import visible, visible_line, visible_text
from .openai_client import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_DEADLINE,
    DEFAULT_TIMEOUT,
    ModelClientError,
    OpenAICompatibleClient,
    check_base_url,
)

EXIT_USAGE = 2  # as argparse exits on a usage error
OnRequest = Callable[[Sequence[Message], Sequence[Message]], None]


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


def _base_url(text: str) -> str:
    try:
        check_base_url(text)
    except ValueError as err:  # its message never quotes the URL's credentials
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def _named(what: str, check: Callable[[str], bool]) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if not check(text):
            raise argparse.ArgumentTypeError(f"not {what}: {visible_line(text, 60)!r}")
        return text

    return parse


_path = _named("a file path", lambda text: text != "" and "\0" not in text)
_model = _named("a model name", lambda text: text.strip() != "" and text.isprintable())
_variable = _named(
    "an environment variable name",
    lambda text: text != "" and "=" not in text and "\0" not in text,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `chat` subcommand's options. Every usage error is argparse's: exit 2, nothing
    read from stdin and nothing written."""
    parser.add_argument(
        "--session",
        required=True,
        type=lambda text: Path(_path(text)),
        help="JSONL session file: loaded, then appended",
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
        type=_base_url,
        help="OpenAI-compatible API root, e.g. http://127.0.0.1:8080/v1 (llama.cpp), "
        "http://127.0.0.1:11434/v1 (Ollama), http://127.0.0.1:8000/v1 (vLLM)",
    )
    parser.add_argument("--model", required=True, type=_model, help="model name the server knows")
    parser.add_argument(
        "--api-key-env",
        type=_variable,
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
        help="give up when the server sends no reply data for this long; keep-alive "
        "comments do not count (default: %(default)s)",
    )
    parser.add_argument(
        "--deadline",
        type=positive_float,
        default=DEFAULT_DEADLINE,
        metavar="SECONDS",
        help="give up on a model request that takes longer than this in all (default: %(default)s)",
    )
    parser.add_argument(
        "--fsync",
        action="store_true",
        help="sync every record to the disk before going on: it then survives a power cut "
        "or a crash of the machine, at a cost in speed",
    )


class _Echo:
    """Passes a client's events on, writing text to `out` as it streams in, and a note of
    each tool call to `notes` (redacted as the client's errors are)."""

    def __init__(self, inner: OpenAICompatibleClient, out: TextIO, notes: TextIO) -> None:
        self.inner, self.out, self.notes = inner, out, notes

    def stream(self, messages: Sequence[Message], tools: Sequence[Tool]) -> Iterator[StreamEvent]:
        printed = False
        try:
            for event in self.inner.stream(messages, tools):
                if isinstance(event, TextDelta):
                    self.out.write(visible_text(event.text))  # the session keeps it as sent
                    self.out.flush()
                    printed = True
                else:
                    call = event.call
                    said = self.inner.redact(f"{call.name} {stringify(call.input)}")
                    shown = visible_line(said, 200)
                    self.notes.write(f"[tool call] {shown}\n")
                yield event
        finally:
            if printed:
                self.out.write("\n")
                self.out.flush()


def unanswered_prompt(messages: Sequence[Message]) -> str | None:
    """The prompt a failed run left without its final answer: the last user message, when
    only its own tool units (or nothing) follow it; `None` when the last turn is answered."""
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            return message.content
        if isinstance(message, AssistantMessage) and not message.tool_calls:
            return None
    return None


def run(args: argparse.Namespace) -> int:
    """Chat until stdin ends; 0 when every prompt got its answer, 1 at the first failure,
    2 for a usage error (before anything is read or written)."""
    out, notes = sys.stdout, sys.stderr
    try:
        live = OpenAICompatibleClient(
            args.base_url,
            args.model,
            api_key_env=args.api_key_env,
            timeout=args.timeout,
            deadline=args.deadline,
        )
    except ValueError as err:  # a caller that did not parse with `add_arguments`
        notes.write(f"error: --base-url: {err}\n")
        return EXIT_USAGE
    except ModuleNotFoundError as err:
        notes.write(f"error: {err}\n")
        return 1
    with live:
        # A bad file: `main` reports FILE:LINE and the bad line.
        on_disk = load_session(args.session)
        notes.write(f"session {visible(str(args.session))}: {len(on_disk)} messages on disk\n")
        return _chat(args, live, out, notes, unanswered_prompt(on_disk))


def _chat(
    args: argparse.Namespace,
    live: OpenAICompatibleClient,
    out: TextIO,
    notes: TextIO,
    unanswered: str | None,
) -> int:
    session: Path = args.session
    budget: int | None = args.max_chars
    tools = DEMO_TOOLS if args.demo_tools else ()
    requests = 0

    def summarise(messages: Sequence[Message], context: Sequence[Message]) -> None:
        nonlocal requests
        requests += 1
        notes.write(request_line(requests, messages, context, budget, ENGLISH) + "\n")
        notes.flush()

    client = _Echo(live, out, notes)
    prompts = 0
    try:
        for line in sys.stdin:
            prompt = line.rstrip("\r\n")
            if not prompt.strip():
                continue
            prompts += 1
            rerun = prompts == 1 and prompt == unanswered  # answer it, do not repeat it
            if rerun:
                notes.write("the session ends with this prompt, unanswered: answering it\n")
            run_agent(
                None if rerun else prompt,  # None: the prompt is on disk already
                client=client,
                tools=tools,
                session_path=session,
                context_max_chars=budget,
                on_request=summarise,
                fsync=args.fsync,
            )
    except ModelClientError as err:
        notes.write(f"error: {err}\nnothing of the failed reply was recorded; ")
        notes.write(f"its prompt is on disk, unanswered\n{_resume(session, prompts)}")
        return 1
    except AgentTurnLimitError as err:
        notes.write(f"error: {err}\nits tool units are on disk, its final answer is not\n")
        notes.write(_resume(session, prompts))
        return 1
    except ContextBudgetError as err:
        notes.write(f"error: {err}\nthe prompt is on disk, unanswered\n")
        notes.write(_resume(session, prompts, " with a larger --max-chars"))
        return 1
    except UnicodeDecodeError as err:
        notes.write(f"error: stdin is not UTF-8 text ({err.reason}); that line was not sent\n")
        return 1
    except KeyboardInterrupt:
        notes.write(f"interrupted\n{_resume(session, prompts) if prompts else ''}")
        return 130
    return 0


def _resume(session: Path, prompts: int, change: str = "") -> str:
    """How to go on after prompt number `prompts` of this run failed: send it again first."""
    again = "run the same command again" if prompts == 1 else f"send prompt {prompts} again first"
    return (
        f"to resume, {again}{change}: a first prompt equal to the unanswered one is "
        f"answered from {visible(str(session))}, not recorded twice\n"
    )
