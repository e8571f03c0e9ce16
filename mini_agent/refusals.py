"""Beyond the chapter: the files a session is never read from or written to, and why.

Only a regular file is a session: not a FIFO (a load would block), a device (`/dev/zero` never
ends) or a socket, and never through a symbolic link. A writer also refuses a file with another
name (a hard link), a file another user owns or may write, and a new session reached through
someone else's link: in a shared folder each is how another user turns your session against a
file of yours. The refusals carry the path and the way out. `durable` asks here at every open.
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


def refuse_borrowed_folders(path: PathLike) -> None:
    """Before a session is created: refuse a path whose folders pass through a symbolic link
    that another user may have planted — one they own, in a folder others may write (a shared
    `/tmp/proj -> /home/you` would make the session a file in your home). The kernel's
    `protected_symlinks` refuses such links in sticky folders where it is on; this holds
    where it is off, and in group-writable folders. Not on Windows (no owners to compare)."""
    if sys.platform == "win32" or not hasattr(os, "geteuid"):
        return
    trusted = {0, os.geteuid()}
    folder = os.path.dirname(os.path.abspath(path))
    parts = folder.split(os.sep)
    for depth in range(2, len(parts) + 1):
        here = os.sep.join(parts[:depth]) or os.sep
        try:
            info = os.lstat(here)
        except OSError:
            return  # the open will say what is missing
        if stat.S_ISLNK(info.st_mode) and info.st_uid not in trusted:
            holder = os.stat(os.path.dirname(here))
            if holder.st_mode & 0o022 or holder.st_uid not in trusted:
                reason = (
                    f"{here} is a symbolic link of uid {info.st_uid} in a folder others may "
                    "write: refusing to create a session through it; name a folder of yours"
                )
                raise SymlinkRefusedError(errno.ELOOP, reason, str(path))


def refuse_untrusted(info: os.stat_result, path: PathLike) -> None:
    """Raise `UntrustedFileError` unless the file `info` describes is the caller's own and
    no one else may write it: not world-writable, and group-writable only when the group is
    the owner's private one (the user-private-group convention of a umask of 002). Not on
    Windows (no uid; its mode bits say nothing of other users)."""
    if sys.platform == "win32" or not hasattr(os, "geteuid"):
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
    if sys.platform == "win32":
        return False
    try:
        import grp
        import pwd

        group, user = grp.getgrgid(info.st_gid), pwd.getpwuid(info.st_uid)
    except (ImportError, KeyError):  # Pyodide has neither module
        return False
    others = [member for member in group.gr_mem if member != user.pw_name]
    return group.gr_name == user.pw_name and user.pw_gid == info.st_gid and not others


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


def refuse_irregular_path(path: PathLike) -> None:
    """Refuse what `path` names, without opening it, unless it is a regular file or missing."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    if stat.S_ISLNK(mode):
        raise symlink_refused(path)
    refuse_irregular(mode, path)


def symlink_refused(path: PathLike) -> SymlinkRefusedError:
    reason = (
        "a symbolic link: sessions are not followed through links (in a shared folder one "
        "may point at a file of yours); name the file itself, in a folder only you can write"
    )
    return SymlinkRefusedError(errno.ELOOP, reason, str(path))


def refuse_for_writing(info: os.stat_result, path: PathLike) -> None:
    """Everything a writer refuses in an existing file, in one call: the common case at once."""
    if sys.platform == "win32" or not hasattr(os, "geteuid"):
        refuse_irregular(info.st_mode, path)
        return refuse_linked(info, path)
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
