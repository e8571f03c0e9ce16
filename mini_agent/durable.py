"""Beyond the chapter: what makes an append safe when processes overlap or writes fail.

The chapter's `appendSession` is one `appendFile` and admits "no lock or fsync". Here one
call, `append_line`, adds what a careful user expects: an advisory lock shared by every
cooperating appender and `repair`, a newline guard (a record is never glued onto a last line
that lacks its newline), a write that is completed or rolled back, and `fsync` on request.

This module knows bytes and files, not messages: the session passes in the check of an
unterminated last line, so `durable` never imports `session` (no import circle).
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable

PathLike = str | os.PathLike[str]

# Portable flags: Windows has neither O_CLOEXEC nor newline-free writes without O_BINARY.
_FLAGS = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)

try:
    import fcntl
except ImportError:  # Windows: no advisory lock
    fcntl = None  # type: ignore[assignment]


def has_lock() -> bool:
    """Whether appenders here serialise through an advisory lock (not on Windows or Pyodide,
    whose `fcntl` has no `flock`); see docs/ARCHITECTURE.md."""
    return hasattr(fcntl, "flock")


_REOPEN_ATTEMPTS = 100

LastLineCheck = Callable[[bytes, int], None]
"""Called with an unterminated last line and its line number; raises if it is not a record."""


def append_line(
    path: PathLike, payload: bytes, check_last_line: LastLineCheck, fsync: bool
) -> None:
    """Append `payload` (one record and its newline) to `path`, under the lock, or not at all.

    When the file's last line lacks its newline, `check_last_line` decides: it raises to
    refuse the append, or returns, and a newline is written first. A failed write is rolled
    back and its `OSError` propagates. New files get mode 0600: transcripts are private.
    """
    fd = open_locked(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        size = os.fstat(fd).st_size
        if size > 0 and read_at(fd, size - 1, 1) != b"\n":
            data = read_at(fd, 0, size)  # the rare path: the whole file, to number the line
            start = data.rfind(b"\n") + 1
            check_last_line(data[start:], data.count(b"\n", 0, start) + 1)
            payload = b"\n" + payload
        _write_or_roll_back(fd, payload, size)
        if fsync:
            os.fsync(fd)
            if size == 0:  # a new file: its name in the folder must survive a crash too
                sync_folder(os.path.dirname(os.path.abspath(path)))
    finally:
        os.close(fd)  # closing releases the lock


def _write_or_roll_back(fd: int, payload: bytes, size: int) -> None:
    """Write `payload` at the end of a file that held `size` bytes, or leave it as it was.

    One write is the normal case; a short write is continued while the lock keeps other
    appenders out. If that fails, or anything interrupts us, the partial record is cut off
    and the error propagates. Should even the cut fail, the torn record stays the file's
    last line, where `repair` can cut it.
    """
    try:
        write_all(fd, payload)
    except BaseException:
        with contextlib.suppress(OSError):
            if os.fstat(fd).st_size > size:
                os.ftruncate(fd, size)
        raise


def write_all(fd: int, data: bytes) -> None:
    """`os.write` until every byte is written (a write may take fewer than it is given)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written == 0:
            raise OSError(errno.EIO, "write made no progress")
        view = view[written:]


def read_at(fd: int, offset: int, size: int) -> bytes:
    """Up to `size` bytes of an open file from `offset` (seek and read: `pread` is Unix-only)."""
    os.lseek(fd, offset, os.SEEK_SET)
    chunks: list[bytes] = []
    while size > 0:
        chunk = os.read(fd, size)
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def sync_folder(folder: PathLike) -> None:
    """fsync a folder, so that a file created or renamed in it survives a crash.

    Windows cannot open a folder as a file; there the rename is as durable as it gets.
    """
    try:
        fd = os.open(folder, os.O_RDONLY | _FLAGS)
    except (PermissionError, IsADirectoryError):
        if os.name == "nt":
            return
        raise
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def open_locked(path: PathLike, flags: int) -> int:
    """Open `path` and hold an exclusive advisory lock on it (closing the fd releases it).

    `repair` replaces the file by renaming a new one over it, so a lock won on the old file
    is worthless: check that the path still names the locked file, and open again if not.
    Without `flock` (Windows, Pyodide) this is a plain open: appenders do not serialise.
    """
    for _ in range(_REOPEN_ATTEMPTS):
        fd = os.open(path, flags | _FLAGS, 0o600)
        try:
            if not has_lock():
                return fd
            fcntl.flock(fd, fcntl.LOCK_EX)
            if _names_same_file(path, os.fstat(fd)):
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    raise OSError(errno.EAGAIN, "session file kept being replaced while opening it", str(path))


def _names_same_file(path: PathLike, opened: os.stat_result) -> bool:
    try:
        current = os.stat(path)
    except FileNotFoundError:
        return False
    return (current.st_dev, current.st_ino) == (opened.st_dev, opened.st_ino)
