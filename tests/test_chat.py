"""chat.py: the live walkthrough command, run directly and through a tiny argparse wrapper."""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mini_agent import (
    AssistantMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    append_session,
    load_session,
)
from mini_agent.cli import main
from mini_agent.live import chat
from mini_agent.messages import Message, record_line

from .loopback_server import (
    DONE,
    KEY,
    KEY_ENV,
    LoopbackModelServer,
    Reply,
    call_chunk,
    finish_chunk,
    text_chunk,
    text_reply,
)

pytestmark = pytest.mark.usefixtures("loopback_only")

Serve = Callable[..., LoopbackModelServer]


def parse(argv: list[str]) -> argparse.Namespace:
    """What the integrator's `python -m mini_agent chat` does with its subparser."""
    parser = argparse.ArgumentParser(prog="python -m mini_agent chat")
    chat.add_arguments(parser)
    return parser.parse_args(argv)


def argv(server: LoopbackModelServer, *extra: str) -> list[str]:
    return [
        "--session", "s.jsonl", "--base-url", server.base_url, "--model", "test-model",
        "--api-key-env", KEY_ENV, "--timeout", "5", *extra,
    ]  # fmt: skip


def chat_with(
    args: argparse.Namespace,
    stdin: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = chat.run(args)
    out, err = capsys.readouterr()
    return code, out, err


def chars(*messages: Message) -> int:
    return sum(len(record_line(message)) + 1 for message in messages)


def on_disk(*messages: Message) -> str:
    return "".join(record_line(message) + "\n" for message in messages)


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the session path is printed as given: keep it short


def test_each_piped_line_is_one_turn_streamed_to_stdout_and_appended(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = serve(text_reply("Hi ", "there."), text_reply("Again."))
    code, out, err = chat_with(parse(argv(server)), "hello\n\nand again\n", monkeypatch, capsys)
    first, second = UserMessage("hello"), UserMessage("and again")
    hi, again = AssistantMessage("Hi there."), AssistantMessage("Again.")
    assert code == 0
    assert out == "Hi there.\nAgain.\n"
    assert err.splitlines() == [
        "session s.jsonl: 0 messages on disk",
        f"[request 1] on disk: 1 messages, {chars(first)} chars; "
        f"sent: 1 messages, {chars(first)} chars (no budget)",
        f"[request 2] on disk: 3 messages, {chars(first, hi, second)} chars; "
        f"sent: 3 messages, {chars(first, hi, second)} chars (no budget)",
    ]
    assert (tmp_path / "s.jsonl").read_text(encoding="utf-8") == on_disk(first, hi, second, again)
    assert KEY not in out + err


def test_the_budget_trims_what_is_sent_never_what_is_on_disk(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    question, answer = UserMessage("an old question " * 10), AssistantMessage("an old answer")
    old: list[Message] = [question, answer]
    for message in old:
        append_session(tmp_path / "s.jsonl", message)
    server = serve(text_reply("Fresh."))
    args = parse(argv(server, "--max-chars", "200"))
    code, out, err = chat_with(args, "new\n", monkeypatch, capsys)
    new, fresh = UserMessage("new"), AssistantMessage("Fresh.")
    assert code == 0
    assert out == "Fresh.\n"
    assert err.splitlines()[1:] == [
        f"[request 1] on disk: 3 messages, {chars(*old, new)} chars; "
        f"sent: 2 messages, {chars(answer, new)} chars (budget 200)"
    ]
    assert server.requests[0].body["messages"] == [
        {"role": "assistant", "content": "an old answer"},
        {"role": "user", "content": "new"},
    ]
    assert load_session(tmp_path / "s.jsonl") == [*old, new, fresh]


def test_a_failed_request_exits_1_keeps_the_file_and_a_rerun_resumes(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = serve(
        Reply(status=500, body=b'{"error":{"message":"overloaded"}}'), text_reply("Back.")
    )
    args = parse(argv(server))
    code, out, err = chat_with(args, "first\nnever sent\n", monkeypatch, capsys)
    assert code == 1
    assert out == ""
    assert "error: model server answered HTTP 500 Internal Server Error" in err
    assert err.endswith(
        "overloaded\nnothing of the failed reply was recorded; "
        "run the same command again to resume from s.jsonl\n"
    )
    assert (tmp_path / "s.jsonl").read_text(encoding="utf-8") == on_disk(UserMessage("first"))
    code, out, err = chat_with(args, "second\n", monkeypatch, capsys)
    assert (code, out) == (0, "Back.\n")
    assert err.startswith("session s.jsonl: 1 messages on disk\n")
    assert [m["content"] for m in server.requests[1].body["messages"]] == ["first", "second"]


def test_a_corrupt_session_is_refused_before_the_model_is_asked(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "s.jsonl").write_text('{"role":"user","content":"x"}\n{"role":\n', encoding="utf-8")
    server = serve(text_reply("unused"))
    monkeypatch.setattr(sys, "stdin", io.StringIO("hi\n"))
    code = main(["chat", *argv(server)])  # as `python -m mini_agent chat` runs it
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("s.jsonl:2: invalid session JSON at line 2")  # what `check` says
    assert "  2 | " in err  # and the bad line, as `check` shows it
    assert server.requests == []


def test_a_budget_too_small_for_the_prompt_fails_with_the_chapters_phrase(
    serve: Serve, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    server = serve()
    code, _, err = chat_with(parse(argv(server, "--max-chars", "5")), "hi\n", monkeypatch, capsys)
    assert code == 1
    assert "context budget cannot contain the smallest consistent message unit" in err
    assert server.requests == []


@pytest.mark.parametrize(
    ("option", "value"), [("--max-chars", "0"), ("--max-chars", "x"), ("--timeout", "-1")]
)
def test_bad_numbers_are_refused_by_the_parser(
    option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        parse(["--session", "s", "--base-url", "u", "--model", "m", option, value])
    assert caught.value.code == 2
    assert option in capsys.readouterr().err


def test_text_streamed_before_a_cut_is_shown_but_not_recorded(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    chunks = [text_chunk("Half "), text_chunk("an "), text_chunk("answer"), DONE]
    server = serve(Reply(chunks=chunks, cut_after=2))
    code, out, err = chat_with(parse(argv(server)), "hi\n", monkeypatch, capsys)
    assert (code, out) == (1, "Half an \n")
    assert "model stream was cut before the reply was complete" in err
    assert (tmp_path / "s.jsonl").read_text(encoding="utf-8") == on_disk(UserMessage("hi"))


def test_demo_tools_put_a_tool_unit_in_the_session(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    call = call_chunk(0, id="c1", name="count_chars", arguments='{"text": "你好"}')
    server = serve(Reply(chunks=[call, finish_chunk("tool_calls"), DONE]), text_reply("Two."))
    args = parse(argv(server, "--demo-tools"))
    code, out, err = chat_with(args, "how long is 你好?\n", monkeypatch, capsys)
    assert (code, out) == (0, "Two.\n")
    assert '[tool call] count_chars {"text":"你好"}' in err.splitlines()
    assert load_session(tmp_path / "s.jsonl") == [
        UserMessage("how long is 你好?"),
        AssistantMessage("", (ToolCall("c1", "count_chars", {"text": "你好"}),)),
        ToolMessage("c1", "2"),
        AssistantMessage("Two."),
    ]
    assert [tool["function"]["name"] for tool in server.requests[0].body["tools"]] == [
        "count_chars"
    ]
