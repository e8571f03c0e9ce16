"""Beyond the chapter: a raw line of a file shown on one screen line, nothing in it invisible.

One definition for every excerpt the kit prints: the CLI's `check`, and the notebooks' views.
"""

from __future__ import annotations

import unicodedata

# Cc: control characters; Cf: format characters (a byte-order mark U+FEFF, the right-to-left
# override U+202E) that print as nothing or reorder what follows; Zl/Zp: line separators;
# Cs: lone surrogates, which a UTF-8 terminal cannot print at all.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _visible(char: str) -> str:
    if char.isascii() and char.isprintable():
        return char  # the common case, without a table look-up
    if unicodedata.category(char) not in _HIDDEN:
        return char
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


def visible_line(text: str, limit: int = 90) -> str:
    """`text` in at most `limit` characters: control and format characters and line
    separators escaped (`\\t`, `\\x01`, `\\ufeff`, `\\u202e`), everything else (quotes,
    backslashes, Chinese) exactly as in the file, and `…` where it was cut — never inside
    an escape."""
    # An escape is never shorter than its character, so the first limit + 1 suffice.
    shown = [_visible(char) for char in text[: limit + 1]]
    if sum(map(len, shown)) <= limit:
        return "".join(shown)
    kept, width = [], 0
    for piece in shown:
        if width + len(piece) > limit - 1:
            break
        kept.append(piece)
        width += len(piece)
    return "".join(kept) + "…"
