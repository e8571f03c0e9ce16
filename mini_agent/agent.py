# 注释用中文全角标点，和本章一样
"""`run_agent`：磁盘上的会话和发给模型的上下文只在这里汇合（本章“会话与上下文的责任边界”）。
本章只画了 `runAgent` 的图，这里照图写；本包多做的事各是一次调用，写在文件后半（“本章之外”）。"""

from __future__ import annotations

import contextlib
import copy
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from .context import SMALLEST_UNIT_TOO_BIG, ContextBudgetError, trim_context
from .json_form import js_string
from .model_client import ModelClient, StreamEvent, TextDelta
from .session import (
    AssistantMessage,
    Message,
    PathLike,
    ToolCall,
    ToolMessage,
    UserMessage,
    append_session,
    load_session,
)
from .store import written_anyway
from .tools import Tool

DEFAULT_MAX_TURNS = 20
INTERRUPTED = "interrupted: no result was recorded"


class AgentTurnLimitError(RuntimeError):
    """过了轮数上限，模型还在调用工具。"""


@dataclass(frozen=True)
class AgentResult:
    """最终的 assistant 消息，和内存里的每一条消息（加载来的也在内）。"""

    final: AssistantMessage
    messages: tuple[Message, ...]


def run_agent(
    prompt: str | None,
    *,
    client: ModelClient,
    tools: Sequence[Tool] = (),
    session_path: PathLike | None = None,
    context_max_chars: int | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    fsync: bool = False,
    on_request: Callable[[Sequence[Message], Sequence[Message]], None] | None = None,
) -> AgentResult:
    """一个提示，跑到最终答案。有 `session_path` 先加载会话、每条消息追加进去（`fsync=True`
    时每次落盘）；有 `context_max_chars` 每次请求前裁剪。`on_request(messages, context)` 在每次
    请求前看到两份状态。`prompt=None` 不记新提示，回答磁盘上的会话（`chat` 这样续上失败的请求）。"""
    check_arguments(prompt, tools, session_path, context_max_chars, max_turns)
    tools_by_name = {tool.name: tool for tool in tools}
    # options.sessionPath 存在？loadSession → messages（磁盘完整记录）；不存在？messages = []
    messages: list[Message] = load_session(session_path) if session_path is not None else []

    def record(message: Message) -> None:
        if session_path is not None:  # sessionPath 存在时 appendSession（磁盘态）——本包先写磁盘
            try:
                append_session(session_path, message, fsync=fsync)
            except BaseException as error:
                if written_anyway(error):  # 到底写进去了：内存也记上，和磁盘一致
                    messages.append(message)
                raise
        messages.append(message)  # messages.push（内存态）

    if prompt is None:
        check_resumable(messages, session_path)
    for result in interrupted_results(messages):  # 上一次运行被打断时没有结果的调用
        record(result)
    if prompt is not None:
        record(UserMessage(js_string(prompt)))
    for _ in range(max_turns):
        # 每轮 client.stream 前：contextMaxChars 存在？trimContext → 发给模型；不存在？原样发
        request = closed_for_request(messages)
        context = request if context_max_chars is None else trim_context(request, context_max_chars)
        if on_request is not None:
            on_request(tuple(messages), tuple(context))
        assistant, input_errors = collect_reply(client.stream(list(context), tools))
        record(assistant)
        if not assistant.tool_calls:
            return AgentResult(assistant, tuple(messages))  # 模型不再调用工具：这就是最终答案
        try:
            for call, input_error in zip(assistant.tool_calls, input_errors, strict=True):
                record(run_tool(tools_by_name, call, input_error))
        except BaseException:  # Ctrl-C、磁盘拒绝的结果：能记就马上在磁盘上记下被打断的调用
            with contextlib.suppress(Exception):  # 记不下，下一次运行会记
                if session_path is not None:  # 第二次 Ctrl-C 可能让内存落在磁盘后面
                    messages[:] = load_session(session_path)
                for result in interrupted_results(messages):
                    record(result)
            raise
    raise AgentTurnLimitError(f"agent stopped after {max_turns} model turns without a final answer")


def run_tool(
    tools_by_name: dict[str, Tool], call: ToolCall, input_error: str | None = None
) -> ToolMessage:
    tool = tools_by_name.get(call.name)  # 语义在执行层兜底：toolsByName.get(call.name)
    if tool is None:
        return ToolMessage(call.id, f"unknown tool: {call.name}", is_error=True)
    if input_error is not None:  # 模型给的参数不是合格的 JSON 对象（模型客户端查出的）
        return ToolMessage(call.id, input_error, is_error=True)
    try:
        output = tool.run(copy.deepcopy(call.input))  # 工具拿自己的一份：记下的调用不变
    except Exception as err:  # 工具出错也记下来，交还给模型
        return ToolMessage(call.id, f"{type(err).__name__}: {err}", is_error=True)
    if not isinstance(output, str):
        return ToolMessage(
            call.id, f"tool {call.name} returned {type(output).__name__}, not str", is_error=True
        )
    return ToolMessage(call.id, js_string(output))  # 两个码点的代理对合成一个字符


