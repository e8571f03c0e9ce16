"""Beyond the chapter: `run_agent`'s arguments checked before anything is loaded or written.

TypeScript's types refuse most of these at compile time; Python learns of them at run time, so
`run_agent` asks here first (one call), and a bad argument never leaves half a run on disk.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from .context import SMALLEST_UNIT_TOO_BIG, ContextBudgetError, check_budget
from .messages import AssistantMessage, Message
from .tools import Tool


def check_arguments(
    prompt: object, tools: object, session_path: object, budget: object, max_turns: object
) -> None:
    """Refuse a bad argument before anything is loaded or written."""
    if prompt is None and session_path is None:
        raise ValueError("prompt=None answers a session on disk: give session_path too")
    if prompt is not None and not isinstance(prompt, str):
        raise TypeError(f"prompt must be a str, not {type(prompt).__name__}")
    if isinstance(max_turns, bool) or not isinstance(max_turns, int):
        raise TypeError(f"max_turns must be an int, not {type(max_turns).__name__}")
    if max_turns < 1:
        raise ValueError(f"max_turns must be at least 1, got {max_turns}")
    if budget is not None:
        check_budget(budget)  # type: ignore[arg-type]  # it checks the type itself
        if budget <= 0:  # type: ignore[operator]  # the prompt's unit cannot fit: say so first
            raise ContextBudgetError(SMALLEST_UNIT_TOO_BIG)
    if not isinstance(tools, Sequence) or not all(isinstance(tool, Tool) for tool in tools):
        raise TypeError("tools must be a sequence of Tool")
    if len({tool.name for tool in tools}) != len(tools):
        raise ValueError("tool names must be unique")
    if session_path is not None and not isinstance(session_path, (str, os.PathLike)):
        raise TypeError(f"session_path must be a path, not {type(session_path).__name__}")


def check_resumable(messages: Sequence[Message], session_path: object) -> None:
    """`prompt=None` answers the session on disk: refuse one that holds nothing to answer."""
    if not messages:
        raise ValueError(f"prompt=None: the session {session_path} is empty; give a prompt")
    last = messages[-1]
    if isinstance(last, AssistantMessage) and not last.tool_calls:
        raise ValueError(
            f"prompt=None: the session {session_path} ends with the assistant's final answer, "
            "so there is nothing to answer; give a prompt"
        )
