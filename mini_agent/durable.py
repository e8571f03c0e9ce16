"""Beyond the chapter: what keeps a session file whole when processes overlap, writes fail or
Ctrl-C strikes.

The chapter's `appendSession` is one `appendFile` and admits "no lock or fsync". Here one call,
`append_line`, adds what a careful user expects: a lock shared by every cooperating appender,
loader and `repair`; a newline guard (a record is never glued onto a last line that lacks its
newline); and a write — with `fsync`, its sync too — completed or rolled back. `read_lines`
reads under the same lock, holding only the non-blank lines. Which files are refused, and why,
is `refusals`' job. docs/DURABILITY.md says what holds where.

This module knows bytes and files, not messages: the session passes in its check of an
unterminated last line, so `durable` never imports `session`. A call changes nothing outside
itself: no signal handler is touched, and the one process-wide hook (a forked child must not
keep a lock) is installed by the first lock, not on import.
"""

from __future__ import annotations

import errno
import functools
import io
import os
import stat
import sys
import threading
import weakref
from array import array
from collections.abc import Callable, Iterable, Iterator
from itertools import compress

from .refusals import (
    PathLike,
    refuse_borrowed_folders,
    refuse_for_writing,
    refuse_irregular,
    refuse_irregular_path,
    symlink_refused,
)

if sys.platform != "win32":
    import fcntl

__all__ = ["PathLike"]  # re-exported: the kit's path type

CHUNK = 1 << 20  # files are read a chunk at a time: memory follows what is kept, not the file

LastLineCheck = Callable[[bytes, Callable[[], int]], None]
"""Called with an unterminated last line and a function giving its line number; raises to
refuse the append, returns to let a newline go first."""


# --- the append ------------------------------------------------------------------------------
#
# Ctrl-C raises KeyboardInterrupt between two bytecodes, anywhere. So every file here is an
# `io.FileIO` that `os.open` makes inside one C call: from the moment the fd exists an object
# owns it, and an interrupt that drops the object closes the fd, and with it the lock. Every
# frame that holds one closes it in a `with` or an `except`. An interrupt inside the write or
# the sync is rolled back like any failure; one that lands after the record is complete (as
# the file closes) cannot be undone, so it leaves the call marked: `written_anyway`.


def append_line(
    path: PathLike, payload: bytes, check_last_line: LastLineCheck, fsync: bool
) -> None:
    """Append `payload` (one record and its newline) to `path`, under the lock, or not at all.

    When the file's last line lacks its newline, `check_last_line` decides: it raises to
    refuse the append, or returns, and a newline goes first. A write — and with `fsync`, its
    sync — that fails or is interrupted is rolled back (the record cut off again, the cut
    synced) and the error raised; a file this call created is removed again. So when this
    raises the record is not in the file, unless `written_anyway(error)`.
    """
    written = False
    try:
        with open_locked(path, write=True, create=True) as file:
            written = _append_held(file, path, payload, check_last_line, fsync)
            if sys.platform == "win32":
                _unlock(file.fileno())  # before the close, which may release it late
    except BaseException as error:
        if written:
            error.__dict__["record_written"] = True
            if sys.version_info >= (3, 11):
                error.add_note(f"{os.fspath(path)}: the record was written before this arrived")
        raise


def written_anyway(error: BaseException) -> bool:
    """Whether an exception from `append_line` arrived after its record was written whole."""
    return getattr(error, "record_written", False) is True


def _append_held(
    file: LockedFile, path: PathLike, payload: bytes, check: LastLineCheck, fsync: bool
) -> bool:
    """The append proper, on a locked file; `True` once the record is complete (and synced)."""
    fd, size = file.fileno(), file.info.st_size
    try:
        if size and read_at(fd, size - 1, 1) != b"\n":
            line, start = last_line(fd, size)
            check(line, functools.partial(count_lines, fd, start))
            payload = b"\n" + payload
        os.lseek(fd, size, os.SEEK_SET)  # the end, kept ours by the lock (and by O_APPEND,
        write_all(fd, payload)  # where there is one, from writers who take no lock)
        if fsync:  # a sync is part of the write: if it fails, the record was not written
            os.fsync(fd)
            if file.created:  # a new file: its name in the folder must survive a crash too
                sync_folder(os.path.dirname(os.path.abspath(path)))
    except BaseException:
        try:
            if os.fstat(fd).st_size > size:  # should even the cut fail, the torn record
                os.ftruncate(fd, size)  # stays the last line, for `repair`
                if fsync:
                    os.fsync(fd)
            if file.created and size == 0:  # a first append that failed leaves no file
                _unlink_if_named(path, os.fstat(fd))  # (Windows keeps it: it is open)
        except OSError:
            pass
        raise
    return True


