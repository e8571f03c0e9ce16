"""Beyond the chapter: the session's store, behind two calls — `read_lines` and `append_line` —
that keep a session file whole when processes overlap, writes fail or Ctrl-C strikes
(docs/DURABILITY.md). It knows bytes and files, not messages: the session passes its parser in."""

from __future__ import annotations

import codecs
import contextlib
import errno
import functools
import io
import os
import re
import stat
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any

if sys.platform != "win32":
    import fcntl

PathLike = str | os.PathLike[str]
CHUNK = 1 << 20  # files are read a chunk at a time: memory follows what is kept, not the file

# --- the session's error ----------------------------------------------------------------

INVALID_JSON = "invalid session JSON at line"
INVALID_RECORD = "invalid session record at line"


class SessionFormatError(ValueError):
    """A line that cannot be restored: `path`, the physical `line`, the `column` when known."""

    def __init__(
        self, phrase: str, path: PathLike, line: int, detail: str, column: int | None = None
    ) -> None:
        super().__init__(f"{phrase} {line}: {detail}")
        self.phrase, self.path, self.line = phrase, path, line
        self.detail, self.column = detail, column

    def __reduce__(self) -> tuple[Any, ...]:  # pickles carry it whole, not as a TypeError
        return (type(self), (self.phrase, self.path, self.line, self.detail, self.column))


# --- which files are refused ----------------------------------------------------------------


class NotARegularFileError(OSError):
    """A FIFO, a device or a socket: no session can live there."""


class SymlinkRefusedError(OSError):
    """A symbolic link: in a shared folder, how another user points a session at your file."""


class HardLinkRefusedError(OSError):
    """A file with another name: an append would change that file too."""


class UntrustedFileError(PermissionError):
    """A file another user owns or others may write: nothing is appended to it."""


def refuse_linked(info: os.stat_result, path: PathLike) -> None:
    """Raise `HardLinkRefusedError` when the file has more than one name."""
    if info.st_nlink > 1:
        reason = (
            f"the file has {info.st_nlink} names (hard links): an append would change the other "
            "files too; copy it to a file of its own (`cp FILE NEW`) and use that"
        )
        raise HardLinkRefusedError(errno.EMLINK, reason, str(path))


def refuse_untrusted(info: os.stat_result, path: PathLike) -> None:
    """Refuse another user's file, or one others may write (not on Windows: no uid there)."""
    if sys.platform == "win32" or not hasattr(os, "geteuid"):
        return
    me = os.geteuid()
    if info.st_uid != me:
        reason = (
            f"owned by uid {info.st_uid}, not by you (uid {me}): refusing to write to a "
            "session another user controls; keep sessions in a folder only you can write"
        )
        raise UntrustedFileError(errno.EPERM, reason, str(path))
    if info.st_mode & 0o022:
        mode = stat.S_IMODE(info.st_mode)
        reason = (
            f"mode {mode:04o} lets others write it, so anything in it may be theirs: "
            f"refusing to append; if you trust its content, `chmod 600` it"
        )
        raise UntrustedFileError(errno.EPERM, reason, str(path))


_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}  # fmt: skip


def refuse_irregular(mode: int, path: PathLike) -> None:
    """Raise unless `mode` is a regular file's: a directory as `IsADirectoryError`."""
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
    reason = f"{kind}, not a regular file: a session cannot be kept there"
    raise NotARegularFileError(errno.EINVAL, reason, str(path))


def refuse_path(path: PathLike, write: bool) -> None:
    """Refuse a link, a non-regular file and, for a writer, what `refuse_file` does: unopened."""
    if path == "":  # "" names no file: not a missing one (load_session's []) either
        raise OSError(errno.EINVAL, "the path is empty: it names no file", "")
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return  # the open says so, or creates it
    if stat.S_ISLNK(info.st_mode):
        raise symlink_refused(path)
    refuse_file(info, path, write)


