"""Small builders shared by the tests: the chapter's histories and file helpers."""

from __future__ import annotations

from pathlib import Path

from mini_agent import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage


def multi_tool_history() -> list[Message]:
    """The chapter's picture: [user] [assistant a,b] [tool a] [tool b]."""
    return [
        UserMessage("read two files"),
        AssistantMessage(
            "reading both",
            (ToolCall("a", "read", {"path": "a.txt"}), ToolCall("b", "read", {"path": "b.txt"})),
        ),
        ToolMessage("a", "contents of a"),
        ToolMessage("b", "contents of b"),
    ]


def write_lines(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
