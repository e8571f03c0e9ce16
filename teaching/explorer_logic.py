"""What the notebook explorers show, computed by the package's own functions.

The widgets in `explorers.py` only wire inputs to these functions and put their answers on
screen, so every figure an instructor shows is the one the package itself computes.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mini_agent.agent import run_agent
from mini_agent.model_client import ScriptedClient
from mini_agent.session import AssistantMessage, Message, SessionFormatError, append_session
from mini_agent.tools import Tool
from mini_agent.visible import visible, visible_line

from .glosses import phrase_first
from .text import request_line, words
from .trace import ScanStep, units_text
from .views import SessionView
from .watch import DiskWatchingClient, file_lines, parse_session_text

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
        """The messages' table, or the loader's error, its Chinese gloss and the bad line."""
        if self.error is None:
            return repr(SessionView(self.messages))
        bad_line = words().bad_line(self.error.line, visible_line(self.line_text))
        return f"{self.status}\n{bad_line}"

    @property
    def status(self) -> str:
        """What the editor shows above its box: the messages' summary, or the loader's error
        as 03's shown errors show it: the chapter's phrase first, then the kit's detail and the
        Chinese gloss (`glosses.phrase_first`)."""
        if self.error is None:
            return SessionView(self.messages).summary()
        head, *rest = (visible(line) for line in phrase_first(self.error))
        return "\n".join([head, *(f"  {line}" for line in rest)])


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
        return words().scan_start(len(messages) - 1)
    text = repr(steps[at - 1])
    if at == len(steps):
        newest_first = units_text(tuple(reversed(steps[-1].units)))
        text += "\n" + words().scan_done(len(steps), newest_first)
    return text


# Two-state run stepper ("会话与上下文的责任边界") ----------------------------------------------


@dataclass(frozen=True)
class RunFrame:
    """The session file's lines and the context the model received, at one moment of a run.

    `sent` is `None` for the moments before the first and after the last request; `number`
    is the request's (1-based), `None` for those two moments.
    """

    title: str
    disk_lines: tuple[str, ...]
    sent: tuple[Message, ...] | None
    number: int | None = None

    @property
    def disk(self) -> tuple[Message, ...]:
        return tuple(parse_session_text("\n".join(self.disk_lines)))

    @property
    def first_sent_line(self) -> int | None:
        """The 0-based disk line where the sent context begins, checked, not assumed:
        `None` unless the sent messages are exactly the file's last lines."""
        if not self.sent:
            return None
        on_disk = self.disk
        first = len(on_disk) - len(self.sent)
        return first if first >= 0 and on_disk[first:] == self.sent else None


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
    w = words()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "session.jsonl"
        for message in history:
            append_session(path, message)
        before = file_lines(path)
        watcher = DiskWatchingClient(ScriptedClient(turns), path)
        run_agent(
            prompt,
            client=watcher,
            tools=tools,
            session_path=path,
            context_max_chars=context_max_chars,
        )
        after = file_lines(path)
    frames = [RunFrame(w.before_run, before, None)]
    for number, request in enumerate(watcher.requests, start=1):
        frames.append(RunFrame(w.request(number), request.disk_lines, request.sent, number))
    frames.append(RunFrame(w.after_run, after, None))
    return frames


def frame_text(frame: RunFrame, context_max_chars: int | None) -> str:
    """The frame in plain text: disk lines (`>` marks those sent) beside the model's input."""
    if frame.sent is None or frame.number is None:
        rows = [words().frame_head(frame.title, len(frame.disk_lines))]
    else:
        rows = [request_line(frame.number, frame.disk, frame.sent, context_max_chars)]
    first = frame.first_sent_line
    for line_number, line in enumerate(frame.disk_lines, start=1):
        mark = ">" if first is not None and line_number > first else " "
        rows.append(f"  {mark} {line_number:>2} {visible_line(line)}")
    return "\n".join(rows)
