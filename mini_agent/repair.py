"""Cutting a torn last line off a session file — the one repair the kit ever makes.

A process killed in the middle of `append_session` can leave its record half written, as
the file's last line, without a newline. `load_session` stays strict and refuses the file;
`repair_session` moves exactly that torn line into a backup file beside the session and
puts back a session holding only the complete records. Any other damage is refused and the
file left untouched: a bad line before the last one is evidence, not a torn write.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .durable import (
    PathLike,
    claim_name,
    copy_mode_and_owner,
    open_locked,
    read_at,
    release,
    sync_folder,
    write_all,
)
from .messages import Message
from .session import INVALID_JSON, SessionFormatError, parse_session_bytes

BACKUP_SUFFIX = ".torn"


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
        if self.backup is None:
            return f"{self.path}: nothing to repair, {len(self.messages)} messages load"
        return (
            f"{self.path}: cut the torn last line {self.cut_line} ({len(self.cut)} bytes) "
            f"into {self.backup.name}; {len(self.messages)} messages load"
        )


def repair_session(path: PathLike) -> RepairReport:
    """Cut a torn last line off the session at `path`, or say there is nothing to cut.

    A torn line is the last line, without its newline, that is not JSON (an interrupted
    write of a JSON object is never valid JSON). Its bytes go to `PATH.torn` (or
    `PATH.torn.2`, … — an existing backup is never overwritten), written and synced before
    the session is replaced, atomically, by a copy holding the complete lines
    (temporary file, fsync, rename, fsync of the folder). Raises `SessionFormatError`,
    leaving the file untouched, for any other damage; OS errors propagate. Holds the lock
    `append_session` takes, so cooperating appenders wait and then write to the new file.
    """
    shown = Path(path)  # errors and the report name the file as the caller did
    fd = open_locked(shown, os.O_RDWR)  # read-write: refuse a file we may not write
    try:
        session = Path(os.path.realpath(shown))  # renaming over a symlink would replace it
        info = os.fstat(fd)
        data = read_at(fd, 0, info.st_size)
        complete_end = data.rfind(b"\n") + 1
        kept, tail = data[:complete_end], data[complete_end:]
        messages = parse_session_bytes(kept, shown)  # damage before the last line: refuse
        last_line = data.count(b"\n") + 1
        if not _is_torn(tail, shown, last_line):
            return RepairReport(shown, tuple(parse_session_bytes(data, shown)))
        backup = _install_backup(_synced_copy(session, tail, info), session)
        _replace_session(_synced_copy(session, kept, info), session)
        return RepairReport(shown, tuple(messages), tail, last_line, backup)
    finally:
        release(fd)


def _is_torn(tail: bytes, path: Path, line: int) -> bool:
    """Whether the unterminated last line is a torn write; a bad complete line raises."""
    try:
        parse_session_bytes(tail, path)
    except SessionFormatError as err:
        if err.phrase != INVALID_JSON:
            # valid JSON that is not a message: not a torn write but a bad record — refuse
            raise SessionFormatError(err.phrase, path, line, err.detail) from err
        return True
    return False  # empty, or a complete record that only lacks its newline: load accepts it


def _synced_copy(session: Path, data: bytes, like: os.stat_result) -> Path:
    """A temporary file beside `session` holding `data`, with its mode, synced to disk."""
    fd, name = tempfile.mkstemp(dir=session.parent, prefix=f".{session.name}.", suffix=".tmp")
    try:
        write_all(fd, data)
        copy_mode_and_owner(fd, name, like)  # fchmod/fchown are Unix-only
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(name)
        raise
    os.close(fd)
    return Path(name)


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
                claim_name(backup)
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


def _replace_session(temporary: Path, session: Path) -> None:
    """Rename a synced temporary file over the session: readers see old or new, never half."""
    try:
        os.replace(temporary, session)
    except BaseException:
        os.unlink(temporary)
        raise
    sync_folder(session.parent)
