"""Beyond the chapter: cutting a torn last line (or a crash's NUL tail) off a session file into a
backup — the one repair the kit makes; any other damage is refused, the file untouched."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from . import store
from .session import Message, SessionFormatError, parse_session_bytes
from .store import PathLike, open_locked, read_at, sync_folder, write_all

BACKUP_SUFFIX = ".torn"
ENCODING_ADVICE = "its encoding is wrong: save it as UTF-8 without a BOM in an editor, cut nothing"
ADVICE = (
    "to keep what is readable, copy the file, then delete the damaged lines in an editor "
    "(`python -m mini_agent check FILE` names the first; delete it and check again)"
)


class RepairRefusedError(SessionFormatError):
    """Damage `repair` does not cut: the first bad line's error, and `reason`, why."""

    def __init__(self, error: SessionFormatError, reason: str) -> None:
        super().__init__(error.phrase, error.path, error.line, error.detail, error.column)
        self.reason = reason

    def __reduce__(self) -> tuple[object, ...]:
        error = SessionFormatError(self.phrase, self.path, self.line, self.detail, self.column)
        return (type(self), (error, self.reason))


@dataclass(frozen=True)
class RepairReport:
    """What `repair_session` found and did; `backup` is `None` when nothing was cut."""

    path: Path
    messages: tuple[Message, ...]
    cut: bytes = b""
    cut_line: int | None = None
    backup: Path | None = None

    @property
    def repaired(self) -> bool:
        return self.backup is not None

    def summary(self) -> str:
        count = len(self.messages)
        load = f"{count} message{'' if count == 1 else 's'} load{'s' if count == 1 else ''}"
        if self.backup is None:
            return f"{self.path}: nothing to repair, {load}"
        return (
            f"{self.path}: cut the torn last line {self.cut_line} ({len(self.cut)} "
            f"byte{'' if len(self.cut) == 1 else 's'}) into {self.backup.name}; {load}"
        )


def why_repair_refuses(error: SessionFormatError, line: Iterable[bytes]) -> str | None:
    """`store.why_repair_refuses` with the session's loader."""
    return store.why_repair_refuses(error, line, parse_session_bytes)


def repair_would_cut(line: bytes, number: int, path: PathLike) -> bool:
    """`store.repair_would_cut` with the session's loader."""
    return store.repair_would_cut(line, number, path, parse_session_bytes)


# --- the repair ----------------------------------------------------------------------------------


def repair_session(path: PathLike) -> RepairReport:
    """Cut a torn last line off the session at `path` into `PATH.torn` (`.torn.2`, …), synced
    first, or say there is nothing to cut; `RepairRefusedError` for other damage (DURABILITY.md)."""
    session = Path(path)  # errors, the report and the files beside it use the caller's name
    with open_locked(path, write=True) as file:  # write: refuse a file we may not write ("" too)
        return _repair_held(file.fileno(), session)


def _repair_held(fd: int, session: Path) -> RepairReport:
    """The repair proper, on the locked fd."""
    info = os.fstat(fd)
    data = read_at(fd, 0, info.st_size)
    complete_end = data.rfind(b"\n") + 1
    kept, tail = data[:complete_end], data[complete_end:]
    last_line = data.count(b"\n") + 1
    messages = _complete_lines(kept, tail, session, last_line)
    try:
        messages += parse_session_bytes(tail, session)
        cut_from = None  # empty, or a complete record that only lacks its newline
    except SessionFormatError as err:
        error = store.on_line(err, last_line)
        reason = why_repair_refuses(error, (tail,))
        if reason is not None:
            reason = f"the last line {last_line} is not a torn record: {reason}; {_advice(err)}"
            raise RepairRefusedError(error, reason) from err
        core = tail.rstrip(b"\0")
        try:  # a complete record that NULs follow keeps its place
            messages += parse_session_bytes(core, session)
            cut_from = complete_end + len(core)
        except SessionFormatError:
            cut_from = complete_end
    if cut_from is None:
        return RepairReport(session, tuple(messages))
    cut = data[cut_from:]
    with _step(session, "cannot write a backup of its torn last line"):
        backup = _install_backup(_synced_copy(session, cut), session)
    try:
        with _step(session, "cannot cut its torn last line"):
            os.ftruncate(fd, cut_from)
    except BaseException:
        with contextlib.suppress(OSError):
            if os.fstat(fd).st_size == info.st_size:
                os.unlink(backup)  # not cut: the session still holds what it holds
        raise
    with _step(session, "cut its torn last line, but cannot sync the cut"):
        os.fsync(fd)
    return RepairReport(session, tuple(messages), cut, last_line, backup)


