# ruff: noqa: RUF003  # 注释用中文全角标点，和本章一样
"""本章的 src/context.ts，写成 Python：`estimate_context_chars`、单元扫描 `context_units`、
老z 画的装预算的算法 `trim_context`。

只差在快慢，不差在结果：内层的向前找预先一趟查好（`declaring_assistants`），装预算时累加而不是
把 `unit + kept` 重新量一遍，最坏也是线性的；tests/chapter_reference.py 是照本章逐行写的慢版本。
"""

from collections.abc import Iterator, Sequence

from .session import AssistantMessage, Message, ToolMessage

SMALLEST_UNIT_TOO_BIG = "context budget cannot contain the smallest consistent message unit"
EMPTY_CONTEXT = "context budget cannot be empty"
CANNOT_SERIALIZE = "cannot be serialized to JSON"  # 跟在 `message {index}` 后面：第几条，从 0 数


class ContextBudgetError(ValueError):
    """预算装不下一个一致、不空的上下文；`needed`（知道时）是最新那个单元的大小，
    也就是能装下它的最小预算。"""

    def __init__(self, message: str, needed: int | None = None) -> None:
        super().__init__(message)
        self.needed = needed

    def __reduce__(self) -> tuple[object, ...]:  # pickle 时也带上 needed
        return (type(self), (str(self), self.needed))


def estimate_context_chars(messages: Sequence[Message], first_index: int = 0) -> int:
    # 每条消息 JSON.stringify(message).length（UTF-16 码元，和 JavaScript 一样：😀 算 2），
    # 再加 1 个分隔符。不是 token。写不成 JSON 的消息按下标报错：message ${index}
    total = 0
    for index, message in enumerate(messages, start=first_index):
        try:
            total += message.record_chars
        except AttributeError as err:  # 比如 json.loads 得到的 dict，不是消息
            raise TypeError(f"message {index} is not a session message: {message!r}") from err
        except (TypeError, ValueError, RecursionError) as err:
            raise ValueError(f"message {index} {CANNOT_SERIALIZE}: {err}") from err
    return total


def declaring_assistants(messages: Sequence[Message]) -> list[int]:
    # 每个下标上，本章内层循环会找到什么：往前数第一个声明了这个 toolCallId 的 assistant，
    # 找不到（或不是 tool result）是 -1。一趟从前往后，记着每个 id 最近的声明者
    latest: dict[str, int] = {}
    found = [-1] * len(messages)
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            found[index] = latest.get(message.tool_call_id, -1)
        elif isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                latest[call.id] = index
    return found


def context_units(messages: Sequence[Message]) -> list[list[Message]]:
    # 本章的 units：从旧到新
    return list(units_newest_first(messages))[::-1]


def units_newest_first(messages: Sequence[Message]) -> Iterator[list[Message]]:
    # 本章的反向扫描，每切出一个单元就交出去（本章是 units.unshift(unit)）
    assistant_for = declaring_assistants(messages)
    index = len(messages) - 1
    while index >= 0:
        message = messages[index]
        if isinstance(message, ToolMessage):
            # 向前找声明该 toolCallId 的 assistant：这里本章向前找；本包预先查好
            assistant_index = assistant_for[index]
            if assistant_index >= 0:  # 从 assistant 一路切到当前 tool，成一个单元
                yield list(messages[assistant_index : index + 1])
                index = assistant_index - 1
                continue
        yield [message]  # 其余消息（和找不到声明者的 tool）单独成单元
        index -= 1


def trim_context(messages: Sequence[Message], max_chars: int) -> list[Message]:
    if isinstance(max_chars, bool) or not isinstance(max_chars, int):
        raise TypeError(f"max_chars must be an int, not {type(max_chars).__name__}")
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):  # str 会被逐字切开
        raise TypeError(f"messages must be a list of messages, not {type(messages).__name__}")
    kept: list[list[Message]] = []  # 装下的单元，从新到旧
    used, start = 0, len(messages)  # used 就是 estimate_context_chars(kept)，累加着算
    for unit in units_newest_first(messages):  # 从最新的单元往前装
        start -= len(unit)
        size = estimate_context_chars(unit, start)
        if used + size > max_chars:  # estimateContextChars(unit ∪ kept) 超限？
            if not kept:
                raise ContextBudgetError(SMALLEST_UNIT_TOO_BIG, size)
            break  # 已经装了一些：不再往前装
        kept.append(unit)  # kept.unshift(...unit)
        used += size
    if not kept:
        raise ContextBudgetError(EMPTY_CONTEXT)
    return [message for unit in reversed(kept) for message in unit]