def symlink_refused(path: PathLike) -> SymlinkRefusedError:
    reason = (
        "a symbolic link: sessions are not followed through links (in a shared folder one "
        "may point at a file of yours); name the file itself, in a folder only you can write"
    )
    return SymlinkRefusedError(errno.ELOOP, reason, str(path))


def refuse_file(info: os.stat_result, path: PathLike, write: bool) -> None:
    """Refuse a non-regular file; for a writer also a second name, another's or others' file."""
    if not write or sys.platform == "win32" or not hasattr(os, "geteuid"):
        refuse_irregular(info.st_mode, path)
        return refuse_linked(info, path) if write else None
    if not (
        stat.S_ISREG(info.st_mode)
        and info.st_nlink == 1
        and info.st_uid == os.geteuid()
        and not info.st_mode & 0o022
    ):
        refuse_irregular(info.st_mode, path)
        refuse_linked(info, path)
        refuse_untrusted(info, path)
    return None


# --- the append ------------------------------------------------------------------------------
#
# A signal's handler (Ctrl-C's KeyboardInterrupt) raises after any call. So every file here is
# an `io.FileIO` that `os.open` makes inside one C call: an object owns the fd from its first
# moment, and an interrupt that drops it closes the fd and the lock. An interrupt in the write
# or the sync is rolled back like any failure; but a second one can cut the roll-back short,
# and one as the file closes comes after the record is complete. So the error that leaves
# carries where the record went (`Append`), and `written_anyway` looks there in the file.

LastLineCheck = Callable[[bytes, Callable[[], int]], None]  # a last line, its number: refuse?


class Append:
    """Where one `append_line` puts its bytes: what `written_anyway` compares with the file."""

    __slots__ = ("data", "offset", "path")

    def __init__(self, path: PathLike) -> None:
        self.path, self.offset, self.data = path, 0, b""


def append_line(path: PathLike, line: str, fsync: bool, load: Load) -> None:
    """Append `line` and its newline to `path`, under the lock, or not at all: after the
    newline guard; rolled back on failure unless `written_anyway(error)` (DURABILITY.md)."""
    append, name = Append(path), os.fspath(path)
    payload, check = f"{line}\n".encode(), functools.partial(_check_last_line, path, load)
    try:
        with open_locked(path, write=True, create=True) as file:
            _append_held(file, append, payload, check, fsync)
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


def _check_last_line(path: PathLike, load: Load, line: bytes, number: Callable[[], int]) -> None:
    """The newline guard: an unterminated last line that loads gets its newline; any other
    refuses the append, saying whether `repair` would cut it."""
    try:
        load(line, path)
    except SessionFormatError as err:
        where = number()
        reason = "an invalid last line"
        if repair_would_cut(line, where, path, load):
            reason = "an incomplete last line (`python -m mini_agent repair` can cut it)"
        detail = f"{err.detail}; refusing to append after {reason}"
        raise SessionFormatError(err.phrase, path, where, detail, err.column) from err


def written_anyway(error: BaseException) -> bool:
    """Whether the record of the `append_line` that raised `error` is whole in its file after all."""
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
    """Cut this call's bytes off, only when the file ends in them (else a lock-less writer's stay)."""
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
    """The unterminated last line of a file of `size` bytes and its offset, read backwards."""
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
    """Non-blank lines (bytes if not UTF-8), their numbers in an `array`: 8 bytes, not a pair."""

    __slots__ = ("lines", "numbers")

    def __init__(self) -> None:
        self.lines: list[str | bytes] = []
        self.numbers = array("q")

    def __iter__(self) -> Iterator[tuple[int, str | bytes]]:
        return zip(self.numbers, self.lines, strict=True)


def read_lines(path: PathLike) -> Lines:
    """The numbered non-blank lines of the file at `path`, under the shared lock."""
    with open_locked(path, write=False) as file:
        return split_lines(iter(functools.partial(file.read, CHUNK), b""))


