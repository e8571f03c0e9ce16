# 注释用中文全角标点，和本章一样
"""本章的两处写法，本包有意不同（差异表的“物理行号”“读写 JSON 不能表示的数”两行），
练习的检查要把照本章写的答案也判为对：它们在这里，名字和本包的函数不同。

- `chapter_load_session`：`text.split("\\n").filter(Boolean)`，行号是去掉空行之后的序号；
  不是 UTF-8 的字节照 `readFile(path, "utf8")` 读成 U+FFFD。
- `chapter_stringify`：`JSON.stringify(message)`，NaN、Infinity 写成 null。
"""

from __future__ import annotations

import errno
import math
import os
from pathlib import Path
from typing import Any

from mini_agent.json_form import js_string, parse, stringify
from mini_agent.session import (
    INVALID_JSON,
    INVALID_RECORD,
    Message,
    parse_session_message,
    to_record,
)


def chapter_load_session(path: str | Path) -> list[Message]:
    try:
        # readFile(path, "utf8")：换行原样；不是 UTF-8 的字节变成 U+FFFD，不报错
        text = Path(path).read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return []  # ENOENT：首次启动，空会话
    except PermissionError:  # Windows 打开目录报“拒绝访问”；Node 的 readFile 在哪里都报 EISDIR
        if Path(path).is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path)) from None
        raise
    lines = [line for line in text.split("\n") if line]  # text.split("\n").filter(Boolean)
    messages: list[Message] = []
    for index, line in enumerate(lines):  # 逐行 map，行号是过滤后的序号
        try:
            value = parse(line)  # JSON.parse(line)；行尾的 \r 是空白
        except (ValueError, RecursionError):
            raise ValueError(f"{INVALID_JSON} {index + 1}") from None
        message = parse_session_message(value)
        if message is None:
            raise ValueError(f"{INVALID_RECORD} {index + 1}")
        messages.append(message)
    return messages


def _as_javascript(value: Any, open_ids: set[int]) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON.stringify 把 NaN、Infinity 写成 null
    if isinstance(value, str):
        return js_string(value)  # 一对代理项在 JavaScript 里就是那个字符
    if isinstance(value, (dict, list, tuple)):
        if id(value) in open_ids:  # 循环引用：JSON.stringify 抛错，这里也抛
            raise ValueError("Circular reference detected")
        open_ids.add(id(value))
        try:
            if isinstance(value, dict):
                return {key: _as_javascript(item, open_ids) for key, item in value.items()}
            return [_as_javascript(item, open_ids) for item in value]
        finally:
            open_ids.discard(id(value))
    return value


def chapter_stringify(message: Message) -> str:
    # JSON.stringify(message)：没有空格，中文照写，数字和键序和 JavaScript 一样
    return stringify(_as_javascript(to_record(message), set()))
