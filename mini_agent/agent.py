"""The agent loop: the only place where the session on disk and the model's context meet.

Chapter 34, section "会话与上下文的责任边界".
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .agent_arguments import check_arguments, check_resumable
from .context import trim_context
from .json_form import js_string
from .messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from .model_client import ModelClient, collect_reply
from .open_calls import INTERRUPTED as INTERRUPTED  # re-exported: the result it records
from .open_calls import closed_for_request, interrupted_results
from .session import PathLike, append_session, load_session
from .store import written_anyway
from .tools import Tool

DEFAULT_MAX_TURNS = 20


class AgentTurnLimitError(RuntimeError):
    """The model kept calling tools past the turn bound."""


@dataclass(frozen=True)
class AgentResult:
    """The final assistant message and every message in memory (loaded ones included)."""

    final: AssistantMessage
    messages: tuple[Message, ...]


def run_tool(
    tools_by_name: dict[str, Tool], call: ToolCall, input_error: str | None = None
) -> ToolMessage:
    """Run one call; an unknown name, an unreadable input (`input_error`, found by the model
    client) or a failing tool becomes an error result, not a crash."""
    tool = tools_by_name.get(call.name)
    if tool is None:
        return ToolMessage(call.id, f"unknown tool: {call.name}", is_error=True)
    if input_error is not None:
        return ToolMessage(call.id, input_error, is_error=True)
    try:
        output = tool.run(copy.deepcopy(call.input))  # its own copy: the recorded call stays
    except Exception as err:  # the model should see the failure and may try again
        return ToolMessage(call.id, f"{type(err).__name__}: {err}", is_error=True)
    if not isinstance(output, str):
        return ToolMessage(
            call.id, f"tool {call.name} returned {type(output).__name__}, not str", is_error=True
        )
    return ToolMessage(call.id, js_string(output))  # a surrogate pair as one character


def run_agent(
    prompt: str | None,
    *,
    client: ModelClient,
    tools: Sequence[Tool] = (),
    session_path: PathLike | None = None,
    context_max_chars: int | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    fsync: bool = False,
    on_request: Callable[[Sequence[Message], Sequence[Message]], None] | None = None,
) -> AgentResult:
    """Run one prompt to a final answer.

    With `session_path`, the session is loaded first and every message is appended to it;
    with `context_max_chars`, each model request gets `trim_context(messages, budget)`.
    `fsync=True` makes each append durable before the run goes on (`append_session`'s fsync).
    `on_request(messages, context)` is called before each model request with every message
    in memory (with a session path: exactly what is on disk) and the context about to be sent.
    A model request that fails raises here and records nothing of its reply. A run stopped
    while tools ran records `INTERRUPTED` for each call left open, then raises; what it could
    not write (or a killed process left open) the next run records before its first request.
    A call left unanswered elsewhere in the history is closed in the request only
    (`closed_for_request`). Beyond the chapter: `prompt=None` records no prompt and answers the
    session as it is on disk (a run whose model request failed left its prompt there,
    unanswered: `chat` resumes so); a session ending in a final answer has nothing to answer.
    """
    check_arguments(prompt, tools, session_path, context_max_chars, max_turns)
    tools_by_name = {tool.name: tool for tool in tools}
    messages: list[Message] = load_session(session_path) if session_path is not None else []
    if prompt is None:
        check_resumable(messages, session_path)

    def record(message: Message) -> None:
        if session_path is not None:  # disk first: a refused write leaves disk == memory
            try:
                append_session(session_path, message, fsync=fsync)
            except BaseException as error:
                if written_anyway(error):  # on disk after all (looked up there)
                    messages.append(message)
                raise
        messages.append(message)

    for result in interrupted_results(messages):  # what an interrupted run left open
        record(result)
    if prompt is not None:
        record(UserMessage(js_string(prompt)))
    for _ in range(max_turns):
        request = closed_for_request(messages)
        context = request if context_max_chars is None else trim_context(request, context_max_chars)
        if on_request is not None:
            on_request(tuple(messages), tuple(context))
        reply = collect_reply(client.stream(list(context), tools))  # the whole reply, or raise
        assistant = reply.message
        record(assistant)
        if not assistant.tool_calls:
            return AgentResult(assistant, tuple(messages))
        try:
            for call, input_error in zip(assistant.tool_calls, reply.input_errors, strict=True):
                record(run_tool(tools_by_name, call, input_error))
        except BaseException:  # Ctrl-C, a refused write: say so on disk now if we can
            with contextlib.suppress(Exception):  # if not, the next run does
                if session_path is not None:  # a second Ctrl-C may have left memory behind disk
                    messages[:] = load_session(session_path)
                for result in interrupted_results(messages):
                    record(result)
            raise
    raise AgentTurnLimitError(f"agent stopped after {max_turns} model turns without a final answer")