def _complete_lines(kept: bytes, tail: bytes, path: Path, last_line: int) -> list[Message]:
    """The messages of the complete lines; damage there is refused, whatever the last line."""
    try:
        return parse_session_bytes(kept, path)
    except SessionFormatError as err:
        if "UTF-8" in err.detail:  # another encoding, or a BOM: where the line is plays no part
            reason = f"line {err.line} is not plain UTF-8"
        elif tail and repair_would_cut(tail, last_line, path):
            reason = f"line {err.line} is damaged, not only the torn last line {last_line}"
        elif not tail and err.line == last_line - 1:  # the file ends with this line's newline
            reason = (
                f"line {err.line}, the last line, is damaged but complete: it ends with its "
                "newline, which a torn write never does"
            )
        else:
            reason = f"line {err.line} is damaged, and it is not the last line"
        if b"\0" in kept:
            reason += " (NUL bytes where records should be: a crash of a file system lost them)"
        reason = f"{reason}: repair only cuts a torn last line; {_advice(err)}"
        raise RepairRefusedError(err, reason) from err


def _advice(error: SessionFormatError) -> str:  # a GBK file wants saving again, not cutting
    return ENCODING_ADVICE if "UTF-8" in error.detail else ADVICE  # not UTF-8, or a BOM


@contextlib.contextmanager
def _step(session: Path, what: str) -> Iterator[None]:
    """Name the session and the step in an OS error (not a temporary file already gone)."""
    try:
        yield
    except OSError as err:
        reason = err.strerror or str(err)
        raise OSError(err.errno, f"{what}: {reason}", str(session)) from err


# --- files beside the session ------------------------------------------------------------------


def _temporary_name(session: Path) -> str:
    return f".{session.name}.{secrets.token_hex(8)}.tmp"


def _claim_name(path: Path) -> None:
    """Create `path` as an empty 0600 file, or raise `FileExistsError`: an exclusive create,
    which works everywhere (`os.link`, the other way to never overwrite, is not in Pyodide)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    os.close(os.open(path, flags | getattr(os, "O_BINARY", 0), 0o600))


def _synced_copy(session: Path, data: bytes) -> Path:
    """A temporary file beside `session` holding `data` (0600, as sessions are), synced."""
    name = session.with_name(_temporary_name(session))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(name, flags | getattr(os, "O_BINARY", 0), 0o600)
    try:
        write_all(fd, data)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(name)
        raise
    os.close(fd)
    return name


def _install_backup(temporary: Path, session: Path) -> Path:
    """Give a synced temporary file the first free name `PATH.torn`, `PATH.torn.2`, …, claimed
    by an exclusive create (no `os.link` on Pyodide): an older backup is never overwritten."""
    number = 1
    try:
        while True:
            suffix = BACKUP_SUFFIX if number == 1 else f"{BACKUP_SUFFIX}.{number}"
            backup = session.with_name(session.name + suffix)
            try:
                _claim_name(backup)
            except FileExistsError:
                number += 1
                continue
            try:
                os.replace(temporary, backup)
            except BaseException:
                os.unlink(backup)
                raise
            sync_folder(session.parent)
            return backup
    finally:
        with contextlib.suppress(FileNotFoundError):  # renamed into the backup
            os.unlink(temporary)
