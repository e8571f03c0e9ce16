"""Cutting a torn last line off a session file — the one repair the kit ever makes.

A process killed in the middle of `append_session` can leave its record half written, as
the file's last line, without a newline. `load_session` stays strict and refuses the file;
`repair_session` copies exactly that torn line into a backup file beside the session and
cuts it off the session, which then holds only the complete records. Any other damage is
refused and the file left untouched: a bad line before the last one is evidence, not a torn
write, and so is a last line that is not the beginning of a record.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
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
CHUNK = 1 << 20  # scanning a line reads this much at a time: memory stays bounded


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
        if self.backup is None:
            return f"{self.path}: nothing to repair, {len(self.messages)} messages load"
        return (
            f"{self.path}: cut the torn last line {self.cut_line} ({len(self.cut)} bytes) "
            f"into {self.backup.name}; {len(self.messages)} messages load"
        )


# --- what a torn line is ---------------------------------------------------------------------

_CONTROL = re.compile(rb"[\x00-\x1f]")  # JSON.stringify escapes them all: no record holds one
# Where the decoder stops on a record cut short, and what can follow: nothing, or the start
# of a number, a literal or a \u escape (the decoder wants a character after one).
_BROKEN_OFF = re.compile(
    r"|-|\.|[eE][-+]?|t(?:r(?:u)?)?|f(?:a(?:l(?:s)?)?)?|n(?:u(?:l)?)?|u[0-9a-fA-F]{0,4}"
)
_TAIL = 8  # characters kept from the line's end: more than any of the above


def why_not_torn(error: SessionFormatError, line: Iterable[bytes]) -> str | None:
    """`None` when an unterminated last line, refused by the loader as `error`, is a torn
    append — a non-empty prefix of a record —, else why it is not. `line` gives the line's
    bytes in pieces, so that a huge line is never held whole.

    A prefix of a record starts with `{`, holds no control byte (JSON.stringify escapes
    them: NUL padding is not a record), is UTF-8 up to a character cut in two, and breaks
    off where the JSON decoder stops: inside a string, or after what can continue.
    """
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


# --- the repair ----------------------------------------------------------------------------------


def repair_session(path: PathLike) -> RepairReport:
    """Cut a torn last line off the session at `path`, or say there is nothing to cut.

    A torn line is the last line, without its newline, that is a cut-off record (see
    `why_not_torn`). Its bytes go to `PATH.torn` (or `PATH.torn.2`, … — an existing backup
    is never overwritten, and one that already holds exactly these bytes is kept), written
    and synced before the session is truncated to its complete lines and synced. The
    session is only ever shortened in place, so a failure or a kill leaves it as it was or
    repaired, never replaced; a failure removes what it made, and what a killed run left
    the next run removes (a temporary file) or uses (a backup made before the cut).

    Raises `RepairRefusedError`, file untouched, for any other damage; an `OSError` names
    the session and the step that failed. Holds the lock `append_session` takes, so
    cooperating appenders wait, then append to the cut file.
    """
    shown = Path(path)  # errors and the report name the file as the caller did
    fd = open_locked(shown, os.O_RDWR)  # read-write: refuse a file we may not write
    try:
        # the backup goes beside the real file; a path that is no link is used as given (its
        # absolute form may pass folders the user cannot search)
        session = Path(os.path.realpath(shown)) if shown.is_symlink() else shown
        with _step(shown, "cannot remove what an interrupted repair left"):
            _remove_leftovers(session)
        info = os.fstat(fd)
        data = read_at(fd, 0, info.st_size)
        complete_end = data.rfind(b"\n") + 1
        kept, tail = data[:complete_end], data[complete_end:]
        last_line = data.count(b"\n") + 1
        messages = _complete_lines(kept, tail, shown, last_line)
        try:
            messages += parse_session_bytes(tail, shown)
        except SessionFormatError as err:
            error = _on_line(err, last_line)
            reason = why_not_torn(err, pieces(tail))
            if reason is not None:
                raise RepairRefusedError(
                    error, f"the last line {last_line} is not a torn record: {reason}"
                ) from err
        else:  # empty, or a complete record that only lacks its newline: load accepts it
            return RepairReport(shown, tuple(messages))
        backup = _backup_holding(tail, session)
        new_backup = backup is None
        if backup is None:
            with _step(shown, "cannot write a backup of its torn last line"):
                backup = _install_backup(_synced_copy(session, tail, info), session)
        try:
            with _step(shown, "cannot cut its torn last line"):
                os.ftruncate(fd, complete_end)
        except BaseException:
            with contextlib.suppress(OSError):
                if new_backup and os.fstat(fd).st_size == info.st_size:
                    os.unlink(backup)  # not cut: the session still holds what it holds
            raise
        with _step(shown, "cut its torn last line, but cannot sync the cut"):
            os.fsync(fd)
        return RepairReport(shown, tuple(messages), tail, last_line, backup)
    finally:
        release(fd)


def _on_line(err: SessionFormatError, line: int) -> SessionFormatError:
    return SessionFormatError(err.phrase, err.path, line, err.detail, err.column)


def _complete_lines(kept: bytes, tail: bytes, path: Path, last_line: int) -> list[Message]:
    """The messages of the complete lines; damage there is refused, whatever the last line."""
    try:
        return parse_session_bytes(kept, path)
    except SessionFormatError as err:
        torn = False
        if tail:
            try:
                parse_session_bytes(tail, path)
            except SessionFormatError as last:
                torn = why_not_torn(last, pieces(tail)) is None
        reason = (
            f"line {err.line} is damaged, not only the torn last line {last_line}"
            if torn
            else f"line {err.line} is damaged, and it is not the last line"
        )
        raise RepairRefusedError(err, f"{reason}: repair only cuts a torn last line") from err


@contextlib.contextmanager
def _step(session: Path, what: str) -> Iterator[None]:
    """Name the session and the step in an OS error (not a temporary file already gone)."""
    try:
        yield
    except OSError as err:
        reason = err.strerror or str(err)
        raise OSError(err.errno, f"{what}: {reason}", str(session)) from err


# --- files beside the session ------------------------------------------------------------------


def _temporary_affixes(session: Path) -> tuple[str, str]:
    return f".{session.name}.", ".tmp"


def _is_backup_name(session: Path, name: str) -> bool:
    first = session.name + BACKUP_SUFFIX
    return name == first or (name.startswith(first + ".") and name[len(first) + 1 :].isdigit())


def _remove_leftovers(session: Path) -> None:
    """Remove what a killed repair of this session left: its temporary files, and empty
    backups (a backup is never empty; one is only while being made). We hold the session's
    lock, which every repair takes, so no repair is making them now."""
    prefix, suffix = _temporary_affixes(session)
    with os.scandir(session.parent) as entries:
        for entry in entries:
            if not entry.is_file(follow_symlinks=False):
                continue
            stray = entry.name.startswith(prefix) and entry.name.endswith(suffix)
            if stray or (_is_backup_name(session, entry.name) and entry.stat().st_size == 0):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)


def _backup_holding(data: bytes, session: Path) -> Path | None:
    """A backup that already holds exactly `data`: a repair killed before its cut made it."""
    with os.scandir(session.parent) as entries:
        names = sorted(entry.name for entry in entries if _is_backup_name(session, entry.name))
    for name in names:
        backup = session.with_name(name)
        with contextlib.suppress(OSError):  # unreadable or gone: not the one
            if backup.stat().st_size == len(data) and backup.read_bytes() == data:
                return backup
    return None


def _synced_copy(session: Path, data: bytes, like: os.stat_result) -> Path:
    """A temporary file beside `session` holding `data`, with its mode, synced to disk."""
    prefix, suffix = _temporary_affixes(session)
    fd, name = tempfile.mkstemp(dir=session.parent, prefix=prefix, suffix=suffix)
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
