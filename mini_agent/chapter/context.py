# ruff: noqa: RUF003  # 注释用中文全角标点，和本章一样
"""照搬本章的 src/context.ts：`trimContext` 的单元扫描和老z 画的装预算的算法，逐行对应。

本章的两层循环原样保留：每条 tool result 都向前找一遍声明它的 assistant，每装一个单元都把
`unit + kept` 整个重新量一遍——历史很长时按平方增长，但一眼就能看出是对的。字符照本章的
`.length` 数（UTF-16 码元）。工具包的 `mini_agent.context` 最坏也是线性的，数的是码点：没有
U+FFFF 以外的字符（emoji 之类）时，两边的结果一样。tests/test_properties.py 在随机历史上拿它和
这里比（它不从 `mini_agent.context` 推导出来），tests/test_node_differential.py 拿这里和 node 里
本章的 JavaScript 比。
"""

from __future__ import annotations

from collections.abc import Sequence

from ..context import CANNOT_SERIALIZE, EMPTY_CONTEXT, SMALLEST_UNIT_TOO_BIG, ContextBudgetError
from ..json_form import js_length
from ..messages import AssistantMessage, Message, ToolMessage
from .session import json_stringify


def estimate_context_chars(messages: Sequence[Message]) -> int:
    # 每条消息 JSON.stringify(message).length，再加一个分隔符；每次都从头算。
    # .length 数的是 UTF-16 码元：😀 算 2 个（Python 的 len 数码点，只算 1 个），所以用 js_length
    total = 0
    for index, message in enumerate(messages):
        try:
            serialized = json_stringify(message)
        except (TypeError, ValueError, RecursionError) as error:
            # stringify 自己的报错不说是哪一条：包一层，带上 message ${index}
            raise ValueError(f"message {index} {CANNOT_SERIALIZE}: {error}") from error
        # 本章还要判 serialized === undefined；Python 的 json 没有“返回空”这条路，写不成就抛错
        total += js_length(serialized) + 1  # serialized.length + 1
    return total


def context_units(messages: Sequence[Message]) -> list[list[Message]]:
    units: list[list[Message]] = []
    index = len(messages) - 1
    while index >= 0:
        message = messages[index]
        if isinstance(message, ToolMessage):
            # 向前找声明该 toolCallId 的 assistant
            assistant_index = -1
            for i in range(index - 1, -1, -1):
                candidate = messages[i]
                if isinstance(candidate, AssistantMessage) and any(
                    call.id == message.tool_call_id for call in candidate.tool_calls
                ):
                    assistant_index = i
                    break
            if assistant_index >= 0:  # 找到了：从 assistant 一路切到当前 tool，成一个单元
                units.insert(0, list(messages[assistant_index : index + 1]))
                index = assistant_index - 1
                continue
        units.insert(0, [message])  # 其余消息（和找不到声明者的 tool）单独成单元
        index -= 1
    return units


def trim_context(messages: Sequence[Message], max_chars: int) -> list[Message]:
    kept: list[Message] = []
    for unit in reversed(context_units(messages)):  # 从最新的单元往前装
        if (
            estimate_context_chars(unit + kept) > max_chars
        ):  # estimateContextChars(unit ∪ kept) 超限？
            if not kept:
                raise ContextBudgetError(SMALLEST_UNIT_TOO_BIG)
            break  # 已经装了一些：不再往前装
        kept = unit + kept  # kept.unshift(...unit)
    if not kept:
        raise ContextBudgetError(EMPTY_CONTEXT)
    return kept
