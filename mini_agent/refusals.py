"""Beyond the chapter: the files a session is never read from or written to, and why.

Only a regular file is a session: not a FIFO (a load would block), a device (`/dev/zero` never
ends) or a socket, and never through a symbolic link. A writer also refuses a file with another
name (a hard link) and a file another user owns or may write: in a shared folder each is how
another user turns your session against a file of yours. The refusals carry the path and the
way out. `durable` asks here before every open (`refuse_path`) and before every lock
(`refuse_file`), so what is refused is never opened, or never waited for.
"""

from __future__ import annotations

import errno
import os
import stat
import sys

PathLike = str | os.PathLike[str]


class NotARegularFileError(OSError):
    """The path names a FIFO, a device or a socket: no session can live there."""


class SymlinkRefusedError(OSError):
    """The path is a symbolic link: a session is never read or written through one (in a
    shared folder a link is how another user points your session at a file of yours)."""


class HardLinkRefusedError(OSError):
    """The file has another name (a hard link): an append would change that file too, and in a
    shared folder a link is how another user points your session at a file of yours."""


class UntrustedFileError(PermissionError):
    """An existing session that another user owns, or that the group or others may write:
    anything in it may have been written by someone else, so nothing is appended to it."""


def refuse_linked(info: os.stat_result, path: PathLike) -> None:
    """Raise `HardLinkRefusedError` when the file has more than one name."""
    if info.st_nlink > 1:
        reason = (
            f"the file has {info.st_nlink} names (hard links): an append would change the other "
            "files too; copy it to a file of its own (`cp FILE NEW`) and use that"
        )
        raise HardLinkRefusedError(errno.EMLINK, reason, str(path))


def refuse_untrusted(info: os.stat_result, path: PathLike) -> None:
    """Raise `UntrustedFileError` unless the file `info` describes is the caller's own and
    neither its group nor others may write it. Not on Windows (no uid; its mode bits say
    nothing of other users)."""
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


_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


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
    """Refuse what `path` names before it is opened — a link, a FIFO, a device, a socket, a
    directory and, for a writer, what `refuse_file` refuses — or return: missing, or fine."""
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
    """Refuse anything but a regular file and, for a writer, also a file with a second name
    or one another user owns or may write: the common case in one test."""
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
