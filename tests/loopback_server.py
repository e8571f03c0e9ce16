"""A model server on 127.0.0.1 for the tests: it replays recorded-style event streams.

One scripted `Reply` per request, in order. Each stream chunk is written as one HTTP/1.1
chunk, so the client really receives the reply in pieces; a reply can stall (to pass the
client's timeout), be cut (the connection closed mid-message), pause between chunks, or
trickle its head a byte at a time. A hostile reply's chunks may be a generator: every loop
here is bounded by what the test gives it, and a client that hangs up ends the reply. The
server runs in one thread, which `__exit__` always stops and joins; it releases every wait.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import unquote

KEY_ENV = "MINI_AGENT_TEST_KEY"  # the tests' API key variable, and a key to catch leaking
KEY = "sk-test-secret-0123456789"
STALL_LIMIT = 10.0  # seconds a stalled reply waits at most, should a test forget to release it


def sse(payload: object) -> str:
    """One server-sent event carrying `payload` as JSON."""
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"


DONE = "data: [DONE]\n\n"


def text_chunk(text: str) -> str:
    return sse({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]})


def call_chunk(
    index: int, *, id: str | None = None, name: str | None = None, arguments: str = ""
) -> str:
    call: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if id is not None:
        call.update(id=id, type="function")
        call["function"]["name"] = name
    return sse({"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]})


def finish_chunk(reason: str) -> str:
    return sse({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})


def text_reply(*pieces: str) -> Reply:
    """A complete plain-text reply, one chunk per piece."""
    return Reply(chunks=[*map(text_chunk, pieces), finish_chunk("stop"), DONE])


@dataclass
class Reply:
    """What the server answers to one request."""

    status: int = 200
    chunks: Iterable[str | bytes] = ()  # the event stream, one HTTP chunk each
    body: bytes = b""  # the whole body, for an error status
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    stall_after: int | None = None  # wait after this many chunks (0: before the headers)
    cut_after: int | None = None  # close the connection after this many chunks
    interval: float = 0.0  # seconds between chunks
    trickle: float | None = None  # send a 500-byte head a byte at a time, this far apart
    reason: str | None = None  # the status line's reason phrase (default: the standard one)
    echo: bool = False  # an error body that echoes the request's path and headers, as some do


@dataclass(frozen=True)
class Request:
    path: str
    headers: dict[str, str]
    body: Any


class LoopbackModelServer:
    """`with LoopbackModelServer([Reply(...), ...]) as server:` — `server.base_url`."""

    def __init__(self, replies: Sequence[Reply]) -> None:
        self.replies = list(replies)
        self.requests: list[Request] = []
        self.release = threading.Event()  # lets stalled replies finish
        self.head_bytes_sent = 0  # of a trickled head, so far
        self._server = HTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="loopback-model"
        )  # a short poll interval: shutdown() returns quickly

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> LoopbackModelServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    @property
    def stopped(self) -> bool:
        return not self._thread.is_alive()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

            def do_POST(self) -> None:
                self.close_connection = True  # one request per connection: nothing lingers
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length).decode("utf-8"))
                server.requests.append(Request(self.path, dict(self.headers.items()), body))
                reply = server.replies.pop(0) if server.replies else Reply(status=599)
                if reply.echo:  # JSON-escaped inside an error object, then raw
                    seen = f"{unquote(self.path)} {self.headers.get('Authorization')}"
                    echoed = json.dumps({"error": {"raw": seen}}, ensure_ascii=False)
                    reply.body = f"{echoed} {json.dumps(seen)} {seen}".encode()
                if reply.stall_after == 0:
                    server.release.wait(STALL_LIMIT)
                    return
                # A bounded client hangs up mid-reply: that ends the reply, quietly.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._reply(reply)

            def _reply(self, reply: Reply) -> None:
                if reply.trickle is not None:
                    self._trickle_head(reply.content_type, reply.trickle)
                else:
                    self.send_response(reply.status, reply.reason)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("Connection", "close")
                    if reply.status != 200:
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(reply.body)))
                        self.end_headers()
                        self.wfile.write(reply.body)
                        return
                    self.send_header("Content-Type", reply.content_type)
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                for number, chunk in enumerate(reply.chunks):
                    if number and reply.interval and server.release.wait(reply.interval):
                        return  # the test is over
                    if number == reply.cut_after:
                        return  # closes the connection without the final empty chunk
                    if number == reply.stall_after:
                        self.wfile.flush()
                        server.release.wait(STALL_LIMIT)
                        return
                    data = chunk.encode("utf-8") if isinstance(chunk, str) else chunk
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")

            def _trickle_head(self, content_type: str, pause: float) -> None:
                head = (
                    f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\n"
                    f"X-Pad: {'a' * 400}\r\n"
                    "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                ).encode("ascii")
                for at in range(len(head)):
                    self.wfile.write(head[at : at + 1])
                    self.wfile.flush()
                    server.head_bytes_sent = at + 1
                    if server.release.wait(pause):
                        return

        return Handler
