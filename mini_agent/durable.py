"""Beyond the chapter: what makes an append safe when processes overlap or writes fail.

The chapter's `appendSession` is one `appendFile` and admits "no lock or fsync". Here one
call, `append_line`, adds what a careful user expects: an advisory lock shared by every
cooperating appender and `repair`, a newline guard (a record is never glued onto a last line
that lacks its newline), a write — and, on request, its `fsync` — completed or rolled back.
`read_session_file` reads under the shared lock, so a load never sees half a record. Both
refuse anything but a regular file and never follow a symbolic link; writers also refuse a
file another user owns or could write. Ctrl-C never leaves an fd (or its lock) behind, and a
forked child never keeps a lock (see the end). docs/DURABILITY.md says what holds where.

This module knows bytes and files, not messages: the session passes in the check of an
unterminated last line, so `durable` never imports `session` (no import circle).
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import sys
import threading
from collections.abc import Callable
from types import FrameType

PathLike = str | os.PathLike[str]

# Portable flags: Windows has neither O_CLOEXEC nor newline-free writes without O_BINARY;
# O_NONBLOCK (Unix) keeps the open of a FIFO that slipped past the first check from waiting.
_FLAGS = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # Windows has none: there `lstat` checks first
_WRITE = os.O_WRONLY | os.O_RDWR

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


class SymlinkRefusedError(OSError):
    """The path is a symbolic link: a session is never read or written through one (in a
    shared folder a link is how another user points your session at a file of yours)."""


class UntrustedFileError(PermissionError):
    """An existing session that another user owns, or that the group or others may write:
    anything in it may have been written by someone else, so nothing is appended to it."""


_REOPEN_ATTEMPTS = 100

LastLineCheck = Callable[[bytes, int], None]
"""Called with an unterminated last line and its line number; raises if it is not a record."""


def append_line(
    path: PathLike, payload: bytes, check_last_line: LastLineCheck, fsync: bool
) -> None:
    """Append `payload` (one record and its newline) to `path`, under the lock, or not at all.

    When the file's last line lacks its newline, `check_last_line` decides: it raises to
    refuse the append, or returns, and a newline is written first. A write — and with
    `fsync`, its sync — that fails or is interrupted (Ctrl-C) is rolled back: the record is
    cut off again (and the cut synced), then the error propagates; a file this call created
    is removed again. New files get mode 0600 whatever the umask: transcripts are private.
    Anything but a regular file, a symbolic link, and a file another user owns or may write
    are refused.
    """
    with signals_deferred():  # no Ctrl-C between taking the fd and the `try` that frees it
        fd, created = _open_locked(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, shared=False)
        try:
            _append_held(fd, path, payload, check_last_line, fsync, created)
        finally:
            _release(fd)  # closing releases the lock


def _append_held(
    fd: int, path: PathLike, payload: bytes, check: LastLineCheck, fsync: bool, created: bool
) -> None:
    """The append proper, on a locked fd: interruptible, and undone if interrupted."""
    size = os.fstat(fd).st_size
    signal_gate.interruptible = True  # Ctrl-C may land anywhere from here: it is undone below
    try:
        if size > 0 and read_at(fd, size - 1, 1) != b"\n":
            data = read_at(fd, 0, size)  # the rare path: the whole file, to number the line
            start = data.rfind(b"\n") + 1
            check(data[start:], data.count(b"\n", 0, start) + 1)
            payload = b"\n" + payload
        write_all(fd, payload)
        if fsync:  # a sync is part of the write: if it fails, the record was not written
            os.fsync(fd)
            if size == 0:  # a new file: its name in the folder must survive a crash too
                sync_folder(os.path.dirname(os.path.abspath(path)))
        signal_gate.interruptible = False  # a plain store: no signal is handled in between
    except BaseException:
        signal_gate.interruptible = False  # first, so that nothing interrupts the roll-back
        _roll_back(fd, size, fsync)
        if created and size == 0:  # a first append that failed leaves no empty file
            _remove_if_still_empty(path, fd)
        raise


def read_session_file(path: PathLike) -> bytes:
    """Every byte of the file at `path`, read under the shared lock where there is one.

    Cooperating appenders hold the exclusive lock while they write, so the bytes read end
    with complete records (or with a torn line a killed appender left, which `repair` cuts).
    A missing file raises `FileNotFoundError`; anything but a regular file is refused at
    once (a FIFO would block, `/dev/zero` never end), and so is a symbolic link. Without a
    lock a read that overlaps an append may end in the part of the record written so far:
    see docs/DURABILITY.md.
    """
    with signals_deferred():
        fd = _open_locked(path, os.O_RDONLY, shared=True)[0]
        try:
            signal_gate.interruptible = True  # a long read may be interrupted: nothing to undo
            return read_at(fd, 0, os.fstat(fd).st_size)
        finally:
            signal_gate.interruptible = False  # first: a plain store, never interrupted
            _release(fd)


def _roll_back(fd: int, size: int, synced: bool) -> None:
    """Cut the file back to `size` bytes, and sync the cut when the write was to be synced.
    Should even the cut fail, the torn record stays the file's last line, for `repair`."""
    with contextlib.suppress(OSError):
        if os.fstat(fd).st_size > size:
            os.ftruncate(fd, size)
            if synced:
                os.fsync(fd)