def _unlink_if_named(path: PathLike, opened: os.stat_result) -> None:
    named = os.lstat(path)
    if (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino):
        os.unlink(path)


def last_line(fd: int, size: int) -> tuple[bytes, int]:
    """The unterminated last line of a file of `size` bytes and the offset it starts at: read
    backwards from the end, a chunk at a time, so that only that line is ever held."""
    pieces: list[bytes] = []
    start = size
    while start > 0:
        end, start = start, max(start - CHUNK, 0)
        chunk = read_at(fd, start, end - start)
        newline = chunk.rfind(b"\n")
        pieces.append(chunk[newline + 1 :])
        if newline >= 0:
            start += newline + 1
            break
    return b"".join(reversed(pieces)), start


def count_lines(fd: int, end: int) -> int:
    """The number of the line that starts at offset `end`: one more than the newlines before."""
    newlines = 0
    for offset in range(0, end, CHUNK):
        newlines += read_at(fd, offset, min(CHUNK, end - offset)).count(b"\n")
    return newlines + 1


# --- the read -----------------------------------------------------------------------------------


class Lines:
    """A file's non-blank lines (each without its `\n`) and their physical line numbers; a
    line that is not UTF-8 is kept as its bytes, for the loader to say where it breaks."""

    __slots__ = ("lines", "numbers")

    def __init__(self) -> None:
        self.lines: list[str | bytes] = []
        self.numbers = array("q")

    def __iter__(self) -> Iterator[tuple[int, str | bytes]]:
        return zip(self.numbers, self.lines, strict=True)


def read_lines(path: PathLike) -> Lines:
    """The non-blank lines of the file at `path`, read under the shared lock where there is
    one, so that cooperating appenders (who hold it exclusively) are never seen half done.

    A missing file raises `FileNotFoundError`; anything but a regular file, and a symbolic
    link, is refused before it is opened (a FIFO would block, `/dev/zero` never end). Without
    a lock a read that overlaps an append may end in the part written so far: see
    docs/DURABILITY.md.
    """
    refuse_irregular_path(path)
    with open_locked(path, write=False) as file:
        return split_lines(iter(functools.partial(file.read, CHUNK), b""))


def split_lines(chunks: Iterable[bytes]) -> Lines:
    """The non-blank lines of the UTF-8 text the bytes `chunks` make, split on `\n` only and
    numbered as an editor numbers them: a blank line costs nothing but its number."""
    found = Lines()
    pending: list[bytes] = []  # the pieces of a line whose newline is still to come
    number = 1  # the physical number of the line that starts next
    for chunk in chunks:
        first, last = chunk.find(b"\n"), chunk.rfind(b"\n")
        if first < 0:
            pending.append(chunk)
            continue
        pending.append(chunk[:first])
        _keep(found, b"".join(pending), number)
        pending = [chunk[last + 1 :]]
        number += 1 + _keep_block(found, chunk[first + 1 : last + 1], number + 1)
    _keep(found, b"".join(pending), number)
    return found


def _keep(found: Lines, line: bytes, number: int) -> None:
    if line:
        try:
            found.lines.append(line.decode("utf-8"))
        except UnicodeDecodeError:
            found.lines.append(line)
        found.numbers.append(number)


def _keep_block(found: Lines, block: bytes, number: int) -> int:
    """Keep the lines of `block` (whole lines, each ending in a newline) from line `number`;
    return how many lines it held, blank ones included."""
    try:
        text = block.decode("utf-8")  # all at once: a newline is never inside a character
    except UnicodeDecodeError:
        for offset, line in enumerate(block.split(b"\n")[:-1]):  # a line is not UTF-8
            _keep(found, line, number + offset)
        return block.count(b"\n")
    if not text.strip("\n"):
        return len(text)  # blank lines only
    lines = text.split("\n")
    lines.pop()  # after the last newline
    numbers = range(number, number + len(lines))
    if "" in lines:  # some blank: leave them out (in C: `compress` keeps the true ones)
        found.lines += compress(lines, lines)
        found.numbers.extend(compress(numbers, lines))
    else:
        found.lines += lines
        found.numbers.extend(numbers)
    return len(lines)


