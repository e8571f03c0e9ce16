"""Small builders shared by the tests: the chapter's histories, file and notebook helpers."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from mini_agent import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage

# Killing a process at once, with no cleanup, and the status its parent then sees.
if sys.platform == "win32":  # os.kill is TerminateProcess there, the exit status the number given
    HARD_KILL, KILLED_STATUS = signal.SIGTERM, int(signal.SIGTERM)
else:
    HARD_KILL, KILLED_STATUS = signal.SIGKILL, -signal.SIGKILL


# The browser tests' Chromium: Debian's (`kit.py system`), never a download; nothing it asks
# for leaves loopback (Chromium reaches for its own hosts even without a page asking).
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]


def free_port() -> int:
    """A loopback port that nothing listens on (now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def wait_until_serving(
    url: str, token: str, process: subprocess.Popen[bytes], log: Path, timeout: float = 90
) -> None:
    """Until the Jupyter server at `url` answers `/api/status`; fails with the end of its log
    when it exits first or does not answer within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    request = urllib.request.Request(
        f"{url}/api/status", headers={"Authorization": f"token {token}"}
    )
    while process.poll() is None and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(request, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    what = "exited early" if process.poll() is not None else f"did not answer in {timeout} s"
    pytest.fail(f"JupyterLab {what}:\n{log.read_text(encoding='utf-8', errors='replace')[-3000:]}")


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


# --- the CLI speaks Chinese -----------------------------------------------------------------------

# What stays as it is in the CLI's Chinese lines: code and names, not prose.
_VERBATIM = re.compile(
    r"""https?://\S+            # an address
      | `[^`]*`                 # code
      | '[^']*' | "[^"]*"       # what was typed or read, quoted
      | \{[^{}]*\}              # JSON, {id, name, input}
      | \w+\([^()]*\)           # a call: trim_context(messages, N)
      | --?[A-Za-z][\w-]*       # an option
      | [\w-]*[./][\w./-]+      # a path, a file or module name (llama.cpp, FILE.torn)
      | \$\w+                   # $OPENAI_API_KEY
      | %\(\w+\)s               # a placeholder
    """,
    re.X,
)
_EXCERPT = re.compile(r"^\s*\d+ \| ")  # `  3 | …`: a line of the file, quoted
# Words, not prose: roles and keys on disk, command and tool names, and the few names a Chinese
# text uses as they are.
_NAMED = "user assistant tool role content check show trim demo chat repair read grep write python"
NAMES = frozenset(f"{_NAMED} key stderr OpenAI Ollama vLLM".split(" "))


def english_prose(text: str, verbatim_after: Sequence[str] = ()) -> list[str]:
    """The English words of `text` that are prose: none in the CLI's own lines. Allowed: the
    chapter's error phrases and what follows them on their line (the library's detail), what
    follows a lead-in of `verbatim_after` (a system's or a library's own words, quoted), quoted
    file lines, code, options, paths, identifiers (`snake_case`, `camelCase`, `UPPER`, `c1`)
    and `NAMES`."""
    from mini_agent.context import EMPTY_CONTEXT, SMALLEST_UNIT_TOO_BIG
    from mini_agent.session import INVALID_JSON, INVALID_RECORD

    words: list[str] = []
    for line in text.splitlines():
        if _EXCERPT.match(line):
            continue
        for phrase in (INVALID_JSON, INVALID_RECORD, SMALLEST_UNIT_TOO_BIG, EMPTY_CONTEXT):
            line = line.partition(phrase)[0]
        for lead in verbatim_after:
            line = line.partition(lead)[0]
        for word in re.findall(r"[A-Za-z][A-Za-z0-9_]*", _VERBATIM.sub(" ", line)):
            named = "_" in word or word.isupper() or re.search(r"\d|[a-z][A-Z]", word)
            if not named and word not in NAMES:  # c1, isError, FILE, trim_context are names
                words.append(word)
    return words


def as_reference(answer: Callable[..., Any]) -> Callable[..., Any]:
    """The package's own answer, handed to its exercise's check as the reference (handed in
    by a reader, the check refuses it)."""

    def reference(*args: Any, **kwargs: Any) -> Any:
        return answer(*args, **kwargs)

    return reference