def _remove_if_still_empty(path: PathLike, fd: int) -> None:
    """Unlink the empty file we created, if the path still names it (we hold the lock)."""
    with contextlib.suppress(OSError):  # Windows will not unlink an open file: it stays
        opened = os.fstat(fd)
        if opened.st_size == 0 and _names_same_file(path, opened):
            os.unlink(path)


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
    Without `flock` (Windows, Pyodide) this is a plain open: nothing serialises. Opened for
    writing, a file another user owns or may write is refused (`UntrustedFileError`).
    """
    with signals_deferred():
        return _open_locked(path, flags, shared=shared)[0]


def _open_locked(path: PathLike, flags: int, *, shared: bool) -> tuple[int, bool]:
    """`open_locked`, and whether this call created the file. Call it with signals deferred:
    the fd it returns must reach its caller's `try` before a Ctrl-C can strike."""
    for _ in range(_REOPEN_ATTEMPTS):
        _refuse_irregular_path(path)
        fd, created = _open_held(path, flags)
        try:
            info = os.fstat(fd)
            _refuse_irregular(info.st_mode, path)  # swapped in after the check
            if created and hasattr(os, "fchmod"):
                with contextlib.suppress(OSError):  # a file system without modes
                    os.fchmod(fd, 0o600)  # exactly 0600: a umask of 0277 would leave 0400
            elif flags & _WRITE:
                refuse_untrusted(info, path)
            if not has_lock():
                return fd, created
            signal_gate.interruptible = True  # waiting for another process: Ctrl-C must work
            try:
                fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            finally:
                signal_gate.interruptible = False
            if _names_same_file(path, os.fstat(fd)):
                return fd, created
        except BaseException:
            _release(fd)
            raise
        _release(fd)
    raise OSError(errno.EAGAIN, "session file kept being replaced while opening it", str(path))


def refuse_untrusted(info: os.stat_result, path: PathLike) -> None:
    """Raise `UntrustedFileError` unless the file `info` describes is the caller's own and
    no one else may write it: not world-writable, and group-writable only when the group is
    the owner's private one (the user-private-group convention of a umask of 002). Not on
    Windows (no uid; its mode bits say nothing of other users)."""
    if not hasattr(os, "geteuid") or os.name == "nt":
        return
    me = os.geteuid()
    if info.st_uid != me:
        reason = (
            f"owned by uid {info.st_uid}, not by you (uid {me}): refusing to write to a "
            "session another user controls; keep sessions in a folder only you can write"
        )
        raise UntrustedFileError(errno.EPERM, reason, str(path))
    if info.st_mode & 0o002 or (info.st_mode & 0o020 and not _private_group(info)):
        mode = stat.S_IMODE(info.st_mode)
        reason = (
            f"mode {mode:04o} lets others write it, so anything in it may be theirs: "
            f"refusing to append; if you trust its content, `chmod 600` it"
        )
        raise UntrustedFileError(errno.EPERM, reason, str(path))


