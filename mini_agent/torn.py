"""Beyond the chapter: what a torn last line is — the one damage `repair` cuts.

A process killed in the middle of `append_session` can leave its record half written as the
file's last line, without its newline; a crash of a file system that had not written the last
appends yet can leave NUL bytes there instead. `repair` cuts exactly such a line, and
`append_session`, refusing to append after it, offers `repair` exactly when it would cut it.
Both ask here. The session's loader is passed in, so this room sits below `session` and
`repair` both: the arrows run one way.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Iterable, Iterator

from .durable import CHUNK, PathLike
from .session_errors import INVALID_JSON, SessionFormatError

Load = Callable[[bytes, PathLike], object]
"""The session's loader of a file's bytes: raises `SessionFormatError` for a bad line."""

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


def why_repair_refuses(error: SessionFormatError, line: Iterable[bytes], load: Load) -> str | None:
    """`None` when `repair` would cut an unterminated last line that `load` refused with
    `error` (on line `error.line`), else why it would not. `line` gives the line's bytes in
    pieces, and may be iterated twice.

    `repair` cuts a torn record (see `why_not_torn`), NUL bytes a crash left where the last
    appends should be (not when they are all the file holds), and a torn or complete record
    followed by such NULs.
    """
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
