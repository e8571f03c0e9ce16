"""A live model behind the loop: any server that speaks the OpenAI-compatible chat API.

Hosted, or local (llama.cpp's llama-server, Ollama, vLLM). Opt-in: it needs the `live` extra
(httpx); the scripted client stays the default everywhere else. The reply streams in as
server-sent events: text is passed on as it arrives, tool calls once the reply is complete.
Model output is untrusted JSON, narrowed as the chapter's `toolInput` does.
"""

from __future__ import annotations

import base64
import codecs
import contextlib
import html
import json
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING
from urllib.parse import SplitResult, unquote, urlsplit, urlunsplit

from ..json_form import JSON, describe_error, json_type, parse, stringify
from ..messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from ..model_client import StreamEvent, TextDelta, ToolCallEvent
from ..session import record
from ..tools import Tool
from ..visible import visible_line

if TYPE_CHECKING:
    import httpx

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_TIMEOUT = 60.0  # seconds: connecting, and each wait for the reply's next data
DEFAULT_DEADLINE = 600.0  # seconds: one whole request, from connecting to its last byte
DONE = "[DONE]"
MiB = 1 << 20
QUOTED_CHARS = 80  # how much of a bad payload an error quotes
ERROR_CHARS = 300  # how much of a server's own error message
ERROR_BODY_BYTES = 64 * 1024  # how much of an HTTP error's body is read
MIN_URL_SECRET = 6  # characters: shorter parts of a URL's user-info or query are not redacted
NEEDS_LIVE_EXTRA = "the live model client needs httpx: pip install -e '.[live]'"


def _httpx() -> ModuleType:
    """httpx, imported on first use: the `live` extra is optional, and the CLI's other
    commands (and every pure function here) should not pay for importing it."""
    try:
        import httpx
    except ModuleNotFoundError as err:
        raise ModuleNotFoundError(NEEDS_LIVE_EXTRA) from err
    return httpx


class ModelClientError(RuntimeError):
    """A model request failed; nothing of its reply was kept."""


class ModelHTTPError(ModelClientError):
    """The server answered with an HTTP error status (401, 429, 500 …)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class ModelTimeoutError(ModelClientError):
    """The server did not answer (or stopped sending) within the client's timeout."""


class ModelConnectionError(ModelClientError):
    """The server could not be reached."""


class ModelStreamError(ModelClientError):
    """The reply stream was cut, malformed, or reported an error before it was complete."""


class ModelReplyTooLargeError(ModelStreamError):
    """The reply passed one of the client's `ReplyLimits`; reading stopped there."""


@dataclass(frozen=True)
class ReplyLimits:
    """What one reply may hold. Past any limit the request fails (`ModelReplyTooLargeError`)
    as soon as the limit is passed, and nothing of the reply is recorded.

    Each lies well above one reply of any current model (at most ~128k output tokens), so a
    real reply never meets it, and a broken or hostile server meets it early.
    """

    max_reply_bytes: int = 32 * MiB  # the event stream as sent (~230 B a one-token chunk)
    max_tool_calls: int = 128  # in one reply; OpenAI's API takes at most 128 tools a request
    max_argument_chars: int = 1 * MiB  # one call's arguments: ~250k tokens of JSON text


# --- secrets: the key and the URL's credentials reach no error, log or screen -------------

Redact = Callable[[str], str]


def _unchanged(text: str) -> str:
    return text


