"""Beyond the chapter: the session's error as an object that carries where it happened.

The chapter throws `new Error("invalid session JSON at line N")`; the kit raises
`SessionFormatError`, whose message starts with the same phrase and whose attributes say the
path, the line and the column, so a notebook, the CLI and a test each show them their own way.
`session` re-exports all three names.
"""

from __future__ import annotations

from typing import Any

from .refusals import PathLike

INVALID_JSON = "invalid session JSON at line"
INVALID_RECORD = "invalid session record at line"


class SessionFormatError(ValueError):
    """A line that cannot be restored: `path`, the physical 1-based `line`, and the `column`
    (1-based, in characters) when the JSON decoder knows it — as `json.JSONDecodeError` does."""

    def __init__(
        self, phrase: str, path: PathLike, line: int, detail: str, column: int | None = None
    ) -> None:
        super().__init__(f"{phrase} {line}: {detail}")
        self.phrase, self.path, self.line = phrase, path, line
        self.detail, self.column = detail, column

    def __reduce__(self) -> tuple[Any, ...]:  # pickles carry it whole, not as a TypeError
        return (type(self), (self.phrase, self.path, self.line, self.detail, self.column))


READS_AS_GBK = "it reads as GBK (Notepad's ANSI on Chinese Windows): save it as UTF-8"


def _reads_as_gbk(line: bytes) -> bool:
    """Plausibly a line saved as GBK: it decodes as GBK (random bytes seldom do: 0x80 and 0xFF
    lead no character, and a lead byte wants a trail byte after it)."""
    try:
        line.decode("gbk")
    except UnicodeDecodeError:
        return False
    return True


def not_utf8(line: bytes, number: int, path: PathLike) -> SessionFormatError:
    """The error for line `number` that is not UTF-8: the column, in characters, where it breaks."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as err:
        column = len(line[: err.start].decode("utf-8")) + 1
        detail = f"not UTF-8 at column {column}"
        if _reads_as_gbk(line):  # as the BOM's detail does, say what to do
            detail += f"; {READS_AS_GBK}"
        error = SessionFormatError(INVALID_JSON, path, number, detail, column)
        error.__cause__ = err  # as `raise … from err` would
        return error
    raise ValueError("this line is UTF-8")
