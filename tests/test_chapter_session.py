"""mini_agent.chapter.session (and .agent): the chapter's session.ts transcribed. It must behave as the chapter says,
including where the package differs on purpose (line numbers, NaN, blank CRLF lines)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from mini_agent import (
    AssistantMessage,
    Message,
    ScriptedClient,
    SessionFormatError,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    load_session,
    parse_session_message,
)
from mini_agent.chapter import agent as chapter_agent
from mini_agent.chapter import session as chapter_session
from teaching.exercises import parse_cases

HISTORY: list[Message] = [
    UserMessage("读一下 a.txt"),
    AssistantMessage("我来读。", [ToolCall("c1", "read_file", {"path": "a.txt"})]),
    ToolMessage("c1", "hello"),
]


def test_the_literal_parser_agrees_with_the_package_on_every_exercise_row() -> None:
    for _, line in parse_cases():
        value = json.loads(line)
        assert chapter_session.parse_session_message(value) == parse_session_message(value), line


def test_appended_lines_load_back_with_either_loader(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    for message in HISTORY:
        chapter_session.append_session(path, message)
    assert chapter_session.load_session(path) == HISTORY
    assert load_session(path) == HISTORY
    assert path.read_bytes().count(b"\n") == 3


def test_a_missing_file_is_an_empty_session_and_other_os_errors_propagate(tmp_path: Path) -> None:
    assert chapter_session.load_session(tmp_path / "none.jsonl") == []
    with pytest.raises(IsADirectoryError):  # as Node's readFile says EISDIR, Windows too
        chapter_session.load_session(tmp_path)


def test_filter_boolean_numbers_only_the_non_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"role":"user","content":"x"}\n\n\n[1,\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"^invalid session JSON at line 2$"):
        chapter_session.load_session(path)
    with pytest.raises(SessionFormatError) as caught:
        load_session(path)
    assert caught.value.line == 4  # the package counts physical lines


def test_crlf_records_load_and_only_a_blank_crlf_line_differs(tmp_path: Path) -> None:
    # JSON.parse accepts a trailing \r as whitespace; "\r" alone is truthy, and not JSON
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"role":"user","content":"x"}\r\n{"role":"user","content":"y"}\r\n')
    assert chapter_session.load_session(path) == [UserMessage("x"), UserMessage("y")]
    path.write_bytes(b'{"role":"user","content":"x"}\r\n\r\n')
    with pytest.raises(ValueError, match=r"^invalid session JSON at line 2$"):
        chapter_session.load_session(path)
    assert load_session(path) == [UserMessage("x")]


def test_a_record_that_is_not_a_message_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"role":"user","content":"x"}\n{"role":"nope","content":"x"}\n', "utf-8")
    with pytest.raises(ValueError, match=r"^invalid session record at line 2$"):
        chapter_session.load_session(path)


def test_nan_is_written_as_null_and_refused_when_read(tmp_path: Path) -> None:
    message = AssistantMessage("", [ToolCall("c", "calc", {"x": math.nan, "y": [math.inf]})])
    line = chapter_session.json_stringify(message)
    assert line == (
        '{"role":"assistant","content":"","toolCalls":'
        '[{"id":"c","name":"calc","input":{"x":null,"y":[null]}}]}'
    )
    path = tmp_path / "s.jsonl"
    path.write_text('{"role":"tool","content":"x","toolCallId":"a","isError":NaN}\n', "utf-8")
    with pytest.raises(ValueError, match=r"^invalid session JSON at line 1$"):
        chapter_session.load_session(path)


def test_json_stringify_writes_chinese_as_is_without_spaces() -> None:
    assert chapter_session.json_stringify(UserMessage("记忆 续上")) == (
        '{"role":"user","content":"记忆 续上"}'
    )


def test_calls_is_a_type_guard_that_checks_every_item() -> None:
    assert chapter_session.calls([{"id": "", "name": "", "input": None}])
    assert not chapter_session.calls([{"id": "a", "name": "b", "input": 1}, {"id": "a"}])
    assert not chapter_session.calls([None])
    assert not chapter_session.calls({"id": "a", "name": "b", "input": 1})


def test_the_twin_agent_pushes_before_it_appends(tmp_path: Path) -> None:
    # the chapter's order: a refused write leaves memory one message ahead of the disk
    pushed: list[list[Message]] = []

    class Watching(ScriptedClient):
        def stream(self, messages: Sequence[Message], tools: Sequence[Tool]) -> Iterator[Any]:
            pushed.append(list(messages))
            return super().stream(messages, tools)

    missing = tmp_path / "no-such-folder" / "s.jsonl"
    with pytest.raises(FileNotFoundError):
        chapter_agent.run_agent(
            "hi", client=Watching([AssistantMessage("ok")]), session_path=missing
        )
    assert pushed == []  # the prompt was pushed, its append failed, no request was made
    messages = chapter_agent.run_agent("hi", client=ScriptedClient([AssistantMessage("ok")]))
    assert messages == [UserMessage("hi"), AssistantMessage("ok")]


def test_the_twin_keeps_extra_keys_of_a_tool_call_as_the_chapter_s_type_guard_does() -> None:
    line = (
        '{"role":"assistant","content":"","toolCalls":'
        '[{"id":"a","name":"n","input":{},"type":"function"}]}'
    )
    message = chapter_session.parse_session_message(json.loads(line))
    assert message == parse_session_message(json.loads(line))
    assert message is not None and chapter_session.json_stringify(message) == line


def test_bytes_that_are_not_utf8_become_u_fffd_as_readfile_utf8_makes_them(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"role":"user","content":"caf\xe9"}\n')
    assert chapter_session.load_session(path) == [UserMessage("caf\ufffd")]


def test_integers_beyond_two_to_the_53_are_read_as_doubles_as_json_parse_reads_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    big = 2**53 + 1
    call = f'{{"id":"a","name":"n","input":{{"n":{big},"m":{2**53}}}}}'
    path.write_text(f'{{"role":"assistant","content":"","toolCalls":[{call}]}}\n', "utf-8")
    (message,) = chapter_session.load_session(path)
    assert message == load_session(path)[0]
    assert isinstance(message, AssistantMessage)
    assert message.tool_calls[0].input == {"n": float(2**53), "m": 2**53}
