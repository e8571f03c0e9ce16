"""The 释义 under a traceback: an error raised in a reader's own cell is shown as IPython shows
it, and when the kit can explain it (the gloss `show_error` and the command line give), the
`释义：` line follows; below the reader's own frames, the kit's are left out (`%tb` shows all).

Registered once, by `import teaching` in an IPython kernel (every notebook imports it; in the
environments `kit.py` builds, every kernel imports it as it starts: `kit.KERNEL_CONFIG`), through
IPython's documented hook `set_custom_exc`; outside IPython, in a shell without the hook, or one
with a handler of its own, nothing happens. An error the kit cannot explain goes back to IPython's
own display, untouched. Nothing in `mini_agent` knows of this.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

import mini_agent
from mini_agent import glosses as kit_glosses

from . import extras, glosses
from .text import words

# where a frame's file lies: the kit's two packages, or the libraries below the reader's code
KIT_FOLDERS = tuple(str(Path(module).parent) for module in (mini_agent.__file__, __file__))


@functools.cache
def library_folders() -> tuple[str, ...]:
    """The standard library's and site-packages' folders: asked on the first traceback, not on
    import (sysconfig reads its platform data then)."""
    return tuple(
        {sysconfig.get_path(name) for name in ("stdlib", "platstdlib", "purelib", "platlib")}
    )


def explain(error: BaseException) -> str | None:
    """The kit's Chinese meaning of `error`: `glosses.gloss`, 08's missing packages, or a name
    no cell has defined yet in this kernel."""
    gloss = glosses.gloss(error) or extras.gloss_after_missing(error)
    return gloss or glosses.not_defined_yet(error)


def gloss_line(error: BaseException) -> str | None:
    """`释义：…` for `error`, as `show_error` shows it, or `None` when the kit cannot explain it."""
    return kit_glosses.gloss_line(error, explain)


def _inside(file: str, folders: tuple[str, ...]) -> bool:
    file = os.path.normcase(file)
    return any(file.startswith(os.path.join(os.path.normcase(f), "")) for f in folders)


def _whose(entry: TracebackType) -> str:
    """Whose frame: the kit's, a library's (the standard library, site-packages, frozen modules)
    or the reader's."""
    file = entry.tb_frame.f_code.co_filename
    if _inside(file, KIT_FOLDERS):
        return "kit"
    if file.startswith("<frozen") or _inside(file, library_folders()):
        return "library"
    return "reader"  # a cell, or a module of the reader's own


def readers_part(tb: TracebackType) -> tuple[TracebackType, int]:
    """`tb` up to the reader's last frame, and how many frames were left out below it: only
    when the reader's code called into the kit there and the rest lies in the kit and the
    libraries it calls (a reader's function the kit calls back keeps every frame)."""
    entries: list[TracebackType] = []
    entry: TracebackType | None = tb
    while entry is not None:
        entries.append(entry)
        entry = entry.tb_next
    readers = [index for index, entry in enumerate(entries) if _whose(entry) == "reader"]
    if not readers or readers[-1] + 1 == len(entries):
        return tb, 0
    last = readers[-1]
    if _whose(entries[last + 1]) != "kit":
        return tb, 0
    kept: TracebackType | None = None
    for entry in reversed(entries[: last + 1]):
        kept = TracebackType(kept, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    assert kept is not None
    return kept, len(entries) - last - 1


@contextmanager
def _unchained(error: BaseException) -> Iterator[None]:
    """`error` without its cause and context while it is formatted (the exceptions the kit
    chained inside itself: their gist is in the message), as it was afterwards."""
    cause, context, suppress = error.__cause__, error.__context__, error.__suppress_context__
    error.__cause__ = error.__context__ = None
    try:
        yield
    finally:
        error.__cause__, error.__context__ = cause, context
        error.__suppress_context__ = suppress


def structured_traceback(
    shell: Any, error: BaseException, tb: TracebackType, line: str, tb_offset: int | None = None
) -> list[str]:
    """IPython's traceback of `error` (the reader's frames only, when it arose in the kit),
    with `line` (the 释义) under it."""
    formatter = shell.InteractiveTB
    kept, hidden = readers_part(tb)
    if not hidden:
        shown = formatter.structured_traceback(type(error), error, tb, tb_offset)
    else:
        with _unchained(error):
            shown = formatter.structured_traceback(type(error), error, kept, tb_offset)
        shown.insert(max(len(shown) - 1, 0), words().kit_frames_hidden(hidden))
    return [*shown, f"  {line}"]


def _remember(error: BaseException, tb: TracebackType | None) -> None:
    """Where IPython's own display leaves the error, for `%tb` and `%debug` (the whole of it)."""
    sys.last_type, sys.last_value, sys.last_traceback = type(error), error, tb
    if sys.version_info >= (3, 12):
        sys.last_exc = error


def show(
    shell: Any,
    etype: type[BaseException],
    error: BaseException,
    tb: TracebackType | None,
    tb_offset: int | None = None,
) -> None:
    """The handler `set_custom_exc` calls with every `Exception` of a cell."""
    if tb is None or tb.tb_frame.f_code.co_name != "run_code":
        # raised while IPython parsed the cell: what `run_cell` does without a handler
        if issubclass(etype, IndentationError):
            shell.showindentationerror()
        else:
            shell.showsyntaxerror()
        return
    line = gloss_line(error)
    try:
        shown = None if line is None else structured_traceback(shell, error, tb, line, tb_offset)
    except Exception:  # never lose the reader's traceback to a slip of the kit's
        shown = None
    if shown is None:  # exactly what `run_code` does without a handler
        shell.showtraceback((etype, error, tb), tb_offset, running_compiled_code=True)
        return
    _remember(error, tb)
    shell._showtraceback(etype, error, shown)  # where every kernel sends a traceback
    if shell.call_pdb:
        shell.debugger(force=True)


_INSTALLED: weakref.WeakSet[Any] = weakref.WeakSet()  # the shells `show` is registered on


def install(shell: Any) -> bool:
    """Register `show` on `shell` unless it has no `set_custom_exc` or a handler of its own;
    whether it is registered now."""
    if not callable(getattr(shell, "set_custom_exc", None)):
        return False  # a shell without IPython's hook
    if shell in _INSTALLED and shell.custom_exceptions == (Exception,):
        return True
    if shell.custom_exceptions != ():
        return False  # someone else's handler: theirs stays
    shell.set_custom_exc((Exception,), show)
    _INSTALLED.add(shell)
    return True


def install_in_ipython() -> bool:
    """`install` on the running IPython, if any (called by `import teaching`); never imports
    IPython itself, and says nothing where it cannot."""
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    shell = get_ipython() if callable(get_ipython) else None
    try:
        return shell is not None and install(shell)
    except Exception:  # a shell unlike IPython's (an older one, a browser kernel's): no 释义
        return False
