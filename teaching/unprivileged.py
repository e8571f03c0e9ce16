"""Run a small action without root's privileges, so that notebook 03's `PermissionError` is
real even where notebooks run as root (containers, CI): root reads through `chmod 000`.

Not a mock: as root, a forked child drops to the user `nobody` and the kernel checks the
file's permission bits for it. No new interpreter is started, so nothing needs to be on
`nobody`'s path.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable

NOBODY = 65534


def unavailable_reason() -> str | None:
    """Why file permissions cannot refuse a read here (said in Chinese), or `None`."""
    if sys.platform == "emscripten":
        return "浏览器里没有文件权限，也不能启动子进程：这个单元格要在 JupyterLab 里运行才能看到 PermissionError。"
    if sys.platform == "win32":
        return "Windows 的 chmod 只能设只读，挡不住读取：这个单元格要在 Linux 或 macOS 上运行才能看到 PermissionError。"
    return None


def run_unprivileged(action: Callable[[], object]) -> str:
    """`repr(action())`, computed by a process without root's privileges.

    Not root: in this process. Root: in a forked child that becomes `nobody` first. An
    exception in the action propagates (from the child, as a `RuntimeError` with its text).
    Windows has neither fork nor users to drop to: `unavailable_reason()` says so first.
    """
    if sys.platform == "win32":
        raise NotImplementedError(unavailable_reason())
    if os.geteuid() != 0:
        return repr(action())
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        # fork() in a threaded kernel: safe here, the child only opens one file and exits
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: drop privileges for good, act, report through the pipe
        status = 0
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            report = repr(action())
        except BaseException as err:
            status, report = 1, f"{type(err).__name__}: {err}"
        os.write(write_end, report.encode("utf-8"))
        os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        report = pipe.read().decode("utf-8")
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"the unprivileged child failed: {report}")
    return report