def _private_group(info: os.stat_result) -> bool:
    """Whether the file's group is its owner's own: named as the owner, the owner's
    primary group, and no one else listed in it."""
    try:
        import grp
        import pwd
    except ImportError:
        return False
    try:
        group, user = grp.getgrgid(info.st_gid), pwd.getpwuid(info.st_uid)
    except KeyError:
        return False
    others = [member for member in group.gr_mem if member != user.pw_name]
    return group.gr_name == user.pw_name and user.pw_gid == info.st_gid and not others


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
    """Check what `path` names before opening: a symbolic link, a FIFO or a socket must be
    refused, not opened (`O_NOFOLLOW` refuses a link swapped in later, where it exists). A
    path that does not exist yet passes."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise _symlink_refused(path)
    _refuse_irregular(mode, path)


def _symlink_refused(path: PathLike) -> SymlinkRefusedError:
    reason = (
        "a symbolic link: sessions are not followed through links (in a shared folder one "
        "may point at a file of yours); name the file itself, in a folder only you can write"
    )
    return SymlinkRefusedError(errno.ELOOP, reason, str(path))


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
    flags |= _FLAGS | _NONBLOCK | _NOFOLLOW
    with _held_guard:
        try:
            fd, created = _open_or_create(path, flags)
        except OSError as err:
            if _NOFOLLOW and err.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(path):
                raise _symlink_refused(path) from None
            raise
        info = os.fstat(fd)
        _held[fd] = (info.st_dev, info.st_ino)
    return fd, created


def _open_or_create(path: PathLike, flags: int) -> tuple[int, bool]:
    if not flags & os.O_CREAT:
        return os.open(path, flags), False
    for _ in range(_REOPEN_ATTEMPTS):
        try:
            return os.open(path, flags | os.O_EXCL, 0o600), True  # never follows a link
        except FileExistsError:
            pass
        try:  # without O_CREAT: `fs.protected_regular` refuses that on others' files
            return os.open(path, flags & ~os.O_CREAT), False
        except FileNotFoundError:
            continue  # removed between the two opens: create it after all
    raise OSError(errno.EAGAIN, "session file kept coming and going while opening it", str(path))


def release(fd: int) -> None:
    """Close an fd from `open_locked`, which releases its lock."""
    with signals_deferred():
        _release(fd)


def _release(fd: int) -> None:
    """`release`, for callers that already defer signals."""
    with _held_guard:
        os.close(fd)  # first: whatever happens next, the fd and its lock are gone
        _held.pop(fd, None)


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


# --- Ctrl-C must not strike while an fd changes hands ----------------------------------------
#
# Python runs a signal's handler (Ctrl-C's raises KeyboardInterrupt) in the main thread,
# between any two bytecodes: after `os.open` returned but before its fd was recorded, or
# after `release` was entered but before `os.close`. Either leaks the fd, and with it the
# lock, until the process exits. So while this module holds or hands over an fd, the main
# thread's Python-level handlers are replaced by one that only notes the signal; the notes
# are replayed, by calling the replaced handlers, once the fd is safe. Where waiting or
# working may take long (the lock, the write, the sync, the read), `interruptible` lets the
# handlers run at once, inside a `try` that undoes what the interruption left half done.
# Other threads never run handlers, so for them all of this is a no-op.

# Signals that a program commonly handles in Python; SIGINT's default handler raises.
_ASYNC = tuple(
    getattr(signal, name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGALRM", "SIGUSR1", "SIGUSR2")
    if hasattr(signal, name)
)


class _Signals(threading.local):
    depth = 0  # nested `signals_deferred` blocks of this thread
    interruptible = False  # handlers run at once (the main thread reads its own value)


signal_gate = _Signals()
_Handler = Callable[[int, FrameType | None], object]
# The C functions under `signal.getsignal` and `signal.signal` (same arguments, same results
# but for enum wrapping), where `signal` has them: the wrapping costs microseconds a call.
_C_SIGNAL = sys.modules.get("_signal", signal)
_getsignal: Callable[[int], object] = getattr(_C_SIGNAL, "getsignal", signal.getsignal)
_setsignal: Callable[[int, _Handler], object] = getattr(_C_SIGNAL, "signal", signal.signal)
_replaced: dict[int, _Handler] = {}  # signal number -> the handler `_note` stands in for
_noted: list[tuple[int, FrameType | None]] = []


def _note(signum: int, frame: FrameType | None) -> object:
    handler = _replaced.get(signum)
    if (signal_gate.interruptible or not signal_gate.depth) and callable(handler):
        return handler(signum, frame)  # as if we were not there
    _noted.append((signum, frame))
    return None


class signals_deferred:  # lower case: used as a `with` block, like a function
    """In the main thread: note asynchronous signals instead of handling them, for the
    block; on leaving the outermost block, put the handlers back and run the noted ones.

    Inside, `signal_gate.interruptible = True` lets handlers run at once; set it inside a
    `try` whose handler first sets it back to `False` — a plain store, never a call (a call
    is a point where a handler can run)."""

    __slots__ = ("main",)

    def __enter__(self) -> None:
        self.main = threading.current_thread() is threading.main_thread()
        if not self.main:
            return
        signal_gate.depth += 1
        if signal_gate.depth > 1:
            return
        try:
            for signum in _ASYNC:
                handler = _getsignal(signum)
                if callable(handler) and handler is not _note:
                    _replaced[signum] = handler
                    _setsignal(signum, _note)
        except ValueError:  # not the main interpreter, or no signals here (Pyodide)
            pass
        except BaseException:
            signal_gate.depth -= 1  # `_note` now behaves as the handlers it stands in for
            raise

    def __exit__(self, *exc: object) -> None:
        if not self.main:
            return
        signal_gate.depth -= 1  # from here `_note` behaves as the handlers it replaced
        if signal_gate.depth:
            return
        noted = _noted[:]
        del _noted[:]
        for signum, handler in list(_replaced.items()):
            try:  # noqa: SIM105 - no `suppress` object to build on every append
                _setsignal(signum, handler)
            except ValueError:
                pass
            del _replaced[signum]
        for signum, frame in noted:
            now = _getsignal(signum)
            if callable(now):
                now(signum, frame)  # Ctrl-C: KeyboardInterrupt, now that all is safe
