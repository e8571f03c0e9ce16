"""Real faults, not mocks: FIFOs and devices, a full disk, SIGKILL, an unprivileged user,
loads racing appends. The long soak is `python kit.py soak`."""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mini_agent import Message, UserMessage, append_session, load_session, store
from mini_agent.cli import main as cli_main

from . import faults
from .helpers import multi_tool_history
from .platforms import REAL_FAULTS, posix_only_module

posix_only_module(REAL_FAULTS)
assert sys.platform != "win32"  # mypy --platform win32: the rest of this file is POSIX only

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
    "fifo": (make_fifo, store.NotARegularFileError, "a FIFO, not a regular file"),
    "dev-null": (lambda _: Path("/dev/null"), store.NotARegularFileError, "a character device"),
    "dev-zero": (lambda _: Path("/dev/zero"), store.NotARegularFileError, "a character device"),
    "socket": (make_socket, store.NotARegularFileError, "a socket, not a regular file"),
    "directory": (lambda folder: folder, IsADirectoryError, "Is a directory"),
    "symlink-to-fifo": (link_to(make_fifo), store.SymlinkRefusedError, "a symbolic link"),
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
    from mini_agent import store
    with store.open_locked(sys.argv[1], write=True) as file:
        fd = file.fileno()
        os.lseek(fd, 0, os.SEEK_END)
        record = ('{"role":"user","content":"' + "w" * 3_000_000 + '"}\\n').encode()
        store.write_all(fd, record[: len(record) // 2])  # a cooperating append, half done
        print("half", flush=True)
        sys.stdin.readline()
        store.write_all(fd, record[len(record) // 2 :])
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


# --- Ctrl-C never leaks an fd or the lock (issue 17, item 1) ----------------------------------------


def test_ctrl_c_at_random_moments_never_leaks_an_fd_or_the_lock(tmp_path: Path) -> None:
    # A real SIGINT at a random moment of a main thread's appends, three other threads using
    # the package: before the fix 235 of 300 left an fd open on the session, 9 holding its lock.
    tally = faults.sigint_trials(tmp_path, trials=200, helpers=3, seed=17)
    assert (tally.trials, tally.refused) == (200, 200)  # every Ctrl-C reached the caller
    assert (tally.leaked, tally.locked, tally.errors) == (0, 0, [])


CTRL_C_DURING_SYNC = textwrap.dedent(
    """
    import os, signal, sys
    from mini_agent import UserMessage, append_session
    path = sys.argv[1]
    signal.signal(signal.SIGINT, signal.default_int_handler)  # a background job inherits SIG_IGN
    real_fsync = os.fsync
    def fsync_then_ctrl_c(fd):  # a real SIGINT, timed to arrive while fsync runs
        os.kill(os.getpid(), signal.SIGINT)
        real_fsync(fd)
    os.fsync = fsync_then_ctrl_c
    for number in range(30):
        try:
            append_session(path, UserMessage(f"synced? {number}"), fsync=True)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
    """
)


def test_ctrl_c_during_a_sync_rolls_the_record_back(tmp_path: Path) -> None:
    # Before the fix the record stayed in the file 30 times in 30, though the caller was told
    # the append failed (KeyboardInterrupt).
    path = tmp_path / "s.jsonl"
    history = multi_tool_history()
    for message in history:
        append_session(path, message)
    before = path.read_bytes()
    run = subprocess.run(
        [sys.executable, "-c", CTRL_C_DURING_SYNC, str(path)],
        cwd=ROOT, capture_output=True, encoding="utf-8", timeout=60,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout == "interrupted\n" * 30
    assert path.read_bytes() == before and load_session(path) == history


# --- a failed sync is undone; an unsynced append may vanish (item 2) --------------------------------


@pytest.fixture
def full_device(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Path, Any]]:
    try:
        with faults.ext4_on_a_full_device(tmp_path, journal=request.param) as device:
            yield device
    except faults.MountRefused as refused:
        pytest.skip(str(refused))


def synced_history(mount: Path) -> tuple[Path, list[Message]]:
    """A session on `mount` holding the multi-tool history, every record synced."""
    path = mount / "s.jsonl"
    history = multi_tool_history()
    for message in history:
        append_session(path, message, fsync=True)
    return path, history


@pytest.mark.parametrize("full_device", [True], indirect=True, ids=["ext4"])
def test_a_sync_that_fails_on_a_real_device_rolls_the_record_back(
    full_device: tuple[Path, Any],
) -> None:
    # ext4 on a loop device whose backing store is full: the write is cached, the sync fails
    # (ENOSPC). Before the fix 6 of 6 records reported as failed were still in the file.
    mount, fill_device = full_device
    path, history = synced_history(mount)
    before = path.read_bytes()
    fill_device(True)
    for number in range(6):
        with pytest.raises(OSError) as caught:
            append_session(path, UserMessage(f"{number} " + "x" * (2 << 20)), fsync=True)
        # ENOSPC at the sync; then ext4 may turn itself read-only (errors=remount-ro)
        assert caught.value.errno in (errno.ENOSPC, errno.EIO, errno.EROFS)
        assert path.read_bytes() == before  # the record is not there: the error was true
    faults.remount_loop(mount)  # as a crash would: what the device never got is gone
    fill_device(False)
    assert load_session(path) == history


@pytest.mark.parametrize("full_device", [False], indirect=True, ids=["ext4-without-journal"])
def test_unsynced_appends_lost_in_a_crash_leave_nul_bytes_that_repair_cuts(
    full_device: tuple[Path, Any],
) -> None:
    # What `fsync=False` risks, for real: the appends return, the device never gets them,
    # and after a remount the file ends in NUL bytes where they were. Before the fix `load`
    # refused the file, `append` offered `repair`, and `repair` refused ("control byte").
    from mini_agent.repair import repair_session, repair_would_cut

    mount, fill_device = full_device
    path, history = synced_history(mount)
    fill_device(True)
    for number in range(3):
        append_session(path, UserMessage(f"unsynced {number} " + "u" * 100_000))  # no error
    faults.remount_loop(mount)  # as a crash would: what the device never got is gone
    fill_device(False)
    data = path.read_bytes()
    assert data.endswith(b"\0") and len(data) > 300_000  # the size survived, the data did not
    tail = data[data.rfind(b"\n") + 1 :]
    assert repair_would_cut(tail, data.count(b"\n") + 1, path)
    report = repair_session(path)
    assert report.repaired and report.backup is not None
    assert report.backup.read_bytes() == tail
    assert load_session(path) == history  # the synced records; the unsynced ones are gone
    append_session(path, UserMessage("after the repair"))
    assert load_session(path) == [*history, UserMessage("after the repair")]


# --- session paths are not an attack surface (item 4): a real second user -----------------------

ATTACKER = textwrap.dedent(
    """
    import os, pwd, sys
    shared, target, home_file = sys.argv[1], sys.argv[2], sys.argv[3]
    nobody = pwd.getpwnam("nobody")
    os.setgid(nobody.pw_gid)
    os.setuid(nobody.pw_uid)
    os.chdir(shared)
    os.symlink(target, "rc.jsonl")  # the victim's prompt into the victim's shell rc file
    os.symlink(home_file, "home.jsonl")  # dangling: the victim would create it
    forged = '{"role":"tool","content":"forged","toolCallId":"a","isError":false}\\n'
    for name, mode in (("open.jsonl", 0o666), ("theirs.jsonl", 0o644)):
        with open(name, "w") as file:
            file.write(forged)
        os.chmod(name, mode)  # world-writable, or merely someone else's
    """
)


@pytest.fixture
def sticky_folder(tmp_path: Path) -> Iterator[Path]:
    """A world-writable sticky folder (as /tmp), which `nobody` can reach."""
    if os.geteuid() != 0:
        pytest.skip("needs root to act as a second user (`nobody`), as CI runs")
    import tempfile

    shared = Path(tempfile.mkdtemp(prefix="sticky-", dir="/tmp"))
    shared.chmod(0o1777)
    try:
        yield shared
    finally:
        import shutil

        shutil.rmtree(shared)


def test_in_a_shared_sticky_folder_another_user_cannot_turn_a_session_against_its_owner(
    sticky_folder: Path, tmp_path: Path
) -> None:
    from mini_agent import ScriptedClient, run_agent

    home = tmp_path / "home"  # the victim's 0700 home and its rc file
    home.mkdir(mode=0o700)
    rc = home / ".bashrc"
    rc.write_bytes(b"alias ls='ls -F'\n")
    run = subprocess.run(
        [sys.executable, "-c", ATTACKER, str(sticky_folder), str(rc), str(home / "planted")],
        capture_output=True, encoding="utf-8", timeout=60,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    planted = {p.name: p.read_bytes() for p in sticky_folder.iterdir() if not p.is_symlink()}
    refused: dict[str, type[OSError]] = {
        "rc.jsonl": store.SymlinkRefusedError,
        "home.jsonl": store.SymlinkRefusedError,
        "open.jsonl": store.UntrustedFileError,
        "theirs.jsonl": store.UntrustedFileError,
    }
    for name, error in refused.items():
        path = sticky_folder / name
        with pytest.raises(error) as caught:
            append_session(path, UserMessage("my secret prompt"))
        assert caught.value.filename == str(path)  # the error names the file …
        assert ("folder only you can write" in str(caught.value)) or "chmod 600" in str(
            caught.value
        )  # … and the fix
        client = ScriptedClient([])
        with pytest.raises(error):
            run_agent("my secret prompt", client=client, session_path=path)
        assert client.requests == []  # nothing forged reached a model, no prompt was written
    with pytest.raises(store.SymlinkRefusedError):
        load_session(sticky_folder / "rc.jsonl")
    assert rc.read_bytes() == b"alias ls='ls -F'\n"
    assert sorted(home.iterdir()) == [rc]  # nothing created through the dangling link
    assert {p.name: p.read_bytes() for p in sticky_folder.iterdir() if not p.is_symlink()} == (
        planted
    )
    mine = sticky_folder / "mine.jsonl"  # the owner's own new session there is fine, and 0600
    append_session(mine, UserMessage("x"))
    assert stat.S_IMODE(mine.stat().st_mode) == 0o600 and load_session(mine) == [UserMessage("x")]


UMASK_0277 = textwrap.dedent(
    """
    import os, pwd, stat, sys
    from mini_agent import UserMessage, append_session, load_session
    os.chdir(sys.argv[1])  # first: the folders above it are root's, 0700
    nobody = pwd.getpwnam("nobody")
    os.setgid(nobody.pw_gid)
    os.setuid(nobody.pw_uid)  # as an ordinary user: root would ignore a 0400 mode
    os.umask(0o277)
    append_session("s.jsonl", UserMessage("first"))
    append_session("s.jsonl", UserMessage("second"))  # was EACCES: the file was made 0400
    assert load_session("s.jsonl") == [UserMessage("first"), UserMessage("second")]
    print(oct(stat.S_IMODE(os.stat("s.jsonl").st_mode)))
    """
)


def test_a_new_session_is_exactly_0600_whatever_the_umask(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to drop to `nobody`, as CI runs")
    import pwd

    nobody = pwd.getpwnam("nobody")
    folder = tmp_path / "nobody"
    folder.mkdir()
    os.chown(folder, nobody.pw_uid, nobody.pw_gid)
    run = subprocess.run(
        [sys.executable, "-c", UMASK_0277, str(folder)],
        cwd=ROOT, capture_output=True, encoding="utf-8", timeout=60,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )  # fmt: skip
    assert (run.returncode, run.stdout) == (0, "0o600\n"), run.stderr


def test_a_session_others_may_write_is_refused_with_the_fix(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give the file to another group, as CI runs")
    path = tmp_path / "s.jsonl"
    append_session(path, UserMessage("x"))
    # world-writable; a shared group's; even a private group's (no exception for it since v4)
    for mode, group in ((0o606, 0), (0o620, 65534), (0o660, 0)):
        os.chown(path, 0, group)
        path.chmod(mode)
        with pytest.raises(store.UntrustedFileError, match=rf"mode 0{mode:o} .* `chmod 600`"):
            append_session(path, UserMessage("y"))
        assert load_session(path) == [UserMessage("x")]  # reading it is still allowed


# --- links: a second name (issue 25, item 4) -------------------------------------------------------


def test_a_session_with_a_second_hard_link_is_refused_and_the_other_file_untouched(
    tmp_path: Path,
) -> None:
    # Where `fs.protected_hardlinks` is 0, another user in a shared folder can link a file of
    # yours as `h.jsonl`; before the fix the append landed in that file.
    from mini_agent import ScriptedClient, run_agent
    from mini_agent.repair import repair_session

    rc = tmp_path / ".bashrc"
    rc.write_bytes(b"alias ls='ls -F'\n")
    linked = tmp_path / "h.jsonl"
    os.link(rc, linked)
    with pytest.raises(store.HardLinkRefusedError) as caught:
        append_session(linked, UserMessage("my prompt"))
    assert caught.value.filename == str(linked) and "cp FILE NEW" in str(caught.value)
    with pytest.raises(store.HardLinkRefusedError):
        repair_session(linked)
    assert rc.read_bytes() == b"alias ls='ls -F'\n"
    other = tmp_path / "other.jsonl"  # a session of yours, linked: it loads, nothing is added
    append_session(other, UserMessage("mine"))
    os.link(other, tmp_path / "h2.jsonl")
    client = ScriptedClient([])
    with pytest.raises(store.HardLinkRefusedError):
        run_agent("my prompt", client=client, session_path=tmp_path / "h2.jsonl")
    assert load_session(other) == [UserMessage("mine")] and client.requests == []


# --- one outcome per append, and one result per call (issue 25, items 1 and 2) ---------------------

CTRL_C_WAITING_TO_OPEN = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    from mini_agent import UserMessage, append_session, store, load_session
    signal.signal(signal.SIGINT, signal.default_int_handler)
    path = sys.argv[1]
    append_session(path, UserMessage("before"))
    held, go = threading.Event(), threading.Event()
    def hold():  # holds the session's lock, so the append below waits for it
        with store.open_locked(path, write=True):
            held.set()
            go.wait(10)
    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
    threading.Timer(0.4, go.set).start()
    try:
        append_session(path, UserMessage("interrupted"))
        print("appended")
    except KeyboardInterrupt as error:
        print("raised", store.written_anyway(error))
    holder.join()
    print([m.content for m in load_session(path)])
    """
)


def test_a_ctrl_c_that_arrives_while_the_append_waits_to_open_leaves_nothing(
    tmp_path: Path,
) -> None:
    # The deterministic repro of issue 25: v3 noted the signal, appended, then raised it.
    run = subprocess.run(
        [sys.executable, "-c", CTRL_C_WAITING_TO_OPEN, str(tmp_path / "s.jsonl")],
        cwd=ROOT, capture_output=True, encoding="utf-8", timeout=60,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["raised False", "['before']"]


@pytest.mark.parametrize("fsync", [False, True], ids=["unsynced", "fsync"])
def test_an_append_that_ctrl_c_interrupted_is_in_the_file_only_when_marked_so(
    tmp_path: Path, fsync: bool
) -> None:
    # Before the fix 94 of 148 interrupted small appends (11 of 99 with fsync) raised though
    # their record was written, with nothing to say so.
    tally = faults.ctrl_c_outcomes(tmp_path, trials=150, fsync=fsync, seed=25)
    assert (tally.trials, tally.refused) == (150, 150)  # every Ctrl-C reached the caller
    assert (tally.phantoms, tally.errors) == (0, [])
    # most Ctrl-Cs came between appends or inside a later one, not before the first record
    # (armed after 1 to 4 appends in 4 of 5 trials)
    assert tally.later > tally.trials // 2, tally


SIGTERM_FLOOD = textwrap.dedent(
    """
    import json, os, random, select, signal, subprocess, sys, time
    from mini_agent import UserMessage, append_session, store
    from mini_agent.session import record_line
    folder, trials, size, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(seed)
    FLOOD = (  # SIGTERMs as fast as it can, from when the record is all there until told
        "import os, select, sys\\n"
        "pid = int(sys.argv[1])\\n"
        "while line := os.read(0, 4096):\\n"
        "    path, size = line.decode().rsplit(' ', 1)\\n"
        "    os.write(1, b'+')\\n"
        "    grown = False\\n"
        "    while not select.select([0], [], [], 0)[0]:\\n"
        "        grown = grown or os.path.exists(path) and os.stat(path).st_size >= int(size)\\n"
        "        if grown:\\n"
        "            os.kill(pid, 15)\\n"
        "    os.read(0, 64)\\n"
        "    os.write(1, b'.')\\n"
    )
    flood = subprocess.Popen([sys.executable, "-c", FLOOD, str(os.getpid())],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    armed = False

    def stop(signum, frame):  # a handler that exits, as a service's SIGTERM handler does
        if armed:
            raise SystemExit(1)

    signal.signal(signal.SIGTERM, stop)
    tally = {"trials": 0, "raised": 0, "marked": 0, "phantoms": 0, "ghosts": 0, "torn": 0}
    for trial in range(trials):
        path = os.path.join(folder, f"t{trial}.jsonl")
        if trial % 2:
            append_session(path, UserMessage("before"))
        record = UserMessage(f"{trial} " + "x" * size)
        line = (record_line(record) + "\\n").encode()
        raised = appending = None
        try:
            armed = True
            flood.stdin.write(f"{path} {len(line) + (os.path.getsize(path) if trial % 2 else 0)}".encode())
            flood.stdout.read(1)
            appending = True
            append_session(path, record, fsync=True)  # its sync: the time the flood starts in
            appending = False
        except SystemExit as error:
            armed = False  # first: no call before it, so no handler raises again
            raised = error if appending else None
        armed = False
        flood.stdin.write(b"stop")
        flood.stdout.read(1)
        tally["trials"] += 1
        data = open(path, "rb").read() if os.path.exists(path) else b""
        there = data.endswith(line)
        if raised is not None:
            tally["raised"] += 1
            marked = store.written_anyway(raised)
            tally["marked"] += marked
            tally["phantoms"] += there and not marked
            tally["ghosts"] += marked and not there
        tally["torn"] += bool(data) and not data.endswith(b"\\n")
        os.unlink(path) if os.path.exists(path) else None
    flood.stdin.close()
    flood.wait()
    print(json.dumps(tally))
    """
)


def test_a_flood_of_sigterms_whose_handler_exits_leaves_no_phantom(tmp_path: Path) -> None:
    # A real signal: each SIGTERM's handler raises SystemExit. The flood starts once the record
    # is all there (during its sync) and goes on through the roll-back, where another exit can
    # follow any call. Before the fix the record, whole, stayed in the file with the error
    # unmarked: 2 to 19 phantoms in 60 trials, fewer on a busy machine.
    run = subprocess.run(
        [sys.executable, "-c", SIGTERM_FLOOD, str(tmp_path), "60", str(2 << 20), "34"],
        cwd=ROOT, capture_output=True, encoding="utf-8", timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    tally = json.loads(run.stdout)
    assert tally["raised"] > 20, tally  # most trials were interrupted inside the append
    assert (tally["phantoms"], tally["ghosts"]) == (0, 0), tally


def test_run_agent_interrupted_anywhere_records_one_result_per_call(tmp_path: Path) -> None:
    # Before the fix 13 of 60 interrupted runs gave a call two results: its own, written as
    # the Ctrl-C arrived, and `interrupted: no result was recorded`.
    tally = faults.ctrl_c_in_run_agent(tmp_path, trials=200, seed=25)
    assert (tally.trials, tally.refused) == (200, 200)
    assert (tally.doubled, tally.unequal, tally.errors) == (0, 0, [])


# --- memory follows what is read (issue 25, item 5) ------------------------------------------------


def test_an_append_after_an_unterminated_last_line_reads_only_that_line(tmp_path: Path) -> None:
    # Before the fix the guard read the whole file: a 1 GiB session, 1,038 MB at its peak.
    # 64 MiB is four times the bound: a guard that read the file could not stay under it.
    from .soak.memory import big_file_with_a_short_unterminated_tail, measure_absolute

    big = tmp_path / "big.jsonl"
    big_file_with_a_short_unterminated_tail(big, 64 << 20)
    _, peak_mb, _ = measure_absolute("append-after-unterminated", big, 39)
    assert peak_mb < 16
    with big.open("rb") as file:  # the record got its newline first, then the new one
        file.seek(-69, os.SEEK_END)
        assert (
            file.read()
            == b'{"role":"user","content":"no newline!"}\n{"role":"user","content":"a"}\n'[-69:]
        )


def test_blank_lines_cost_a_load_nothing(tmp_path: Path) -> None:
    # Before the fix 256 MiB of blank lines took 2.57 GB (a list entry for every line); 32 MiB
    # is twice the bound even read as plain bytes, and hundreds of MB as such a list.
    from .soak.memory import blank_lines, measure_absolute

    blank = tmp_path / "blank.jsonl"
    blank_lines(blank, 32 << 20)
    _, peak_mb, _ = measure_absolute("load", blank, 32 << 20)
    assert peak_mb < 16
    assert load_session(blank) == [UserMessage("x")]
