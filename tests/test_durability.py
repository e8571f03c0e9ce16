"""Nothing lost under faults: concurrent appenders, failed writes, OS errors, big sessions.

The patched `os.write`/`os.ftruncate`/`os.fsync` below reach, on demand, what no real fault
does (EIO, a short write, Ctrl-C mid-record, a cut that fails too); the real faults — a full
disk, SIGKILL, FIFOs, an unprivileged user, a fork — are in test_faults.py.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mini_agent import (
    Message,
    SessionFormatError,
    ToolMessage,
    UserMessage,
    append_session,
    load_session,
)
from mini_agent.messages import record_line
from mini_agent.repair import repair_session

from .helpers import multi_tool_history
from .platforms import (
    MODE_BITS,
    RENAME_OVER_OPEN,
    ROOT_IGNORES_READ_ONLY,
    not_under_wine,
    posix_only,
)

ROOT = Path(__file__).resolve().parent.parent


def session_with(path: Path, messages: list[Message]) -> bytes:
    for message in messages:
        append_session(path, message)
    return path.read_bytes()


# --- several processes appending at once -----------------------------------------------------

APPENDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from mini_agent import UserMessage, append_session
    path, writer, count, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    while not start.exists():
        time.sleep(0.001)
    for number in range(count):
        # sizes from a few bytes to 64 KiB, so that some writes are large
        padding = "x" * ((number * 7919) % 65536 if number % 10 == 0 else number % 50)
        append_session(path, UserMessage(f"{writer}:{number}:{padding}"))
    """
)


@pytest.mark.parametrize(
    "first",
    [b"", b'{"role":"user","content":"first"}'],
    ids=["new-file", "last-line-without-newline"],
)
def test_concurrent_appenders_lose_nothing_and_interleave_no_line(
    tmp_path: Path, first: bytes
) -> None:
    path, start = tmp_path / "s.jsonl", tmp_path / "start"
    path.write_bytes(first)
    writers, count = 4, 150
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", APPENDER, str(path), f"w{writer}", str(count), str(start)],
            cwd=ROOT,
        )
        for writer in range(writers)
    ]
    start.touch()  # all writers start together
    assert [process.wait(timeout=60) for process in processes] == [0] * writers
    raw = path.read_bytes()
    assert raw.endswith(b"\n") and b"\n\n" not in raw  # no blank line, no torn tail
    messages = load_session(path)
    assert len(messages) == writers * count + (1 if first else 0)  # one newline added, once
    for writer in range(writers):
        numbers = [
            int(message.content.split(":")[1])
            for message in messages
            if message.content.startswith(f"w{writer}:")
        ]
        assert numbers == list(range(count))  # each writer's records, all there, in order


def test_loads_and_repairs_racing_appenders_see_only_whole_records(tmp_path: Path) -> None:
    # the lock's other holders, between the appends: a load (shared) and a repair (exclusive)
    path, start = tmp_path / "s.jsonl", tmp_path / "start"
    path.write_bytes(b"")
    writers, count = 3, 100
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", APPENDER, str(path), f"w{writer}", str(count), str(start)],
            cwd=ROOT,
        )
        for writer in range(writers)
    ]
    start.touch()
    rounds = 0
    while any(process.poll() is None for process in processes):
        load_session(path)  # a record seen half written would be a SessionFormatError
        assert repair_session(path).backup is None  # nothing torn to cut, ever
        rounds += 1
    assert [process.wait(timeout=60) for process in processes] == [0] * writers
    assert rounds > 0 and not list(tmp_path.glob("*.torn*"))
    messages = load_session(path)
    for writer in range(writers):
        numbers = [
            int(message.content.split(":")[1])
            for message in messages
            if message.content.startswith(f"w{writer}:")
        ]
        assert numbers == list(range(count))


@posix_only(RENAME_OVER_OPEN)
def test_an_append_waiting_for_the_lock_follows_a_file_replaced_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What an outside tool (an editor saving, a sync client) may do while an appender waits
    # for the lock: rename a new file over it. (`repair` itself now cuts in place.)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"role":"user","content":"old"}\n')
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(b'{"role":"user","content":"new"}\n')
    if sys.platform == "win32":  # never: posix_only skips it (this tells mypy --platform win32)
        pytest.fail("posix_only")
    import fcntl

    real_flock = fcntl.flock
    replaced: list[bool] = []

    def flock_after_replace(fd: int, operation: int) -> None:
        if not replaced:
            replaced.append(True)
            os.replace(replacement, path)
        real_flock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", flock_after_replace)
    append_session(path, UserMessage("appended"))
    assert load_session(path) == [UserMessage("new"), UserMessage("appended")]


