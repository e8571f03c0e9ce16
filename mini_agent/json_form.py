"""Beyond the chapter: JSON exactly as JavaScript writes it, and read as strictly as it reads it.

TypeScript has both built in (`JSON.stringify`, `JSON.parse`); Python's `json` differs in the
details, so the one place that makes up the difference is here. The chapter's files call
`stringify` and `parse` and never see `json` itself. docs/JSON_FORM.md has the rules.

Numbers are JavaScript's: a double, written as ECMAScript `Number::toString` writes it, and
read as `JSON.parse` reads it (an integer token beyond ±2^53 as the nearest double). What
JavaScript cannot hold is refused with a clear error: a number beyond the double range (it
would be Infinity, written `null`) both ways, an int that is not a double on writing. So every
file either language writes reads back in the other, and is written again, with its bytes.

Nesting is limited to `MAX_DEPTH` arrays and objects, the same for writing and reading and
independent of `sys.getrecursionlimit()`: the C `json` code does the common case, and a
non-recursive Python walk takes over where it would need more stack than the caller has.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Iterator
from json import JSONDecodeError
from json.encoder import encode_basestring
from typing import Any, TypeAlias

JSON: TypeAlias = bool | int | float | str | list["JSON"] | dict[str, "JSON"] | None
"""Any JSON value, as `parse` returns it."""

MAX_DEPTH = 500
"""Arrays and objects nested in one value, at most. Node reads any depth and writes about
4,000 (its stack); Python's `json` needs one recursion level per level, out of a default
`sys.getrecursionlimit()` of 1,000 for the whole call stack. 500 leaves the caller half of
that, so the C fast path rarely has to hand over, and is far beyond any real tool input."""

TOO_DEEP = f"nested deeper than {MAX_DEPTH} arrays and objects (json_form.MAX_DEPTH)"

_EXACT = 2**53  # every integer up to this is a double, and is written as its digits
_INDEX_MAX = 2**32 - 2  # the largest array index, whose key JavaScript puts first

# --- stringify --------------------------------------------------------------------------


def _unsupported(value: object) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# Compact, non-ASCII as itself, NaN refused; only the public `json` API. No cycle check: the
# fast path is only taken for values `_plain` walked whole, which holds no cycle.
_encode: Callable[[object], str] = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, separators=(",", ":"), check_circular=False
).encode
_PLAIN_DEPTH = 32  # deeper values take the iterative path
_surrogate = re.compile("[\ud800-\udfff]")


def _plain(value: Any, depth: int = 0) -> bool:
    """True when Python's encoder writes `value` exactly as JSON.stringify: dict, list, str,
    bool, None, an int within ±2^53, a float whose `repr` is JavaScript's (not integral, not
    below 1e-4: `repr` writes `1.0`, `1e-05`), keys that are str and do not start with a digit
    (an array index, which JavaScript puts first, does), at most 32 levels deep.

    Written out flat, scalars inline: it runs before every line is written or measured."""
    kind = type(value)
    if kind is dict:
        for key in value:
            if type(key) is not str or key[:1] in "0123456789":  # "" is in it too: fine
                return False
        members = value.values()
    elif kind is list:
        members = value
    else:
        return _plain([value], depth)
    if depth >= _PLAIN_DEPTH:
        return False
    for item in members:
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if -_EXACT <= item <= _EXACT:
                continue
            return False
        if kind is float:  # non-integral floats are below 2^52, where repr stops at 1e16
            if not item.is_integer() and abs(item) >= 1e-4:
                continue
            return False
        if not (kind is dict or kind is list) or not _plain(item, depth + 1):
            return False
    return True


def stringify(value: Any) -> str:
    """`JSON.stringify(value)`: compact, non-ASCII as itself, lone surrogates escaped,
    numbers as `Number::toString`, array-index keys first.

    Raises `TypeError` for what JSON cannot hold (a set, an object) and `ValueError` for
    NaN, Infinity, a number JavaScript would read differently, a cycle, or a value nested
    deeper than `MAX_DEPTH`.
    """
    return stringify_exactly(value)[0]


def stringify_exactly(value: Any, known_plain: bool = False) -> tuple[str, bool]:
    """`stringify(value)`, and whether `parse` of it is sure to give `value` back (plain JSON
    types only, and no surrogate escape: a pair written as two code points reads as one).
    `known_plain` says the caller knows the value holds only strings and booleans."""
    plain = known_plain
    try:
        plain = plain or _plain(value)
        text = _encode(value) if plain else _stringify_slowly(value)
    except RecursionError:  # the caller's stack is nearly used up: no recursion at all
        text = _stringify_slowly(value)
    if text.isascii():
        return text, plain and "\\ud" not in text
    try:
        text.encode("utf-8")  # cheaper than searching for a surrogate
    except UnicodeEncodeError:
        # A raw surrogate cannot be written as UTF-8; JavaScript escapes it, and so do we.
        return _surrogate.sub(_escape_surrogate, text), False
    return text, plain and "\\ud" not in text


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def js_string(text: str) -> str:
    """`text` as JavaScript holds it: a surrogate pair written as two code points
    ("\\ud83d\\ude00") joined into its one character (😀), as a load reads it back; lone
    surrogates stay. What a Python tool returns goes through this before it is recorded."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")  # no surrogate at all: the common case
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return text


