"""openai_client.py against a real HTTP server on 127.0.0.1 that replays event streams.

Each test asserts what `run_agent` returns or raises and exactly what the session file holds.
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mini_agent import (
    AssistantMessage,
    Message,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    load_session,
    run_agent,
)
from mini_agent.json_form import JSON
from mini_agent.live.openai_client import (
    ModelConnectionError,
    ModelHTTPError,
    ModelStreamError,
    ModelTimeoutError,
    OpenAICompatibleClient,
    reply_events,
    sse_data,
    sse_lines,
)
from mini_agent.messages import record_line
from mini_agent.model_client import TextDelta, ToolCallEvent
from mini_agent.tools import as_object

from .loopback_server import (
    DONE,
    KEY,
    KEY_ENV,
    LoopbackModelServer,
    Reply,
    call_chunk,
    finish_chunk,
    sse,
    text_chunk,
    text_reply,
)

SCHEMA: dict[str, JSON] = {
    "type": "object",
    "properties": {"path": {"type": "string"}},
    "required": ["path"],
}


pytestmark = pytest.mark.usefixtures("loopback_only")


def connect(server: LoopbackModelServer, timeout: float = 5.0) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(
        server.base_url, "test-model", api_key_env=KEY_ENV, timeout=timeout
    )


def on_disk(*messages: Message) -> str:
    """The exact text of a session file holding these messages."""
    return "".join(record_line(message) + "\n" for message in messages)


def read_file(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def reading_tool(ran: list[JSON]) -> Tool:
    def read(value: JSON) -> str:
        ran.append(value)
        args = as_object(value)
        if args is None or not isinstance(args.get("path"), str):
            raise ValueError("read needs {path: string}")
        return f"contents of {args['path']}"

    return Tool("read", "read a file", read, SCHEMA)


def split_into(text: str, pieces: int) -> list[str]:
    size = -(-len(text) // pieces)
    parts = [text[start : start + size] for start in range(0, len(text), size)]
    return parts + [""] * (pieces - len(parts))


# --- normal path ----------------------------------------------------------------------------


def test_plain_text_streams_into_one_assistant_message_and_one_line_on_disk(
    tmp_path: Path, serve: Callable[..., LoopbackModelServer]
) -> None:
    # "世" is cut between two HTTP chunks mid-character; U+2028 rides raw inside the JSON.
    last = text_chunk("d \u2028 世界").encode("utf-8")
    cut = last.index("世".encode()) + 1
    chunks: list[str | bytes] = [
        text_chunk("Hel"),
        text_chunk("lo, "),
        text_chunk("worl"),
        last[:cut],
        last[cut:],
    ]
    server = serve(Reply(chunks=[*chunks, finish_chunk("stop"), DONE]))
    session = tmp_path / "s.jsonl"
    with connect(server) as client:
        result = run_agent("hi", client=client, session_path=session)
    assert result.final == AssistantMessage("Hello, world \u2028 世界")
    assert read_file(session) == (
        '{"role":"user","content":"hi"}\n'
        '{"role":"assistant","content":"Hello, world \u2028 世界","toolCalls":[]}\n'
    )
    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body == {
        "model": "test-model",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
    }
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.headers["Accept"] == "text/event-stream"


def test_text_is_passed_on_before_the_reply_is_complete(
    serve: Callable[..., LoopbackModelServer],
) -> None:
    server = serve(text_reply("one ", "two"))
    with connect(server) as client:
        events = client.stream([UserMessage("hi")], [])
        assert next(events) == TextDelta("one ")
        assert list(events) == [TextDelta("two")]


def test_two_tool_calls_interleaved_across_20_chunks_are_assembled_and_run(
    tmp_path: Path, serve: Callable[..., LoopbackModelServer]
) -> None:
    args_a, args_b = '{"path": "notes/a.txt"}', '{"path": "b.txt"}'
    calls = [
        call_chunk(0, id="call_a", name="read"),
        call_chunk(1, id="call_b", name="read"),
    ]
    for piece_a, piece_b in zip(split_into(args_a, 9), split_into(args_b, 9), strict=True):
        calls += [call_chunk(0, arguments=piece_a), call_chunk(1, arguments=piece_b)]
    assert len(calls) == 20
    server = serve(
        Reply(chunks=[text_chunk("Reading both."), *calls, finish_chunk("tool_calls"), DONE]),
        text_reply("Both ", "read."),
    )
    session = tmp_path / "s.jsonl"
    ran: list[JSON] = []
    with connect(server) as client:
        result = run_agent(
            "read a and b", client=client, tools=[reading_tool(ran)], session_path=session
        )
    expected = (
        UserMessage("read a and b"),
        AssistantMessage(
            "Reading both.",
            (
                ToolCall("call_a", "read", {"path": "notes/a.txt"}),
                ToolCall("call_b", "read", {"path": "b.txt"}),
            ),
        ),
        ToolMessage("call_a", "contents of notes/a.txt"),
        ToolMessage("call_b", "contents of b.txt"),
        AssistantMessage("Both read."),
    )
    assert result.messages == expected
    assert read_file(session) == on_disk(*expected)
    assert ran == [{"path": "notes/a.txt"}, {"path": "b.txt"}]
    first, second = (request.body for request in server.requests)
    assert first["tools"] == [
        {
            "type": "function",
            "function": {"name": "read", "description": "read a file", "parameters": SCHEMA},
        }
    ]
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": "Reading both.",
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"notes/a.txt"}'},
                },
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"path":"b.txt"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": "contents of notes/a.txt"},
        {"role": "tool", "tool_call_id": "call_b", "content": "contents of b.txt"},
    ]


# --- untrusted model JSON -------------------------------------------------------------------


def test_malformed_arguments_become_error_results_and_the_loop_goes_on(
    tmp_path: Path, serve: Callable[..., LoopbackModelServer]
) -> None:
    truncated = '{"path": "a.txt"'
    server = serve(
        Reply(
            chunks=[
                call_chunk(0, id="call_1", name="read", arguments=truncated),
                call_chunk(1, id="call_2", name="read", arguments='["a.txt"]'),
                finish_chunk("tool_calls"),
                DONE,
            ]
        ),
        text_reply("Sorry, let me fix that."),
        text_reply("Resumed."),
    )
    session = tmp_path / "s.jsonl"
    ran: list[JSON] = []
    tools = [reading_tool(ran)]
    with connect(server) as client:
        result = run_agent("read a", client=client, tools=tools, session_path=session)
        expected = (
            UserMessage("read a"),
            AssistantMessage(
                "",
                (ToolCall("call_1", "read", truncated), ToolCall("call_2", "read", ["a.txt"])),
            ),
            ToolMessage(
                "call_1",
                "invalid JSON arguments for tool read: Expecting ',' delimiter at column 17",
                is_error=True,
            ),
            ToolMessage(
                "call_2", "tool read needs a JSON object as input, got an array", is_error=True
            ),
            AssistantMessage("Sorry, let me fix that."),
        )
        assert result.messages == expected
        assert ran == []
        assert read_file(session) == on_disk(*expected)
        again = run_agent("again", client=client, tools=tools, session_path=session)
    assert again.messages == (*expected, UserMessage("again"), AssistantMessage("Resumed."))
    assert load_session(session) == list(again.messages)
    resent = server.requests[2].body["messages"][1]["tool_calls"][0]["function"]
    assert resent == {"name": "read", "arguments": json.dumps(truncated)}  # as recorded


def test_servers_own_call_shapes_are_narrowed_without_a_network() -> None:
    # Older Ollama: whole calls, no index, arguments already parsed; vLLM-style repeated ids.
    whole = {
        "choices": [
            {
                "delta": {
                    "tool_calls": [
                        {"function": {"name": "read", "arguments": {"path": "a"}}},
                        {"id": "x", "function": {"name": "read", "arguments": '{"path":'}},
                    ]
                },
                "finish_reason": None,
            }
        ]
    }
    repeated = {
        "choices": [
            {
                "delta": {
                    "tool_calls": [
                        {"index": 1, "id": "x", "function": {"name": "read", "arguments": '"b"}'}}
                    ]
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    tool = Tool("read", "read", lambda value: "")
    events = list(reply_events([json.dumps(whole), json.dumps(repeated)], [tool]))
    assert events == [
        ToolCallEvent(ToolCall("call_0", "read", {"path": "a"})),
        ToolCallEvent(ToolCall("x", "read", {"path": "b"})),
    ]


def test_a_tool_without_an_object_schema_takes_any_json(tmp_path: Path) -> None:
    shout = Tool("shout", "upper-case a string", lambda v: str(v).upper(), {"type": "string"})
    payload = {
        "choices": [
            {
                "delta": {
                    "tool_calls": [
                        {"index": 0, "id": "c", "function": {"name": "shout", "arguments": '"hi"'}}
                    ]
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    assert list(reply_events([json.dumps(payload)], [shout])) == [
        ToolCallEvent(ToolCall("c", "shout", "hi"))
    ]


# --- failures lose nothing ------------------------------------------------------------------


def test_a_missing_done_is_accepted_after_a_finish_reason(
    tmp_path: Path, serve: Callable[..., LoopbackModelServer]
) -> None:
    server = serve(Reply(chunks=[text_chunk("done without DONE"), finish_chunk("stop")]))
    session = tmp_path / "s.jsonl"
    with connect(server) as client:
        result = run_agent("hi", client=client, session_path=session)
    assert result.final == AssistantMessage("done without DONE")
    assert read_file(session) == on_disk(UserMessage("hi"), result.final)


def test_a_stream_ending_without_done_or_finish_reason_records_nothing_and_resumes(
    tmp_path: Path, serve: Callable[..., LoopbackModelServer]
) -> None:
    server = serve(Reply(chunks=[text_chunk("half an ans")]), text_reply("whole answer"))
    session = tmp_path / "s.jsonl"
    with connect(server) as client:
        with pytest.raises(ModelStreamError, match="ended before the reply was complete"):
            run_agent("hi", client=client, session_path=session)
        assert read_file(session) == on_disk(UserMessage("hi"))
        result = run_agent("again", client=client, session_path=session)
    assert server.requests[1].body["messages"] == [
        {"role": "user", "content": "hi"},
        {"role": "user", "content": "again"},
    ]
    assert read_file(session) == on_disk(UserMessage("hi"), UserMessage("again"), result.final)


@pytest.mark.parametrize(
    ("status", "body", "headers", "message"),
    [
        (
            429,
            b'{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}',
            {"Retry-After": "2"},
            "HTTP 429 Too Many Requests (POST http://127.0.0.1:PORT/v1/chat/completions): "
            "Rate limit reached — retry after 2 s",
        ),
        (
            500,
            b"upstream model crashed",
            {},
            "HTTP 500 Internal Server Error (POST http://127.0.0.1:PORT/v1/chat/completions): "
            "upstream model crashed",
        ),
    ],
)
def test_an_http_error_says_what_the_server_said_records_nothing_and_resumes(
    tmp_path: Path,
    serve: Callable[..., LoopbackModelServer],
    status: int,
    body: bytes,
    headers: dict[str, str],
    message: str,
) -> None:
    server = serve(Reply(status=status, body=body, headers=headers), text_reply("back"))
    session = tmp_path / "s.jsonl"
    port = server.base_url.split(":")[2].split("/")[0]
    with connect(server) as client:
        with pytest.raises(ModelHTTPError) as caught:
            run_agent("hi", client=client, session_path=session)
        assert str(caught.value) == "model server answered " + message.replace("PORT", port)
        assert caught.value.status == status
        assert read_file(session) == on_disk(UserMessage("hi"))
        result = run_agent("again", client=client, session_path=session)
    assert result.messages == (UserMessage("hi"), UserMessage("again"), AssistantMessage("back"))
    assert load_session(session) == list(result.messages)


def test_a_rejected_key_is_never_shown_or_stored(
    tmp_path: Path, serve: Callable[..., LoopbackModelServer]
) -> None:
    echo = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}"}}).encode()
    server = serve(Reply(status=401, body=echo))
    session = tmp_path / "s.jsonl"
    with connect(server) as client:
        with pytest.raises(ModelHTTPError) as caught:
            run_agent("hi", client=client, session_path=session)
        shown = f"{caught.value} {client!r}"
    assert "Incorrect API key provided: ***" in shown
    assert f"is ${KEY_ENV} set to a valid key?" in shown
    assert KEY not in shown
    assert read_file(session) == on_disk(UserMessage("hi"))


def test_no_key_is_sent_when_its_variable_is_unset(
    serve: Callable[..., LoopbackModelServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV)
    server = serve(text_reply("local"))
    with connect(server) as client:
        assert list(client.stream([UserMessage("hi")], [])) == [TextDelta("local")]
        assert repr(client).endswith("model='test-model', no key)")
    assert "Authorization" not in server.requests[0].headers


def test_a_connection_closed_mid_stream_records_no_partial_message(
    tmp_path: Path, serve: Callable[..., LoopbackModelServer]
) -> None:
    cut = Reply(
        chunks=[text_chunk("Half "), text_chunk("an "), text_chunk("answer"), DONE], cut_after=2
    )
    server = serve(cut, cut)
    session = tmp_path / "s.jsonl"
    with connect(server) as client:
        streamed: list[object] = []
        with pytest.raises(ModelStreamError, match="cut before the reply was complete"):
            streamed.extend(client.stream([UserMessage("hi")], []))
        assert streamed == [TextDelta("Half "), TextDelta("an ")]  # seen live, then cut
        with pytest.raises(ModelStreamError, match="cut before the reply was complete"):
            run_agent("hi", client=client, session_path=session)
    assert read_file(session) == on_disk(UserMessage("hi"))


@pytest.mark.parametrize("stall_after", [0, 1], ids=["before-headers", "mid-stream"])
def test_a_server_slower_than_the_timeout_fails_clearly_and_records_nothing(
    tmp_path: Path, serve: Callable[..., LoopbackModelServer], stall_after: int
) -> None:
    server = serve(Reply(chunks=[text_chunk("slow"), DONE], stall_after=stall_after))
    session = tmp_path / "s.jsonl"
    expected = r"model server sent nothing for 0.2 s"
    with connect(server, timeout=0.2) as client, pytest.raises(ModelTimeoutError, match=expected):
        run_agent("hi", client=client, session_path=session)
    assert read_file(session) == on_disk(UserMessage("hi"))


def test_an_unreachable_server_fails_clearly(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a loopback port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    session = tmp_path / "s.jsonl"
    url = f"http://127.0.0.1:{port}/v1/"  # the trailing slash is dropped
    expected = f"cannot reach the model server at http://127.0.0.1:{port}/v1/chat/completions"
    with (
        OpenAICompatibleClient(url, "m", api_key_env=KEY_ENV) as client,
        pytest.raises(ModelConnectionError, match=expected),
    ):
        run_agent("hi", client=client, session_path=session)
    assert read_file(session) == on_disk(UserMessage("hi"))


def test_a_server_that_ignores_stream_true_is_named(
    tmp_path: Path, serve: Callable[..., LoopbackModelServer]
) -> None:
    server = serve(Reply(chunks=['{"choices":[]}'], content_type="application/json"))
    with connect(server) as client, pytest.raises(ModelStreamError, match="not an event stream"):
        run_agent("hi", client=client)


@pytest.mark.parametrize(
    ("chunk", "message"),
    [
        (
            sse({"error": {"message": "model crashed"}}),
            "reported an error mid-stream: model crashed",
        ),
        ("data: {not json\n\n", "sent data that is not JSON"),
        ("data: [1, 2]\n\n", "sent data that is not an object"),
        (b"data: \xff\n\n", "model stream is not UTF-8"),
    ],
)
def test_a_bad_event_mid_stream_fails_clearly_and_records_nothing(
    tmp_path: Path, serve: Callable[..., LoopbackModelServer], chunk: str | bytes, message: str
) -> None:
    server = serve(Reply(chunks=[text_chunk("par"), chunk, DONE]))
    session = tmp_path / "s.jsonl"
    with connect(server) as client, pytest.raises(ModelStreamError, match=message):
        run_agent("hi", client=client, session_path=session)
    assert read_file(session) == on_disk(UserMessage("hi"))


# --- the event stream, piece by piece -------------------------------------------------------


def test_sse_lines_end_at_cr_lf_or_crlf_only_even_across_chunks() -> None:
    chunks = [
        b"data: a\r",
        b"\ndata: b\rdata: c\n\ndata: \xe4\xb8",
        b"\x96\xe2\x80\xa8x\n",
        b"tail",
    ]
    assert list(sse_lines(chunks)) == [
        "data: a",
        "data: b",
        "data: c",
        "",
        "data: 世\u2028x",
        "tail",
    ]


def test_sse_data_joins_data_lines_skips_comments_and_drops_an_unfinished_event() -> None:
    lines = [": keep-alive", "data: {", "data:}", "", "event: x", "id: 7", "data", "", "data: half"]
    assert list(sse_data(lines)) == ["{\n}", ""]


def test_without_httpx_the_client_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)  # as if the live extra were missing
    with pytest.raises(ModuleNotFoundError, match=r"pip install -e '\.\[live\]'"):
        OpenAICompatibleClient("http://127.0.0.1:1/v1", "m")
