"""One escaping for every string from a file or a model that reaches a person: what a screen
would hide, reorder or act on is shown as an escape (`\\x1b`, `\\u202e`); a cut never splits one.
"""

import re
import unicodedata
from collections.abc import Iterable, Iterator
from functools import lru_cache

# Cc: controls, which terminals act on; Cf: format characters (U+200B, U+202E, U+FEFF), which
# print as nothing or reorder text; Zl/Zp: line breaks to some screens; Cs: lone surrogates.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
# Letters and marks that draw nothing (Default_Ignorable_Code_Point outside Cf).
_BLANK = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u3164\uffa0")
# Unassigned code points Unicode reserves as ignorable: tomorrow's invisible characters.
_RESERVED = ((0x2065, 0x2065), (0xFFF0, 0xFFF8), (0xE0000, 0xE0FFF))
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
_BLANK_ANY = re.compile(f"[{''.join(sorted(_BLANK))}]")
_OTHER = re.compile(r"[^\x20-\x7e]")  # all but printable ASCII, which is shown as it is
_OTHER_IN_TEXT = re.compile(r"[^\x20-\x7e\n\t]")  # the same, but lines and tabs kept
_JSON_PIECE = re.compile(r"\\u[0-9a-fA-F]{4}|\\.|.", re.DOTALL)  # JSON's escapes, whole


@lru_cache(maxsize=4096)
def is_hidden(char: str) -> bool:
    """Whether a screen would hide `char`, reorder text around it, or act on it."""
    if unicodedata.category(char) in _HIDDEN or char in _BLANK:
        return True
    return any(low <= ord(char) <= high for low, high in _RESERVED)


def _plain(text: str) -> bool:
    """No hidden character in `text`, decided in C (`isprintable` is false for each category)."""
    return text.isprintable() and _BLANK_ANY.search(text) is None


def _shown(char: str) -> str:
    if not is_hidden(char):
        return char
    code = ord(char)
    if char in _NAMED or code < 0x100:
        return _NAMED.get(char, f"\\x{code:02x}")
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _fit(pieces: Iterable[str], limit: int) -> str:
    """Whole pieces in at most `limit` characters, then `…` if some were left out."""
    kept: list[str] = []
    width = 0
    for piece in pieces:
        if width + len(piece) > limit:
            break
        kept.append(piece)
        width += len(piece)
    else:
        return "".join(kept)
    while kept and width > limit - 1:  # room for the `…`
        width -= len(kept.pop())
    return "".join(kept) + "…"


def visible(text: str) -> str:
    """`text` on one line, whole: every hidden character escaped (a newline too)."""
    return text if _plain(text) else _OTHER.sub(lambda match: _shown(match.group()), text)


def visible_text(text: str) -> str:
    """`text` whole, its lines and tabs kept, every other hidden character escaped."""
    return _OTHER_IN_TEXT.sub(lambda match: _shown(match.group()), text)


def visible_line(text: str, limit: int = 90) -> str:
    """`text` in at most `limit` characters, hidden characters escaped, `…` where it was cut."""
    return _fit(map(_shown, text), limit)


def _json_pieces(text: str) -> Iterator[str]:
    for piece in (match.group() for match in _JSON_PIECE.finditer(text)):
        if len(piece) > 1 or not is_hidden(piece):
            yield piece
        elif (code := ord(piece)) < 0x10000:  # escaped as JSON would: `\u202e`, a pair beyond
            yield f"\\u{code:04x}"
        else:
            code -= 0x10000
            yield f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def visible_json(text: str, limit: int | None = None) -> str:
    """JSON text with what JSON leaves raw but a screen hides escaped the JSON way (U+2028 as
    `\\u2028`), in at most `limit` characters, never cut inside an escape."""
    if (limit is None or len(text) <= limit) and _plain(text):  # nothing to escape or cut
        return text
    pieces = _json_pieces(text)
    return "".join(pieces) if limit is None else _fit(pieces, limit)
