"""A live model behind the loop: any OpenAI-compatible chat server, streamed (extra `live`)."""

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
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, unquote, urlsplit, urlunsplit

from ..json_form import JSON, describe_error, json_type, parse, stringify
from ..model_client import StreamEvent, TextDelta, ToolCallEvent
from ..session import Message, ToolCall, ToolMessage, UserMessage, record
from ..tools import Tool
from ..visible import visible_line

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_TIMEOUT = 60.0  # seconds: connecting, and each wait for the reply's next data
DEFAULT_DEADLINE = 600.0  # seconds: one whole request, from connecting to its last byte
ERROR_CHARS = 300  # how much of a server's own error message an error quotes
# httpx logs each request's URL and reason phrase; httpcore every response header (DEBUG).
# A filter on a logger does not reach its children: name each one.
HTTP_LOGGERS = ["httpx"] + [
    f"httpcore.{n}" for n in ("connection", "http11", "http2", "proxy", "socks")
]
Redact = Callable[[str], str]


class ModelClientError(RuntimeError):
    """A model request failed; nothing of its reply was kept."""


class ModelHTTPError(ModelClientError):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class ModelTimeoutError(ModelClientError): ...


class ModelConnectionError(ModelClientError): ...


class ModelStreamError(ModelClientError): ...  # cut, malformed, or an error mid-stream


class ModelReplyTooLargeError(ModelStreamError): ...  # past one of the `ReplyLimits`


@dataclass(frozen=True)
class ReplyLimits:
    """What one reply may hold: far above any real reply, so only a broken server meets it."""

    max_reply_bytes: int = 32 << 20  # the event stream as sent (~230 B a one-token chunk)
    max_tool_calls: int = 128  # in one reply; OpenAI's API takes at most 128 tools a request
    max_argument_chars: int = 1 << 20  # one call's arguments: ~250k tokens of JSON text


