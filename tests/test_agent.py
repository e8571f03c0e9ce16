"""agent.py: run_agent joins the two states; model_client.py and tools.py around it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mini_agent import (
    AssistantMessage,
    ContextBudgetError,
    Message,
    ScriptedClient,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    estimate_context_chars,
    load_session,
    run_agent,
)
from mini_agent.agent import AgentTurnLimitError
from mini_agent.json_form import JSON
from mini_agent.model_client import (
    ScriptExhaustedError,
    StreamEvent,
    TextDelta,
    ToolCallEvent,
    collect,
)
from mini_agent.tools import as_object


def read_tool(value: JSON) -> str:
    args = as_object(value)
    if args is None or not isinstance(args.get("path"), str):
        raise ValueError("read needs {path: string}")
    return f"contents of {args['path']}"


READ = Tool("read", "read a file", read_tool)


def calling(*calls: ToolCall) -> AssistantMessage:
    return AssistantMessage("working", calls)


def test_without_a_session_path_nothing_is_loaded_or_written(tmp_path: Path) -> None:
    client = ScriptedClient([AssistantMessage("hi")])
    result = run_agent("hello", client=client)
    assert result.final == AssistantMessage("hi")
    assert result.messages == (UserMessage("hello"), AssistantMessage("hi"))
    assert client.requests == [[UserMessage("hello")]]
    assert list(tmp_path.iterdir()) == []


def test_tools_are_dispatched_by_name_and_results_recorded(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    client = ScriptedClient(
        [
            calling(ToolCall("1", "read", {"path": "a"}), ToolCall("2", "read", {"path": "b"})),
            AssistantMessage("both read"),
        ]
    )
    result = run_agent("go", client=client, tools=[READ], session_path=session)
    assert load_session(session) == list(result.messages)
    assert result.messages[2:4] == (
        ToolMessage("1", "contents of a"),
        ToolMessage("2", "contents of b"),
    )
    assert client.requests[1] == list(result.messages[:4])


def test_unknown_tool_becomes_an_error_result(tmp_path: Path) -> None:
    client = ScriptedClient(
        [calling(ToolCall("1", "delete_everything", {})), AssistantMessage("ok")]
    )
    result = run_agent("go", client=client, tools=[READ])
    assert result.messages[2] == ToolMessage("1", "unknown tool: delete_everything", is_error=True)


def test_a_raising_tool_becomes_an_error_result() -> None:
    client = ScriptedClient([calling(ToolCall("1", "read", None)), AssistantMessage("ok")])
    result = run_agent("go", client=client, tools=[READ])
    assert result.messages[2] == ToolMessage(
        "1", "ValueError: read needs {path: string}", is_error=True
    )


def test_a_tool_returning_a_non_string_becomes_an_error_result() -> None:
    bad = Tool("count", "count", lambda value: 3)  # type: ignore[arg-type,return-value]
    client = ScriptedClient([calling(ToolCall("1", "count", None)), AssistantMessage("ok")])
    result = run_agent("go", client=client, tools=[bad])
    assert result.messages[2] == ToolMessage("1", "tool count returned int, not str", is_error=True)


def test_the_context_budget_trims_requests_but_not_the_disk(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    question, answer = UserMessage("an old question " * 30), AssistantMessage("an old answer " * 30)
    run_agent(question.content, client=ScriptedClient([answer]), session_path=session)
    client = ScriptedClient(
        [calling(ToolCall("1", "read", {"path": "a"})), AssistantMessage("done")]
    )
    budget = 300
    result = run_agent(
        "new", client=client, tools=[READ], session_path=session, context_max_chars=budget
    )
    assert client.requests[0] == [UserMessage("new")]
    assert all(estimate_context_chars(request) <= budget for request in client.requests)
    assert load_session(session) == list(result.messages)
    assert result.messages[:2] == (question, answer)


def test_budget_1_fails_with_the_chapters_phrase(tmp_path: Path) -> None:
    with pytest.raises(ContextBudgetError, match="smallest consistent message unit"):
        run_agent("hello", client=ScriptedClient([AssistantMessage("x")]), context_max_chars=1)


@pytest.mark.parametrize("budget", [0, -5, True])
def test_an_invalid_budget_fails_before_anything_is_written(tmp_path: Path, budget: int) -> None:
    session = tmp_path / "s.jsonl"
    with pytest.raises((TypeError, ValueError)):
        run_agent("x", client=ScriptedClient([]), session_path=session, context_max_chars=budget)
    assert not session.exists()


def test_the_turn_bound_fails_clearly_and_keeps_what_happened(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    loop = [calling(ToolCall(str(n), "read", {"path": "a"})) for n in range(3)]
    with pytest.raises(AgentTurnLimitError, match="after 3 model turns"):
        run_agent(
            "go", client=ScriptedClient(loop), tools=[READ], session_path=session, max_turns=3
        )
    assert len(load_session(session)) == 1 + 3 * 2


def test_a_scripted_client_that_runs_out_says_so(tmp_path: Path) -> None:
    client = ScriptedClient([calling(ToolCall("1", "read", {"path": "a"}))])
    with pytest.raises(ScriptExhaustedError, match="no reply for request 2: only 1 turn"):
        run_agent("go", client=client, tools=[READ])


def test_requests_are_copies_as_sent() -> None:
    client = ScriptedClient([AssistantMessage("a"), AssistantMessage("b")])
    run_agent("one", client=client)
    first = client.requests[0]
    run_agent("two", client=client)
    assert first == [UserMessage("one")]


def test_duplicate_tool_names_are_refused() -> None:
    with pytest.raises(ValueError, match="tool names must be unique"):
        run_agent("x", client=ScriptedClient([]), tools=[READ, READ])


def test_a_stream_that_fails_records_no_partial_message(tmp_path: Path) -> None:
    class Broken:
        def stream(self, messages: object, tools: object) -> object:
            yield TextDelta("half an ans")
            raise ConnectionError("stream cut")

    session = tmp_path / "s.jsonl"
    with pytest.raises(ConnectionError):
        run_agent("q", client=Broken(), session_path=session)  # type: ignore[arg-type]
    assert load_session(session) == [UserMessage("q")]


def test_collect_assembles_deltas_and_calls() -> None:
    events: list[StreamEvent] = [
        TextDelta("a"),
        ToolCallEvent(ToolCall("1", "t", None)),
        TextDelta("b"),
    ]
    assert collect(events) == AssistantMessage("ab", (ToolCall("1", "t", None),))


def test_scripted_client_repr_is_stable() -> None:
    assert (
        repr(ScriptedClient([AssistantMessage("x")]))
        == "ScriptedClient(1 turns, 0 requests so far)"
    )


def test_as_object_narrows_untrusted_input() -> None:
    assert as_object({"a": 1}) == {"a": 1}
    assert as_object([1]) is None
    assert as_object(None) is None
    assert as_object("x") is None


class _OneReply:
    """A client whose every request gets the same events (no scripted text: events as given)."""

    def __init__(self, *replies: list[StreamEvent]) -> None:
        self.replies = list(replies)

    def stream(self, messages: object, tools: object) -> Iterator[StreamEvent]:
        return iter(self.replies.pop(0))


def test_a_call_with_an_input_error_records_the_error_and_never_runs_the_tool(
    tmp_path: Path,
) -> None:
    ran: list[JSON] = []

    def spy_run(value: JSON) -> str:
        ran.append(value)
        return "ran"

    spy = Tool("read", "read a file", spy_run)
    raw = '{"path": "a'
    bad = ToolCallEvent(ToolCall("1", "read", raw), "invalid JSON arguments for tool read: x")
    client = _OneReply([bad], [TextDelta("sorry")])
    session = tmp_path / "s.jsonl"
    result = run_agent("go", client=client, tools=[spy], session_path=session)
    assert ran == []
    assert result.messages[1:] == (
        AssistantMessage("", (ToolCall("1", "read", raw),)),
        ToolMessage("1", "invalid JSON arguments for tool read: x", is_error=True),
        AssistantMessage("sorry"),
    )
    assert load_session(session) == list(result.messages)


def test_an_unknown_tool_is_reported_before_an_input_error() -> None:
    bad = ToolCallEvent(ToolCall("1", "nope", "{"), "invalid JSON arguments for tool nope: x")
    result = run_agent("go", client=_OneReply([bad], [TextDelta("ok")]), tools=[READ])
    assert result.messages[2] == ToolMessage("1", "unknown tool: nope", is_error=True)


def test_on_request_sees_every_message_and_the_trimmed_context(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    run_agent(
        "old " * 80, client=ScriptedClient([AssistantMessage("old answer")]), session_path=session
    )
    seen: list[tuple[int, list[Message]]] = []
    client = ScriptedClient(
        [calling(ToolCall("1", "read", {"path": "a"})), AssistantMessage("done")]
    )
    run_agent(
        "new",
        client=client,
        tools=[READ],
        session_path=session,
        context_max_chars=300,
        on_request=lambda messages, context: seen.append((len(messages), list(context))),
    )
    assert [count for count, _ in seen] == [3, 5]  # the old prompt is still on disk ...
    assert [context for _, context in seen] == client.requests
    assert [len(request) for request in client.requests] == [2, 4]  # ... but no longer sent


def test_a_tool_made_with_three_arguments_accepts_any_object() -> None:
    assert READ.parameters == {"type": "object"}
    assert hash(READ) == hash(Tool("read", "read a file", read_tool))