def js_length(text: str) -> int:
    """`text.length` in JavaScript: UTF-16 code units, so a character beyond U+FFFF (😀) counts
    2 where Python's `len` counts 1 code point. The chapter's estimate counts this way."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def number_to_string(value: float) -> str:
    """ECMAScript `Number::toString(value)` for a finite double; `-0` is `0`.

    The shortest digits that read back as `value` (Python's `repr` finds the same ones),
    placed by the exponent: plain up to 21 integer digits, `0.000001` down to 6 zeros,
    otherwise `1.5e-7` / `1e+21`.
    """
    if not math.isfinite(value):
        raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
    if value == 0:
        return "0"
    if value.is_integer() and -_EXACT <= value <= _EXACT:
        return str(int(value))
    sign, text = ("-", repr(-value)) if value < 0 else ("", repr(value))
    mantissa, _, exponent = text.partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    n = len(whole) + int(exponent or 0) - (len(whole + fraction) - len(digits))
    digits = digits.rstrip("0")  # value = 0.digits * 10**n
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = f"e{'+' if n >= 1 else '-'}{abs(n - 1)}"
    return sign + (digits if k == 1 else digits[0] + "." + digits[1:]) + e


def _out_of_range(number: str) -> ValueError:
    return ValueError(f"{number} is out of range (JavaScript reads it as Infinity)")


def _abbreviated(digits: str) -> str:
    return digits if len(digits) <= 24 else f"{digits[:20]}… ({len(digits)} digits)"


def _integer(value: int) -> str:
    """An int as JavaScript writes it; refused when JavaScript cannot hold it (not a double)."""
    if -_EXACT <= value <= _EXACT:
        return str(value)
    try:
        double = float(value)
    except OverflowError:  # never str() here: it refuses more than 4,300 digits
        raise _out_of_range(f"an integer of {value.bit_length():,} bits") from None
    if double != value:
        raise ValueError(
            f"integer {_abbreviated(str(value))} is beyond ±2^53 and not a double: "
            f"JavaScript would hold {int(double)}"
        )
    return number_to_string(double)


def _key(key: object) -> str:
    """A dict key as the JavaScript property name it becomes (`String(key)`)."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None:
        return "true" if key is True else "false" if key is False else "null"
    if isinstance(key, int):
        return _integer(key)
    if isinstance(key, float):
        if math.isfinite(key):
            return number_to_string(key)
        return {math.inf: "Infinity", -math.inf: "-Infinity"}.get(key, "NaN")
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def is_array_index(key: str) -> bool:
    """An array index: the canonical digits of an integer 0 ... 2**32 - 2."""
    return (
        len(key) <= 10
        and key.isascii()
        and key.isdigit()
        and (key == "0" or key[0] != "0")
        and int(key) <= _INDEX_MAX
    )


def _items(value: dict[Any, Any]) -> list[tuple[str, Any]]:
    """An object's entries in JavaScript's order: array indexes ascending, then the rest."""
    items = [(_key(key), item) for key, item in value.items()]
    indexes = [entry for entry in items if is_array_index(entry[0])]
    if not indexes:
        return items
    indexes.sort(key=lambda entry: int(entry[0]))
    return indexes + [entry for entry in items if not is_array_index(entry[0])]


def _scalar(value: object) -> str:
    if isinstance(value, str):
        return encode_basestring(value)
    if value is None or isinstance(value, bool):
        return "null" if value is None else "true" if value else "false"
    if isinstance(value, int):
        return _integer(value)
    if isinstance(value, float):
        return number_to_string(value)
    return _unsupported(value)  # type: ignore[no-any-return]


def _stringify_slowly(value: Any) -> str:
    """The exact form of any value, without recursion: a stack of open containers."""
    parts: list[str] = []
    stack: list[tuple[Iterator[Any], str, int]] = []  # (entries, closing bracket, id)
    open_ids: set[int] = set()  # the containers being written, to refuse a cycle
    while True:
        first = isinstance(value, (dict, list, tuple))
        if not first:
            parts.append(_scalar(value))
        elif len(stack) >= MAX_DEPTH:
            raise ValueError(TOO_DEEP)
        elif id(value) in open_ids:
            raise ValueError("Circular reference detected")
        else:
            is_object = isinstance(value, dict)
            entries = iter(_items(value) if is_object else value)
            open_ids.add(id(value))
            stack.append((entries, "}" if is_object else "]", id(value)))
            parts.append("{" if is_object else "[")
        while stack:
            entries, closing, container = stack[-1]
            entry: Any = next(entries, _END)
            if entry is _END:
                stack.pop()
                open_ids.discard(container)
                parts.append(closing)
                first = False
                continue
            if not first:
                parts.append(",")
            if closing == "}":
                parts.append(encode_basestring(entry[0]) + ":")
                entry = entry[1]
            value = entry
            break
        else:
            return "".join(parts)


_END = object()

# --- parse ------------------------------------------------------------------------------


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # 1e999: JSON.parse makes it Infinity, which no JSON can hold
        raise _out_of_range(f"number {_abbreviated(text)}")
    return value


def _js_int(text: str) -> int | float:
    """An integer token as JavaScript reads it: exact up to ±2^53, else the nearest double."""
    if len(text) <= 15:  # below 10^15: the common case, at once
        return int(text)
    if len(text) <= 17:  # 16 digits and a sign: maybe still within ±2^53
        value = int(text)
        if -_EXACT <= value <= _EXACT:
            return value
    return _finite_float(text)  # float() has no 4,300-digit limit, and refuses 400 digits


_decoder = json.JSONDecoder(
    parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_js_int
)
_raw_decode = _decoder.raw_decode  # one value at an index; the iterative parser's one token
_WHITESPACE = re.compile(r"[ \t\n\r]*")  # JSON's, as json's decoder skips it


def _skip(text: str, index: int) -> int:
    """The first index at or after `index` that is not whitespace."""
    match = _WHITESPACE.match(text, index)
    return match.end() if match else index


_TRAILING_COMMA = sys.version_info >= (3, 13)  # json says "Illegal trailing comma" since 3.13


def parse(text: str) -> JSON:
    """`JSON.parse(text)`, refusing what JavaScript could not write back (NaN, 1e999) and
    values nested deeper than `MAX_DEPTH`; integers beyond ±2^53 are read as doubles.

    Raises `ValueError` (a `json.JSONDecodeError` when the text is not JSON, with its column).
    """
    size = len(text)
    try:
        value, end = _raw_decode(text)  # one value from the first character: the lines we
    except ValueError:  # write; decode() below skips spaces or says what is wrong
        pass
    except RecursionError:  # the caller's stack is nearly used up
        return _parse_slowly(text)
    else:
        if end == size:
            if size <= MAX_DEPTH or _flat(value) or _brackets(text) <= MAX_DEPTH:
                return value  # type: ignore[no-any-return]
            return _parse_slowly(text)  # maybe too deep: exactly
    if size > MAX_DEPTH and _brackets(text) > MAX_DEPTH:
        return _parse_slowly(text)  # the first error is maybe the depth: exactly
    try:
        return _decoder.decode(text)  # type: ignore[no-any-return]
    except RecursionError:
        return _parse_slowly(text)


_CONTAINERS = frozenset((dict, list))


def _flat(value: object) -> bool:
    """An object holding no array or object: one level deep, however long (a tool result)."""
    return type(value) is dict and _CONTAINERS.isdisjoint(map(type, value.values()))


def _brackets(text: str) -> int:
    """Opening brackets, those inside strings too: a cheap bound on the depth."""
    return text.count("[") + text.count("{")


def _parse_slowly(text: str) -> JSON:
    """`json`'s decoder, step for step and with its messages, but without recursion: the
    open containers on a stack, one token at a time through the C scanner."""
    index = _skip(text, 0)
    stack: list[tuple[list[JSON] | dict[str, JSON], str]] = []  # (container, its next key)
    while True:
        char = text[index : index + 1]
        if char in ("[", "{"):
            if len(stack) >= MAX_DEPTH:
                raise JSONDecodeError(TOO_DEEP, text, index)
            index = _skip(text, index + 1)
            closing = text[index : index + 1]
            if char == "[" and closing != "]":
                stack.append(([], ""))
                continue
            if char == "{" and closing != "}":
                key, index = _key_at(text, index)
                stack.append(({}, key))
                continue
            value: JSON = [] if char == "[" else {}
            index += 1
        else:
            value, index = _raw_decode(text, index)
        while True:  # put the value in its container; close every container that ends here
            if not stack:
                end = _skip(text, index)
                if end != len(text):
                    raise JSONDecodeError("Extra data", text, end)
                return value
            container, key = stack[-1]
            if isinstance(container, list):
                container.append(value)
            else:
                container[key] = value
            index = _skip(text, index)
            char = text[index : index + 1]
            if char == ("]" if isinstance(container, list) else "}"):
                stack.pop()
                value, index = container, index + 1
                continue
            if char != ",":
                raise JSONDecodeError("Expecting ',' delimiter", text, index)
            comma, index = index, _skip(text, index + 1)
            if _TRAILING_COMMA and text[index : index + 1] == (
                "]" if isinstance(container, list) else "}"
            ):
                kind = "array" if isinstance(container, list) else "object"
                raise JSONDecodeError(f"Illegal trailing comma before end of {kind}", text, comma)
            if isinstance(container, dict):
                key, index = _key_at(text, index)
                stack[-1] = (container, key)
            break


def _key_at(text: str, index: int) -> tuple[str, int]:
    """A property name and its colon at `index`; the index of the value after them."""
    if text[index : index + 1] != '"':
        raise JSONDecodeError("Expecting property name enclosed in double quotes", text, index)
    key, index = _raw_decode(text, index)
    index = _skip(text, index)
    if text[index : index + 1] != ":":
        raise JSONDecodeError("Expecting ':' delimiter", text, index)
    return key, _skip(text, index + 1)


def error_column(err: BaseException) -> int | None:
    """The 1-based column an error of `parse` points at, when it knows one."""
    return err.colno if isinstance(err, JSONDecodeError) else None


def describe_error(err: BaseException) -> str:
    """A short reason for an error of `parse`, e.g. `Expecting value at column 3`."""
    if isinstance(err, JSONDecodeError):
        if err.doc[err.pos : err.pos + 1] == "\ufeff":  # Notepad's and PowerShell's BOM
            return f"byte-order mark (U+FEFF) at column {err.colno}; save as UTF-8 without BOM"
        # "Unterminated string starting at" + " at column 38" would say "at" twice
        return f"{err.msg.removesuffix(' at')} at column {err.colno}"
    if isinstance(err, RecursionError):  # only when the caller's stack is all but used up
        return "nested too deeply for the call stack left"
    return str(err)


def same_json(left: object, right: object) -> bool:
    """`left == right` for JSON values, at any depth (no recursion): a list is not a tuple."""
    pending = [(left, right)]
    while pending:
        a, b = pending.pop()
        if isinstance(a, dict) and isinstance(b, dict):
            if a.keys() != b.keys():
                return False
            pending.extend((a[key], b[key]) for key in a)
        elif isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                return False
            pending.extend(zip(a, b, strict=True))
        elif isinstance(a, (dict, list, tuple)) or isinstance(b, (dict, list, tuple)) or a != b:
            return False
    return True


def json_type(value: object) -> str:
    """The JSON name of a parsed value's type, for error messages (`an array`, `null`, …)."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    return "null" if value is None else names.get(type(value), "a number")
