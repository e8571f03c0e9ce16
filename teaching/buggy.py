"""Wrong `record()`s for notebook 07's "find the bug" exercise, and for the check's tests.

Each has the signature of the exercise, `record(messages, session_path, message)`: the
in-memory list, the session file (or `None`), the message to record — `run_agent`'s
`record()` with its state passed in. `seeded_record` is the one the notebook shows; the
others are mistakes readers make, each caught by `exercises.check_record`. (The chapter's
order, memory first and then disk, is not among them: the check accepts it.)
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress

from mini_agent.session import Message, PathLike, ToolMessage, append_session

Record = Callable[[list[Message], PathLike | None, Message], None]


def seeded_record(messages: list[Message], session_path: PathLike | None, message: Message) -> None:
    if session_path is not None:
        append_session(session_path, message)
        messages.append(message)


def forgets_the_disk(
    messages: list[Message], session_path: PathLike | None, message: Message
) -> None:
    messages.append(message)


def forgets_memory(
    messages: list[Message], session_path: PathLike | None, message: Message
) -> None:
    if session_path is not None:
        append_session(session_path, message)


def skips_tool_results(
    messages: list[Message], session_path: PathLike | None, message: Message
) -> None:
    messages.append(message)
    if session_path is not None and not isinstance(message, ToolMessage):
        append_session(session_path, message)


def rewrites_history(
    messages: list[Message], session_path: PathLike | None, message: Message
) -> None:
    messages.append(message)
    if session_path is not None:
        for earlier in messages:
            append_session(session_path, earlier)


def rebinds_the_list(
    messages: list[Message], session_path: PathLike | None, message: Message
) -> None:
    messages = [*messages, message]  # the caller's list never grows
    if session_path is not None:
        append_session(session_path, message)


def swallows_disk_errors(
    messages: list[Message], session_path: PathLike | None, message: Message
) -> None:
    messages.append(message)
    if session_path is not None:
        with suppress(OSError):  # "keep the agent running"
            append_session(session_path, message)


WRONG_RECORDS: tuple[tuple[str, Record], ...] = (
    ("seeded_record", seeded_record),
    ("forgets_the_disk", forgets_the_disk),
    ("forgets_memory", forgets_memory),
    ("skips_tool_results", skips_tool_results),
    ("rewrites_history", rewrites_history),
    ("rebinds_the_list", rebinds_the_list),
    ("swallows_disk_errors", swallows_disk_errors),
)