def collect_reply(events: Iterable[StreamEvent]) -> tuple[AssistantMessage, list[str | None]]:
    # 读完 client.stream（整个回复，或者抛错）：文字拼成 content，调用按顺序收齐
    text: list[str] = []
    calls: list[ToolCall] = []
    input_errors: list[str | None] = []  # 每个调用能不能运行：None 能，否则是原因
    for event in events:
        if isinstance(event, TextDelta):
            text.append(event.text)
        else:
            calls.append(event.call)
            input_errors.append(event.input_error)
    return AssistantMessage("".join(text), tuple(calls)), input_errors


# --- 本章之外 ----------------------------------------------------------------------------------


def check_arguments(
    prompt: object, tools: object, session_path: object, budget: object, max_turns: object
) -> None:
    """写下任何东西之前，先拒绝不对的参数（TypeScript 在编译时就拒绝了其中大多数）。"""
    if prompt is None and session_path is None:
        raise ValueError("prompt=None answers a session on disk: give session_path too")
    if prompt is not None and not isinstance(prompt, str):
        raise TypeError(f"prompt must be a str, not {type(prompt).__name__}")
    for name, value in (("max_turns", max_turns), ("context_max_chars", budget)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if max_turns < 1:  # type: ignore[operator]
        raise ValueError(f"max_turns must be at least 1, got {max_turns}")
    if budget is not None and budget <= 0:  # type: ignore[operator]  # 提问那个单元就装不下
        raise ContextBudgetError(SMALLEST_UNIT_TOO_BIG)
    if not isinstance(tools, Sequence) or not all(isinstance(tool, Tool) for tool in tools):
        raise TypeError("tools must be a sequence of Tool")
    if len({tool.name for tool in tools}) != len(tools):
        raise ValueError("tool names must be unique")
    if session_path is not None and not isinstance(session_path, (str, os.PathLike)):
        raise TypeError(f"session_path must be a path, not {type(session_path).__name__}")


def check_resumable(messages: Sequence[Message], session_path: object) -> None:
    """`prompt=None` 回答磁盘上的会话：会话里没有可回答的东西时拒绝。"""
    if not messages:
        raise ValueError(f"prompt=None: the session {session_path} is empty; give a prompt")
    last = messages[-1]
    if isinstance(last, AssistantMessage) and not last.tool_calls:
        raise ValueError(
            f"prompt=None: the session {session_path} ends with the assistant's final answer, "
            "so there is nothing to answer; give a prompt"
        )


def interrupted_results(messages: Sequence[Message]) -> list[ToolMessage]:
    """最后一个 assistant 的调用里，后面没有结果回答的，各补一条出错的结果：被打断的运行
    （Ctrl-C、被拒绝写入的结果、被杀掉的进程）留下的未完成调用。"""
    end = len(messages)
    while end > 0 and isinstance(messages[end - 1], ToolMessage):
        end -= 1
    last = messages[end - 1] if end > 0 else None
    calls = last.tool_calls if isinstance(last, AssistantMessage) else ()
    answered = {m.tool_call_id for m in messages[end:] if isinstance(m, ToolMessage)}
    return [ToolMessage(c.id, INTERRUPTED, True) for c in calls if c.id not in answered]


def closed_for_request(messages: Sequence[Message]) -> Sequence[Message]:
    """按模型服务接受的样子整理 `messages`，只用于这一次请求：assistant 之后没有结果回答的
    调用，在请求里补一条 `INTERRUPTED` 结果；不回答它前面那个 assistant 任何调用的结果，不发。
    文件里保留写下的原样。"""
    closed: list[Message] = []
    waiting: list[str] = []  # the calls of the last assistant not answered yet
    for message in [*messages, None]:  # None: the end, where open calls close too
        if isinstance(message, ToolMessage):
            if message.tool_call_id in waiting:
                waiting.remove(message.tool_call_id)
                closed.append(message)
            continue
        closed += [ToolMessage(call_id, INTERRUPTED, True) for call_id in waiting]
        waiting = (
            [c.id for c in message.tool_calls] if isinstance(message, AssistantMessage) else []
        )
        if message is not None:
            closed.append(message)
    return closed