# --- opening and locking ---------------------------------------------------------------------------


class LockedFile(io.FileIO):
    """An open session file holding the lock: `info` is its `fstat` taken once locked,
    `created` whether this open made it. Closing it releases the lock."""

    info: os.stat_result
    created: bool


_ATTEMPTS = 100
_OPENER = functools.partial(os.open, mode=0o600)  # a new file is 0600 from its first moment
if sys.platform == "win32":
    _SETFL = None
else:
    _SETFL = getattr(fcntl, "F_SETFL", None)  # not in Pyodide's `fcntl`


def open_locked(path: PathLike, *, write: bool, create: bool = False) -> LockedFile:
    """The regular file `path`, open and locked: exclusively for a writer (read and write;
    with `create`, made when missing), shared for a reader. Use it in a `with` block.

    The lock is won on an open file, so the path must then still name that file: if another
    program renamed a new file over it meanwhile, open again; if the path has become a
    symbolic link, refuse. A writer refuses what `refusals.refuse_for_writing` refuses.
    """
    for _ in range(_ATTEMPTS):
        file = _open(path, write, create)
        try:
            _lock(file.fileno(), write)
            info = file.info = os.fstat(file.fileno())
            try:
                named = os.lstat(path)
            except FileNotFoundError:
                named = None  # removed meanwhile: open again
            if named is not None and (named.st_dev, named.st_ino) == (info.st_dev, info.st_ino):
                if write and not file.created:
                    refuse_for_writing(info, path)
                else:
                    refuse_irregular(info.st_mode, path)
                return file
            if named is not None and stat.S_ISLNK(named.st_mode):
                raise symlink_refused(path)  # swapped in between a check and the open
        except BaseException:
            file.close()
            raise
        file.close()  # replaced meanwhile: open again
    raise OSError(errno.EAGAIN, "session file kept being replaced while opening it", str(path))


def _open(path: PathLike, write: bool, create: bool) -> LockedFile:
    """Open — a writer that may create does so exclusively, which never follows a link and
    tells who made the file — and note the file for `_drop_locks_in_child`."""
    if not _hooked:
        _hook_forks()
    with _guard:  # a fork (which takes the guard) cannot come between the open and the note
        try:
            file = _open_file(path, write, create)
        except OSError:
            refuse_irregular_path(path)  # a link, a socket…: say so rather than the errno
            raise
        try:
            if file.created and sys.platform != "win32" and hasattr(os, "fchmod"):
                os.fchmod(file.fileno(), 0o600)  # exactly, whatever the umask (0277: 0400)
            elif write and sys.platform != "win32" and _SETFL is not None:
                fcntl.fcntl(file.fileno(), _SETFL, os.O_APPEND)  # for writers without the lock
            _held[file.fileno()] = weakref.ref(file)
        except BaseException:
            file.close()
            raise
    return file


def _open_file(path: PathLike, write: bool, create: bool) -> LockedFile:
    for _ in range(_ATTEMPTS):
        try:
            file = LockedFile(path, "r+b" if write else "rb", opener=_OPENER)
        except FileNotFoundError:
            if not create:
                raise
            refuse_irregular_path(path)  # a dangling link: not even followed by a create
            refuse_borrowed_folders(path)  # a new session: mind whose folders lead to it
            try:
                file = LockedFile(path, "x+b", opener=_OPENER)
            except FileExistsError:
                refuse_irregular_path(path)  # a dangling link stays "existing": refuse it
                continue  # made meanwhile by someone else: open it after all
            file.created = True
            return file
        file.created = False
        return file
    raise OSError(errno.EAGAIN, "session file kept coming and going while opening it", str(path))


def has_lock() -> bool:
    """Whether appenders and loaders here serialise through a lock: `flock` on POSIX, a
    byte-range lock (`LockFileEx`) on Windows; not on Pyodide, whose `flock` is missing (one
    process, one thread: nothing to serialise). docs/DURABILITY.md says what that means."""
    if sys.platform == "win32":
        return True
    else:
        return sys.platform != "emscripten" and hasattr(fcntl, "flock")


