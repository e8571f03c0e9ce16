"""Beyond the chapter: what makes an append safe when processes overlap or writes fail.

The chapter's `appendSession` is one `appendFile` and admits "no lock or fsync". Here one
call, `append_line`, adds what a careful user expects: an advisory lock shared by every
cooperating appender and `repair`, a newline guard (a record is never glued onto a last line
that lacks its newline), a write that is completed or rolled back, and `fsync` on request.
`read_session_file` reads under the shared lock, so a load never sees half a record. Both
refuse anything but a regular file, and a forked child never keeps a lock (see the end).
docs/DURABILITY.md says what holds on which platform.

This module knows bytes and files, not messages: the session passes in the check of an
unterminated last line, so `durable` never imports `session` (no import circle).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import threading
from collections.abc import Callable

PathLike = str | os.PathLike[str]

# Portable flags: Windows has neither O_CLOEXEC nor newline-free writes without O_BINARY;
# O_NONBLOCK (Unix) keeps the open of a FIFO that slipped past the first check from waiting.
_FLAGS = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)

try:
    import fcntl
except ImportError:  # Windows: no advisory lock
    fcntl = None  # type: ignore[assignment]


def has_lock() -> bool:
    """Whether appenders and loaders here serialise through an advisory lock: not on Windows
    (no `fcntl`), nor on Pyodide, whose `flock` is missing or does nothing (one process, one
    thread: nothing to serialise). docs/DURABILITY.md says what that means."""
    return hasattr(fcntl, "flock") and sys.platform != "emscripten"


class NotARegularFileError(OSError):
    """The path names a FIFO, a device or a socket: no session can live there."""


_REOPEN_ATTEMPTS = 100

LastLineCheck = Callable[[bytes, int], None]
"""Called with an unterminated last line and its line number; raises if it is not a record."""


def append_line(
    path: PathLike, payload: bytes, check_last_line: LastLineCheck, fsync: bool
) -> None:
    """Append `payload` (one record and its newline) to `path`, under the lock, or not at all.

    When the file's last line lacks its newline, `check_last_line` decides: it raises to
    refuse the append, or returns, and a newline is written first. A failed write is rolled
    back and its `OSError` propagates; a file this call created is then removed again. New
    files get mode 0600: transcripts are private. Anything but a regular file is refused.
    """
    fd, created = _open_locked(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, shared=False)
    try:
        size = os.fstat(fd).st_size
        if size > 0 and read_at(fd, size - 1, 1) != b"\n":
            data = read_at(fd, 0, size)  # the rare path: the whole file, to number the line
            start = data.rfind(b"\n") + 1
            check_last_line(data[start:], data.count(b"\n", 0, start) + 1)
            payload = b"\n" + payload
        try:
            _write_or_roll_back(fd, payload, size)
        except BaseException:
            if created and size == 0:  # a first append that failed leaves no empty file
                _remove_if_still_empty(path, fd)
            raise
        if fsync:
            os.fsync(fd)
            if size == 0:  # a new file: its name in the folder must survive a crash too
                sync_folder(os.path.dirname(os.path.abspath(path)))
    finally:
        release(fd)  # closing releases the lock


def read_session_file(path: PathLike) -> bytes:
    """Every byte of the file at `path`, read under the shared lock where there is one.

    Cooperating appenders hold the exclusive lock while they write, so the bytes read end
    with complete records (or with a torn line a killed appender left, which `repair` cuts).
    A missing file raises `FileNotFoundError`; anything but a regular file is refused at
    once (a FIFO would block, `/dev/zero` never end). Without a lock a read that overlaps an
    append may end in the part of the record written so far: see docs/DURABILITY.md.
    """
    fd = open_locked(path, os.O_RDONLY, shared=True)
    try:
        return read_at(fd, 0, os.fstat(fd).st_size)
    finally:
        release(fd)


def _remove_if_still_empty(path: PathLike, fd: int) -> None:
    """Unlink the empty file we created, if the path still names it (we hold the lock)."""
    with contextlib.suppress(OSError):  # Windows will not unlink an open file: it stays
        opened = os.fstat(fd)
        if opened.st_size == 0 and _names_same_file(path, opened):
            os.unlink(path)


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


def claim_name(path: PathLike) -> None:
    """Create `path` as an empty 0600 file, or raise `FileExistsError`: an exclusive create,
    which works everywhere (`os.link`, the other way to never overwrite, is not in Pyodide)."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FLAGS, 0o600))


