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

import contextlib
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

from .refusals import PathLike, refuse_file, refuse_path, symlink_refused

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
# the sync is rolled back like any failure; but a handler runs after any call, the roll-back's
# own too, so a roll-back may not finish, and an interrupt as the file closes comes after the
# record is complete. So the error that leaves carries where the record went (`Append`), set
# before any call can run a handler, and `written_anyway` looks there in the file.


class Append:
    """Where one `append_line` puts its bytes: what `written_anyway` compares with the file."""

    __slots__ = ("data", "offset", "path")

    def __init__(self, path: PathLike) -> None:
        self.path, self.offset, self.data = path, 0, b""


def append_line(
    path: PathLike, payload: bytes, check_last_line: LastLineCheck, fsync: bool
) -> None:
    """Append `payload` (one record and its newline) to `path`, under the lock, or not at all.

    When the file's last line lacks its newline, `check_last_line` decides: it raises to
    refuse the append, or returns, and a newline goes first. A write — and with `fsync`, its
    sync — that fails or is interrupted is rolled back (the record cut off again, the cut
    synced) and the error, naming the file, raised; a file this call created is removed again.
    So when this raises the record is not in the file, unless `written_anyway(error)`. Bytes
    a writer that takes no lock added meanwhile are never cut: the file is then left as it is,
    and a note on the error says so.
    """
    append, name = Append(path), os.fspath(path)
    try:
        with open_locked(path, write=True, create=True) as file:
            _append_held(file, append, payload, check_last_line, fsync)
            if sys.platform == "win32":
                _unlock(file.fileno())  # before the close, which may release it late
    except OSError as error:  # no call in either clause: no handler can raise before the note
        error.__dict__["append"] = append
        if error.filename is None and error.errno is not None:
            error.filename = name
        raise
    except BaseException as error:
        error.__dict__["append"] = append
        raise


def written_anyway(error: BaseException) -> bool:
    """Whether the record of the `append_line` that raised `error` is in its file after all,
    whole where it was written: an interruption came after it was complete, or cut the
    roll-back short (so may a failure of the roll-back). Looked up in the file when asked."""
    append = error.__dict__.get("append")
    if not isinstance(append, Append) or not append.data:
        return False  # raised before anything was written
    try:
        with open_locked(append.path, write=False) as file:
            return _holds(file.fileno(), append.offset, memoryview(append.data))
    except OSError:  # gone, or no longer a file to read: not there
        return False


def _append_held(
    file: LockedFile, append: Append, payload: bytes, check: LastLineCheck, fsync: bool
) -> None:
    """The append proper, on a locked file; `append` says where its bytes went."""
    fd = file.fileno()
    append.offset = size = file.info.st_size
    try:
        if size and read_at(fd, size - 1, 1) != b"\n":
            line, start = last_line(fd, size)
            check(line, functools.partial(count_lines, fd, start))
            payload = b"\n" + payload
        # The end, kept ours by the lock, and by O_APPEND from writers who take no lock (where
        # there is one: then the end may have moved since the lock; `lseek` says where it is).
        append.offset = os.lseek(fd, 0, os.SEEK_END)
        append.data = payload
        write_all(fd, payload)
        if fsync:  # a sync is part of the write: if it fails, the record was not written
            os.fsync(fd)
            if file.created:  # a new file: its name in the folder must survive a crash too
                sync_folder(os.path.dirname(os.path.abspath(append.path)))
    except BaseException as error:
        _roll_back(file, append, fsync, error)
        raise


def _roll_back(file: LockedFile, append: Append, fsync: bool, error: BaseException) -> None:
    """Cut this call's bytes off again, only when the file ends in them where they were written
    (what follows them, or stands in their place, is a lock-less writer's: it stays), and sync
    the cut; a first append that failed leaves no file (Windows keeps it: it is open)."""
    fd, offset = file.fileno(), append.offset
    try:
        end = os.fstat(fd).st_size
        if end - offset > len(append.data) or not _holds(
            fd, offset, memoryview(append.data)[: max(end - offset, 0)]
        ):
            if sys.version_info >= (3, 11):
                error.add_note(
                    f"{os.fspath(append.path)}: left as it is: what follows byte {offset} is not"
                    " only this append's (a writer that takes no lock?)"
                )
            return
        if end > offset:  # should even the cut fail, the torn record stays last, for `repair`
            os.ftruncate(fd, offset)
            if fsync:
                os.fsync(fd)
        if file.created and offset == 0:
            _unlink_if_named(append.path, os.fstat(fd))
    except OSError:
        pass


def _unlink_if_named(path: PathLike, opened: os.stat_result) -> None:
    named = os.lstat(path)
    if (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino) and not opened.st_size:
        os.unlink(path)


