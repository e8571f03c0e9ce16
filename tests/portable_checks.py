"""The package's public functions, checked with nothing but the standard library.

One set of checks for every platform the kit promises: `test_portability` runs it in
subprocesses with the Unix-only pieces hidden, `test_pyodide` inside real Pyodide under node.
Run as a script with a folder to work in; prints one JSON object: the checks passed and what
the platform offers. A failed check raises, so the script exits non-zero with its traceback.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

from mini_agent import (
    AssistantMessage,
    ContextBudgetError,
    Message,
    ScriptedClient,
    SessionFormatError,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    append_session,
    estimate_context_chars,
    load_session,
    run_agent,
    store,
    trim_context,
)
from mini_agent.repair import repair_session

HISTORY: list[Message] = [
    UserMessage("读两个文件"),
    AssistantMessage("", (ToolCall("a", "read", {"path": "a.txt"}), ToolCall("b", "read", None))),
    ToolMessage("a", "第34章\n"),
    ToolMessage("b", "no such file", is_error=True),
    AssistantMessage("done", ()),
]
RECORD = b'{"role":"user","content":"x"}'


def raises(kind: type[BaseException], call: Callable[[], object], phrase: str = "") -> None:
    try:
        call()
    except kind as err:
        assert phrase in str(err), (phrase, str(err))
        return
    raise AssertionError(f"{call} did not raise {kind.__name__}")


def check_append_and_load(folder: Path) -> None:
    path = folder / "s.jsonl"
    assert load_session(path) == []  # no file yet: an empty session
    for message in HISTORY:
        append_session(path, message)
    assert load_session(path) == HISTORY
    raw = path.read_bytes()
    assert raw.count(b"\n") == len(HISTORY) and b"\r" not in raw  # LF everywhere, never CRLF
    if os.name == "posix":
        assert path.stat().st_mode & 0o777 == 0o600
    append_session(path, UserMessage("synced"), fsync=True)
    assert load_session(path)[-1] == UserMessage("synced")


def check_newline_guard(folder: Path) -> None:
    path = folder / "guard.jsonl"
    path.write_bytes(RECORD)  # a complete record without its newline
    append_session(path, UserMessage("y"))
    assert path.read_bytes() == RECORD + b'\n{"role":"user","content":"y"}\n'
    torn = RECORD + b'\n{"role":"us'
    path.write_bytes(torn)
    raises(SessionFormatError, lambda: append_session(path, UserMessage("z")), "incomplete")
    assert path.read_bytes() == torn  # refused: the torn line stays last, for repair


def check_paths(folder: Path) -> None:
    """New files exactly 0600 whatever the umask (where there is `fchmod`); no symlinks."""
    path = folder / "private.jsonl"
    if hasattr(os, "umask"):
        previous = os.umask(0o277)
        try:
            append_session(path, UserMessage("first"))
        finally:
            os.umask(previous)
        if hasattr(os, "fchmod") and sys.platform != "win32":  # Windows': the read-only flag only
            assert path.stat().st_mode & 0o777 == 0o600, oct(path.stat().st_mode)
        path.chmod(0o600)
        append_session(path, UserMessage("second"))
        assert load_session(path) == [UserMessage("first"), UserMessage("second")]
    link = folder / "link.jsonl"
    try:
        link.symlink_to(path.name if path.exists() else "gone.jsonl")
    except (OSError, NotImplementedError):  # Windows without the privilege to make links
        return
    if not link.is_symlink():  # Wine 8 reports success and makes none
        return
    raises(store.SymlinkRefusedError, lambda: append_session(link, UserMessage("x")), "link")
    raises(store.SymlinkRefusedError, lambda: load_session(link), "symbolic link")
    dangling = folder / "dangling.jsonl"
    dangling.symlink_to("nowhere.jsonl")
    raises(store.SymlinkRefusedError, lambda: append_session(dangling, UserMessage("x")))
    assert not (folder / "nowhere.jsonl").exists()


def check_error_phrases(folder: Path) -> None:
    path = folder / "bad.jsonl"
    path.write_bytes(RECORD + b'\n{"role":\n')
    raises(SessionFormatError, lambda: load_session(path), "invalid session JSON at line 2")
    path.write_bytes(RECORD + b'\n{"role":"assistant","content":"x"}\n')
    raises(SessionFormatError, lambda: load_session(path), "invalid session record at line 2")
    raises(IsADirectoryError, lambda: load_session(folder))
    raises(IsADirectoryError, lambda: append_session(folder, UserMessage("x")))


def check_trim(folder: Path) -> None:
    assert trim_context(HISTORY, 10_000) == HISTORY
    last = estimate_context_chars(HISTORY[-1:])
    assert trim_context(HISTORY, last) == HISTORY[-1:]
    smallest = "context budget cannot contain the smallest consistent message unit"
    raises(ContextBudgetError, lambda: trim_context(HISTORY, last - 1), smallest)
    raises(ContextBudgetError, lambda: trim_context([], 10), "context budget cannot be empty")


def check_repair(folder: Path) -> None:
    path = folder / "torn.jsonl"
    complete = RECORD + b"\n"
    for number, backup in enumerate(["torn.jsonl.torn", "torn.jsonl.torn.2"], start=1):
        path.write_bytes(complete + b'{"role":"us' + b"e" * number)
        report = repair_session(path)
        assert report.repaired and report.backup == folder / backup, report
        assert path.read_bytes() == complete
        assert report.backup.read_bytes() == b'{"role":"us' + b"e" * number
    assert (folder / "torn.jsonl.torn").read_bytes().endswith(b"e")  # never overwritten
    assert not repair_session(path).repaired
    assert [p.name for p in folder.iterdir() if p.name.endswith(".tmp")] == []  # no temporary


def check_run_agent(folder: Path) -> None:
    path = folder / "agent.jsonl"
    call = ToolCall("c1", "echo", {"text": "hi"})
    client = ScriptedClient(
        [AssistantMessage("", (call, ToolCall("c2", "nope", None))), AssistantMessage("ok")]
    )
    echo = Tool("echo", "echo the text", lambda value: json.dumps(value))
    result = run_agent("say hi", client=client, tools=[echo], session_path=path,
                       context_max_chars=10_000)  # fmt: skip
    on_disk = load_session(path)
    assert on_disk[0] == UserMessage("say hi") and on_disk[-1] == AssistantMessage("ok")
    results = [m for m in on_disk if isinstance(m, ToolMessage)]
    assert results == [
        ToolMessage("c1", '{"text": "hi"}'),
        ToolMessage("c2", "unknown tool: nope", is_error=True),
    ]
    assert result is not None


CHECKS = [
    check_append_and_load,
    check_newline_guard,
    check_paths,
    check_error_phrases,
    check_trim,
    check_repair,
    check_run_agent,
]


def run(folder: Path) -> dict[str, object]:
    """Run every check in a folder of its own under `folder`; what passed, and the platform."""
    passed = []
    for check in CHECKS:
        own = folder / check.__name__
        own.mkdir()
        check(own)
        passed.append(check.__name__)
    return {"passed": passed, "has_lock": store.has_lock(), "platform": sys.platform}


if __name__ == "__main__":
    print(json.dumps(run(Path(sys.argv[1]))))
