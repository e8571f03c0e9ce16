"""A live model behind the loop: any server that speaks the OpenAI-compatible chat API.

Hosted, or local (llama.cpp's llama-server, Ollama, vLLM). Opt-in: it needs the `live` extra
(httpx); the scripted client stays the default everywhere else. The reply streams in as
server-sent events: text is passed on as it arrives, tool calls once the reply is complete.
Model output is untrusted JSON, narrowed as the chapter's `toolInput` does.
"""

from __future__ import annotations

import codecs
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    import httpx

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_TIMEOUT = 60.0  # seconds, for connecting and for each wait on the next bytes
DONE = "[DONE]"
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
    may carry them raw. A last line without its end is yielded too.
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    pending = ""
    for chunk in chunks:
        pending += _decode(decoder, chunk)
        start = 0
        while True:
            cr, lf = pending.find("\r", start), pending.find("\n", start)
            if cr == -1 and lf == -1:
                break
            if cr != -1 and (lf == -1 or cr < lf):
                if cr + 1 == len(pending):
                    break  # a CR at the end of the chunk may be the first half of a CRLF
                end = cr + 2 if pending[cr + 1] == "\n" else cr + 1
                yield pending[start:cr]
            else:
                end = lf + 1
                yield pending[start:lf]
            start = end
        pending = pending[start:]
    pending += _decode(decoder, b"", final=True)
    if pending.endswith("\r"):
        yield pending[:-1]
    elif pending:
        yield pending


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


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _add_call_delta(parts: dict[int, _CallParts], delta: object) -> None:
    item = record(delta)
    if item is None:
        raise ModelStreamError(f"model stream sent a tool call that is not an object: {delta!r}")
    index = item.get("index")
    if isinstance(index, bool) or not isinstance(index, int):
        index = max(parts, default=-1) + 1  # no index: a whole call in one piece (older Ollama)
    call = parts.setdefault(index, _CallParts())
    call.id = call.id or _text(item.get("id"))  # some servers repeat id and name on every piece
    function = record(item.get("function")) or {}
    call.name = call.name or _text(function.get("name"))
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        call.arguments.append(arguments)
    elif arguments is not None:
        call.arguments.append(stringify(arguments))  # already parsed by the server


def reply_events(payloads: Iterable[str], tools: Sequence[Tool]) -> Iterator[StreamEvent]:
    """Events of one reply from its event-stream payloads: text as it comes, calls at the end.

    The reply is complete at `[DONE]`, or at the end of a stream that gave a `finish_reason`;
    a stream that ends before either raises `ModelStreamError`.
    """
    parts: dict[int, _CallParts] = {}
    finished = False
    for payload in payloads:
        if payload == DONE:
            finished = True
            break
        try:
            chunk = record(parse(payload))
        except (ValueError, RecursionError) as err:
            raise ModelStreamError(
                f"model stream sent data that is not JSON: {payload[:80]!r}"
            ) from err
        if chunk is None:
            raise ModelStreamError(
                f"model stream sent data that is not an object: {payload[:80]!r}"
            )
        if chunk.get("error") is not None:
            raise ModelStreamError(
                f"model server reported an error mid-stream: {_error_text(chunk)}"
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
                _add_call_delta(parts, call_delta)
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


class OpenAICompatibleClient:
    """`stream(messages, tools)` against `POST {base_url}/chat/completions` with `stream: true`.

    The API key is read from the environment variable `api_key_env` (none is sent when it is
    unset, as local servers need none); it is never part of a repr or an error message.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str = DEFAULT_API_KEY_ENV,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        http = _httpx()
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = timeout
        self._api_key = os.environ.get(api_key_env) or None
        headers = {"Accept": "text/event-stream", "Content-Type": "application/json"}
        if self._api_key is not None:
            headers["Authorization"] = f"Bearer {self._api_key}"
        self._http = http.Client(headers=headers, timeout=http.Timeout(timeout))

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def stream(self, messages: Sequence[Message], tools: Sequence[Tool]) -> Iterator[StreamEvent]:
        body = stringify(request_body(self.model, messages, tools)).encode("utf-8")
        http = _httpx()
        try:
            with self._http.stream("POST", self.url, content=body) as response:
                self._check(response)
                yield from reply_events(sse_data(sse_lines(response.iter_bytes())), tools)
        except http.TimeoutException as err:
            raise ModelTimeoutError(
                f"model server sent nothing for {self.timeout:g} s (POST {self.url})"
            ) from err
        except http.ConnectError as err:
            raise ModelConnectionError(
                f"cannot reach the model server at {self.url}: {err}"
            ) from err
        except (http.RemoteProtocolError, http.ReadError) as err:
            raise ModelStreamError(
                f"model stream was cut before the reply was complete: {self._redact(str(err))}"
            ) from err
        except http.HTTPError as err:
            raise ModelClientError(
                f"model request failed (POST {self.url}): {self._redact(str(err))}"
            ) from err

    def _check(self, response: httpx.Response) -> None:
        if response.status_code >= 400:
            response.read()
            try:
                detail = _error_text(json.loads(response.text))
            except ValueError:
                detail = response.text.strip()[:300] or "(empty body)"
            hint = ""
            if response.status_code in (401, 403):
                hint = f" — is ${self.api_key_env} set to a valid key?"
            elif response.headers.get("retry-after"):
                hint = f" — retry after {response.headers['retry-after']} s"
            raise ModelHTTPError(
                f"model server answered HTTP {response.status_code} {response.reason_phrase} "
                f"(POST {self.url}): {self._redact(detail)}{hint}",
                response.status_code,
            )
        kind = response.headers.get("content-type", "")
        if "text/event-stream" not in kind:
            raise ModelStreamError(
                f"model server answered {kind or 'no content type'}, not an event stream "
                f"(POST {self.url}): does it support stream: true?"
            )

    def _redact(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text

    def close(self) -> None:
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
