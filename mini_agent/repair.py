"""Cutting a torn last line off a session file — the one repair the kit ever makes.

A process killed in the middle of `append_session` can leave its record half written, as
the file's last line, without a newline; a crash of a file system that had not written the
last appends yet (one without a journal, or with delayed allocation) can leave them as NUL
bytes instead. `load_session` stays strict and refuses the file; `repair_session` copies
exactly that torn line (and the NULs after it) into a backup file beside the session and
cuts it off the session, which then holds only the complete records. Any other damage is
refused and the file left untouched: a bad line before the last one is evidence, not a torn
write, and so is a last line that is not the beginning of a record.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from . import torn
from .durable import PathLike, open_locked, read_at, sync_folder, write_all
from .messages import Message
from .session import SessionFormatError, parse_session_bytes
from .torn import pieces, why_not_torn

__all__ = ["pieces", "why_not_torn"]  # re-exported: what a torn line is lives in `torn`

BACKUP_SUFFIX = ".torn"
ADVICE = (
    "to keep what is readable, copy the file, then delete the damaged lines in an editor "
    "(`python -m mini_agent check FILE` names each)"
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
    """`None` when `repair_session` would cut the unterminated last line the loader refused
    with `error`, else why not (`torn.why_repair_refuses` with the session's loader)."""
    return torn.why_repair_refuses(error, line, parse_session_bytes)


def repair_would_cut(line: bytes, number: int, path: PathLike) -> bool:
    """Whether `repair_session` would cut `line`, a file's unterminated last line `number`."""
    return torn.repair_would_cut(line, number, path, parse_session_bytes)


# --- the repair ----------------------------------------------------------------------------------


def repair_session(path: PathLike) -> RepairReport:
    """Cut a torn last line off the session at `path`, or say there is nothing to cut.

    A torn line is the last line, without its newline, that is a cut-off record (see
    `why_not_torn`), NUL bytes a crash left, or a record followed by them (see
    `why_not_cuttable`; of a complete record only the NULs go). Those bytes go to
    `PATH.torn` (or `PATH.torn.2`, … — an existing backup is never overwritten, and one that
    already holds exactly these bytes is kept), written and synced before the session is
    truncated to its complete lines and synced. The session is only ever shortened in
    place, so a failure or a kill leaves it as it was or repaired, never replaced; a failure
    removes what it made, and what a killed run left the next run removes (a temporary file
    of this session's exact shape, the caller's own) or uses (a backup made before the cut).

    Raises `RepairRefusedError`, file untouched and nothing removed, for any other damage;
    an `OSError` names the session and the step that failed. Holds the lock
    `append_session` takes, so cooperating appenders wait, then append to the cut file.
    Like them it refuses a symbolic link and a file another user owns or may write.
    """
    session = Path(path)  # errors, the report and the files beside it use the caller's name
    with open_locked(session, write=True) as file:  # write: refuse a file we may not write
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
        error = torn.on_line(err, last_line)
        reason = why_repair_refuses(error, (tail,))
        if reason is not None:
            reason = f"the last line {last_line} is not a torn record: {reason}; {ADVICE}"
            raise RepairRefusedError(error, reason) from err
        core = tail.rstrip(b"\0")
        try:  # a complete record that NULs follow keeps its place
            messages += parse_session_bytes(core, session)
            cut_from = complete_end + len(core)
        except SessionFormatError:
            cut_from = complete_end
    with _step(session, "cannot remove what an interrupted repair left"):
        _remove_leftovers(session)
    if cut_from is None:
        return RepairReport(session, tuple(messages))
    cut = data[cut_from:]
    backup = _backup_holding(cut, session)
    new_backup = backup is None
    if backup is None:
        with _step(session, "cannot write a backup of its torn last line"):
            backup = _install_backup(_synced_copy(session, cut, info), session)
    try:
        with _step(session, "cannot cut its torn last line"):
            os.ftruncate(fd, cut_from)
    except BaseException:
        with contextlib.suppress(OSError):
            if new_backup and os.fstat(fd).st_size == info.st_size:
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
        if tail and repair_would_cut(tail, last_line, path):
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
        reason = f"{reason}: repair only cuts a torn last line; {ADVICE}"
        raise RepairRefusedError(err, reason) from err


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


def _is_temporary_name(session: Path, name: str) -> bool:
    """Exactly the shape `_temporary_name` makes for this session, and no other."""
    prefix, middle = f".{session.name}.", len(name) - len(session.name) - 6
    if middle != 16 or not name.startswith(prefix) or not name.endswith(".tmp"):
        return False
    return all(c in "0123456789abcdef" for c in name[len(prefix) : len(prefix) + 16])


def _is_backup_name(session: Path, name: str) -> bool:
    first = session.name + BACKUP_SUFFIX
    return name == first or (name.startswith(first + ".") and name[len(first) + 1 :].isdigit())


def _is_mine(entry: os.DirEntry[str]) -> os.stat_result | None:
    """The entry's `lstat` when it is a regular file the caller owns, else `None`."""
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    if hasattr(os, "geteuid") and os.name != "nt" and info.st_uid != os.geteuid():
        return None
    return info


def _remove_leftovers(session: Path) -> None:
    """Remove what a killed repair of this session left: its temporary files, and empty
    backups (a backup is never empty; one is only while being made) — only files of exactly
    those shapes that the caller owns; one that cannot be removed is left (another user's,
    in a sticky folder). We hold the session's lock, which every repair of it takes, so no
    repair is making them now."""
    with os.scandir(session.parent) as entries:
        for entry in entries:
            ours = _is_temporary_name(session, entry.name)
            if not ours and not _is_backup_name(session, entry.name):
                continue
            info = _is_mine(entry)
            if info is not None and (ours or info.st_size == 0):
                with contextlib.suppress(FileNotFoundError, PermissionError):
                    os.unlink(entry.path)


def _backup_holding(data: bytes, session: Path) -> Path | None:
    """A backup that already holds exactly `data`: a repair killed before its cut made it."""
    with os.scandir(session.parent) as entries:
        names = sorted(
            entry.name
            for entry in entries
            if _is_backup_name(session, entry.name) and _is_mine(entry) is not None
        )
    for name in names:
        backup = session.with_name(name)
        with contextlib.suppress(OSError):  # unreadable or gone: not the one
            if backup.stat().st_size == len(data) and backup.read_bytes() == data:
                return backup
    return None


def _claim_name(path: Path) -> None:
    """Create `path` as an empty 0600 file, or raise `FileExistsError`: an exclusive create,
    which works everywhere (`os.link`, the other way to never overwrite, is not in Pyodide)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    os.close(os.open(path, flags | getattr(os, "O_BINARY", 0), 0o600))


def _copy_mode_and_owner(fd: int, path: Path, like: os.stat_result) -> None:
    """Give the open file `fd` (named `path`) the mode, and where allowed the owner, of `like`
    (`os.fchmod` is Unix-only before Python 3.13, `os.fchown` Unix-only)."""
    mode = stat.S_IMODE(like.st_mode)
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)
    else:
        os.chmod(path, mode)
    if hasattr(os, "fchown"):
        with contextlib.suppress(PermissionError):  # only root may give a file away
            os.fchown(fd, like.st_uid, like.st_gid)


def _synced_copy(session: Path, data: bytes, like: os.stat_result) -> Path:
    """A temporary file beside `session` holding `data`, with its mode, synced to disk."""
    name = session.with_name(_temporary_name(session))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(name, flags | getattr(os, "O_BINARY", 0), 0o600)
    try:
        write_all(fd, data)
        _copy_mode_and_owner(fd, name, like)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(name)
        raise
    os.close(fd)
    return name


def _install_backup(temporary: Path, session: Path) -> Path:
    """Give a synced temporary file the first free name `PATH.torn`, `PATH.torn.2`, …

    The name is claimed with an exclusive create (`os.link` is missing on Pyodide), so an
    older backup is never overwritten; the file then takes the name it claimed, atomically.
    """
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