# --- a failure in the middle of a write --------------------------------------------------------


def failing_write(kind: str) -> Callable[[int, Any], int]:
    """An `os.write` that fails as disks do: at once, or after writing part of the record."""
    real_write = os.write
    calls: list[int] = []

    def write(fd: int, data: Any) -> int:
        calls.append(len(data))
        if kind in {"ENOSPC", "EIO"}:
            raise OSError(getattr(errno, kind), os.strerror(getattr(errno, kind)))
        if len(calls) == 1:  # a short write: half the record reaches the file
            return real_write(fd, bytes(data)[: len(data) // 2])
        if kind == "short-then-ENOSPC":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        if kind == "short-then-nothing":
            return 0
        raise KeyboardInterrupt  # short-then-interrupted

    return write


FAULTS = {
    "ENOSPC": (OSError, errno.ENOSPC),
    "EIO": (OSError, errno.EIO),
    "short-then-ENOSPC": (OSError, errno.ENOSPC),
    "short-then-nothing": (OSError, errno.EIO),
    "short-then-interrupted": (KeyboardInterrupt, None),
}


@pytest.mark.parametrize("kind", FAULTS)
def test_a_failed_write_reaches_the_caller_and_leaves_only_complete_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    path = tmp_path / "s.jsonl"
    history = multi_tool_history()
    before = session_with(path, history)
    monkeypatch.setattr(os, "write", failing_write(kind))
    error, number = FAULTS[kind]
    with pytest.raises(error) as caught:
        append_session(path, UserMessage("lost in the fault " * 20))
    if number is not None:
        assert isinstance(caught.value, OSError) and caught.value.errno == number
    monkeypatch.undo()
    assert path.read_bytes() == before  # the partial record was cut off again
    assert load_session(path) == history
    assert not repair_session(path).repaired
    append_session(path, UserMessage("after"))
    assert load_session(path) == [*history, UserMessage("after")]


def test_when_even_the_cut_fails_the_torn_record_stays_last_for_repair(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.jsonl"
    history = multi_tool_history()
    before = session_with(path, history)
    monkeypatch.setattr(os, "write", failing_write("short-then-ENOSPC"))

    def failing_truncate(fd: int, length: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "ftruncate", failing_truncate)
    with pytest.raises(OSError) as caught:
        append_session(path, UserMessage("torn"))
    assert caught.value.errno == errno.ENOSPC  # the caller sees the write's error
    monkeypatch.undo()
    torn = path.read_bytes()
    assert torn.startswith(before) and len(torn) > len(before)
    with pytest.raises(SessionFormatError) as bad:
        load_session(path)
    assert bad.value.line == len(history) + 1  # every earlier line is intact

    # A later append refuses to bury the torn line under a newline: it must stay repairable.
    with pytest.raises(SessionFormatError, match="refusing to append after an incomplete"):
        append_session(path, UserMessage("later"))
    assert path.read_bytes() == torn

    report = repair_session(path)
    assert report.repaired and report.backup is not None
    assert path.read_bytes() == before
    assert report.backup.read_bytes() == torn[len(before) :]
    assert load_session(path) == history


KILLED_MID_WRITE = textwrap.dedent(
    """
    import os, sys
    from mini_agent import UserMessage, append_session
    real_write = os.write
    def write_half_then_die(fd, data):
        real_write(fd, bytes(data)[: len(data) // 2])
        os._exit(9)  # as if killed: no rollback can run
    os.write = write_half_then_die
    append_session(sys.argv[1], UserMessage("half of me is lost " * 10))
    """
)


def test_a_process_killed_mid_write_leaves_a_torn_tail_that_repair_cuts(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    history = multi_tool_history()
    before = session_with(path, history)
    killed = subprocess.run([sys.executable, "-c", KILLED_MID_WRITE, str(path)], cwd=ROOT)
    assert killed.returncode == 9
    with pytest.raises(SessionFormatError) as bad:
        load_session(path)  # load stays strict
    assert bad.value.line == len(history) + 1
    report = repair_session(path)
    assert report.repaired and report.cut_line == len(history) + 1
    assert path.read_bytes() == before and load_session(path) == history


def test_an_fsync_failure_rolls_the_record_back_and_reaches_the_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # EIO at fsync, which only a dying disk gives (ENOSPC at fsync, for real, is in
    # test_faults): the sync is part of the write, so the record is cut off and synced again.
    path = tmp_path / "s.jsonl"
    history = multi_tool_history()
    session_with(path, history)
    real_fsync, syncs = os.fsync, []

    def failing_fsync(fd: int) -> None:
        syncs.append(os.fstat(fd).st_size)
        if len(syncs) == 1:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", failing_fsync)
    append_session(path, UserMessage("not asked to sync"))
    before = path.read_bytes()
    with pytest.raises(OSError) as caught:
        append_session(path, UserMessage("asked to sync"), fsync=True)
    assert caught.value.errno == errno.EIO
    assert path.read_bytes() == before  # cut off again …
    assert syncs == [len(before) + len(record_line(UserMessage("asked to sync"))) + 1, len(before)]
    assert load_session(path) == [*history, UserMessage("not asked to sync")]  # … and synced


# --- OS errors are OS errors, never format errors ----------------------------------------------


def test_a_directory_raises_is_a_directory_everywhere(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        load_session(tmp_path)
    with pytest.raises(IsADirectoryError):
        append_session(tmp_path, UserMessage("x"))
    with pytest.raises(IsADirectoryError):
        repair_session(tmp_path)


@posix_only(MODE_BITS)
def test_a_file_without_read_permission_raises_permission_error(
    tmp_path: Path, deny: Callable[[Path, int], None]
) -> None:
    path = tmp_path / "s.jsonl"
    before = session_with(path, multi_tool_history())
    deny(path, 0o200)
    with pytest.raises(PermissionError):
        load_session(path)
    with pytest.raises(PermissionError):
        append_session(path, UserMessage("x"))  # it must read the last byte
    with pytest.raises(PermissionError):
        repair_session(path)
    path.chmod(0o600)
    assert path.read_bytes() == before


@not_under_wine(ROOT_IGNORES_READ_ONLY)
def test_a_read_only_file_loads_but_refuses_appends_and_repairs(
    tmp_path: Path, deny: Callable[[Path, int], None]
) -> None:
    path = tmp_path / "s.jsonl"
    before = session_with(path, multi_tool_history())
    path.write_bytes(before + b'{"role":"us')  # a torn tail that repair would cut
    deny(path, 0o400)
    with pytest.raises(SessionFormatError):
        load_session(path)
    with pytest.raises(PermissionError):
        append_session(path, UserMessage("x"))
    with pytest.raises(PermissionError):
        repair_session(path)  # it needs to write the file, which the mode refuses
    assert path.read_bytes() == before + b'{"role":"us'
    assert not (tmp_path / "s.jsonl.torn").exists()


# --- big sessions ---------------------------------------------------------------------------------


def test_ten_megabytes_of_content_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    big = ('第34章 "session"\n\t\\ 😀 ' * 500_000)[: 10 * 1024 * 1024]
    messages: list[Message] = [UserMessage("write it"), ToolMessage("a", big)]
    session_with(path, messages)
    assert load_session(path) == messages
    assert path.stat().st_size == sum(len(record_line(m).encode()) + 1 for m in messages)


def test_a_record_number_out_of_range_is_not_json(tmp_path: Path) -> None:
    # JSON.parse makes 1e999 Infinity, which no session line can hold: refuse it on load
    path = tmp_path / "s.jsonl"
    call = {"role": "assistant", "content": "", "toolCalls": [{"id": "a", "name": "x", "input": 1}]}
    path.write_text(
        json.dumps(call).replace('"input": 1', '"input": 1e999') + "\n", encoding="utf-8"
    )
    with pytest.raises(SessionFormatError, match=r"^invalid session JSON at line 1: number 1e999"):
        load_session(path)


def test_the_first_bad_line_is_reported_even_before_bytes_that_are_not_utf8(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"role":"user","content":"x"}\n{"role":\n{"role":"user","content":"\xff"}\n')
    with pytest.raises(SessionFormatError, match=r"^invalid session JSON at line 2\b"):
        load_session(path)
