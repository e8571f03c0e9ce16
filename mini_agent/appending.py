"""Beyond the chapter: what `append_session` checks around its one write — that the line will
load back as the message it was made from, and what an unterminated last line may be (a record
gets its newline first; a torn or an invalid line refuses the append, offering `repair` when it
would cut it). The session passes in its parsers, so this room sits below `session`.
"""

from __future__ import annotations

from collections.abc import Callable

from . import durable, torn
from .json_form import parse, stringify_exactly
from .messages import AssistantMessage, Message, same_message, to_record
from .refusals import PathLike
from .session_errors import SessionFormatError

ParseMessage = Callable[[object], Message | None]
"""The session's `parse_session_message`: a message, or `None`."""


def checked_line(message: Message, parse_message: ParseMessage) -> str:
    """`JSON.stringify(message)`, after checking that a later load gives this message back."""
    strings_only = not (isinstance(message, AssistantMessage) and message.tool_calls)
    line, exact = stringify_exactly(to_record(message), known_plain=strings_only)
    if exact:  # plain JSON, read back as written: no need to look
        return line
    if not same_message(parse_message(parse(line)), message):
        raise ValueError(
            f"refusing to append this {message.role} message: it would not load back unchanged: "
            "a tuple, a non-str key, a surrogate pair as two code points (see js_string)?"
        )
    return line


def append_line(path: PathLike, text: str, fsync: bool, load: torn.Load) -> None:
    """`durable.append_line`, told what an unterminated last line may be: a record (a newline
    goes first); a torn line (`repair` cuts it) or an invalid one refuses the append. `load`
    is the session's loader of a file's bytes."""

    def check(line: bytes, number: Callable[[], int]) -> None:
        try:
            load(line, path)
        except SessionFormatError as err:
            where = number()
            reason = "an invalid last line"
            if torn.repair_would_cut(line, where, path, load):
                reason = "an incomplete last line (`python -m mini_agent repair` can cut it)"
            detail = f"{err.detail}; refusing to append after {reason}"
            raise SessionFormatError(err.phrase, path, where, detail, err.column) from err

    durable.append_line(path, text.encode("utf-8"), check, fsync)
