"""A session, its units and a trim as plain Chinese text: what `show`, `trim` and `chat` print
(the notebooks' views draw them as HTML and keep this text as their plain form)."""

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Final

from .context import ContextBudgetError, context_units, estimate_context_chars, trim_context
from .glosses import gloss_line
from .json_form import stringify
from .session import AssistantMessage, Message, ToolMessage
from .visible import visible, visible_json

Messages = Sequence[Message]


class ListingWords:
    """The listings' words (`"…{}…".format`: the values in order); notebooks' `Words` adds its own."""

    kept = "保留"
    dropped = "丢弃"
    unsent = "未发送"  # every unit, when the budget error left nothing to send
    chars = "{} 字符".format
    messages = "{} 条消息".format
    messages_chars = "{} 条消息，{} 字符".format
    units = "{} 个单元".format
    unit = "单元 {}".format
    # budget, units kept/all, messages kept/all, characters used
    trim_summary = "预算 {} 字符：保留 {} 个单元、{} 条消息，用了 {} 字符".format
    trim_error = "预算 {} 字符：\n{}".format  # the error alone on its line, as the chapter says it
    request = "第 {} 次请求".format
    request_said = "{}：磁盘上 {}；发出 {}{}".format  # request, on disk, sent, `（budget）`

    def budget(self, budget: int | None) -> str:
        return "不设预算" if budget is None else f"预算 {budget}"


WORDS: Final = ListingWords()


def request_line(number: int, disk: Messages, sent: Messages, budget: int | None) -> str:
    """What is on disk beside what request `number` sent, in one line."""
    on_disk = WORDS.messages_chars(len(disk), estimate_context_chars(disk))
    said = WORDS.messages_chars(len(sent), estimate_context_chars(sent))
    return WORDS.request_said(WORDS.request(number), on_disk, said, f"（{WORDS.budget(budget)}）")


def label(message: Message) -> str:
    """`assistant(a,b)`, `tool a!` (an error result) or `user`."""
    if isinstance(message, AssistantMessage) and message.tool_calls:
        return f"assistant({','.join(visible(call.id) for call in message.tool_calls)})"
    if isinstance(message, ToolMessage):
        return f"tool {visible(message.tool_call_id)}{'!' if message.is_error else ''}"
    return message.role


def unit_text(unit: Sequence[Message]) -> str:
    """`[assistant(a,b) | tool a | tool b]`: one unit on one line."""
    return "[" + " | ".join(label(message) for message in unit) + "]"


def shorten(text: str, limit: int = 60) -> str:
    """One line of at most `limit` characters, escaped as JSON escapes it, never cut in an escape."""
    return visible_json(stringify(text)[1:-1], limit)


def detail(message: Message) -> str:
    """The message's content, shortened, and an assistant's calls with their inputs."""
    if isinstance(message, AssistantMessage) and message.tool_calls:
        calls = ", ".join(
            f"{visible(call.id)}:{visible(call.name)}({visible_json(stringify(call.input), 30)})"
            for call in message.tool_calls
        )
        return f"{shorten(message.content, 30)!s} → {calls}"
    return shorten(message.content)


def display_width(text: str) -> int:
    """How many terminal columns `text` takes: a wide (CJK) character two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def pad(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


def label_width(messages: Sequence[Message]) -> int:
    """The label column's width: 16 (`assistant(c1,c2)`), or the longest label's."""
    return max([16, *(display_width(label(message)) for message in messages)])


@dataclass(frozen=True)
class SessionListing:
    """A session's messages, one row each, with the characters each takes on disk."""

    messages: Sequence[Message]

    def summary(self) -> str:
        return WORDS.messages_chars(len(self.messages), estimate_context_chars(self.messages))

    def __repr__(self) -> str:
        rows = [self.summary()]
        width = len(str(len(self.messages) - 1))  # `[ 9]` lines up with `[10]`
        labels = label_width(self.messages)
        for index, message in enumerate(self.messages):
            rows.append(f"  [{index:>{width}}] {pad(label(message), labels)} {detail(message)}")
        return "\n".join(rows)


@dataclass(frozen=True)
class UnitsListing:
    """Consistent units (oldest first), one row each."""

    units: Sequence[Sequence[Message]]

    def __repr__(self) -> str:
        rows = [WORDS.units(len(self.units))]
        width = len(str(len(self.units)))  # `unit  9` lines up with `unit 10`
        for number, unit in enumerate(self.units, start=1):
            chars = WORDS.chars(estimate_context_chars(unit))
            rows.append(f"  {WORDS.unit(f'{number:>{width}}')}: {unit_text(unit)}  {chars}")
        return "\n".join(rows)


Row = tuple[int, list[Message], int, bool]  # unit number, unit, characters, kept


@dataclass(frozen=True)
class TrimListing:
    """What `trim_context(messages, max_chars)` keeps and drops, unit by unit, or its error."""

    messages: Sequence[Message]
    max_chars: int

    @cached_property
    def _outcome(self) -> list[Message] | ContextBudgetError | TypeError:
        try:
            return trim_context(self.messages, self.max_chars)
        except (ContextBudgetError, TypeError) as err:  # TypeError: a budget such as 400.5
            return err.with_traceback(None)  # kept without the frames it was raised in

    @property
    def kept(self) -> list[Message] | None:
        """The trimmed context, or `None` when the budget cannot hold one (or is no int)."""
        return None if isinstance(self._outcome, Exception) else self._outcome

    @property
    def failure(self) -> ContextBudgetError | None:
        """The budget error itself (its `needed` too), when the budget cannot hold a context."""
        return self._outcome if isinstance(self._outcome, ContextBudgetError) else None

    def gloss_line(self, error: Exception) -> str | None:
        return gloss_line(error)

    @cached_property
    def rows(self) -> list[Row]:
        kept = self.kept
        first_kept = len(self.messages) - len(kept) if kept is not None else len(self.messages)
        rows, start = [], 0
        for number, unit in enumerate(context_units(self.messages), start=1):
            rows.append((number, unit, estimate_context_chars(unit), start >= first_kept))
            start += len(unit)
        return rows

    def summary(self) -> str:
        """What was kept, in one line; or the chapter's budget error, its 释义 line under it."""
        if isinstance(self._outcome, Exception):
            said = WORDS.trim_error(repr(self.max_chars), str(self._outcome))  # '500' as typed
            meaning = self.gloss_line(self._outcome)
            return said if meaning is None else f"{said}\n{meaning}"
        units = f"{sum(1 for *_, is_kept in self.rows if is_kept)}/{len(self.rows)}"
        messages = f"{len(self._outcome)}/{len(self.messages)}"
        return WORDS.trim_summary(
            self.max_chars, units, messages, estimate_context_chars(self._outcome)
        )

    def shown(self) -> tuple[list[Row], str, str]:
        """The rows to list, and the lines counting the units left out before and after."""
        return self.rows, "", ""

    def __repr__(self) -> str:
        shown, before, after = self.shown()
        rows = [self.summary()] + ([f"  {before}"] if before else [])
        width = len(str(len(self.rows)))  # `unit  9` lines up with `unit 10`
        left_out = WORDS.unsent if isinstance(self._outcome, Exception) else WORDS.dropped
        for number, unit, chars, is_kept in shown:
            state = WORDS.kept if is_kept else left_out
            name = WORDS.unit(f"{number:>{width}}")
            rows.append(f"  {state} {name}: {unit_text(unit)}  {WORDS.chars(chars)}")
        return "\n".join(rows + ([f"  {after}"] if after else []))