def _holds(fd: int, offset: int, data: memoryview) -> bool:
    """Whether the file holds `data` at `offset` (read a chunk at a time: no copy of a record)."""
    for start in range(0, len(data), CHUNK):
        piece = data[start : start + CHUNK]
        if read_at(fd, offset + start, len(piece)) != piece:
            return False
    return True


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
    the lock (none here, or another user's file they hold locked) a read that overlaps an
    append may end in the part written so far: see docs/DURABILITY.md.
    """
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
_FLAGS = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)  # where they exist
if sys.platform == "win32":
    _SETFL = None
else:
    _SETFL = getattr(fcntl, "F_SETFL", None)  # not in Pyodide's `fcntl`


def open_locked(path: PathLike, *, write: bool, create: bool = False) -> LockedFile:
    """The regular file `path`, open and locked: exclusively for a writer (read and write;
    with `create`, made when missing), shared for a reader. Use it in a `with` block.

    What is refused is not opened: `refusals.refuse_path` decides from `lstat`, and the
    open neither follows a link nor blocks. What was opened is refused (`refuse_file`, on
    its `fstat`) before the lock, so a refused file's lock is never waited for; nor is the
    lock of another user's file a reader may read: held, the file is read without it. Once
    locked, the path must still name the file: if a file was renamed over it meanwhile,
    open again; if the path has become a symbolic link, refuse.
    """
    for _ in range(_ATTEMPTS):
        file = _open(path, write, create)
        try:
            fd, writer = file.fileno(), write and not file.created  # a new file: ours, 0600
            info = os.fstat(fd)
            refuse_file(info, path, writer)  # before the lock: a refused file is never waited for
            euid = getattr(os, "geteuid", lambda: None)()  # none on Windows: all files yours
            _lock(fd, write, wait=write or euid in (None, info.st_uid))  # a reader: if its own
            info = file.info = os.fstat(fd)
            try:
                named = os.lstat(path)
            except FileNotFoundError:
                named = None  # removed meanwhile: open again
            if named is not None and (named.st_dev, named.st_ino) == (info.st_dev, info.st_ino):
                refuse_file(info, path, writer)  # as it is now that the lock is held
                return file
            if named is not None and stat.S_ISLNK(named.st_mode):
                raise symlink_refused(path)  # swapped in between a check and the open
        except BaseException:
            file.close()
            raise
        file.close()  # replaced meanwhile: open again
    raise OSError(errno.EAGAIN, "session file kept being replaced while opening it", str(path))


def _open(path: PathLike, write: bool, create: bool) -> LockedFile:
    """`_open_file`, made blocking again (with `O_APPEND` for a writer, against writers who take
    no lock; a new file exactly 0600) and noted for `_drop_locks_in_child`."""
    if not _hooked:
        _hook_forks()
    with _guard:  # a fork (which takes the guard) cannot come between the open and the note
        file = _open_file(path, write, create)
        try:
            if sys.platform != "win32":
                if file.created and hasattr(os, "fchmod"):
                    os.fchmod(file.fileno(), 0o600)  # exactly, whatever the umask (0277: 0400)
                if _SETFL is not None:
                    fcntl.fcntl(file.fileno(), _SETFL, os.O_APPEND if write else 0)
            _held[file.fileno()] = weakref.ref(file)
        except BaseException:
            file.close()
            raise
    return file


def _open_file(path: PathLike, write: bool, create: bool) -> LockedFile:
    """Open what a look (`lstat`) did not refuse; a writer that may create does so exclusively,
    which never follows a link or opens what exists, and tells who made the file."""
    for _ in range(_ATTEMPTS):
        refuse_path(path, write)
        try:
            file = LockedFile(path, "r+b" if write else "rb", opener=_open_flagged)
        except FileNotFoundError:
            if not create:
                raise
            try:
                file = LockedFile(path, "x+b", opener=_open_flagged)
            except FileExistsError:
                continue  # made meanwhile (a file, or a link): look again
            file.created = True
            return file
        except OSError:
            refuse_path(path, write)  # a link swapped in after the look (ELOOP): say so
            raise
        file.created = False
        return file
    raise OSError(errno.EAGAIN, "session file kept coming and going while opening it", str(path))


def _open_flagged(path: str, flags: int) -> int:
    """`_OPENER` (tests replace it) with the flags. The fd goes from `os.open` into a list and
    out to `io.FileIO`, which owns it, with no bytecode between that may run a signal handler:
    there is no call between, only a call checks (3.11 and later), and `map` calls in C."""
    _opened[:] = map(_OPENER, (path,), (flags | _FLAGS,))  # under `_guard`: one open at a time
    return _opened[0]


_opened: list[int] = []  # the last fd opened: only an int, owned by its `io.FileIO`


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

    def _lock(fd: int, write: bool, wait: bool = True) -> None:
        """`LockFileEx` on the stand-in byte: exclusive for a writer, shared for a reader.
        Asked without waiting, and again after a short sleep: a sleep is where Ctrl-C reaches
        Python on Windows; a `LockFileEx` that waits would not be interrupted. Without
        `wait`, a lock held by another is not waited for: the file stays unlocked."""
        handle, flags, pause = msvcrt.get_osfhandle(fd), _FAIL_AT_ONCE, 0.001
        if write:
            flags |= _EXCLUSIVE
        while not _kernel32().LockFileEx(handle, flags, 0, 1, 0, _Overlapped(**_AT)):
            code = ctypes.get_last_error()
            if code != _LOCK_VIOLATION:
                raise ctypes.WinError(code)
            if not wait:
                return
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def _unlock(fd: int) -> None:
        """Release the lock (closing the file releases it too, a crash included)."""
        _kernel32().UnlockFileEx(msvcrt.get_osfhandle(fd), 0, 1, 0, _Overlapped(**_AT))

else:
    _FLOCK, _NB = has_lock(), getattr(fcntl, "LOCK_NB", 0)

    def _lock(fd: int, write: bool, wait: bool = True) -> None:
        """`flock`: exclusive for a writer, shared for a reader; a wait Ctrl-C interrupts.
        Without `wait`, a lock held by another is not waited for: the file stays unlocked."""
        if _FLOCK:
            with contextlib.suppress(BlockingIOError):  # held by another: not waited for
                fcntl.flock(fd, (fcntl.LOCK_EX if write else fcntl.LOCK_SH) | _NB * (not wait))


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
