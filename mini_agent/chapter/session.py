# ruff: noqa: RUF002  # 注释用中文全角标点，和本章一样
"""照搬本章的 src/session.ts：和本章逐行对应，注释也照本章的口吻写。

笔记本 01–03 把它放在本章的 TypeScript 节选旁边。工具包的实现在 `mini_agent.session`，与本章有几处
有意的不同（物理行号、拒绝 NaN、追加前的守卫……），每一处见附录 07a_beyond_the_chapter.ipynb#differences。

与 TypeScript 的对应：`undefined` → `None`；`value is ToolCall[]` → `TypeGuard`；
`JSON.parse` → `json.loads`；`JSON.stringify(message)` → `json_stringify(message)`（和 JavaScript
写得一字不差，NaN、Infinity 也照样写成 null）；`readFile(path, "utf8")` → 读字节再按 UTF-8 解码；
`appendFile` → 以追加模式 `open`。

有几行本章里没有：`parse_int`、`parse_constant`、`errors="replace"`、Windows 上打开目录的那一支、
`json_stringify` 的数字和代理项。它们只为让这里和 Node 里运行的本章代码行为一致，不是本章的内容。
"""

from __future__ import annotations

import errno
import json
import math
import os
from pathlib import Path
from typing import Any, TypeGuard

from ..json_form import js_string, stringify
from ..messages import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage, to_record
from ..session import INVALID_JSON, INVALID_RECORD


def record(value: object) -> dict[str, Any] | None:
    # 非 null、不是数组的对象才当记录访问字段；JSON 对象在 Python 里是 dict
    return value if isinstance(value, dict) else None


def calls(value: object) -> TypeGuard[list[dict[str, Any]]]:
    # 类型守卫：返回 True 时，类型检查器就知道 value 是“每项都是对象”的列表
    return isinstance(value, list) and all(
        (item := record(call)) is not None
        and isinstance(item.get("id"), str)
        and isinstance(item.get("name"), str)
        and "input" in item  # input 可以是任意 JSON（包括 null），只要字段存在
        for call in value
    )


def parse_session_message(value: object) -> Message | None:
    item = record(value)
    # 公共前提：对象、role 是 string、content 是 string，三个分支共享
    if item is None or not isinstance(item.get("role"), str):
        return None
    if not isinstance(item.get("content"), str):
        return None
    if item["role"] == "user":
        return UserMessage(item["content"])
    if item["role"] == "assistant" and calls(item.get("toolCalls")):
        # toolCalls: item.toolCalls：calls() 只是类型守卫，每个调用原样留下，多余的键也在
        tool_calls = [ToolCall.from_record(call) for call in item["toolCalls"]]
        return AssistantMessage(item["content"], tool_calls)
    if (
        item["role"] == "tool"
        and isinstance(item.get("toolCallId"), str)
        and isinstance(item.get("isError"), bool)  # Python 的 True 也是 int，所以查 bool
    ):
        return ToolMessage(item["toolCallId"], item["content"], item["isError"])
    return None  # 没有兜底：未知 role、分支字段缺失都落到这里


def _not_json(name: str) -> object:
    raise ValueError(f"{name} is not JSON")  # JSON.parse 不认 NaN、Infinity；json.loads 认


def _number(text: str) -> int | float:
    # JSON.parse 读出的数都是 double：超过 ±2^53 的整数变成离它最近的 double
    value = int(text)
    return value if abs(value) <= 2**53 else float(text)


def load_session(path: str | Path) -> list[Message]:
    try:
        # readFile(path, "utf8")：换行原样；不是 UTF-8 的字节变成 U+FFFD，不报错
        text = Path(path).read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return []  # ENOENT：首次启动，空会话
    except PermissionError:  # Windows 打开目录报“拒绝访问”；Node 的 readFile 在哪里都报 EISDIR
        if Path(path).is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path)) from None
        raise
    # 其他错误（权限、IO）原样向上抛，不吞
    lines = [line for line in text.split("\n") if line]  # text.split("\n").filter(Boolean)
    messages: list[Message] = []
    for index, line in enumerate(lines):  # 逐行 map，行号是过滤后的序号
        try:
            value = json.loads(line, parse_constant=_not_json, parse_int=_number)
        except ValueError:
            raise ValueError(f"{INVALID_JSON} {index + 1}") from None
        message = parse_session_message(value)
        if message is None:
            raise ValueError(f"{INVALID_RECORD} {index + 1}")
        messages.append(message)
    return messages


def _js(value: Any, open_ids: set[int]) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON.stringify 把 NaN、Infinity 写成 null
    if isinstance(value, str):
        return js_string(value)  # 一对代理项在 JavaScript 里读出来是 😀（两个码元）
    if isinstance(value, (dict, list, tuple)):
        if id(value) in open_ids:  # 循环引用：JSON.stringify 抛错，这里也抛
            raise ValueError("Circular reference detected")
        open_ids.add(id(value))
        try:
            if isinstance(value, dict):
                return {key: _js(item, open_ids) for key, item in value.items()}
            return [_js(item, open_ids) for item in value]
        finally:
            open_ids.discard(id(value))
    return value


def json_stringify(message: Message) -> str:
    # JSON.stringify(message)：没有空格，中文照写，数字和键序也和 JavaScript 一样（附录 #json-stringify）
    record = to_record(message)
    try:
        line = stringify(record)  # 通常 Python 写出的就是 JavaScript 写出的
    except ValueError:  # NaN、Infinity：JavaScript 写成 null（循环引用在 _js 里照样报错）
        return stringify(_js(record, set()))
    # 代理项都写成了 \uXXXX 转义；一对代理项在 JavaScript 里读出来是 😀 本身（.length 仍算
    # 2 个码元）：照 JavaScript 的字符串重写
    return stringify(_js(record, set())) if "\\ud" in line else line


def append_session(path: str | Path, message: Message) -> None:
    # appendFile(path, `${JSON.stringify(message)}\n`, "utf8")：一条消息一行，追加到末尾
    with open(path, "a", encoding="utf-8", newline="") as file:
        file.write(f"{json_stringify(message)}\n")