def _any_form(char: str) -> str:
    """A pattern for one character of a secret in any form a server may give it back in:
    itself, percent-encoded (`+` for a space, and the other way round), JSON-escaped (as
    `\\uXXXX` or not, `/` as `\\/`) or HTML-escaped."""
    forms = {char, "\\" + char, json.dumps(char)[1:-1], html.escape(char)}
    forms.add("".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass")))
    if char in " +":
        forms |= {" ", "+"}
    return f"(?:{'|'.join(map(re.escape, sorted(forms, key=len, reverse=True)))})"


def redactor(secrets: Iterable[str]) -> Redact:
    """A function that writes `***` for every secret in a text: in any letter case, and in
    any mix of the forms `_any_form` knows (so `quote` with any `safe`, `quote_plus`, JSON
    with `ensure_ascii` or not …), each character read in any of them."""
    found = sorted({secret for secret in secrets if secret}, key=len, reverse=True)
    if not found:
        return _unchanged
    spelled = ("".join(map(_any_form, secret)) for secret in found)
    pattern = re.compile("|".join(spelled), re.IGNORECASE)
    return lambda text: pattern.sub("***", text)


_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*://", re.IGNORECASE)


def shown_url(url: str) -> str:
    """`url` as it may be printed: user-info, query and fragment are `***`, invisible
    characters escaped. Works on any text, a malformed URL included.

    The user-info is hidden first, before the text is read any other way, and it runs from
    the scheme's `//` (or the start) to the LAST `@`. Someone who types a password without
    percent-encoding it means all of it, `#`, `?`, `/` and `@` included: in
    `http://alice:pa#ss@host/v1` the user-info is `alice:pa#ss`, though the URL rules end
    it (and the host) at the `#`. Read so, an `@` in a path or query hides more than it
    needs to, the host too: the safe side. Only then are a query and fragment hidden."""
    scheme = _SCHEME.match(url)
    start = scheme.end() if scheme else 0
    at = url.rfind("@")
    head, rest = (url[:start] + "***", url[at:]) if at >= start else (url[:start], url[start:])
    rest, hash_mark, fragment = rest.partition("#")
    rest, question_mark, query = rest.partition("?")
    shown = head + rest + ("?***" if question_mark and query else question_mark)
    shown += "#***" if hash_mark and fragment else hash_mark
    return visible_line(shown, 200)


def check_base_url(url: str) -> SplitResult:
    """The parts of an `http://` or `https://` API root; `ValueError` (quoting the URL as
    `shown_url` does) when it is not one.

    An `@` after the host is refused: most often it ends a user-info typed with `#`, `?` or
    `/` unencoded, which the URL rules (and so the client) would read as a host ending early
    and send the rest of the password on to it in the path or query."""
    if any(char.isspace() or not char.isprintable() for char in url):
        raise ValueError(f"the base URL holds a space or an invisible character: {shown_url(url)}")
    try:
        parts = urlsplit(url)
    except ValueError:
        raise ValueError(f"not a URL: {shown_url(url)}") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http:// or https:// URL: {shown_url(url)}")
    if "@" in parts.path + parts.query + parts.fragment:
        raise ValueError(
            "an @ after the host: write it as %40 there, and # ? / @ in a user name or "
            f"password as %23 %3F %2F %40: {shown_url(url)}"
        )
    try:
        parts.port  # noqa: B018  # raises on a port that is not a number in 0-65535
    except ValueError:
        raise ValueError(f"not a URL: {shown_url(url)}") from None
    if "#" in url:
        raise ValueError(f"a base URL has no #fragment: {shown_url(url)}")
    return parts


def url_secrets(parts: SplitResult) -> list[str]:
    """What of a URL (as `check_base_url` takes it) is secret, as written and percent-decoded:
    its user-info and query, whole and in parts, and the `Basic` token its user-info becomes.
    Parts shorter than `MIN_URL_SECRET` are left out: redacting `1` (`?api-version=1`) would
    garble every message, and so short a value guards nothing."""
    userinfo = parts.netloc.rpartition("@")[0]
    found = [userinfo, *userinfo.split(":", 1), parts.query]
    for pair in parts.query.split("&"):
        found.extend(pair.split("=", 1)[1:])
    decoded = [text for raw in found for text in (raw, unquote(raw))]
    if "@" in parts.netloc:  # what the Authorization header carries, as a server may echo it
        pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
        decoded.append(base64.b64encode(pair.encode("utf-8")).decode("ascii"))
    return [text for text in decoded if len(text) >= MIN_URL_SECRET]


# httpx logs each request's URL and the server's reason phrase (INFO); httpcore, every
# response header (DEBUG). A filter on a logger does not reach its children: name each one.
_HTTP_LOGGERS = (
    "httpx",
    *(f"httpcore.{name}" for name in ("connection", "http11", "http2", "proxy", "socks")),
)


class _RedactedLog(logging.Filter):
    """Redacts the records of the HTTP loggers while a client that knows the secrets is open."""

    def __init__(self, redact: Redact) -> None:
        super().__init__()
        self.redact = redact

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = self.redact(record.getMessage()), ()
        return True


def quote(text: str, redact: Redact, limit: int = QUOTED_CHARS) -> str:
    """Server text in an error message: secrets out first, then cut and made visible."""
    return visible_line(redact(text), limit)


# --- our messages and tools -> the wire ---------------------------------------------------


def to_openai_message(message: Message) -> dict[str, JSON]:
    """One message in the chat-completions form; a tool input travels as a JSON string."""
    if isinstance(message, UserMessage):
        return {"role": "user", "content": message.content}
    if isinstance(message, AssistantMessage):
        wire: dict[str, JSON] = {"role": "assistant", "content": message.content}
        if message.tool_calls:  # some servers refuse an empty list
            wire["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": stringify(call.input)},
                }
                for call in message.tool_calls
            ]
        return wire
    if isinstance(message, ToolMessage):
        # The API has no error flag: the error text itself tells the model what went wrong.
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    raise TypeError(f"not a session message: {type(message).__name__}")


