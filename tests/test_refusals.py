"""Refused before opened (issue 34, item 2): what a session refuses is decided from `lstat`
before any `open`, and an existing file from `fstat` before any lock is waited for.

Real files and a real second user (`nobody`), not mocks: a FIFO whose blocked reader would wake
at any open for writing, links to devices planted in a sticky folder, and a foreign 0666 file
whose owner holds the lock. Every call that once hung runs in a subprocess with a timeout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mini_agent import UserMessage, append_session, load_session, store
from mini_agent.cli import main as cli_main
from mini_agent.repair import repair_session

from .platforms import REAL_FAULTS, posix_only_module

posix_only_module(REAL_FAULTS)
assert sys.platform != "win32"  # mypy --platform win32: the rest of this file is POSIX only

ROOT = Path(__file__).resolve().parent.parent
PROTECTED_SYMLINKS = Path("/proc/sys/fs/protected_symlinks")

AS_NOBODY = (  # after the script's imports: the interpreter's own files may be root's alone
    "import fcntl, os, pwd, signal, sys\n"
    "n = pwd.getpwnam('nobody'); os.setgid(n.pw_gid); os.setuid(n.pw_uid)\n"
)

PLANTER = AS_NOBODY + textwrap.dedent(
    """
    os.chdir(sys.argv[1])
    os.mkfifo("fifo", 0o666)
    os.chmod("fifo", 0o666)
    os.symlink("fifo", "to-fifo.jsonl")
    os.symlink("/dev/ptmx", "to-ptmx.jsonl")
    os.symlink("/dev/null", "to-null.jsonl")
    """
)


@pytest.fixture
def shared() -> Iterator[Path]:
    """A world-writable sticky folder (as /tmp) with `fs.protected_symlinks` off, as some
    kernels and containers have it: the kernel follows `nobody`'s links there for root."""
    if os.geteuid() != 0:
        pytest.skip("needs root to act as a second user (`nobody`), as CI runs")
    folder = Path(tempfile.mkdtemp(prefix="sticky-", dir="/tmp"))
    folder.chmod(0o1777)
    previous = PROTECTED_SYMLINKS.read_text(encoding="utf-8") if PROTECTED_SYMLINKS.exists() else ""
    try:
        if previous.strip() not in {"", "0"}:
            try:
                PROTECTED_SYMLINKS.write_text("0", encoding="utf-8")
            except OSError:
                previous = ""  # read-only here: the kernel refuses the links first, still fine
        yield folder
    finally:
        if previous.strip() not in {"", "0"}:
            PROTECTED_SYMLINKS.write_text(previous, encoding="utf-8")
        shutil.rmtree(folder)


def plant(folder: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-c", PLANTER, str(folder)],
        capture_output=True, encoding="utf-8", timeout=30,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr


# --- a FIFO's blocked reader never wakes --------------------------------------------------------

READER = "import os, sys\nos.open(sys.argv[1], os.O_RDONLY)\nprint('woke', flush=True)\n"


def blocked_reader(fifo: Path) -> subprocess.Popen[str]:
    """A process blocked opening `fifo` to read: any open for writing would wake it."""
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(fifo)], stdout=subprocess.PIPE, encoding="utf-8"
    )
    deadline = time.monotonic() + 10
    while waiting_channel(reader) != "wait_for_partner":  # Linux: blocked in the FIFO's open
        assert reader.poll() is None and time.monotonic() < deadline, "the reader never blocked"
        time.sleep(0.01)
    return reader


def waiting_channel(process: subprocess.Popen[str]) -> str:
    try:
        return Path(f"/proc/{process.pid}/wchan").read_text(encoding="utf-8")
    except OSError:
        return ""


def refused_everywhere(path: Path, error: type[OSError], phrase: str) -> None:
    for call in (
        lambda: append_session(path, UserMessage("x" * 200_000)),  # more than a pipe holds
        lambda: load_session(path),
        lambda: repair_session(path),
    ):
        with pytest.raises(error, match=phrase) as caught:
            call()
        assert caught.value.filename == str(path)  # the refused path is named
    assert cli_main(["check", str(path)]) == 1


def test_a_fifo_named_directly_is_refused_without_being_opened(tmp_path: Path) -> None:
    # Before: `append_session` opened it O_RDWR (which never blocks on Linux) and woke the reader.
    fifo = tmp_path / "s.jsonl"
    os.mkfifo(fifo)
    reader = blocked_reader(fifo)
    try:
        refused_everywhere(fifo, store.NotARegularFileError, "a FIFO, not a regular file")
        assert reader.poll() is None and waiting_channel(reader) == "wait_for_partner"
    finally:
        reader.kill()
        reader.wait(timeout=10)


