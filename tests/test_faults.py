"""Real faults, not mocks: FIFOs and devices, a full disk, SIGKILL, an unprivileged user,
loads racing appends, a fork in the middle of an append. The long soak is `make soak`."""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mini_agent import UserMessage, append_session, durable, load_session
from mini_agent.cli import main as cli_main

from . import faults
from .helpers import multi_tool_history

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def bounded() -> Iterator[None]:
    """A call that blocks (on a FIFO, say) fails the test after 20 s instead of hanging it."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError("blocked for 20 s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


# --- 1. anything but a regular file is refused at once -------------------------------------------


def make_fifo(folder: Path) -> Path:
    os.mkfifo(folder / "fifo")
    return folder / "fifo"


def make_socket(folder: Path) -> Path:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "sock"))  # the socket file stays after the socket is closed
    server.close()
    return folder / "sock"


def link_to(target: Callable[[Path], Path]) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        (folder / "link").symlink_to(target(folder))
        return folder / "link"

    return make


NOT_REGULAR: dict[str, tuple[Callable[[Path], Path], type[OSError], str]] = {
    "fifo": (make_fifo, durable.NotARegularFileError, "a FIFO, not a regular file"),
    "dev-null": (lambda _: Path("/dev/null"), durable.NotARegularFileError, "a character device"),
    "dev-zero": (lambda _: Path("/dev/zero"), durable.NotARegularFileError, "a character device"),
    "socket": (make_socket, durable.NotARegularFileError, "a socket, not a regular file"),
    "directory": (lambda folder: folder, IsADirectoryError, "Is a directory"),
    "symlink-to-fifo": (link_to(make_fifo), durable.NotARegularFileError, "a FIFO"),
}


@pytest.mark.parametrize("kind", NOT_REGULAR)
def test_a_path_that_is_not_a_regular_file_is_refused_at_once_and_nothing_written(
    tmp_path: Path, kind: str, bounded: None
) -> None:
    make, error, phrase = NOT_REGULAR[kind]
    path = make(tmp_path)
    listing = sorted(p.name for p in tmp_path.iterdir())
    # a reader on the FIFO would see any byte written to it
    reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK) if kind.endswith("fifo") else None
    big = UserMessage("x" * 200_000)  # more than a pipe holds: once, this blocked forever
    with pytest.raises(error, match=phrase):
        append_session(path, big)
    with pytest.raises(error, match=phrase):
        load_session(path)  # /dev/zero once read until MemoryError, a FIFO blocked
    assert cli_main(["check", str(path)]) == 1  # `check` once hung on a FIFO too
    if reader is not None:
        assert os.read(reader, 1) == b""  # nothing written, and no writer holds it open
        os.close(reader)
    assert sorted(p.name for p in tmp_path.iterdir()) == listing


# --- 2. a load concurrent with appenders sees only complete records ------------------------------

HALF_WRITER = textwrap.dedent(
    """
    import os, sys
    from mini_agent import durable
    fd = durable.open_locked(sys.argv[1], os.O_RDWR | os.O_APPEND)
    record = ('{"role":"user","content":"' + "w" * 3_000_000 + '"}\\n').encode()
    durable.write_all(fd, record[: len(record) // 2])  # a cooperating append, half done
    print("half", flush=True)
    sys.stdin.readline()
    durable.write_all(fd, record[len(record) // 2 :])
    durable.release(fd)
    """
)


def waiting_flock_on(path: Path) -> bool:
    """Whether /proc/locks shows a process blocked waiting for a lock on `path`."""
    inode = path.stat().st_ino
    return any(
        "->" in line and f":{inode} " in line for line in Path("/proc/locks").open(encoding="utf-8")
    )


def test_a_load_during_an_append_waits_for_the_whole_record(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    history = multi_tool_history()
    for message in history:
        append_session(path, message)
    writer = subprocess.Popen(
        [sys.executable, "-c", HALF_WRITER, str(path)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, encoding="utf-8",
    )  # fmt: skip
    assert writer.stdout is not None and writer.stdin is not None
    assert writer.stdout.readline() == "half\n"  # half a record is in the file now
    loaded: list[object] = []
    loader = threading.Thread(target=lambda: loaded.append(load_session(path)), daemon=True)
    loader.start()
    for _ in range(2000):  # bounded: until the load is seen waiting for the lock (or is done)
        if waiting_flock_on(path) or not loader.is_alive():
            break
        time.sleep(0.005)
    assert loader.is_alive() and waiting_flock_on(path), "the load did not wait for the append"
    writer.stdin.write("go\n")
    writer.stdin.close()
    assert writer.wait(timeout=60) == 0
    loader.join(timeout=60)
    assert loaded == [[*history, UserMessage("w" * 3_000_000)]]


def test_loads_racing_appends_of_multi_megabyte_records_see_no_torn_line(tmp_path: Path) -> None:
    tally = faults.racing_loads(tmp_path, loads=60, seconds=8, sizes=(1 << 20, 4 << 20), seed=11)
    assert tally.errors == [] and tally.trials > 0 and tally.acknowledged > 0


# --- 3. a fork during an append does not take the lock with it ------------------------------------

FORK_DURING_APPEND = textwrap.dedent(
    """
    import os, sys, threading
    from mini_agent import durable
    path = sys.argv[1]
    locked, go = threading.Event(), threading.Event()
    def hold(line, number):  # runs under the append's lock: an append in progress
        locked.set()
        go.wait(30)
    thread = threading.Thread(target=durable.append_line,
                              args=(path, b'{"role":"user","content":"thread"}\\n', hold, False))
    thread.start()
    locked.wait(30)
    read_end, write_end = os.pipe()
    ready_read, ready_write = os.pipe()
    child = os.fork()
    if child == 0:  # the child lives on, as a long tool or a server would
        os.close(write_end)
        os.write(ready_write, b"r")  # past the fork handlers: what it holds now, it keeps
        os.read(read_end, 1)
        os._exit(0)
    os.close(read_end)
    os.read(ready_read, 1)
    go.set()
    thread.join(30)
    print("appended", flush=True)
    sys.stdin.readline()  # the test now appends from another process, the child still alive
    os.write(write_end, b"x")
    os.waitpid(child, 0)
    """
)


def test_a_child_forked_during_an_append_does_not_hold_the_lock(tmp_path: Path) -> None:
    import fcntl

    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"role":"user","content":"first"}')  # no newline: the guard runs `hold`
    parent = subprocess.Popen(
        [sys.executable, "-c", FORK_DURING_APPEND, str(path)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, encoding="utf-8",
    )  # fmt: skip
    assert parent.stdout is not None and parent.stdin is not None
    assert parent.stdout.readline() == "appended\n"
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # BlockingIOError if the child held it
    finally:
        os.close(fd)
    append_session(path, UserMessage("other process"))
    parent.stdin.write("done\n")
    parent.stdin.close()
    assert parent.wait(timeout=60) == 0
    assert load_session(path) == [
        UserMessage("first"),
        UserMessage("thread"),
        UserMessage("other process"),
    ]


def test_threads_of_one_process_append_without_interleaving(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"

    def append(writer: int) -> None:
        for number in range(100):
            append_session(path, UserMessage(f"t{writer}:{number}:" + "y" * (number * 997 % 70000)))

    threads = [threading.Thread(target=append, args=(writer,)) for writer in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    messages = load_session(path)
    for writer in range(4):
        mine = [m.content.split(":")[1] for m in messages if m.content.startswith(f"t{writer}:")]
        assert mine == [str(number) for number in range(100)]


# --- 9 and real write faults: a full disk, a file-size limit, SIGKILL -----------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    try:
        with faults.small_tmpfs(tmp_path / "disk", 1 << 20) as disk:
            yield disk
    except faults.MountRefused as refused:
        pytest.skip(str(refused))


def test_a_full_disk_refuses_appends_whole_and_a_first_append_leaves_nothing(
    small_disk: Path,
) -> None:
    tally = faults.enospc_trials(small_disk, trials=25, rng=random.Random(34))
    assert tally.trials == 25 and tally.refused > 0  # most trials really hit ENOSPC


def test_a_file_size_limit_refuses_appends_whole_and_leaves_no_new_file(tmp_path: Path) -> None:
    tally = faults.rlimit_trials(tmp_path, trials=40, seed=7)
    assert tally.refused > 0


def test_appenders_killed_mid_write_lose_no_acknowledged_record(tmp_path: Path) -> None:
    rng, total = random.Random(2026), faults.Tally()
    for round_ in range(6):
        path = tmp_path / f"s{round_ // 3}.jsonl"  # three rounds on each file
        total.add(faults.kill_round(path, f"r{round_}", 3, rng, (10, 2 << 20)))
    assert total.killed > 0 and total.acknowledged > 0
    assert (total.lost, total.glued, total.errors) == (0, 0, [])


# --- permissions, as an unprivileged user really meets them ---------------------------------------

AS_NOBODY = textwrap.dedent(
    """
    import json, os, pwd, sys
    from mini_agent import SessionFormatError, UserMessage, append_session, load_session
    from mini_agent.repair import repair_session
    os.chdir(sys.argv[1])  # relative paths: the ancestors (0700, root's) need not be searchable
    nobody = pwd.getpwnam("nobody")
    os.setgid(nobody.pw_gid)
    os.setuid(nobody.pw_uid)  # for good: the kernel now checks the mode bits
    outcome = {}
    for name, call in [
        ("load", lambda: load_session("s.jsonl")),
        ("append", lambda: append_session("s.jsonl", UserMessage("x"))),
        ("repair", lambda: repair_session("s.jsonl")),
    ]:
        try:
            call()
            outcome[name] = "ok"
        except (OSError, SessionFormatError) as err:
            outcome[name] = type(err).__name__
    print(json.dumps(outcome))
    """
)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (
            0o200,
            {"load": "PermissionError", "append": "PermissionError", "repair": "PermissionError"},
        ),
        (0o400, {"load": "ok", "append": "PermissionError", "repair": "PermissionError"}),
        (0o600, {"load": "ok", "append": "ok", "repair": "ok"}),
    ],
)
def test_an_unprivileged_user_meets_the_mode_bits(
    tmp_path: Path, mode: int, expected: dict[str, str]
) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to drop to `nobody` (as CI runs)")
    import pwd

    nobody = pwd.getpwnam("nobody")
    home = tmp_path / "nobody"
    home.mkdir()
    path = home / "s.jsonl"
    for message in multi_tool_history():
        append_session(path, message)
    before = path.read_bytes()
    os.chown(home, nobody.pw_uid, nobody.pw_gid)
    os.chown(path, nobody.pw_uid, nobody.pw_gid)
    path.chmod(mode)
    run = subprocess.run(
        [sys.executable, "-c", AS_NOBODY, str(home)],
        cwd=ROOT, capture_output=True, encoding="utf-8", timeout=60,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == expected
    path.chmod(0o600)
    written = path.read_bytes()
    assert written == before + (b'{"role":"user","content":"x"}\n' if mode == 0o600 else b"")
    assert sorted(p.name for p in home.iterdir()) == ["s.jsonl"]  # no backup, no temporary


def test_the_errno_of_a_refused_path_is_invalid_argument(tmp_path: Path) -> None:
    # a program that checks errno rather than the type still tells it from a missing file
    with pytest.raises(OSError) as caught:
        load_session(Path("/dev/null"))
    assert caught.value.errno == errno.EINVAL and caught.value.filename == "/dev/null"
