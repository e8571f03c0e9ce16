"""A model client that also reads the session file at every request (the one both the CLI
demo and the run stepper use): what was on disk beside what the model was sent."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from mini_agent.model_client import ModelClient, StreamEvent
from mini_agent.session import Message, PathLike, parse_session_lines
from mini_agent.tools import Tool


def parse_session_text(text: str, path: PathLike = "<text>") -> list[Message]:
    """What `load_session` gives for a file holding `text` (split on "\\n" only, as the store
    splits; `splitlines()` would split inside JSON strings too)."""
    return parse_session_lines(enumerate(text.split("\n"), start=1), path)


def file_lines(path: PathLike) -> tuple[str, ...]:
    """The file's lines as `load_session` splits them (on "\\n" only: JSON strings may carry
    U+2028 raw); a missing file has none."""
    if not Path(path).exists():
        return ()
    lines = Path(path).read_text(encoding="utf-8").split("\n")
    return tuple(lines[:-1] if lines[-1] == "" else lines)


@dataclass(frozen=True)
class Watched:
    """One model request: the session file's lines at that moment, and what was sent."""

    disk_lines: tuple[str, ...]
    sent: tuple[Message, ...]

    @property
    def disk(self) -> tuple[Message, ...]:
        return tuple(parse_session_text("\n".join(self.disk_lines)))


class DiskWatchingClient:
    """Passes each request to `inner`, noting the session file's lines at that moment."""

    def __init__(self, inner: ModelClient, session: PathLike) -> None:
        self.inner = inner
        self.session = session
        self.requests: list[Watched] = []

    def stream(self, messages: Sequence[Message], tools: Sequence[Tool]) -> Iterator[StreamEvent]:
        self.requests.append(Watched(file_lines(self.session), tuple(messages)))
        return self.inner.stream(messages, tools)
