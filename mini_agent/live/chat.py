"""`python -m mini_agent chat`: talk to a live OpenAI-compatible model, the chapter's loop
assembled by hand.

The chapter leaves the assembly for later ("装配是下一章的事"): `run_agent` resumes and trims
only when it is given `session_path` and `context_max_chars`. This command passes both, reads
one prompt per line from stdin, streams the model's text to stdout, and reports on stderr,
per model request, how many messages are on disk and how many were sent.

A failed request leaves its prompt on disk, unanswered. Run the same command again to resume:
when the first prompt read equals the unanswered one, it is answered, not recorded twice.
What it prints is worded in `teaching.cli_text`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TextIO

from .. import cli_text as text
from ..agent import (
    AgentTurnLimitError,
    run_agent,
)
from ..cli_arguments import positive_float, positive_int
from ..context import ContextBudgetError
from ..json_form import JSON, stringify
from ..listing import request_line
from ..messages import AssistantMessage, Message, UserMessage
from ..model_client import StreamEvent, TextDelta
from ..session import load_session
from ..tools import Tool, as_object
from ..visible import visible, visible_line, visible_text
from .openai_client import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_DEADLINE,
    DEFAULT_TIMEOUT,
    ModelClientError,
    ModelHTTPError,
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


def _base_url(url: str) -> str:
    try:
        check_base_url(url)
    except ValueError as err:  # its message never quotes the URL's credentials
        raise argparse.ArgumentTypeError(text.bad_base_url(str(err))) from None
    return url


def _named(what: str, check: Callable[[str], bool]) -> Callable[[str], str]:
    def parse(value: str) -> str:
        if not check(value):
            raise argparse.ArgumentTypeError(text.not_a(what, repr(visible_line(value, 60))))
        return value

    return parse


_path = _named(text.FILE_PATH, lambda value: value != "" and "\0" not in value)
_model = _named(text.MODEL_NAME, lambda value: value.strip() != "" and value.isprintable())
_variable = _named(
    text.VARIABLE_NAME,
    lambda value: value != "" and "=" not in value and "\0" not in value,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `chat` subcommand's options (and its description). Every usage error is
    argparse's: exit 2, nothing read from stdin and nothing written."""
    said = text.CHAT_HELP
    parser.description = text.CHAT_DESCRIPTION
    parser.add_argument(
        "--session",
        required=True,
        type=lambda value: Path(_path(value)),
        metavar="FILE",
        help=said["--session"],
    )
    parser.add_argument(
        "--max-chars", type=positive_int, default=None, metavar="N", help=said["--max-chars"]
    )
    parser.add_argument(
        "--base-url", required=True, type=_base_url, metavar="URL", help=said["--base-url"]
    )
    parser.add_argument("--model", required=True, type=_model, metavar="NAME", help=said["--model"])
    parser.add_argument(
        "--api-key-env",
        type=_variable,
        default=DEFAULT_API_KEY_ENV,
        metavar="NAME",
        help=said["--api-key-env"],
    )
    parser.add_argument("--demo-tools", action="store_true", help=said["--demo-tools"])
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=said["--timeout"],
    )
    parser.add_argument(
        "--deadline",
        type=positive_float,
        default=DEFAULT_DEADLINE,
        metavar="SECONDS",
        help=said["--deadline"],
    )
    parser.add_argument("--fsync", action="store_true", help=said["--fsync"])


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
                    self.notes.write(text.chat_tool_call(shown) + "\n")
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
        notes.write(text.chat_error(text.CHAT_BAD_BASE_URL, str(err)) + "\n")
        return EXIT_USAGE
    except ModuleNotFoundError as err:
        notes.write(text.chat_error(text.CHAT_MISSING_EXTRA, str(err)) + "\n")
        return 1
    with live:
        # A bad file: `main` reports FILE:LINE and the bad line.
        on_disk = load_session(args.session)
        notes.write(text.chat_loaded(visible(str(args.session)), len(on_disk)) + "\n")
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
        notes.write(request_line(requests, messages, context, budget) + "\n")
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
                notes.write(text.CHAT_ANSWERING + "\n")
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
        lead = _model_error_lead(err, args.api_key_env)
        _tell(notes, [text.chat_error(lead, str(err)), text.CHAT_REPLY_LOST], session, prompts)
        return 1
    except AgentTurnLimitError as err:
        said = [text.chat_error(text.CHAT_TURN_LIMIT, str(err)), *text.gloss_lines(err)]
        _tell(notes, [*said, text.CHAT_TOOLS_KEPT], session, prompts)
        return 1
    except ContextBudgetError as err:
        said = text.budget_error(visible(str(session)), err, budget)
        _tell(notes, [*said, text.CHAT_PROMPT_KEPT], session, prompts, text.CHAT_LARGER_BUDGET)
        return 1
    except UnicodeDecodeError as err:
        notes.write(text.chat_not_utf8(err.reason) + "\n")
        return 1
    except KeyboardInterrupt:
        _tell(notes, [text.CHAT_INTERRUPTED], session, prompts if prompts else None)
        return 130
    return 0


def _tell(
    notes: TextIO, lines: Sequence[str], session: Path, prompts: int | None, change: str = ""
) -> None:
    """What failed, then how to go on after prompt number `prompts` of this run (none when no
    prompt was read): send it again first."""
    if prompts is not None:
        lines = [*lines, text.chat_resume(visible(str(session)), prompts, change)]
    notes.write("".join(line + "\n" for line in lines))


def _model_error_lead(err: ModelClientError, key_variable: str) -> str:
    """The Chinese lead-in of a model request's failure: its kind (the most specific one
    `cli_text` names), or the key's, for an HTTP 401 or 403."""
    if isinstance(err, ModelHTTPError) and err.status in (401, 403):
        return text.model_key_refused(key_variable)
    kinds = (text.MODEL_ERRORS.get(kind.__name__) for kind in type(err).__mro__)
    return next(lead for lead in kinds if lead is not None)
