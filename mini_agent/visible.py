"""Beyond the chapter: one escaping for every string from a file or a model that reaches a person.

The CLI's lines, the notebooks' views and explorers all show call ids, contents, file lines,
error messages and paths through these functions; HTML takes `visible_html`. What a screen
would hide, reorder or act on is shown as an escape (`\\x1b`, `\\u202e`); everything else
(quotes, backslashes, Chinese, emoji) exactly as it is. A cut never splits an escape.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from functools import lru_cache
from html import escape

# Cc: control characters (ESC, BEL, C1's CSI …), which terminals act on; Cf: format characters,
# which print as nothing or reorder what follows (U+200B, U+202E, U+2066, a byte-order mark
# U+FEFF); Zl/Zp: U+2028/U+2029, line breaks to some screens; Cs: lone surrogates, which UTF-8
# (a terminal, a notebook's wire) cannot carry at all.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
# Letters and marks that draw nothing (Default_Ignorable_Code_Point outside Cf: the Hangul
# fillers, the combining grapheme joiner, Khmer's inherent vowels, Mongolian free variation
# selectors). Variation selectors stay: emoji need them, and alone they hide nothing.
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
    code = ord(char)
    return any(low <= code <= high for low, high in _RESERVED)


def _plain(text: str) -> bool:
    """No hidden character in `text`, decided in C: `isprintable` is false for every category
    above (and for spaces other than U+0020, which are shown anyway: a false alarm is only
    the slow path), so only the blank letters remain to look for."""
    return text.isprintable() and _BLANK_ANY.search(text) is None


def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _json_escape(char: str) -> str:
    """`char` as JSON would escape it (`\\u202e`; beyond U+FFFF a surrogate pair)."""
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _shown(char: str) -> str:
    return _escape(char) if is_hidden(char) else char


def _shown_match(match: re.Match[str]) -> str:
    return _shown(match.group())


def _fit(pieces: Iterable[str], limit: int) -> str:
    """The pieces joined, in at most `limit` characters: whole pieces, then `…` if some were
    left out. Reads only as many pieces as it shows, plus one."""
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
    return text if _plain(text) else _OTHER.sub(_shown_match, text)


def visible_text(text: str) -> str:
    """`text` whole, its lines and tabs kept as they are, every other hidden character
    escaped: for what is meant to span lines (a view's plain text, an error, source code)."""
    return _OTHER_IN_TEXT.sub(_shown_match, text)


def visible_html(text: str) -> str:
    """`visible_text(text)` as HTML text: `<`, `>`, `&` and quotes escaped too."""
    return escape(visible_text(text), quote=True)


def visible_line(text: str, limit: int = 90) -> str:
    """`text` in at most `limit` characters: control and format characters and line
    separators escaped (`\\t`, `\\x01`, `\\ufeff`, `\\u202e`), everything else (quotes,
    backslashes, Chinese) exactly as in the file, and `…` where it was cut — never inside
    an escape."""
    head = text[: limit + 1]
    if _plain(head):  # one piece per character: a plain cut
        return head if len(head) <= limit else head[: limit - 1] + "…"
    return _fit(map(_shown, text), limit)


def _json_pieces(text: str) -> Iterator[str]:
    for match in _JSON_PIECE.finditer(text):
        piece = match.group()
        yield _json_escape(piece) if len(piece) == 1 and is_hidden(piece) else piece


def visible_json(text: str, limit: int | None = None) -> str:
    """JSON text (what `stringify` writes, or a part of it) with what JSON leaves raw but a
    screen would hide escaped the JSON way (U+2028 as `\\u2028`, U+202E as `\\u202e`), in at
    most `limit` characters: cut between characters, never inside an escape (`…\\u0000`,
    never `…\\u000`)."""
    if limit is None or len(text) <= limit:
        if _plain(text):  # nothing to escape, nothing to cut
            return text
    elif _plain(head := text[: limit + 1]) and "\\" not in head:  # one piece per character
        return head[: limit - 1] + "…"
    pieces = _json_pieces(text)
    return "".join(pieces) if limit is None else _fit(pieces, limit)
