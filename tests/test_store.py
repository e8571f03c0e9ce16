"""Tests of mini_agent/store.py, through the session's calls: nothing lost under faults, one
outcome per append, and no cut into a writer that takes no lock (docs/DURABILITY.md).

Concurrent appenders, failed writes, OS errors, big records. The patched `os.write`/
`os.ftruncate`/`os.fsync` below reach, on demand, what no real fault does (EIO, a short write,
Ctrl-C mid-record, a cut that fails too); the real faults — a full disk, SIGKILL, FIFOs, an
unprivileged user — are in test_faults.py.

One outcome per append whatever arrives during its roll-back (issue 34, items 1 and 3): a
signal's handler raises after a call returns, so `Interrupting` stands in for the store's `os`
and raises `KeyboardInterrupt` after the call that writes the record, then once more after the
n-th call that follows, for every n the roll-back reaches (a real flood of SIGTERMs does the
same in test_faults.py). A plain `open(p, "ab")` is the writer that takes no lock (a reader's
own script, the chapter's `appendFile`).
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mini_agent import (
    AssistantMessage,
    Message,
    ScriptedClient,
    SessionFormatError,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    append_session,
    load_session,
    run_agent,
    store,
)
from mini_agent.agent import INTERRUPTED
from mini_agent.repair import repair_session
from mini_agent.session import record_line

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


def start_appenders(path: Path, writers: int, count: int) -> list[subprocess.Popen[bytes]]:
    """`writers` processes appending `count` records each to `path`, all let go at once."""
    start = path.with_name("start")
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", APPENDER, str(path), f"w{writer}", str(count), str(start)],
            cwd=ROOT,
        )
        for writer in range(writers)
    ]
    start.touch()
    return processes


def assert_each_writer_whole(path: Path, writers: int, count: int) -> list[Message]:
    messages = load_session(path)
    for writer in range(writers):
        numbers = [
            int(message.content.split(":")[1])
            for message in messages
            if message.content.startswith(f"w{writer}:")
        ]
        assert numbers == list(range(count))  # each writer's records, all there, in order
    return messages


@pytest.mark.parametrize(
    "first",
    [b"", b'{"role":"user","content":"first"}'],
    ids=["new-file", "last-line-without-newline"],
)
def test_concurrent_appenders_lose_nothing_and_interleave_no_line(
    tmp_path: Path, first: bytes
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(first)
    writers, count = 4, 150
    processes = start_appenders(path, writers, count)
    assert [process.wait(timeout=60) for process in processes] == [0] * writers
    raw = path.read_bytes()
    assert raw.endswith(b"\n") and b"\n\n" not in raw  # no blank line, no torn tail
    messages = assert_each_writer_whole(path, writers, count)
    assert len(messages) == writers * count + (1 if first else 0)  # one newline added, once


def test_loads_and_repairs_racing_appenders_see_only_whole_records(tmp_path: Path) -> None:
    # the lock's other holders, between the appends: a load (shared) and a repair (exclusive)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"")
    writers, count = 3, 100
    processes = start_appenders(path, writers, count)
    rounds = 0
    while any(process.poll() is None for process in processes):
        load_session(path)  # a record seen half written would be a SessionFormatError
        assert repair_session(path).backup is None  # nothing torn to cut, ever
        rounds += 1
    assert [process.wait(timeout=60) for process in processes] == [0] * writers
    assert rounds > 0 and not list(tmp_path.glob("*.torn*"))
    assert_each_writer_whole(path, writers, count)


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


def test_a_record_longer_than_a_read_chunk_round_trips(tmp_path: Path) -> None:
    # files are read store.CHUNK bytes at a time: this record starts in the first chunk and
    # ends in the second (it was 10 MiB; what it proves is the crossing)
    path = tmp_path / "s.jsonl"
    big = ('第34章 "session"\n\t\\ 😀 ' * (store.CHUNK // 16))[: store.CHUNK]  # > CHUNK as UTF-8
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


# --- one outcome per append (issue 34) ------------------------------------------------------

RECORD = UserMessage("the record " * 50)


class Interrupting:
    """`os` for the store: a `KeyboardInterrupt` after the first call `first` picks (it took
    effect: a handler runs after a call returns), and one more after each of the `later`-th
    calls made from then on."""

    def __init__(self, first: Callable[[str, tuple[Any, ...]], bool], *later: int) -> None:
        self.first, self.later = first, later
        self.fired = self.calls = 0

    def reached_all(self) -> bool:
        return self.fired == 1 + len(self.later)

    def __getattr__(self, name: str) -> Any:
        real = getattr(os, name)
        if not callable(real) or isinstance(real, type):
            return real

        def call(*args: Any, **kwargs: Any) -> Any:
            result = real(*args, **kwargs)
            if self.fired == 0 and self.first(name, args):
                self.fired = 1
                raise KeyboardInterrupt("after the record's write")
            if self.fired:
                self.calls += 1
                if self.calls in self.later:
                    self.fired += 1
                    raise KeyboardInterrupt(f"after {name}, call {self.calls} since the write")
            return result

        return call


@contextlib.contextmanager
def store_os(fake: object) -> Iterator[None]:
    setattr(store, "os", fake)  # noqa: B010 (the store's `os` is not exported)
    try:
        yield
    finally:
        setattr(store, "os", os)  # noqa: B010


def the_write(name: str, args: tuple[Any, ...]) -> bool:
    return name == "write"


def last_is(path: Path, message: Message) -> bool:
    return path.exists() and load_session(path)[-1:] == [message]


# --- a second interrupt anywhere in the roll-back -------------------------------------------


@pytest.mark.parametrize("fsync", [False, True], ids=["unsynced", "fsync"])
@pytest.mark.parametrize("new", [True, False], ids=["new file", "existing file"])
def test_a_second_interrupt_after_any_call_of_the_roll_back_leaves_no_phantom(
    tmp_path: Path, new: bool, fsync: bool
) -> None:
    # Before the fix: with the second interrupt after the roll-back's fstat the record stayed
    # in the file, whole, and the error that left was not marked (a phantom).
    later = 0
    while True:
        later += 1
        path = tmp_path / f"s{later}.jsonl"
        if not new:
            append_session(path, UserMessage("before"))
        fake = Interrupting(the_write, later)
        with store_os(fake), pytest.raises(KeyboardInterrupt) as caught:
            append_session(path, RECORD, fsync=fsync)
        there = last_is(path, RECORD)
        assert there == store.written_anyway(caught.value), (later, caught.value)
        if not new:
            assert load_session(path)[0] == UserMessage("before")
        if not fake.reached_all():  # the roll-back made fewer calls: every one was tried
            break
    assert later > 2, "the roll-back made no call a second interrupt could follow"


# --- run_agent: one result per call, memory equal to disk -------------------------------------


def results_per_call(messages: list[Message]) -> Counter[str]:
    return Counter(m.tool_call_id for m in messages if isinstance(m, ToolMessage))


def memory_of_run(error: BaseException) -> list[Message]:
    """The messages `run_agent` held when it raised (what it would have gone on with)."""
    traceback, found = error.__traceback__, None
    while traceback is not None:
        if traceback.tb_frame.f_code.co_name == "run_agent":
            found = traceback.tb_frame.f_locals["messages"]
        traceback = traceback.tb_next
    assert found is not None
    return list(found)


def result_of_a(name: str, args: tuple[Any, ...]) -> bool:
    return name == "write" and b'"toolCallId":"a"' in bytes(args[1])


def test_run_agent_interrupted_two_or_three_times_around_a_results_append_keeps_one_result_per_call(
    tmp_path: Path,
) -> None:
    # Before the fix: "r" stayed on disk unmarked, so the run also recorded "interrupted" for
    # call a: two results for one call, memory 3 messages and disk 4. A third interrupt, in
    # `written_anyway`'s look, did the same with the look alone.
    tools = [Tool("work", "works", lambda _: "r")]
    calls = (ToolCall("a", "work", {}), ToolCall("b", "work", {}))

    def run(*later: int) -> bool:
        path = tmp_path / ("run" + "_".join(map(str, later)) + ".jsonl")
        client = ScriptedClient([AssistantMessage("two calls", calls), AssistantMessage("ok")])
        fake = Interrupting(result_of_a, *later)
        with store_os(fake), pytest.raises(KeyboardInterrupt) as caught:
            run_agent("go", client=client, tools=tools, session_path=path)
        disk = load_session(path)
        assert all(n == 1 for n in results_per_call(disk).values()), (later, caught.value, disk)
        # what the run held in memory (and would have gone on with) is what a load gives
        assert memory_of_run(caught.value) == disk, (later, caught.value)
        resumed = run_agent("go on", client=ScriptedClient([AssistantMessage("ok")]),
                            session_path=path)  # fmt: skip
        assert results_per_call(list(resumed.messages)) == {"a": 1, "b": 1}
        assert resumed.messages[2] in (ToolMessage("a", "r"), ToolMessage("a", INTERRUPTED, True))
        return fake.reached_all()

    runs = 0
    for second in itertools.count(1):
        runs += 1
        if not run(second):
            break
        for third in itertools.count(second + 1):
            runs += 1
            if not run(second, third):
                break
    assert second > 2 and runs > 3 * second, (second, runs)


# --- a writer that takes no lock ------------------------------------------------------------


class Foreign:
    """`os` for the store, whose record write (or sync) lets another writer append first."""

    def __init__(self, path: Path, when: str) -> None:
        self.file, self.when = path, when
        self.line = b'{"role":"user","content":"kit"}\n'

    def foreign(self) -> None:
        with open(self.file, "ab") as file:  # what a script of the reader's own does
            file.write(self.line)

    def __getattr__(self, name: str) -> Any:
        real = getattr(os, name)
        if name == "write" and self.when in {"before the write", "then ENOSPC"}:

            def write(fd: int, data: Any) -> int:
                self.foreign()
                if self.when == "then ENOSPC":
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                return real(fd, data)  # type: ignore[no-any-return]

            return write
        if name == "fsync" and self.when == "after the write, then EIO":

            def fsync(fd: int) -> None:
                self.foreign()
                raise OSError(errno.EIO, os.strerror(errno.EIO))

            return fsync
        return real


@pytest.mark.parametrize("when", ["before the write", "then ENOSPC", "after the write, then EIO"])
@pytest.mark.parametrize("new", [True, False], ids=["new file", "existing file"])
def test_a_writer_that_takes_no_lock_is_never_cut_or_overwritten(
    tmp_path: Path, new: bool, when: str
) -> None:
    # Before the fix: a new file was written at the size measured before (the other record
    # overwritten), and a failed append cut the file back to that size (the other record gone).
    path = tmp_path / "s.jsonl"
    before = [UserMessage("before")] if not new else []
    for message in before:
        append_session(path, message)
    foreign = Foreign(path, when)
    error = None
    with store_os(foreign):
        try:
            append_session(path, RECORD, fsync=True)
        except OSError as raised:
            error = raised
    kit = UserMessage("kit")
    if when == "before the write":
        assert error is None
        assert load_session(path) == [*before, kit, RECORD]
        return
    assert error is not None
    loaded = load_session(path)
    assert (RECORD in loaded) == store.written_anyway(error)
    assert loaded == [*before, kit] if when == "then ENOSPC" else [*before, RECORD, kit]
    said = str(error) + "".join(getattr(error, "__notes__", []))
    assert "left" in said and str(path) in said, said  # the file was left as it is, and why


# --- a failed path is named -------------------------------------------------------------------


def test_a_failed_append_names_its_file(tmp_path: Path) -> None:
    # Before the fix: `OSError: [Errno 22] Invalid argument`, no path, for /proc/self/status.
    path = tmp_path / "s.jsonl"

    def bare(fd: int, data: Any) -> int:
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))

    class Bare:
        def __getattr__(self, name: str) -> Any:
            return bare if name == "write" else getattr(os, name)

    cases: list[tuple[Path, object]] = [(path, Bare())]
    if Path("/proc/self/status").is_file():  # Linux: a real file that refuses writes
        cases.append((Path("/proc/self/status"), os))
    for where, fake in cases:
        with store_os(fake), pytest.raises(OSError) as caught:
            append_session(where, UserMessage("x"))
        assert caught.value.errno == errno.EINVAL or fake is os
        # named as OSError names a file: its repr (Windows' backslashes doubled)
        assert caught.value.filename == str(where) and repr(str(where)) in str(caught.value)
