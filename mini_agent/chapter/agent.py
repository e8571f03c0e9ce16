# 注释用中文全角标点，和本章一样
"""照着老z 画的图写的 `runAgent`：本章没有给它的源码，只画了“一份状态进 runAgent 后走哪条路”。

图的三段在这里各是几行：有 `session_path` 就 `load_session`，否则从空列表开始；每次请求模型前，
有 `context_max_chars` 就 `trim_context`，否则原样发；每轮 `record()` 先 `messages.push`，
有 `session_path` 时再 `appendSession`。工具按名字分派（本章的 `toolsByName.get(call.name)`），
找不到就记一条 `unknown tool: NAME`。工具包的 `mini_agent.run_agent` 多做的几件事
（先写磁盘、补记被中断的调用……）见附录 07a_beyond_the_chapter.ipynb#disk-first。
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..messages import Message, ToolMessage, UserMessage
from ..model_client import ModelClient, collect_reply
from ..tools import Tool
from .context import trim_context
from .session import append_session, load_session


def run_agent(
    prompt: str,
    *,
    client: ModelClient,
    tools: Sequence[Tool] = (),
    session_path: str | Path | None = None,
    context_max_chars: int | None = None,
    max_turns: int = 20,
) -> list[Message]:
    tools_by_name = {tool.name: tool for tool in tools}
    # options.sessionPath 存在？loadSession → messages（磁盘完整记录）；不存在？messages = []
    messages = load_session(session_path) if session_path is not None else []

    def record(message: Message) -> None:
        messages.append(message)  # messages.push（内存态）
        if session_path is not None:  # sessionPath 存在时 appendSession（磁盘态）
            append_session(session_path, message)

    record(UserMessage(prompt))
    for _ in range(max_turns):
        # 每轮 client.stream 前：contextMaxChars 存在？trimContext → 发给模型；不存在？原样发
        sent = messages if context_max_chars is None else trim_context(messages, context_max_chars)
        assistant = collect_reply(client.stream(list(sent), tools)).message
        record(assistant)
        if not assistant.tool_calls:
            return messages  # 模型不再调用工具：这一轮的回答就是最终答案
        for call in assistant.tool_calls:
            tool = tools_by_name.get(call.name)  # 语义在执行层兜底
            if tool is None:
                record(ToolMessage(call.id, f"unknown tool: {call.name}", True))
                continue
            try:
                record(ToolMessage(call.id, tool.run(call.input)))
            except Exception as err:  # 工具出错也记下来，交还给模型
                record(ToolMessage(call.id, f"{type(err).__name__}: {err}", True))
    raise RuntimeError(f"agent stopped after {max_turns} model turns without a final answer")
