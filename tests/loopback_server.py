"""A model server on 127.0.0.1 for the tests: it replays recorded-style event streams.

One scripted `Reply` per request, in order. Each stream chunk is written as one HTTP/1.1
chunk, so the client really receives the reply in pieces; a reply can stall (to pass the
client's timeout), be cut (the connection closed mid-message), pause between chunks, or
trickle its head a byte at a time. A hostile reply's chunks may be a generator: every loop
here is bounded by what the test gives it, and a client that hangs up ends the reply. The
server runs in one thread, which `__exit__` always stops and joins; it releases every wait.
"""

from __future__ import annotations

import base64
import contextlib
import html
import json
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, quote, quote_plus, urlsplit

KEY_ENV = "MINI_AGENT_TEST_KEY"  # the tests' API key variable, and a key to catch leaking
KEY = "sk-test-secret-0123456789"
STALL_LIMIT = 10.0  # seconds a stalled reply waits at most, should a test forget to release it


def sse(payload: object) -> str:
    """One server-sent event carrying `payload` as JSON."""
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"


DONE = "data: [DONE]\n\n"
END_OF_ECHO = "(end of echo)"  # an echo's last words: seen in an error, the echo was not cut


def echoed_forms(secret: str) -> list[str]:
    """`secret` in each form a server may give it back in: as it is, upper-cased,
    percent-encoded (with `/` kept, as `quote` does by default, or not; `+` for a space),
    JSON-escaped (non-ASCII as `\\u` escapes or not, `/` as `\\/` as PHP writes it), and
    HTML-escaped."""
    as_json = json.dumps(secret)[1:-1]
    return [
        secret,
        secret.upper(),
        quote(secret, safe=""),
        quote(secret),
        quote_plus(secret),
        as_json,
        json.dumps(secret, ensure_ascii=False)[1:-1],
        as_json.replace("/", "\\/"),
        html.escape(secret),
    ]


# Passwords holding what a URL's user-info cannot hold as it is (# ? / @, a space, quotes,
# a backslash, `+`, non-ASCII), and the words of each that no screen may show.
PASSWORDS = [
    "Sup3rSecret#Pw99",
    "Sup3r?Secret=Pw99",
    "Sup3r/Secret:Pw@",
    "pa55@w0rd@Sup3r",
    "秘密口令-Pässwörd",
    'Sup3r "Quo\\ted+Pw99" 秘密口令',
]
TYPED = [  # as a reader types them into a URL, unencoded: True when the URL is taken
    ("Sup3rSecret#Pw99", False),
    ("Sup3r?Secret=Pw99", False),
    ("Sup3r/Secret:Pw@", False),
    ("pa55@w0rd@Sup3r", True),
    ("秘密口令-Pässwörd", True),
]


def never_shown(text: str, user: str, password: str) -> None:
    """No form of the password, of `user:password` or of its Basic token (as the loopback
    server echoes them) is in `text`, nor any word of the password."""
    basic = base64.b64encode(f"{user}:{password}".encode()).decode()
    lowered = text.lower()
    for secret in (password, f"{user}:{password}", basic):
        for form in echoed_forms(secret):
            assert form.lower() not in lowered, f"{form!r} shown"
    for word in re.findall(r"\w{4,}", password):
        assert word.lower() not in lowered, f"{word!r} of {password!r} shown"


def echo_body(path: str, authorization: str) -> bytes:
    """The error body of a server that echoes what a request holds of its credentials: the
    query's values, the Authorization header's token, and the `user:password` of a Basic
    one and its password alone, each in every form of `echoed_forms`, then `END_OF_ECHO`."""
    kind, _, token = authorization.partition(" ")
    seen = [
        token,
        *(value for values in parse_qs(urlsplit(path).query).values() for value in values),
    ]
    if kind == "Basic":
        pair = base64.b64decode(token).decode("utf-8")
        seen += [pair, pair.partition(":")[2]]
    forms = [form for secret in seen for form in echoed_forms(secret)]
    return " ".join([*forms, END_OF_ECHO]).encode("utf-8")


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
    echo: bool = False  # an error body that echoes the request's credentials (`echo_body`)


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
                if reply.echo:
                    reply.body = echo_body(self.path, self.headers.get("Authorization", ""))
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
