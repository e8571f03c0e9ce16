"""The chapter's own acceptance cases (agent.test.ts and context.test.ts), first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mini_agent import (
    AssistantMessage,
    ContextBudgetError,
    Message,
    ScriptedClient,
    SessionFormatError,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    append_session,
    context_units,
    estimate_context_chars,
    load_session,
    run_agent,
    trim_context,
)
from mini_agent.session import record_line

from .helpers import multi_tool_history, write_lines

SMALLEST = "context budget cannot contain the smallest consistent message unit"


def test_explicit_session_path_appends_and_restores(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    echo = Tool("echo", "echo the input", lambda value: json.dumps(value))
    first = ScriptedClient(
        [
            AssistantMessage("calling", (ToolCall("c1", "echo", {"x": 1}),)),
            AssistantMessage("done"),
        ]
    )
    run_agent("hello", client=first, tools=[echo], session_path=session)
    on_disk = load_session(session)
    assert on_disk == [
        UserMessage("hello"),
        AssistantMessage("calling", (ToolCall("c1", "echo", {"x": 1}),)),
        ToolMessage("c1", '{"x": 1}'),
        AssistantMessage("done"),
    ]

    second = ScriptedClient([AssistantMessage("welcome back")])
    result = run_agent("again", client=second, session_path=session)
    assert second.requests[0] == [*on_disk, UserMessage("again")]
    assert load_session(session) == [
        *on_disk,
        UserMessage("again"),
        AssistantMessage("welcome back"),
    ]
    assert list(result.messages) == load_session(session)


@pytest.mark.parametrize(
    "line",
    [
        '{"role":"nope","content":"x"}',
        '{"role":"assistant","content":"x"}',
        '{"role":"tool","content":"x","isError":false}',
    ],
    ids=["bad role", "assistant without toolCalls", "tool without toolCallId"],
)
def test_rejects_malformed_session_records(tmp_path: Path, line: str) -> None:
    path = write_lines(tmp_path / "s.jsonl", line)
    with pytest.raises(SessionFormatError, match=r"^invalid session record at line 1\b"):
        load_session(path)


def test_valid_user_record_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    append_session(path, UserMessage("x"))
    assert path.read_text(encoding="utf-8") == '{"role":"user","content":"x"}\n'
    assert load_session(path) == [UserMessage("x")]


def test_keeps_a_multi_tool_assistant_unit_with_its_results() -> None:
    history = multi_tool_history()
    unit = history[1:]
    assert trim_context(history, estimate_context_chars(unit)) == unit
    with pytest.raises(ContextBudgetError, match=f"^{SMALLEST}$"):
        trim_context(history, 1)


def test_estimation_counts_json_characters_plus_separators() -> None:
    messages: list[Message] = [UserMessage("hi"), AssistantMessage("ok")]
    expected = sum(len(record_line(m)) + 1 for m in messages)
    assert estimate_context_chars(messages) == expected
    assert estimate_context_chars([UserMessage("hi")]) == len('{"role":"user","content":"hi"}') + 1


def test_unit_trimming_keeps_newest_units_only() -> None:
    history: list[Message] = [UserMessage("old question " * 5), *multi_tool_history()[1:]]
    newest = history[1:]
    assert context_units(history) == [[history[0]], newest]
    assert trim_context(history, estimate_context_chars(history) - 1) == newest
    assert trim_context(history, estimate_context_chars(history)) == history


def test_budget_100_fails_for_a_larger_newest_unit() -> None:
    history = multi_tool_history()
    assert estimate_context_chars(history[1:]) > 100
    with pytest.raises(ContextBudgetError, match=f"^{SMALLEST}$"):
        trim_context(history, 100)
