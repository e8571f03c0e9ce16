"""What the notebook explorers show, computed by the package's own functions.

The widgets in `explorers.py` only wire inputs to these functions and put their answers on
screen, so every figure an instructor shows is the one the package itself computes.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..agent import run_agent
from ..messages import AssistantMessage, Message
from ..model_client import ScriptedClient, StreamEvent
from ..session import SessionFormatError, append_session, parse_session_text
from ..tools import Tool
from .trace import ScanStep, units_text
from .views import SessionView, visible_line

EDITOR_PATH = "<editor>"


# Session editor ("损坏记录的错误路径") -------------------------------------------------------


@dataclass(frozen=True)
class SessionCheck:
    """Typed JSONL checked as `load_session` checks a file: the messages, or the bad line."""

    messages: tuple[Message, ...]
    error: SessionFormatError | None = None
    line_text: str = ""

    @property
    def summary(self) -> str:
        if self.error is None:
            return repr(SessionView(self.messages))
        return f"{self.error}\n  line {self.error.line}: {visible_line(self.line_text)}"


def check_session_text(text: str) -> SessionCheck:
    """Parse `text` with the package's own session parser (the one `load_session` uses)."""
    try:
        return SessionCheck(tuple(parse_session_text(text, EDITOR_PATH)))
    except SessionFormatError as err:
        line_text = text.split("\n")[err.line - 1].removesuffix("\r")
        return SessionCheck((), err, line_text)


# Unit-scan stepper ("单位构造的逐步过程") ----------------------------------------------------
# The steps are `trace.scan_steps`: the chapter's own loop, one turn at a time.


def scan_position_text(messages: Sequence[Message], steps: Sequence[ScanStep], at: int) -> str:
    """The stepper's text at position `at`: 0 before the scan, `len(steps)` when it is done."""
    if at == 0:
        return f"start: index={len(messages) - 1}, units = []"
    text = repr(steps[at - 1])
    if at == len(steps):
        text += (
            f"\ndone: {len(steps)} units; reversed, they are filled newest first: "
            f"{units_text(tuple(reversed(steps[-1].units)))}"
        )
    return text


# Two-state run stepper ("会话与上下文的责任边界") ----------------------------------------------


@dataclass(frozen=True)
class RunFrame:
    """The session file's lines and the context the model received, at one moment of a run.

    `sent` is `None` for the moments before the first and after the last request.
    """

    title: str
    disk_lines: tuple[str, ...]
    sent: tuple[Message, ...] | None

    @property
    def first_sent_line(self) -> int | None:
        """The 0-based disk line where the sent context begins, checked, not assumed:
        `None` unless the sent messages are exactly the file's last lines."""
        if not self.sent:
            return None
        on_disk = parse_session_text("\n".join(self.disk_lines))
        first = len(on_disk) - len(self.sent)
        return first if first >= 0 and tuple(on_disk[first:]) == self.sent else None


class _DiskWatchingClient:
    """Passes each request to the scripted client, noting the session file at that moment."""

    def __init__(self, inner: ScriptedClient, path: Path) -> None:
        self.inner = inner
        self.path = path
        self.disk_at_request: list[tuple[str, ...]] = []

    def stream(self, messages: Sequence[Message], tools: Sequence[Tool]) -> Iterator[StreamEvent]:
        self.disk_at_request.append(_lines(self.path))
        return self.inner.stream(messages, tools)


def _lines(path: Path) -> tuple[str, ...]:
    if not path.exists():
        return ()
    # split on "\n" only, as load_session does: JSON strings may carry U+2028 raw
    lines = path.read_text(encoding="utf-8").split("\n")
    return tuple(lines[:-1] if lines[-1] == "" else lines)


def record_run(
    prompt: str,
    turns: Sequence[AssistantMessage],
    *,
    history: Sequence[Message] = (),
    tools: Sequence[Tool] = (),
    context_max_chars: int | None = None,
) -> list[RunFrame]:
    """Run `run_agent` with a `ScriptedClient` on a fresh session file holding `history`.

    One frame before the run, one per model request (the disk's lines beside what the model
    was sent), one after the run.
    """
    client = ScriptedClient(turns)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "session.jsonl"
        for message in history:
            append_session(path, message)
        before = _lines(path)
        watcher = _DiskWatchingClient(client, path)
        run_agent(
            prompt,
            client=watcher,
            tools=tools,
            session_path=path,
            context_max_chars=context_max_chars,
        )
        after = _lines(path)
    frames = [RunFrame("before the run", before, None)]
    for number, (disk, sent) in enumerate(
        zip(watcher.disk_at_request, client.requests, strict=True), start=1
    ):
        frames.append(RunFrame(f"request {number}", disk, tuple(sent)))
    frames.append(RunFrame("after the run", after, None))
    return frames


def frame_text(frame: RunFrame, context_max_chars: int | None) -> str:
    """The frame in plain text: disk lines (`>` marks those sent) beside the model's input."""
    rows = [f"{frame.title}: session.jsonl has {len(frame.disk_lines)} lines"]
    if frame.sent is not None:
        budget = "no budget" if context_max_chars is None else f"budget {context_max_chars}"
        rows[0] += (
            f"; the model received {len(frame.sent)} messages "
            f"({budget}, {sum(m.record_chars for m in frame.sent)} chars)"
        )
    first = frame.first_sent_line
    for number, line in enumerate(frame.disk_lines, start=1):
        mark = ">" if first is not None and number > first else " "
        rows.append(f"  {mark} {number:>2} {visible_line(line)}")
    return "\n".join(rows)