def split_lines(chunks: Iterable[bytes]) -> Lines:
    """The numbered non-blank lines of the bytes `chunks` make, split on `\n` only: a line is
    joined from its pieces once, and a run of blank lines costs nothing but its numbers."""
    found = Lines()
    pending: list[bytes] = []  # the pieces of a line whose newline is still to come
    number = 1  # the physical number of the line that starts next
    for chunk in chunks:
        first = chunk.find(b"\n")
        if first < 0:
            pending.append(chunk)
            continue
        last = chunk.rfind(b"\n")
        _keep(found, number, b"".join([*pending, chunk[:first]]))
        number += 1
        if first < last:  # whole lines between the first newline and the last
            block = chunk[first + 1 : last]
            if not block.strip(b"\n"):
                number += len(block) + 1  # blank lines only
            else:
                for line in block.split(b"\n"):
                    _keep(found, number, line)
                    number += 1
        pending = [chunk[last + 1 :]]
    _keep(found, number, b"".join(pending))
    return found


def _keep(found: Lines, number: int, line: bytes) -> None:
    if line:
        try:
            found.lines.append(line.decode("utf-8"))
        except UnicodeDecodeError:
            found.lines.append(line)
        found.numbers.append(number)


# --- opening and locking ---------------------------------------------------------------------------


class LockedFile(io.FileIO):
    """An open, locked session file: `info`, its `fstat`; `created`, made by this open."""

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
    """The regular file `path`, open and locked (exclusive for a writer, shared for a reader);
    what is refused is never opened, nor its lock waited for (DURABILITY.md, "refused files")."""
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
    """Open what `lstat` did not refuse: no link followed, `O_APPEND` for a writer, a new file
    made exclusively and exactly 0600."""
    for _ in range(_ATTEMPTS):
        refuse_path(path, write)
        try:
            file = LockedFile(path, "r+b" if write else "rb", opener=_open_flagged)
            file.created = False
        except FileNotFoundError:
            if not create:
                raise
            try:
                file = LockedFile(path, "x+b", opener=_open_flagged)
            except FileExistsError:
                continue  # made meanwhile (a file, or a link): look again
            file.created = True
        except OSError:
            refuse_path(path, write)  # a link swapped in after the look (ELOOP): say so
            raise
        try:
            if sys.platform != "win32":
                if file.created and hasattr(os, "fchmod"):
                    os.fchmod(file.fileno(), 0o600)  # exactly, whatever the umask (0277: 0400)
                if _SETFL is not None:
                    fcntl.fcntl(file.fileno(), _SETFL, os.O_APPEND if write else 0)
        except BaseException:
            file.close()
            raise
        return file
    raise OSError(errno.EAGAIN, "session file kept coming and going while opening it", str(path))


def _open_flagged(path: str, flags: int) -> int:
    """`_OPENER` (tests replace it) with `O_APPEND` for a writer; the fd reaches `io.FileIO` with
    no Python call between, so no signal handler can come between and leak it."""
    opened: list[int] = []
    flags |= _FLAGS | (os.O_APPEND if flags & os.O_RDWR else 0)
    opened[:] = map(_OPENER, (path,), (flags,))
    return opened[0]


def has_lock() -> bool:
    """Whether there is a lock: `flock` on POSIX, `LockFileEx` on Windows; none in Pyodide."""
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
        """`LockFileEx` on the stand-in byte, asked without waiting and again after a short sleep
        (where Ctrl-C reaches Python on Windows); without `wait`, never waited for."""
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
    """fsync a folder, so that a file made in it survives a crash (not on Windows: it cannot)."""
    if sys.platform == "win32":
        return
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# --- what a torn last line is (the one damage `repair` cuts) ---------------------------------

Load = Callable[[bytes, PathLike], object]  # the session's loader of bytes: raises for a bad line

