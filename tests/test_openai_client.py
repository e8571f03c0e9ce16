"""openai_client.py against a real HTTP server on 127.0.0.1 that replays event streams.

Each test asserts what `run_agent` returns or raises and exactly what the session file holds.
"""

from __future__ import annotations

import base64
import itertools
import json
import logging
import re
import socket
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    ModelReplyTooLargeError,
    ModelStreamError,
    ModelTimeoutError,
    OpenAICompatibleClient,
    ReplyLimits,
    reply_events,
    shown_url,
    sse_data,
    sse_lines,
)
from mini_agent.model_client import TextDelta, ToolCallEvent
from mini_agent.session import record_line
from mini_agent.tools import as_object

from .loopback_server import (
    DONE,
    END_OF_ECHO,
    KEY,
    KEY_ENV,
    PASSWORDS,
    TYPED,
    LoopbackModelServer,
    Reply,
    call_chunk,
    finish_chunk,
    never_shown,
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
DEFAULT_LIMITS = ReplyLimits()


def connect(
    server: LoopbackModelServer,
    timeout: float = 5.0,
    deadline: float = 60.0,
    limits: ReplyLimits = DEFAULT_LIMITS,
) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(
        server.base_url,
        "test-model",
        api_key_env=KEY_ENV,
        timeout=timeout,
        deadline=deadline,
        limits=limits,
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


# --- secrets: nothing a server sends, and nothing of the URL's credentials, is shown --------


def shown_by(err: BaseException, client: OpenAICompatibleClient | None = None) -> str:
    """Everything a person could see of an error: its message, its whole traceback (causes
    included), and the client's repr."""
    return "".join(traceback.format_exception(err)) + repr(client)


def no_secret_in(text: str, *secrets: str) -> None:
    for secret in secrets:
        assert secret.lower() not in text.lower(), f"{secret!r} shown"
        assert secret[:8].lower() not in text.lower(), f"the start of {secret!r} shown"


@pytest.mark.parametrize(
    "chunk",
    [
        sse({"error": {"message": f"invalid api key {KEY.upper()}"}}),
        sse({"error": {"message": f"invalid api key {KEY.title()}", "code": 401}}),
        f"data: {{not json, key={KEY.upper()}}}\n\n",
        f"data: {'x' * 70}{KEY}\n\n",  # the key across the quoted excerpt's cut
        sse({"choices": [{"delta": {"tool_calls": [f"{KEY}"]}, "finish_reason": None}]}),
    ],
    ids=["mid-stream-error", "mid-stream-error-title-case", "not-json", "key-at-cut", "bad-call"],
)
def test_a_key_echoed_in_a_bad_event_is_redacted_in_any_letter_case(
    tmp_path: Path, serve: Callable[..., LoopbackModelServer], chunk: str
) -> None:
    server = serve(Reply(chunks=[text_chunk("par"), chunk, DONE]))
    session = tmp_path / "s.jsonl"
    with connect(server) as client, pytest.raises(ModelStreamError) as caught:
        run_agent("hi", client=client, session_path=session)
    no_secret_in(shown_by(caught.value, client), KEY)
    assert "***" in str(caught.value) or "sent a tool call" in str(caught.value)
    assert read_file(session) == on_disk(UserMessage("hi"))


def test_an_http_error_echoing_the_key_is_redacted_and_cut_after_redaction(
    serve: Callable[..., LoopbackModelServer],
) -> None:
    echo = ("y" * 295 + KEY + " and " + KEY.upper()).encode()  # across the 300-character cut
    server = serve(Reply(status=500, body=echo, reason=f"Bad {KEY.upper()}"))
    with connect(server) as client, pytest.raises(ModelHTTPError) as caught:
        list(client.stream([UserMessage("hi")], []))
    no_secret_in(shown_by(caught.value, client), KEY)
    assert "HTTP 500 Bad ***" in str(caught.value)


def test_credentials_and_query_of_the_base_url_are_used_but_never_shown(
    serve: Callable[..., LoopbackModelServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV)
    user, password, token = "alice-team", "pa55-w0rd-secret", "q-token-0123456789"
    echo = f"user {user.upper()} pw {password.upper()} token {token.upper()}".encode()
    server = serve(text_reply("fine"), Reply(status=500, body=echo))
    host = server.base_url.removeprefix("http://")
    url = f"http://{user}:{password}@{host}/?key={token}&api-version=1"
    with OpenAICompatibleClient(url, "m", api_key_env=KEY_ENV) as client:
        assert list(client.stream([UserMessage("hi")], [])) == [TextDelta("fine")]
        with pytest.raises(ModelHTTPError) as caught:
            list(client.stream([UserMessage("hi")], []))
        shown = shown_by(caught.value, client) + client.base_url + client.url
    assert f"http://***@{host}/chat/completions?***" in str(caught.value)
    assert repr(client) == f"OpenAICompatibleClient('http://***@{host}?***', model='m', no key)"
    no_secret_in(shown, password, token)
    assert user.upper() not in shown
    request = server.requests[0]
    assert request.path == f"/v1/chat/completions?key={token}&api-version=1"
    basic = base64.b64encode(f"{user}:{password}".encode()).decode()
    assert request.headers["Authorization"] == f"Basic {basic}"


def test_a_server_echoing_the_request_gives_back_no_credential_in_any_encoding(
    serve: Callable[..., LoopbackModelServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 25: the plain password was redacted, the `Basic` token it became was not
    monkeypatch.setenv(KEY_ENV, 'sk-"quoted"/key-0123456789')
    user, password, token = "alice-team", 'pa55/w0rd"秘密', 'q-"token"/秘密-0123456789'
    server = serve(Reply(status=401, echo=True))
    host = server.base_url.removeprefix("http://")
    url = f"http://{user}:{quote(password, safe='')}@{host}/?key={quote(token, safe='')}"
    with OpenAICompatibleClient(url, "m", api_key_env=KEY_ENV) as client:
        with pytest.raises(ModelHTTPError) as caught:
            list(client.stream([UserMessage("hi")], []))
        shown = shown_by(caught.value, client).lower()
    basic = base64.b64encode(f"{user}:{password}".encode()).decode()
    assert basic in server.requests[0].headers["Authorization"]
    for secret in (password, token, 'sk-"quoted"/key-0123456789', basic):
        for form in (secret, quote(secret, safe=""), json.dumps(secret)[1:-1],
                     json.dumps(secret, ensure_ascii=False)[1:-1]):  # fmt: skip
            assert form.lower() not in shown, form
    assert "***" in shown


def test_httpx_logs_carry_no_query_secret_and_no_echoed_key(
    serve: Callable[..., LoopbackModelServer], caplog: pytest.LogCaptureFixture
) -> None:
    server = serve(Reply(status=500, body=b"no", reason=f"Bad {KEY.upper()}"), text_reply("ok"))
    caplog.set_level(logging.DEBUG)
    url = server.base_url.replace("http://", "http://me:pw-secret-7@") + "?key=q-secret-7"
    with OpenAICompatibleClient(url, "m", api_key_env=KEY_ENV) as client:
        with pytest.raises(ModelHTTPError):
            list(client.stream([UserMessage("hi")], []))
        assert list(client.stream([UserMessage("hi")], [])) == [TextDelta("ok")]
    assert caplog.text.count("HTTP Request: POST") == 2
    no_secret_in(caplog.text, KEY, "pw-secret-7", "q-secret-7")
    assert not logging.getLogger("httpx").filters  # closed: the filter is gone
    assert not logging.getLogger("httpcore.http11").filters


def test_an_unreachable_server_never_shows_the_urls_credentials() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://me:s3cret-pass@127.0.0.1:{port}/v1?token=t0ken-value"
    with (
        OpenAICompatibleClient(url, "m", api_key_env=KEY_ENV) as client,
        pytest.raises(ModelConnectionError) as caught,
    ):
        list(client.stream([UserMessage("hi")], []))
    no_secret_in(shown_by(caught.value, client), "s3cret-pass", "t0ken-value")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("notaurl", "not an http:// or https:// URL: notaurl"),
        ("ftp://127.0.0.1/v1", "not an http:// or https:// URL: ftp://127.0.0.1/v1"),
        ("http://", "not an http:// or https:// URL: http://"),
        ("http://127.0.0.1:99999/v1", "not a URL: http://127.0.0.1:99999/v1"),
        ("http://u:pw-secret@127.0.0.1:x/v1", "not a URL: http://***@127.0.0.1:x/v1"),
        ("u:pw-secret@127.0.0.1/v1", "not an http:// or https:// URL: ***@127.0.0.1/v1"),
        ("http://127.0.0.1/v1#frag", "a base URL has no #fragment: http://127.0.0.1/v1#***"),
        ("http://127.0.0.1/v 1?k=pw-secret", "a space or an invisible character"),
    ],
)
def test_a_base_url_that_is_not_http_is_refused_at_once_without_its_secrets(
    url: str, message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        OpenAICompatibleClient(url, "m")
    assert message in str(caught.value)
    assert "pw-secret" not in str(caught.value)


def test_short_query_values_are_not_redacted_from_server_text(
    serve: Callable[..., LoopbackModelServer],
) -> None:
    server = serve(Reply(status=429, body=b"slow down", headers={"Retry-After": "1"}))
    url = server.base_url + "?api-version=1&key=long-secret-1"
    with (
        OpenAICompatibleClient(url, "m", api_key_env=KEY_ENV) as client,
        pytest.raises(ModelHTTPError) as caught,
    ):
        list(client.stream([UserMessage("hi")], []))
    assert str(caught.value).endswith("?***): slow down — retry after 1 s")


def test_shown_url_hides_user_info_query_and_fragment_of_any_text() -> None:
    assert shown_url("https://api.example.com/v1") == "https://api.example.com/v1"
    assert shown_url("https://k:v@h:1/p?q=1#f") == "https://***@h:1/p?***#***"
    assert shown_url("h\x1b[2J@x") == "***@x"
    assert shown_url("http://h/\u202ev1") == "http://h/\\u202ev1"


@pytest.mark.parametrize(
    "userinfo",
    ["alice:Sup3rSecret#Pw99", "alice:Sup3r?Secret=Pw99", "alice:Sup3r/Secret:Pw@", "a:b@c#d?e/f"],
)
def test_shown_url_hides_a_user_info_typed_without_percent_encoding(userinfo: str) -> None:
    # issue 34: cut at `#` or `?` first, `http://alice:Sup3rSecret#***` showed the password
    assert (
        shown_url(f"http://{userinfo}@127.0.0.1:1/v1?k=v#f") == "http://***@127.0.0.1:1/v1?***#***"
    )
    assert shown_url(f"{userinfo}@h/v1") == "***@h/v1"


def echoed_credentials(
    url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> tuple[ModelHTTPError, str]:
    """The error of one `run_agent` against a server echoing the credentials, and all that
    was raised, shown, logged and recorded."""
    caplog.set_level(logging.DEBUG)
    session = tmp_path / "s.jsonl"
    with (
        OpenAICompatibleClient(url, "m", api_key_env=KEY_ENV) as client,
        pytest.raises(ModelHTTPError) as caught,
    ):
        run_agent("hi", client=client, session_path=session)
    assert read_file(session) == on_disk(UserMessage("hi"))
    shown = shown_by(caught.value, client) + client.base_url + client.url + caplog.text
    return caught.value, shown + read_file(session)


@pytest.mark.parametrize("password", PASSWORDS)
def test_a_percent_encoded_url_password_is_never_shown_in_any_form_a_server_echoes(
    serve: Callable[..., LoopbackModelServer],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    password: str,
) -> None:
    server = serve(Reply(status=401, echo=True))
    url = server.base_url.replace("http://", f"http://alice:{quote(password, safe='')}@")
    err, shown = echoed_credentials(url, tmp_path, caplog)
    basic = base64.b64encode(f"alice:{password}".encode()).decode()
    assert server.requests[0].headers["Authorization"] == f"Basic {basic}"
    assert str(err).endswith(f"{END_OF_ECHO} — is ${KEY_ENV} set to a valid key?")  # not cut
    never_shown(shown, "alice", password)


@pytest.mark.parametrize(("password", "taken"), TYPED)
def test_a_url_password_typed_unencoded_is_never_shown(
    serve: Callable[..., LoopbackModelServer],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    password: str,
    taken: bool,
) -> None:
    # The user-info ends at the last @: `#`, `?` or `/` before it is refused (read as a URL,
    # they would end the host early and send the rest of the password elsewhere).
    server = serve(Reply(status=401, echo=True))
    host = server.base_url.removeprefix("http://")
    url = f"http://alice:{password}@{host}"
    if taken:
        err, shown = echoed_credentials(url, tmp_path, caplog)
        assert server.requests[0].headers["Authorization"].startswith("Basic ")
        assert END_OF_ECHO in str(err)
    else:
        with pytest.raises(ValueError) as refused:
            OpenAICompatibleClient(url, "m", api_key_env=KEY_ENV)
        shown = "".join(traceback.format_exception(refused.value))
        assert f"http://***@{host}" in str(refused.value)
        assert "%23" in str(refused.value)  # how to write it instead
        assert server.requests == []
    never_shown(shown, "alice", password)


# --- bounds: a hostile server cannot make the client read, hold or wait without end ---------


class Counted:
    """A bounded generator of chunks that counts how many the server got to send."""

    def __init__(self, first: list[str], repeat: str | bytes, times: int) -> None:
        self.first, self.repeat, self.times, self.sent = first, repeat, times, 0

    def __iter__(self) -> Iterator[str | bytes]:
        yield from self.first
        for _ in range(self.times):
            self.sent += 1
            yield self.repeat


def test_an_endless_unterminated_line_stops_at_the_default_byte_limit(
    tmp_path: Path, serve: Callable[..., LoopbackModelServer]
) -> None:
    limit = ReplyLimits().max_reply_bytes
    piece = b"x" * (256 * 1024)
    chunks = Counted(["data: "], piece, 2 * limit // len(piece))  # 64 MiB offered
    server = serve(Reply(chunks=chunks))
    session = tmp_path / "s.jsonl"
    with connect(server) as client, pytest.raises(ModelReplyTooLargeError) as caught:
        run_agent("hi", client=client, session_path=session)
    assert str(caught.value) == "model reply passes 33,554,432 bytes (max_reply_bytes)"
    assert chunks.sent < chunks.times  # the client hung up; the server stopped sending
    assert read_file(session) == on_disk(UserMessage("hi"))


def test_a_reply_text_larger_than_the_byte_limit_is_refused_and_not_recorded(
    tmp_path: Path, serve: Callable[..., LoopbackModelServer]
) -> None:
    chunks = Counted([], text_chunk("y" * 4000), 1000)  # ~4 MB of text
    server = serve(Reply(chunks=chunks), Reply(chunks=Counted([], text_chunk("y" * 4000), 1000)))
    session = tmp_path / "s.jsonl"
    shown: list[str] = []
    with (
        connect(server, limits=ReplyLimits(max_reply_bytes=100_000)) as client,
        pytest.raises(ModelReplyTooLargeError, match="passes 100,000 bytes"),
    ):
        shown.extend(str(event) for event in client.stream([UserMessage("hi")], []))
    assert 0 < len(shown) < 30
    with (
        connect(server, limits=ReplyLimits(max_reply_bytes=100_000)) as client,
        pytest.raises(ModelReplyTooLargeError),
    ):
        run_agent("hi", client=client, session_path=session)
    assert read_file(session) == on_disk(UserMessage("hi"))


def test_twenty_thousand_tool_calls_stop_at_the_limit_and_none_runs(
    tmp_path: Path, serve: Callable[..., LoopbackModelServer]
) -> None:
    calls = (
        call_chunk(n, id=f"c{n}", name="read", arguments='{"path":"a"}') for n in range(20_000)
    )
    server = serve(Reply(chunks=[*calls, finish_chunk("tool_calls"), DONE]))
    session = tmp_path / "s.jsonl"
    ran: list[JSON] = []
    with (
        connect(server) as client,
        pytest.raises(
            ModelReplyTooLargeError, match=r"more than 128 tool calls \(max_tool_calls\)"
        ),
    ):
        run_agent("hi", client=client, tools=[reading_tool(ran)], session_path=session)
    assert ran == []
    assert read_file(session) == on_disk(UserMessage("hi"))


def test_the_tool_call_limit_admits_exactly_its_number() -> None:
    def payload(calls: int) -> list[str]:
        deltas = [
            {"index": n, "id": f"c{n}", "function": {"name": "t", "arguments": "{}"}}
            for n in range(calls)
        ]
        return [json.dumps({"choices": [{"delta": {"tool_calls": deltas}, "finish_reason": "x"}]})]

    assert len(list(reply_events(payload(128), []))) == 128
    with pytest.raises(ModelReplyTooLargeError):
        list(reply_events(payload(129), []))
    assert len(list(reply_events(payload(3), [], limits=ReplyLimits(max_tool_calls=3)))) == 3


def test_a_huge_tool_argument_is_refused_before_it_reaches_the_tool(
    tmp_path: Path, serve: Callable[..., LoopbackModelServer]
) -> None:
    piece = call_chunk(0, arguments="a" * 65536)
    chunks = Counted([call_chunk(0, id="c", name="read", arguments='{"path":"')], piece, 1024)
    server = serve(Reply(chunks=chunks))  # a 64 MiB argument offered
    session = tmp_path / "s.jsonl"
    ran: list[JSON] = []
    with (
        connect(server) as client,
        pytest.raises(ModelReplyTooLargeError, match="pass 1,048,576 characters"),
    ):
        run_agent("hi", client=client, tools=[reading_tool(ran)], session_path=session)
    assert ran == []
    assert chunks.sent < chunks.times
    assert read_file(session) == on_disk(UserMessage("hi"))


def test_the_argument_limit_admits_exactly_its_size() -> None:
    def payload(arguments: str) -> str:
        delta = {"index": 0, "id": "c", "function": {"name": "t", "arguments": arguments}}
        return json.dumps({"choices": [{"delta": {"tool_calls": [delta]}, "finish_reason": "x"}]})

    limits = ReplyLimits(max_argument_chars=10)
    [event] = reply_events([payload('"12345678"')], [], limits=limits)
    assert isinstance(event, ToolCallEvent) and event.call.input == "12345678"
    with pytest.raises(ModelReplyTooLargeError, match="pass 10 characters"):
        list(reply_events([payload('"123456789"')], [], limits=limits))


def test_keep_alive_comments_do_not_hold_a_client_past_its_timeout(
    tmp_path: Path, serve: Callable[..., LoopbackModelServer]
) -> None:
    comments = Counted([text_chunk("start")], ": keep-alive\n\n", 400)  # 20 s of them
    server = serve(Reply(chunks=comments, interval=0.05))
    session = tmp_path / "s.jsonl"
    with (
        connect(server, timeout=0.5) as client,
        pytest.raises(ModelTimeoutError, match=r"sent no reply data for 0\.5 s"),
    ):
        run_agent("hi", client=client, session_path=session)
    assert comments.sent < comments.times  # the client left long before the server was done
    assert read_file(session) == on_disk(UserMessage("hi"))


def test_a_reply_trickling_data_ends_at_the_deadline(
    tmp_path: Path, serve: Callable[..., LoopbackModelServer]
) -> None:
    trickle = Counted([], text_chunk("."), 400)  # 20 s of one-character pieces
    server = serve(Reply(chunks=trickle, interval=0.05))
    streamed: list[object] = []
    with (
        connect(server, timeout=5, deadline=1) as client,
        pytest.raises(ModelTimeoutError, match="was not complete within the 1 s deadline"),
    ):
        streamed.extend(client.stream([UserMessage("hi")], []))
    assert 0 < len(streamed) < trickle.times


def test_a_head_sent_a_byte_at_a_time_ends_at_the_deadline(
    tmp_path: Path, serve: Callable[..., LoopbackModelServer]
) -> None:
    server = serve(Reply(chunks=[text_chunk("never seen"), DONE], trickle=0.05))  # 25 s of head
    session = tmp_path / "s.jsonl"
    with (
        connect(server, timeout=5, deadline=1) as client,
        pytest.raises(ModelTimeoutError, match="within the 1 s deadline"),
    ):
        run_agent("hi", client=client, session_path=session)
    assert 0 < server.head_bytes_sent < 500  # the client left while the head still trickled
    assert read_file(session) == on_disk(UserMessage("hi"))


@settings(max_examples=200)
@given(
    st.lists(
        st.sampled_from(["a", "é", "世", "\u2028", "\r", "\n", "\r\n", ":", " "]), max_size=40
    ),
    st.lists(st.integers(min_value=0, max_value=60), max_size=8),
)
def test_sse_lines_are_the_same_however_the_bytes_are_cut(
    pieces: list[str], cuts: list[int]
) -> None:
    text = "".join(pieces)
    data = text.encode("utf-8")
    bounds = sorted({0, len(data), *(cut for cut in cuts if cut < len(data))})
    chunks = [data[start:end] for start, end in itertools.pairwise(bounds)]
    expected = re.split(r"\r\n|\r|\n", text)
    if expected[-1] == "":
        expected.pop()  # a last line break ends the last line; it starts no new one
    assert list(sse_lines(chunks)) == expected
