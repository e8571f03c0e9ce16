"""Small builders shared by the tests: the chapter's histories, file and notebook helpers."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any

from mini_agent import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage

# Killing a process at once, with no cleanup, and the status its parent then sees.
if sys.platform == "win32":  # os.kill is TerminateProcess there, the exit status the number given
    HARD_KILL, KILLED_STATUS = signal.SIGTERM, int(signal.SIGTERM)
else:
    HARD_KILL, KILLED_STATUS = signal.SIGKILL, -signal.SIGKILL


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


def stored_output_text(cell: dict[str, Any]) -> str:
    """Everything a stored notebook cell shows: streams, text and HTML results, errors."""
    parts: list[str] = []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            parts.append("".join(output["text"]))
        elif output["output_type"] == "error":
            parts.append(f"{output['ename']}: {output['evalue']}")
        else:
            for kind in ("text/plain", "text/html"):
                value = output.get("data", {}).get(kind, "")
                parts.append(value if isinstance(value, str) else "".join(value))
    return "\n".join(parts)