def to_openai_tool(tool: Tool) -> dict[str, JSON]:
    """A tool as a function definition the model may call."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def request_body(model: str, messages: Sequence[Message], tools: Sequence[Tool]) -> dict[str, JSON]:
    """The JSON body of one streaming chat-completions request."""
    body: dict[str, JSON] = {
        "model": model,
        "messages": [to_openai_message(message) for message in messages],
        "stream": True,
    }
    if tools:  # some servers refuse an empty list
        body["tools"] = [to_openai_tool(tool) for tool in tools]
    return body


# --- the wire -> our events (pure: tested without a network) -----------------------------


def sse_lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """Lines of an event stream, decoded incrementally from UTF-8 byte chunks.

    Lines end at CRLF, LF or CR only (the SSE rule) — never at U+2028 and the other breaks
    that `str.splitlines()` (and so httpx's `iter_lines`) also split on, since JSON strings
    may carry them raw. A last line without its end is yielded too. Linear: each chunk is
    split once, and an unfinished line waits in pieces, joined once when it ends.
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    pieces: list[str] = []  # the unfinished line
    after_cr = False  # the text so far ends in CR: a LF that comes next belongs to it
    for chunk in chunks:
        text = _decode(decoder, chunk)
        if not text:
            continue  # e.g. half a character
        if after_cr and text.startswith("\n"):
            text = text[1:]
        after_cr = text.endswith("\r")
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        *ended, rest = text.split("\n")
        if ended:
            pieces.append(ended[0])
            yield "".join(pieces)
            pieces.clear()
            yield from ended[1:]
        if rest:
            pieces.append(rest)
    pieces.append(_decode(decoder, b"", final=True))
    if any(pieces):
        yield "".join(pieces)


def _decode(decoder: codecs.IncrementalDecoder, chunk: bytes, final: bool = False) -> str:
    try:
        return decoder.decode(chunk, final)
    except UnicodeDecodeError as err:
        raise ModelStreamError(f"model stream is not UTF-8: {err.reason}") from err


def sse_data(lines: Iterable[str]) -> Iterator[str]:
    """The `data` of each complete event; comments and other fields are skipped.

    An event is complete at its blank line; one the stream ends in the middle of is dropped,
    as the SSE rules say, so a cut stream cannot pass half a payload for a whole one.
    """
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield "\n".join(data)
            data = []
            continue
        name, colon, value = line.partition(":")
        if name == "data" and colon:
            data.append(value[1:] if value.startswith(" ") else value)
        elif name == "data":
            data.append("")


def narrow_arguments(
    name: str, arguments: str, tools_by_name: dict[str, Tool]
) -> tuple[JSON, str | None]:
    """The call's input, and why it must not run (`None`: it may).

    Arguments that are not JSON keep the model's raw text as the input (a JSON string, so the
    session file stays valid) with an error; so does valid JSON that is not the object a
    tool's schema asks for.
    """
    try:
        value: JSON = parse(arguments)
    except (ValueError, RecursionError) as err:
        return arguments, f"invalid JSON arguments for tool {name}: {describe_error(err)}"
    tool = tools_by_name.get(name)
    if tool is not None and tool.parameters.get("type") == "object" and not isinstance(value, dict):
        return value, f"tool {name} needs a JSON object as input, got {json_type(value)}"
    return value, None


@dataclass
class _CallParts:
    """One tool call as it streams in: id and name once, arguments in pieces."""

    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    chars: int = 0  # of the arguments so far


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _add_call_delta(
    parts: dict[int, _CallParts], delta: object, limits: ReplyLimits, redact: Redact
) -> None:
    item = record(delta)
    if item is None:
        raise ModelStreamError(
            f"model stream sent a tool call that is not an object: {quote(repr(delta), redact)}"
        )
    index = item.get("index")
    if isinstance(index, bool) or not isinstance(index, int):
        index = max(parts, default=-1) + 1  # no index: a whole call in one piece (older Ollama)
    if index not in parts and len(parts) == limits.max_tool_calls:
        raise ModelReplyTooLargeError(
            f"model reply asks for more than {limits.max_tool_calls} tool calls (max_tool_calls)"
        )
    call = parts.setdefault(index, _CallParts())
    call.id = call.id or _text(item.get("id"))  # some servers repeat id and name on every piece
    function = record(item.get("function")) or {}
    call.name = call.name or _text(function.get("name"))
    arguments = function.get("arguments")
    if arguments is None:
        return
    piece = arguments if isinstance(arguments, str) else stringify(arguments)  # parsed already
    call.chars += len(piece)
    if call.chars > limits.max_argument_chars:
        raise ModelReplyTooLargeError(
            f"model reply holds a tool call whose arguments pass {limits.max_argument_chars:,} "
            "characters (max_argument_chars)"
        )
    call.arguments.append(piece)


def reply_events(
    payloads: Iterable[str],
    tools: Sequence[Tool],
    *,
    limits: ReplyLimits = ReplyLimits(),
    redact: Redact = _unchanged,
) -> Iterator[StreamEvent]:
    """Events of one reply from its event-stream payloads: text as it comes, calls at the end.

    The reply is complete at `[DONE]`, or at the end of a stream that gave a `finish_reason`;
    a stream that ends before either raises `ModelStreamError`, one that passes `limits`
    `ModelReplyTooLargeError`. Server text quoted in an error passes `redact` first.
    """
    parts: dict[int, _CallParts] = {}
    finished = False
    for payload in payloads:
        if payload == DONE:
            finished = True
            break
        try:
            chunk = record(parse(payload))
        except (ValueError, RecursionError):
            raise ModelStreamError(
                f"model stream sent data that is not JSON: {quote(payload, redact)}"
            ) from None  # the decoding error quotes the payload too
        if chunk is None:
            raise ModelStreamError(
                f"model stream sent data that is not an object: {quote(payload, redact)}"
            )
        if chunk.get("error") is not None:
            raise ModelStreamError(
                "model server reported an error mid-stream: "
                + quote(_error_text(chunk), redact, ERROR_CHARS)
            )
        choices = chunk.get("choices")
        first = record(choices[0]) if isinstance(choices, list) and choices else None
        if first is None:
            continue  # e.g. a usage chunk
        delta = record(first.get("delta")) or {}
        text = delta.get("content")
        if isinstance(text, str) and text:
            yield TextDelta(text)
        call_deltas = delta.get("tool_calls")
        if isinstance(call_deltas, list):
            for call_delta in call_deltas:
                _add_call_delta(parts, call_delta, limits, redact)
        if first.get("finish_reason") is not None:
            finished = True
    if not finished:
        raise ModelStreamError(
            "model stream ended before the reply was complete (no [DONE], no finish_reason)"
        )
    tools_by_name = {tool.name: tool for tool in tools}
    for index in sorted(parts):
        call = parts[index]
        call_id = call.id or f"call_{index}"  # the result needs an id to point at
        value, error = narrow_arguments(call.name, "".join(call.arguments), tools_by_name)
        yield ToolCallEvent(ToolCall(call_id, call.name, value), error)


def _error_text(body: object) -> str:
    """The message of an OpenAI-style (`{"error": {"message"}}`) or Ollama-style error body."""
    item = record(body)
    if item is None:
        return str(body)
    error = item.get("error", item.get("detail"))
    inner = record(error)
    message = inner.get("message") if inner is not None else error
    return message if isinstance(message, str) else stringify(item)


# --- the client ----------------------------------------------------------------------------


class _Watch:
    """One request's bounds while its reply streams in: bytes read, time since the last
    data (keep-alive comments do not count), and the whole request's deadline.

    The deadline also holds where no byte arrives at all (connecting, waiting for headers,
    a read that blocks): a timer shuts the request's socket down when it passes, and the
    read in progress returns at once.
    """

    def __init__(self, timeout: float, deadline: float, limits: ReplyLimits, where: str) -> None:
        self.timeout, self.deadline, self.limits, self.where = timeout, deadline, limits, where
        self.ends = time.monotonic() + deadline
        self.last_data = time.monotonic()
        self.received = 0
        self.passed = False  # the timer fired
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(deadline, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Watch:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def trace(self, event: str, info: dict[str, object]) -> None:
        """httpcore's trace hook: keep the socket of each connection this request opens."""
        if event == "connection.connect_tcp.complete":
            stream = info.get("return_value")
            get_extra_info = getattr(stream, "get_extra_info", None)
            sock = get_extra_info("socket") if get_extra_info is not None else None
            if isinstance(sock, socket.socket):
                with self._lock:
                    self._sockets.append(sock)
                    if self.passed:
                        _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.passed = True
            for sock in self._sockets:
                _shut(sock)

    def headers_read(self) -> None:
        self.last_data = time.monotonic()

    def chunks(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        for chunk in chunks:
            self.received += len(chunk)
            if self.received > self.limits.max_reply_bytes:
                raise ModelReplyTooLargeError(
                    f"model reply passes {self.limits.max_reply_bytes:,} bytes (max_reply_bytes)"
                )
            now = time.monotonic()
            if self.passed or now > self.ends:
                raise self.too_late()
            if now - self.last_data > self.timeout:
                raise ModelTimeoutError(
                    f"model server sent no reply data for {self.timeout:g} s {self.where}"
                )
            yield chunk

    def data(self, payloads: Iterable[str]) -> Iterator[str]:
        for payload in payloads:
            self.last_data = time.monotonic()
            yield payload

    def too_late(self) -> ModelTimeoutError:
        return ModelTimeoutError(
            f"model reply was not complete within the {self.deadline:g} s deadline {self.where}"
        )


def _shut(sock: socket.socket) -> None:
    # Wakes a read blocked on this socket; a socket already closed raises, and is left be.
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


class OpenAICompatibleClient:
    """`stream(messages, tools)` against `POST {base_url}/chat/completions` with `stream: true`.

    The API key is read from the environment variable `api_key_env` (none is sent when it is
    unset, as local servers need none). The key, and the user-info and query of `base_url`,
    are never part of a repr or an error message: every text a server sends is redacted
    before it is quoted, and every URL is shown as `shown_url` shows it.

    Bounds: `timeout` for connecting and for each wait for the reply's next data (keep-alive
    comments do not count as data), `deadline` for the whole request, and `limits` for what
    one reply may hold. Each ends the request with an error; nothing of the reply is kept.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str = DEFAULT_API_KEY_ENV,
        timeout: float = DEFAULT_TIMEOUT,
        deadline: float = DEFAULT_DEADLINE,
        limits: ReplyLimits = ReplyLimits(),
    ) -> None:
        parts = check_base_url(base_url)
        http = _httpx()
        path = parts.path.rstrip("/")
        host = parts.netloc.rpartition("@")[2]
        self.base_url = shown_url(urlunsplit(parts._replace(path=path)))
        self.url = shown_url(urlunsplit(parts._replace(path=path + "/chat/completions")))
        self._endpoint = urlunsplit(parts._replace(netloc=host, path=path + "/chat/completions"))
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.deadline = deadline
        self.limits = limits
        self._api_key = os.environ.get(api_key_env) or None
        self._redact = redactor([self._api_key or "", *url_secrets(parts)])
        self._log_filter = _RedactedLog(self._redact)
        headers = {"Accept": "text/event-stream", "Content-Type": "application/json"}
        if self._api_key is not None:
            headers["Authorization"] = f"Bearer {self._api_key}"
        auth = None
        if "@" in parts.netloc:  # sent as a header, so that no log line carries it in the URL
            auth = (unquote(parts.username or ""), unquote(parts.password or ""))
        self._http = http.Client(
            headers=headers,
            auth=auth,
            timeout=http.Timeout(timeout),
            # A fresh connection per request: its socket is the one the deadline can shut.
            limits=http.Limits(max_keepalive_connections=0),
        )
        for name in _HTTP_LOGGERS:  # removed by `close`
            logging.getLogger(name).addFilter(self._log_filter)

    def stream(self, messages: Sequence[Message], tools: Sequence[Tool]) -> Iterator[StreamEvent]:
        body = stringify(request_body(self.model, messages, tools)).encode("utf-8")
        http = _httpx()
        where = f"(POST {self.url})"
        with _Watch(self.timeout, self.deadline, self.limits, where) as watch:
            try:
                with self._http.stream(
                    "POST", self._endpoint, content=body, extensions={"trace": watch.trace}
                ) as response:
                    self._check(response, where)
                    watch.headers_read()
                    lines = sse_lines(watch.chunks(response.iter_bytes()))
                    payloads = watch.data(sse_data(lines))
                    yield from reply_events(
                        payloads, tools, limits=self.limits, redact=self._redact
                    )
            except http.HTTPError as err:
                raise self._failure(err, watch, where) from None

    def _failure(self, err: Exception, watch: _Watch, where: str) -> ModelClientError:
        """Our error for httpx's `err`, quoting nothing a secret could hide in unredacted."""
        http = _httpx()
        if watch.passed:
            return watch.too_late()
        said = self._redact(str(err))
        if isinstance(err, http.TimeoutException):
            return ModelTimeoutError(f"model server sent nothing for {self.timeout:g} s {where}")
        if isinstance(err, http.ConnectError):
            return ModelConnectionError(f"cannot reach the model server at {self.url}: {said}")
        if isinstance(err, (http.RemoteProtocolError, http.ReadError)):
            return ModelStreamError(f"model stream was cut before the reply was complete: {said}")
        return ModelClientError(f"model request failed {where}: {said}")

    def _check(self, response: httpx.Response, where: str) -> None:
        if response.status_code >= 400:
            raw = bytearray()
            for chunk in response.iter_bytes():  # an error body is read up to a bound only
                raw += chunk
                if len(raw) >= ERROR_BODY_BYTES:
                    break
            text = raw[:ERROR_BODY_BYTES].decode("utf-8", "replace")
            try:
                detail = _error_text(json.loads(text))
            except ValueError:
                detail = text.strip() or "(empty body)"
            hint = ""
            if response.status_code in (401, 403):
                hint = f" — is ${self.api_key_env} set to a valid key?"
            elif response.headers.get("retry-after"):
                hint = f" — retry after {quote(response.headers['retry-after'], self._redact)} s"
            status = f"{response.status_code} {quote(response.reason_phrase, self._redact)}"
            raise ModelHTTPError(
                f"model server answered HTTP {status.strip()} {where}: "
                f"{quote(detail, self._redact, ERROR_CHARS)}{hint}",
                response.status_code,
            )
        kind = response.headers.get("content-type", "")
        if "text/event-stream" not in kind:
            raise ModelStreamError(
                f"model server answered {quote(kind, self._redact) or 'no content type'}, "
                f"not an event stream {where}: does it support stream: true?"
            )

    def redact(self, text: str) -> str:
        """`text` with this client's secrets (key, URL user-info and query) as `***`."""
        return self._redact(text)

    def close(self) -> None:
        for name in _HTTP_LOGGERS:
            logging.getLogger(name).removeFilter(self._log_filter)
        self._http.close()

    def __enter__(self) -> OpenAICompatibleClient:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        key = f"key from ${self.api_key_env}" if self._api_key else "no key"
        return f"OpenAICompatibleClient({self.base_url!r}, model={self.model!r}, {key})"