_CONTROL = re.compile(rb"[\x00-\x1f]")  # JSON.stringify escapes them all: no record holds one
# Where the decoder stops on a record cut short, and what can follow: nothing, or the start
# of a number, a literal or a \u escape (the decoder wants a character after one).
_BROKEN_OFF = re.compile(
    r"|-|\.|[eE][-+]?|t(?:r(?:u)?)?|f(?:a(?:l(?:s)?)?)?|n(?:u(?:l)?)?|u[0-9a-fA-F]{0,4}"
)
_TAIL = 8  # characters kept from the line's end: more than any of the above


def why_not_torn(error: SessionFormatError, line: Iterable[bytes]) -> str | None:
    """`None` when an unterminated last line the loader refused as `error` is a torn append (a
    record's prefix: `{`, no control byte, UTF-8 up to a cut character), else why not."""
    if error.phrase != INVALID_JSON:
        return "it is complete JSON, but not a record"
    decoder = codecs.getincrementaldecoder("utf-8")()
    started, chars, tail = False, 0, ""
    for piece in line:
        if not started and piece and not piece.startswith(b"{"):
            return "it does not start with `{`, as every record does"
        started = started or bool(piece)
        if _CONTROL.search(piece):
            return "it holds a control byte (a NUL?), which no record holds"
        try:
            text = decoder.decode(piece)
        except UnicodeDecodeError:
            return "it is not UTF-8"
        chars, tail = chars + len(text), (tail + text)[-_TAIL:]
    if decoder.getstate()[0]:  # cut inside a character: the loader's error points at it
        return None if error.column == chars + 1 else "it is not UTF-8"
    if error.detail.startswith("Unterminated string"):
        return None  # the string runs to the end of the line
    if error.column is None or error.detail.startswith("Extra data"):
        return "a complete JSON value is followed by more bytes"
    rest = chars - error.column + 1  # characters from the error to the end
    if rest <= len(tail) and _BROKEN_OFF.fullmatch(tail[len(tail) - rest :]):
        return None
    return f"it breaks at column {error.column}, not where it ends"


def pieces(data: bytes) -> Iterator[bytes]:
    """`data` in `CHUNK`-sized pieces, for `why_not_torn`."""
    view = memoryview(data)
    for start in range(0, max(len(data), 1), CHUNK):
        yield bytes(view[start : start + CHUNK])


def why_repair_refuses(error: SessionFormatError, line: Iterable[bytes], load: Load) -> str | None:
    """`None` when `repair` would cut the last line `load` refused with `error` (a torn record,
    a crash's NUL bytes, or a record then NULs), else why not."""
    reason = why_not_torn(error, line)
    if reason is None:
        return None
    core, padding = _without_nul_padding(line)
    if not padding:
        return reason
    if not core:
        if error.line > 1:
            return None
        return "every byte of the file is NUL: no record survived; move the file away"
    try:
        load(core, error.path)
    except SessionFormatError as err:
        return why_not_torn(err, pieces(core))
    return None  # a complete record, then NULs: only the NULs go


def repair_would_cut(line: bytes, number: int, path: PathLike, load: Load) -> bool:
    """Whether `repair` would cut `line`, a file's unterminated last line (line `number`)."""
    try:
        load(line, path)
    except SessionFormatError as err:
        return why_repair_refuses(on_line(err, number), (line,), load) is None
    return False  # it loads: nothing to cut


def on_line(err: SessionFormatError, line: int) -> SessionFormatError:
    """`err` as if it were found on line `line` (a line loaded alone is line 1)."""
    return SessionFormatError(err.phrase, err.path, line, err.detail, err.column)


def _without_nul_padding(line: Iterable[bytes]) -> tuple[bytes, int]:
    """The line without its trailing NUL bytes, and how many there were."""
    parts: list[bytes] = []
    padding = 0
    for piece in line:
        kept = piece.rstrip(b"\0")
        if kept:
            parts.append(b"\0" * padding + kept)
            padding = 0
        padding += len(piece) - len(kept)
    return b"".join(parts), padding