def redactor(secrets: Iterable[str]) -> Redact:
    """`***` for each secret, any case, each character in any form a server may echo it in."""

    def any_form(char: str) -> str:
        forms = {char, "\\" + char, json.dumps(char)[1:-1], html.escape(char)}
        forms.add("".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass")))
        forms |= {" ", "+"} if char in " +" else set()
        return f"(?:{'|'.join(map(re.escape, sorted(forms, key=len, reverse=True)))})"

    found = sorted({secret for secret in secrets if secret}, key=len, reverse=True)
    pattern = re.compile("|".join("".join(map(any_form, s)) for s in found) or "(?!)", re.I)
    return lambda text: pattern.sub("***", text)


def shown_url(url: str) -> str:
    """`url` (any text) as it may be printed: user-info (to the LAST `@`: a password typed
    unencoded means all of it, `#?/@` too), query and fragment `***`, invisible ones escaped."""
    scheme = re.match(r"[a-z][a-z0-9+.-]*://", url, re.IGNORECASE)
    start = scheme.end() if scheme else 0
    at = url.rfind("@")
    head, rest = (url[:start] + "***", url[at:]) if at >= start else (url[:start], url[start:])
    rest, hash_mark, fragment = rest.partition("#")
    rest, question_mark, query = rest.partition("?")
    shown = head + rest + ("?***" if question_mark and query else question_mark)
    return visible_line(shown + ("#***" if hash_mark and fragment else hash_mark), 200)


def check_base_url(url: str) -> SplitResult:
    """The parts of an `http://` or `https://` API root, or `ValueError` quoting `shown_url`."""
    why, parts = "not a URL", None
    if any(char.isspace() or not char.isprintable() for char in url):
        why = "the base URL holds a space or an invisible character"
    else:
        with contextlib.suppress(ValueError):  # from urlsplit, or a port not in 0-65535
            parts = urlsplit(url)
            if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
                why = "not an http:// or https:// URL"
            elif "@" in parts.path + parts.query + parts.fragment:  # most often a password
                # typed with #, ? or / unencoded: read as a URL, its rest would go to the host
                why = "an @ after the host: write it as %40 there, and # ? / @ in a user name "
                why += "or password as %23 %3F %2F %40"
            else:
                parts.port  # noqa: B018  # raises on a port that is not a number in 0-65535
                why = "a base URL has no #fragment" if "#" in url else ""
    if why or parts is None:
        raise ValueError(f"{why}: {shown_url(url)}")
    return parts


def quote(text: str, redact: Redact, limit: int = 80) -> str:
    """Server text in an error message: secrets out first, then cut and made visible."""
    return visible_line(redact(text), limit)


def _function(name: str, **info: JSON) -> dict[str, JSON]:
    return {"type": "function", "function": {"name": name, **info}}


def request_body(model: str, messages: Sequence[Message], tools: Sequence[Tool]) -> dict[str, JSON]:
    """The JSON body of one streaming chat-completions request: a tool input travels as a JSON
    string, a tool result's error only in its text, and no list is empty (some servers refuse)."""
    wire: list[JSON] = []
    for m in messages:
        if isinstance(m, UserMessage):
            wire.append({"role": "user", "content": m.content})
        elif isinstance(m, ToolMessage):
            wire.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
        else:
            calls: list[JSON] = [
                {"id": c.id, **_function(c.name, arguments=stringify(c.input))}
                for c in m.tool_calls
            ]
            extra: dict[str, JSON] = {"tool_calls": calls} if calls else {}
            wire.append({"role": "assistant", "content": m.content, **extra})
    body: dict[str, JSON] = {"model": model, "messages": wire, "stream": True}
    if tools:
        body["tools"] = [
            _function(t.name, description=t.description, parameters=t.parameters) for t in tools
        ]
    return body


def sse_lines(chunks: Iterable[bytes]) -> Iterator[str]:
    """Lines of an event stream, ended by CRLF, LF or CR only (never U+2028: JSON carries it raw)."""
    pieces: list[str] = []  # the unfinished line, joined once when it ends: linear
    after_cr = False  # the text so far ends in CR: a LF that comes next belongs to it
    try:
        for text in codecs.iterdecode(chunks, "utf-8"):  # never empty
            text = text[1:] if after_cr and text[0] == "\n" else text
            after_cr = text.endswith("\r")
            *ended, rest = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            if ended:
                yield "".join([*pieces, ended[0]])
                yield from ended[1:]
                pieces = []
            pieces.append(rest)
    except UnicodeDecodeError as err:
        raise ModelStreamError(f"model stream is not UTF-8: {err.reason}") from err
    if any(pieces):
        yield "".join(pieces)


def sse_data(lines: Iterable[str]) -> Iterator[str]:
    """The `data` of each complete event: a cut stream passes no half payload."""
    data: list[str] = []
    for line in lines:
        name, _, value = line.partition(":")
        if not line:
            yield from ["\n".join(data)] if data else []
            data = []
        elif name == "data":
            data.append(value.removeprefix(" "))


def narrow_arguments(name: str, arguments: str, tools: dict[str, Tool]) -> tuple[JSON, str | None]:
    """The call's input (the model's text, if not JSON), and why it must not run (`None`: it may)."""
    try:
        value: JSON = parse(arguments)
    except (ValueError, RecursionError) as err:
        return arguments, f"invalid JSON arguments for tool {name}: {describe_error(err)}"
    tool = tools.get(name)
    if tool is not None and tool.parameters.get("type") == "object" and not isinstance(value, dict):
        return value, f"tool {name} needs a JSON object as input, got {json_type(value)}"
    return value, None


def reply_events(
    payloads: Iterable[str],
    tools: Sequence[Tool],
    *,
    limits: ReplyLimits = ReplyLimits(),
    redact: Redact = str,  # str(text) is text: nothing redacted
) -> Iterator[StreamEvent]:
    """One reply's events from its payloads: text as it comes, calls once complete (at `[DONE]`,
    or at the end of a stream that gave a `finish_reason`)."""
    calls: dict[int, tuple[dict[str, str], list[str]]] = {}  # id and name, arguments in pieces
    finished, sizes = False, dict[int, int]()
    for payload in payloads:
        if payload == "[DONE]":
            finished = True
            break
        try:
            chunk, what = record(parse(payload)), "data that is not an object"
        except (ValueError, RecursionError):
            chunk, what = None, "data that is not JSON"  # (the decoding error quotes it too)
        if chunk is None:
            raise ModelStreamError(f"model stream sent {what}: {quote(payload, redact)}")
        if chunk.get("error") is not None:
            said = quote(_error_text(chunk), redact, ERROR_CHARS)
            raise ModelStreamError(f"model server reported an error mid-stream: {said}")
        choices = chunk.get("choices")
        first = (record(choices[0]) if isinstance(choices, list) and choices else None) or {}
        finished = finished or first.get("finish_reason") is not None  # no choice: e.g. usage
        delta = record(first.get("delta")) or {}
        if isinstance(delta.get("content"), str) and delta["content"]:
            yield TextDelta(delta["content"])
        call_deltas = delta.get("tool_calls")
        for call_delta in call_deltas if isinstance(call_deltas, list) else []:
            if (item := record(call_delta)) is None:
                said = f"a tool call that is not an object: {quote(repr(call_delta), redact)}"
                raise ModelStreamError(f"model stream sent {said}")
            index = item.get("index")
            if isinstance(index, bool) or not isinstance(index, int):
                index = max(calls, default=-1) + 1  # a whole call in one piece (older Ollama)
            if index not in calls and len(calls) == (most := limits.max_tool_calls):
                raise ModelReplyTooLargeError(
                    f"model reply asks for more than {most} tool calls (max_tool_calls)"
                )
            named, pieces = calls.setdefault(index, ({}, []))
            function = record(item.get("function")) or {}
            for key, value in (("id", item.get("id")), ("name", function.get("name"))):
                if isinstance(value, str) and not named.get(key):  # some servers repeat them
                    named[key] = value
            if (piece := function.get("arguments")) is None:
                continue
            pieces.append(piece if isinstance(piece, str) else stringify(piece))  # parsed already
            sizes[index] = sizes.get(index, 0) + len(pieces[-1])
            if sizes[index] > (most := limits.max_argument_chars):
                raise ModelReplyTooLargeError(
                    f"model reply holds a tool call whose arguments pass {most:,} characters "
                    "(max_argument_chars)"
                )
    if not finished:
        raise ModelStreamError(
            "model stream ended before the reply was complete (no [DONE], no finish_reason)"
        )
    tools_by_name = {tool.name: tool for tool in tools}
    for index, (named, pieces) in sorted(calls.items()):
        name = named.get("name", "")
        value, error = narrow_arguments(name, "".join(pieces), tools_by_name)
        call_id = named.get("id") or f"call_{index}"  # the result needs an id to point at
        yield ToolCallEvent(ToolCall(call_id, name, value), error)


def _error_text(body: object) -> str:
    """The message of an OpenAI-style (`{"error": {"message"}}`) or Ollama-style error body."""
    item = record(body)
    if item is None:
        return str(body)
    error = item.get("error", item.get("detail"))
    message = error.get("message") if isinstance(error, dict) else error
    return message if isinstance(message, str) else stringify(item)


class _Watch:
    """One request's bounds; at its deadline a timer shuts its sockets down, ending any read."""

    def __init__(self, client: OpenAICompatibleClient) -> None:
        self.client, self.passed, self.sockets = client, False, list[Any]()
        self.timer = threading.Timer(client.deadline, self.expire)
        self.timer.daemon = True

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore's trace hook: keep the socket of each connection this request opens."""
        if event == "connection.connect_tcp.complete":
            self.sockets.append(info["return_value"].get_extra_info("socket"))
            if self.passed:  # read after the append: we see it, or `expire` sees the socket
                self.expire()

    def expire(self) -> None:
        self.passed = True
        for sock in self.sockets:  # wakes a read blocked on it; a closed one raises
            with contextlib.suppress(OSError, AttributeError):
                sock.shutdown(socket.SHUT_RDWR)

    def chunks(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        client, received, self.last_data = self.client, 0, time.monotonic()
        for chunk in chunks:
            received += len(chunk)
            if received > (most := client.limits.max_reply_bytes):
                raise ModelReplyTooLargeError(
                    f"model reply passes {most:,} bytes (max_reply_bytes)"
                )
            if self.passed:
                raise client.failure(None, self)
            if time.monotonic() - self.last_data > client.timeout:
                said = f"sent no reply data for {client.timeout:g} s {client.where}"
                raise ModelTimeoutError(f"model server {said}")
            yield chunk

    def data(self, payloads: Iterable[str]) -> Iterator[str]:
        for payload in payloads:  # keep-alive comments are no data
            self.last_data = time.monotonic()
            yield payload


class OpenAICompatibleClient:
    """`POST {base_url}/chat/completions`, streamed. The key (from `$api_key_env`, if set) and the
    URL's user-info and query reach no repr, error or log."""

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
        try:  # imported on first use: the `live` extra is optional
            import httpx
        except ModuleNotFoundError as err:
            raise ModuleNotFoundError(
                "the live model client needs httpx: pip install -e '.[live]'"
            ) from err
        path = parts.path.rstrip("/")
        self.base_url = shown_url(urlunsplit(parts._replace(path=path)))
        self.url = shown_url(urlunsplit(parts._replace(path=path + "/chat/completions")))
        host = parts.netloc.rpartition("@")[2]
        self._endpoint = urlunsplit(parts._replace(netloc=host, path=path + "/chat/completions"))
        self.where, self.model, self.api_key_env = f"(POST {self.url})", model, api_key_env
        self.timeout, self.deadline, self.limits, self._httpx = timeout, deadline, limits, httpx
        self._api_key = os.environ.get(api_key_env) or None
        # the URL's user-info and query, whole and in parts, as written and percent-decoded, and
        # its Basic token; none under 6 characters (`?api-version=1` guards nothing)
        userinfo, query = parts.netloc.rpartition("@")[0], parts.query
        found = [userinfo, *userinfo.split(":", 1), query]
        found += [value for pair in query.split("&") for value in pair.split("=", 1)[1:]]
        auth = (
            (unquote(parts.username or ""), unquote(parts.password or ""))
            if "@" in parts.netloc
            else None
        )
        found += [base64.b64encode(":".join(auth).encode()).decode()] if auth else []
        secrets = [text for raw in found for text in (raw, unquote(raw)) if len(text) >= 6]
        self.redact = redactor([self._api_key or "", *secrets])
        headers = {"Accept": "text/event-stream", "Content-Type": "application/json"}
        headers |= {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        # auth as a header: no log line carries it in the URL; a fresh connection per request:
        # its socket is the one the deadline can shut
        keep_none = httpx.Limits(max_keepalive_connections=0)
        self._http = httpx.Client(headers=headers, auth=auth, timeout=timeout, limits=keep_none)
        for name in HTTP_LOGGERS:  # removed by `close`
            logging.getLogger(name).addFilter(self._log_filter)

    def _log_filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = self.redact(record.getMessage()), ()
        return True

    def stream(self, messages: Sequence[Message], tools: Sequence[Tool]) -> Iterator[StreamEvent]:
        body = stringify(request_body(self.model, messages, tools)).encode("utf-8")
        watch = _Watch(self)
        watch.timer.start()
        try:
            with self._http.stream(
                "POST", self._endpoint, content=body, extensions={"trace": watch.trace}
            ) as response:
                self._check(response)
                lines = sse_lines(watch.chunks(response.iter_bytes()))
                payloads = watch.data(sse_data(lines))
                yield from reply_events(payloads, tools, limits=self.limits, redact=self.redact)
        except self._httpx.HTTPError as err:
            raise self.failure(err, watch) from None
        finally:
            watch.timer.cancel()

    def failure(self, err: Exception | None, watch: _Watch) -> ModelClientError:
        """Our error for httpx's `err`, quoting nothing a secret could hide in unredacted."""
        http, said, where = self._httpx, self.redact(str(err)), self.where
        if watch.passed:
            return ModelTimeoutError(
                f"model reply was not complete within the {self.deadline:g} s deadline {where}"
            )
        if isinstance(err, http.TimeoutException):
            return ModelTimeoutError(f"model server sent nothing for {self.timeout:g} s {where}")
        if isinstance(err, http.ConnectError):
            return ModelConnectionError(f"cannot reach the model server at {self.url}: {said}")
        if isinstance(err, (http.RemoteProtocolError, http.ReadError)):
            return ModelStreamError(f"model stream was cut before the reply was complete: {said}")
        return ModelClientError(f"model request failed {where}: {said}")

    def _check(self, response: Any) -> None:
        status, headers, redact, where = (
            response.status_code,
            response.headers,
            self.redact,
            self.where,
        )
        if status >= 400:  # of an error body, the first 64 KiB only
            text = next(response.iter_bytes(64 * 1024), b"").decode("utf-8", "replace")
            try:
                detail = _error_text(json.loads(text))
            except ValueError:
                detail = text.strip() or "(empty body)"
            hint = f" — is ${self.api_key_env} set to a valid key?" if status in (401, 403) else ""
            if not hint and headers.get("retry-after"):
                hint = f" — retry after {quote(headers['retry-after'], redact)} s"
            said = f"{status} {quote(response.reason_phrase, redact)}".strip()
            said += f" {where}: {quote(detail, redact, ERROR_CHARS)}{hint}"
            raise ModelHTTPError(f"model server answered HTTP {said}", status)
        if "text/event-stream" not in (kind := headers.get("content-type", "")):
            said = f"{quote(kind, redact) or 'no content type'}, not an event stream {where}"
            raise ModelStreamError(f"model server answered {said}: does it support stream: true?")

    def close(self) -> None:
        for name in HTTP_LOGGERS:
            logging.getLogger(name).removeFilter(self._log_filter)
        self._http.close()

    def __enter__(self) -> OpenAICompatibleClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        key = f"key from ${self.api_key_env}" if self._api_key else "no key"
        return f"OpenAICompatibleClient({self.base_url!r}, model={self.model!r}, {key})"