def copy_mode_and_owner(fd: int, path: PathLike, like: os.stat_result) -> None:
    """Give the open file `fd` (named `path`) the mode, and where allowed the owner, of `like`.

    `os.fchmod` is Unix-only before Python 3.13 and `os.fchown` Unix-only: fall back to the
    path, or skip the owner (only root may give a file away, and Windows has no such owner).
    """
    mode = stat.S_IMODE(like.st_mode)
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)
    else:
        os.chmod(path, mode)
    if hasattr(os, "fchown"):
        with contextlib.suppress(PermissionError):
            os.fchown(fd, like.st_uid, like.st_gid)


def open_locked(path: PathLike, flags: int, *, shared: bool = False) -> int:
    """Open the regular file `path` and hold an advisory lock on it: exclusive for writers,
    `shared` for readers. Give the fd back with `release` (closing it releases the lock).

    `repair` replaces the file by renaming a new one over it, so a lock won on the old file
    is worthless: check that the path still names the locked file, and open again if not.
    Without `flock` (Windows, Pyodide) this is a plain open: nothing serialises.
    """
    return _open_locked(path, flags, shared=shared)[0]


def _open_locked(path: PathLike, flags: int, *, shared: bool) -> tuple[int, bool]:
    """`open_locked`, and whether this call created the file."""
    for _ in range(_REOPEN_ATTEMPTS):
        _refuse_irregular_path(path)
        fd, created = _open_held(path, flags)
        try:
            _refuse_irregular(os.fstat(fd).st_mode, path)  # swapped in after the check
            if not has_lock():
                return fd, created
            fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            if _names_same_file(path, os.fstat(fd)):
                return fd, created
        except BaseException:
            release(fd)
            raise
        release(fd)
    raise OSError(errno.EAGAIN, "session file kept being replaced while opening it", str(path))


def _names_same_file(path: PathLike, opened: os.stat_result) -> bool:
    try:
        current = os.stat(path)
    except FileNotFoundError:
        return False
    return (current.st_dev, current.st_ino) == (opened.st_dev, opened.st_ino)


_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def _refuse_irregular(mode: int, path: PathLike) -> None:
    """Raise unless `mode` is a regular file's: a directory as `IsADirectoryError`."""
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
    reason = f"{kind}, not a regular file: a session cannot be kept there"
    raise NotARegularFileError(errno.EINVAL, reason, str(path))


def _refuse_irregular_path(path: PathLike) -> None:
    """Check what `path` names (following symlinks) before opening: a FIFO or a socket must
    be refused, not opened. A path that does not exist yet passes."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    _refuse_irregular(mode, path)


# --- a fork must not take a lock with it ---------------------------------------------------------
#
# An flock belongs to the open file, which a forked child shares until it closes its copy; a
# child forked while another thread appends would hold every appender up until it exits. So
# every fd this module holds is recorded, and a child closes its copies straight after the fork.
# The guard is held across open and close, and by the fork itself, so no fd escapes the record.

_held: dict[int, tuple[int, int]] = {}  # fd -> (st_dev, st_ino) of the file it holds
_held_guard = threading.Lock()


def _open_held(path: PathLike, flags: int) -> tuple[int, bool]:
    """Open (creating exclusively first when asked to create, to know who did) and record."""
    flags |= _FLAGS | _NONBLOCK
    with _held_guard:
        created = False
        if flags & os.O_CREAT:
            try:
                fd, created = os.open(path, flags | os.O_EXCL, 0o600), True
            except FileExistsError:
                fd = os.open(path, flags, 0o600)
        else:
            fd = os.open(path, flags, 0o600)
        info = os.fstat(fd)
        _held[fd] = (info.st_dev, info.st_ino)
    return fd, created


def release(fd: int) -> None:
    """Close an fd from `open_locked`, which releases its lock."""
    with _held_guard:
        _held.pop(fd, None)
        os.close(fd)


def _close_in_child() -> None:
    for fd, identity in _held.items():
        with contextlib.suppress(OSError):  # closed without `release`, or not ours any more
            info = os.fstat(fd)
            if (info.st_dev, info.st_ino) == identity:
                os.close(fd)
    _held.clear()
    _held_guard.release()


if hasattr(os, "register_at_fork"):  # not on Windows
    os.register_at_fork(
        before=_held_guard.acquire,
        after_in_parent=_held_guard.release,
        after_in_child=_close_in_child,
    )