if sys.platform == "win32":
    import ctypes
    import msvcrt
    import time
    from ctypes import wintypes

    class _Overlapped(ctypes.Structure):
        _fields_ = [
            ("internal", ctypes.c_size_t),
            ("internal_high", ctypes.c_size_t),
            ("offset", wintypes.DWORD),
            ("offset_high", wintypes.DWORD),
            ("event", wintypes.HANDLE),
        ]

    # One byte far beyond any file's end stands for the whole file: Windows' byte-range locks
    # are mandatory, and a lock on the data itself would block other processes' reads.
    _AT = {"offset": 0, "offset_high": 1 << 30}  # offset 2**62
    _EXCLUSIVE, _FAIL_AT_ONCE, _LOCK_VIOLATION = 0x2, 0x1, 33

    @functools.cache
    def _kernel32() -> ctypes.WinDLL:
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        dword, place = wintypes.DWORD, ctypes.POINTER(_Overlapped)
        kernel32.LockFileEx.argtypes = [wintypes.HANDLE, dword, dword, dword, dword, place]
        kernel32.UnlockFileEx.argtypes = [wintypes.HANDLE, dword, dword, dword, place]
        kernel32.LockFileEx.restype = kernel32.UnlockFileEx.restype = wintypes.BOOL
        return kernel32

    def _lock(fd: int, write: bool) -> None:
        """`LockFileEx` on the stand-in byte: exclusive for a writer, shared for a reader.
        Asked without waiting, and again after a short sleep: a sleep is where Ctrl-C reaches
        Python on Windows; a `LockFileEx` that waits would not be interrupted."""
        handle, flags, pause = msvcrt.get_osfhandle(fd), _FAIL_AT_ONCE, 0.001
        if write:
            flags |= _EXCLUSIVE
        while not _kernel32().LockFileEx(handle, flags, 0, 1, 0, _Overlapped(**_AT)):
            code = ctypes.get_last_error()
            if code != _LOCK_VIOLATION:
                raise ctypes.WinError(code)
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def _unlock(fd: int) -> None:
        """Release the lock (closing the file releases it too, a crash included)."""
        _kernel32().UnlockFileEx(msvcrt.get_osfhandle(fd), 0, 1, 0, _Overlapped(**_AT))

else:
    _FLOCK = has_lock()

    def _lock(fd: int, write: bool) -> None:
        """`flock`: exclusive for a writer, shared for a reader; a wait Ctrl-C interrupts."""
        if _FLOCK:
            fcntl.flock(fd, fcntl.LOCK_EX if write else fcntl.LOCK_SH)


# --- bytes in and out ------------------------------------------------------------------------------


def write_all(fd: int, data: bytes) -> None:
    """`os.write` until every byte is written (a write may take fewer than it is given)."""
    written = os.write(fd, data)
    if written == len(data):
        return
    view = memoryview(data)[written:]
    while view:
        written = os.write(fd, view)
        if written == 0:
            raise OSError(errno.EIO, "write made no progress")
        view = view[written:]


_PREAD = sys.platform != "win32" and hasattr(os, "pread")


def read_at(fd: int, offset: int, size: int) -> bytes:
    """Up to `size` bytes of an open file from `offset` (`pread` where there is one)."""
    if sys.platform != "win32" and _PREAD:
        return os.pread(fd, size, offset)
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, size)


def sync_folder(folder: PathLike) -> None:
    """fsync a folder, so that a file created or renamed in it survives a crash (Windows
    cannot open a folder as a file; there the rename is as durable as it gets)."""
    if sys.platform == "win32":
        return
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# --- a fork must not take a lock with it ---------------------------------------------------------
#
# An flock belongs to the open file, which a forked child shares until it closes its copy: a
# child forked while another thread appends would hold every appender up until it exits. So
# the first lock installs an at-fork hook; every open file is noted (weakly) under a guard
# the fork itself takes, and a child puts /dev/null in place of its copies at once — the fd
# numbers stay taken, so the parent's objects in the child close nothing of the child's.

_held: dict[int, weakref.ref[LockedFile]] = {}
_guard = threading.Lock()
_hooked = False


def _hook_forks() -> None:
    global _hooked
    with _guard:
        if not _hooked and hasattr(os, "register_at_fork"):
            os.register_at_fork(
                before=_guard.acquire,
                after_in_parent=_guard.release,
                after_in_child=_drop_locks_in_child,
            )
        _hooked = True


def _drop_locks_in_child() -> None:
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        try:
            for fd, held in _held.items():
                file = held()
                if file is not None and not file.closed:
                    os.dup2(devnull, fd)
        finally:
            os.close(devnull)
    finally:
        _held.clear()
        _guard.release()