def test_a_link_to_a_fifo_planted_by_another_user_is_refused_without_following_it(
    shared: Path,
) -> None:
    plant(shared)
    reader = blocked_reader(shared / "fifo")
    try:
        refused_everywhere(shared / "to-fifo.jsonl", store.SymlinkRefusedError, "symbolic link")
        assert reader.poll() is None and waiting_channel(reader) == "wait_for_partner"
    finally:
        reader.kill()
        reader.wait(timeout=10)


# --- nothing refused is opened at all: what the system calls say ---------------------------------

TRACED = textwrap.dedent(
    """
    import json, sys
    from mini_agent import UserMessage, append_session, load_session
    outcomes = {}
    for path in sys.argv[1:]:
        for name, call in (("append", append_session), ("load", load_session)):
            try:
                call(path, UserMessage("x")) if name == "append" else call(path)
                outcomes[f"{name} {path}"] = "ok"
            except OSError as error:
                outcomes[f"{name} {path}"] = type(error).__name__
    print(json.dumps(outcomes))
    """
)


def test_refused_paths_are_never_opened_and_a_session_is_opened_without_following_links(
    shared: Path,
) -> None:
    # Before: `openat(…, "to-ptmx.jsonl", O_RDWR|O_CLOEXEC) = 3; flock(3, LOCK_EX) = 0`, then
    # the refusal: a device opened for writing, through another user's link, and locked.
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace is not installed")
    plant(shared)
    mine = shared / "mine.jsonl"
    refused = {
        shared / "to-ptmx.jsonl": "SymlinkRefusedError",
        shared / "to-null.jsonl": "SymlinkRefusedError",
        shared / "to-fifo.jsonl": "SymlinkRefusedError",
        shared / "fifo": "NotARegularFileError",
        Path("/dev/null"): "NotARegularFileError",
    }
    log = shared / "strace.log"
    run = subprocess.run(
        [strace, "-f", "-qq", "-e", "trace=open,openat,flock", "-o", str(log),
         sys.executable, "-c", TRACED, *map(str, refused), str(mine)],
        cwd=ROOT, capture_output=True, encoding="utf-8", timeout=30,
    )  # fmt: skip
    if run.returncode != 0 and "ptrace" in run.stderr:
        pytest.skip(f"strace cannot trace here: {run.stderr.strip()}")
    assert run.returncode == 0, run.stderr
    outcomes = json.loads(run.stdout)
    for path, error in refused.items():
        assert (outcomes[f"append {path}"], outcomes[f"load {path}"]) == (error, error)
    assert (outcomes[f"append {mine}"], outcomes[f"load {mine}"]) == ("ok", "ok")
    calls = log.read_text(encoding="utf-8").splitlines()
    opened = [line for line in calls for path in refused if f'"{path}"' in line]
    assert opened == []  # not even an attempt: `lstat` refused each before any open
    own = [line for line in calls if f'"{mine}"' in line]
    assert own and all("O_NOFOLLOW" in line and "O_NONBLOCK" in line for line in own), own


# --- another user's file, locked by its owner, never holds a session up --------------------------

HOLDER = AS_NOBODY + textwrap.dedent(
    """
    signal.alarm(60)  # never outlives a failed test by long
    os.chdir(sys.argv[1])
    with open("theirs.jsonl", "w") as file:
        file.write('{"role":"user","content":"theirs"}\\n')
    os.chmod("theirs.jsonl", 0o666)
    fd = os.open("theirs.jsonl", os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    print("locked", flush=True)
    sys.stdin.readline()
    """
)

VICTIM = textwrap.dedent(
    """
    import json, sys, time
    from mini_agent import UserMessage, append_session, load_session
    from mini_agent.repair import repair_session
    path, outcomes = sys.argv[1], {}
    for name, call in (
        ("append", lambda: append_session(path, UserMessage("my secret prompt"))),
        ("repair", lambda: repair_session(path)),
        ("load", lambda: [m.content for m in load_session(path)]),
    ):
        start = time.monotonic()
        try:
            outcome = call()
        except OSError as error:
            outcome = f"{type(error).__name__}: {error}"
        outcomes[name] = [outcome, time.monotonic() - start]
    print(json.dumps(outcomes))
    """
)


def test_another_users_file_they_hold_locked_is_refused_or_read_at_once(shared: Path) -> None:
    # Before: the append and the load waited for the owner's lock, forever (a timeout here).
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(shared)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, encoding="utf-8",
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        path = shared / "theirs.jsonl"
        before = path.read_bytes()
        run = subprocess.run(
            [sys.executable, "-c", VICTIM, str(path)],
            cwd=ROOT, capture_output=True, encoding="utf-8", timeout=5,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        outcomes = json.loads(run.stdout)
        for name in ("append", "repair"):
            outcome, seconds = outcomes[name]
            assert outcome.startswith("UntrustedFileError") and str(path) in outcome, outcome
            assert seconds < 1
        assert outcomes["load"][0] == ["theirs"] and outcomes["load"][1] < 1  # read, not waited
        assert path.read_bytes() == before
    finally:
        holder.kill()
        holder.wait(timeout=10)
