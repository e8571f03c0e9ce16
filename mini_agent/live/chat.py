"""`python -m mini_agent chat`: the assembly the chapter leaves for later ("装配是下一章的事"),
`run_agent` with `session_path` and `context_max_chars`, one prompt a line from stdin."""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from .. import cli_text as text
from ..agent import AgentTurnLimitError, run_agent
from ..cli_text import positive_float, positive_int
from ..context import ContextBudgetError
from ..json_form import JSON, stringify
from ..listing import request_line
from ..model_client import StreamEvent, TextDelta
from ..session import AssistantMessage, Message, UserMessage, load_session
from ..tools import Tool, as_object
from ..visible import visible, visible_line, visible_text
from . import openai_client as live


def _count_chars(value: JSON) -> str:
    said = (as_object(value) or {}).get("text")  # untrusted model JSON: narrow, then read
    if not isinstance(said, str):
        raise ValueError("count_chars needs {text: string}")
    return str(len(said))


DEMO_TOOLS = (
    Tool(
        "count_chars",
        "Count the characters (Unicode code points) of a text.",
        _count_chars,
        {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    ),
)


def _checked(check: Callable[[str], object], what: str = "") -> Callable[[str], str]:
    """An argparse type: `value` if `check(value)` is true, else a usage error (exit 2)."""

    def parse(value: str) -> str:
        try:
            if check(value):
                return value
            said = text.not_a(what, repr(visible_line(value, 60)))
        except ValueError as err:  # check_base_url's: it never quotes the URL's credentials
            said = text.bad_base_url(str(err))
        raise argparse.ArgumentTypeError(said)

    return parse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`chat`'s options: every usage error is argparse's (exit 2, nothing read or written)."""
    parser.description = text.CHAT_DESCRIPTION
    path = _checked(lambda value: value != "" and "\0" not in value, text.FILE_PATH)
    model = _checked(lambda value: value.strip() != "" and value.isprintable(), text.MODEL_NAME)
    variable = _checked(lambda v: v != "" and "=" not in v and "\0" not in v, text.VARIABLE_NAME)
    options: list[tuple[str, Callable[[str], object] | None, object, str]] = [
        ("--session", lambda value: Path(path(value)), None, "FILE"),
        ("--max-chars", positive_int, None, "N"),
        ("--base-url", _checked(live.check_base_url), None, "URL"),
        ("--model", model, None, "NAME"),
        ("--api-key-env", variable, live.DEFAULT_API_KEY_ENV, "NAME"),
        ("--demo-tools", None, False, ""),
        ("--timeout", positive_float, live.DEFAULT_TIMEOUT, "SECONDS"),
        ("--deadline", positive_float, live.DEFAULT_DEADLINE, "SECONDS"),
        ("--fsync", None, False, ""),
    ]
    for flag, kind, default, metavar in options:
        said = text.CHAT_HELP[flag]
        if kind is None:
            parser.add_argument(flag, action="store_true", help=said)
        else:
            required = flag in ("--session", "--base-url", "--model")
            parser.add_argument(
                flag, type=kind, default=default, required=required, metavar=metavar, help=said
            )


class _Echo(live.OpenAICompatibleClient):
    """The live client, streaming text to stdout and a (redacted) note of each call to stderr."""

    def stream(self, messages: Sequence[Message], tools: Sequence[Tool]) -> Iterator[StreamEvent]:
        printed = False
        try:
            for event in super().stream(messages, tools):
                if isinstance(event, TextDelta):
                    sys.stdout.write(visible_text(event.text))  # the session keeps it as sent
                    sys.stdout.flush()
                    printed = True
                else:
                    said = self.redact(f"{event.call.name} {stringify(event.call.input)}")
                    print(text.chat_tool_call(visible_line(said, 200)), file=sys.stderr)
                yield event
        finally:
            if printed:
                sys.stdout.write("\n")
                sys.stdout.flush()


def unanswered_prompt(messages: Sequence[Message]) -> str | None:
    """The last prompt, when only its own tool units follow it: a failed run left it unanswered."""
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            return message.content
        if isinstance(message, AssistantMessage) and not message.tool_calls:
            return None
    return None


def run(args: argparse.Namespace) -> int:
    """Chat until stdin ends: 0, or 1 at the first failure, 130 at Ctrl-C, 2 for a usage error."""
    notes, session, budget = sys.stderr, args.session, args.max_chars
    try:
        options = {name: getattr(args, name) for name in ("api_key_env", "timeout", "deadline")}
        client = _Echo(args.base_url, args.model, **options)
    except ValueError as err:  # a caller that did not parse with `add_arguments`
        print(text.chat_error(text.CHAT_BAD_BASE_URL, str(err)), file=notes)
        return 2
    except ModuleNotFoundError as err:
        print(text.chat_error(text.CHAT_MISSING_EXTRA, str(err)), file=notes)
        return 1
    requests, prompts, code, change = itertools.count(1), 0, 1, ""
    with client:
        on_disk = load_session(session)  # a bad file: `main` reports FILE:LINE and the bad line
        print(text.chat_loaded(visible(str(session)), len(on_disk)), file=notes)
        unanswered = unanswered_prompt(on_disk)
        try:
            for prompt in (line.rstrip("\r\n") for line in sys.stdin):
                if not prompt.strip():
                    continue
                prompts += 1
                rerun = prompts == 1 and prompt == unanswered  # answer it, do not repeat it
                if rerun:
                    print(text.CHAT_ANSWERING, file=notes)
                run_agent(
                    None if rerun else prompt,  # None: the prompt is on disk already
                    client=client,
                    tools=DEMO_TOOLS if args.demo_tools else (),
                    session_path=session,
                    context_max_chars=budget,
                    on_request=lambda messages, context: print(
                        request_line(next(requests), messages, context, budget), file=notes
                    ),
                    fsync=args.fsync,
                )
            return 0
        except live.ModelClientError as err:
            if isinstance(err, live.ModelHTTPError) and err.status in (401, 403):
                lead = text.model_key_refused(args.api_key_env)
            else:  # the most specific kind `cli_text` names
                kinds = (text.MODEL_ERRORS.get(kind.__name__) for kind in type(err).__mro__)
                lead = next(lead for lead in kinds if lead is not None)
            said = [text.chat_error(lead, str(err)), text.CHAT_REPLY_LOST]
        except AgentTurnLimitError as err:
            said = [text.chat_error(text.CHAT_TURN_LIMIT, str(err)), *text.gloss_lines(err)]
            said.append(text.CHAT_TOOLS_KEPT)
        except ContextBudgetError as err:
            said = [*text.budget_error(visible(str(session)), err, budget), text.CHAT_PROMPT_KEPT]
            change = text.CHAT_LARGER_BUDGET
        except UnicodeDecodeError as err:
            said, prompts = [text.chat_not_utf8(err.reason)], 0
        except KeyboardInterrupt:
            said, code = [text.CHAT_INTERRUPTED], 130
    if prompts:  # how to go on: send prompt number `prompts` of this run again first
        said.append(text.chat_resume(visible(str(session)), prompts, change))
    print(*said, sep="\n", file=notes)
    return code
