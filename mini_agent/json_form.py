"""Beyond the chapter: JSON written byte for byte as `JSON.stringify` and read as strictly as
`JSON.parse` (TypeScript has both built in); what JavaScript cannot hold is refused (JSON_FORM.md)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from json import JSONDecodeError
from json.encoder import encode_basestring
from typing import Any, TypeAlias

JSON: TypeAlias = bool | int | float | str | list["JSON"] | dict[str, "JSON"] | None
"""Any JSON value, as `parse` returns it."""

MAX_DEPTH = 500  # arrays and objects nested in one value, at most (docs/JSON_FORM.md: why)

TOO_DEEP = f"nested deeper than {MAX_DEPTH} arrays and objects (json_form.MAX_DEPTH)"
NO_STACK = "nested too deeply for the call stack left"

_EXACT = 2**53  # every integer up to this is a double, and is written as its digits
_INDEX_MAX = 2**32 - 2  # the largest array index, whose key JavaScript puts first
_SURROGATE = re.compile("[\ud800-\udfff]")

# --- stringify --------------------------------------------------------------------------

# Compact, non-ASCII as itself, NaN refused; no cycle check: `_plain` walked the value whole
_encode: Callable[[object], str] = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, separators=(",", ":"), check_circular=False
).encode


_PLAIN_DEPTH = 32  # deeper values take the exact walk


def _plain(value: Any, depth: int = 0) -> bool:
    """Whether Python's encoder writes `value` exactly as JSON.stringify: str, bool, None, an
    int within ±2^53, a float `repr` writes as JavaScript does (not integral, not below 1e-4),
    str keys not starting with a digit (an array index comes first in JavaScript), 32 deep."""
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
    """`JSON.stringify(value)`. `TypeError` for what JSON cannot hold (a set), `ValueError`
    for NaN, Infinity, a number JavaScript would read differently, a cycle, or too deep."""
    return stringify_exactly(value)[0]


def stringify_exactly(value: Any, known_plain: bool = False) -> tuple[str, bool]:
    """`stringify(value)`, and whether `parse` of it surely gives `value` back (plain types, no
    surrogate escape); `known_plain`: the caller knows it holds only strings and booleans."""
    try:
        plain = known_plain or _plain(value)
        if plain:
            text = _encode(value)
        else:
            parts: list[str] = []
            _write(value, parts, set())
            text = "".join(parts)
    except RecursionError:
        raise ValueError(NO_STACK) from None
    if not text.isascii():
        try:
            text.encode("utf-8")  # cheaper than searching for a surrogate
        except UnicodeEncodeError:  # a raw surrogate is no UTF-8: JavaScript escapes it
            return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text), False
    return text, plain and "\\ud" not in text


def _write(value: Any, parts: list[str], open_ids: set[int]) -> None:
    """The exact form of any value, onto `parts`; `open_ids`: the containers being written."""
    if isinstance(value, str):
        parts.append(encode_basestring(value))
    elif value is None or isinstance(value, bool):
        parts.append("null" if value is None else "true" if value else "false")
    elif isinstance(value, int):
        parts.append(_integer(value))
    elif isinstance(value, float):
        parts.append(number_to_string(value))
    elif isinstance(value, (dict, list, tuple)):
        if len(open_ids) >= MAX_DEPTH:
            raise ValueError(TOO_DEEP)
        if id(value) in open_ids:
            raise ValueError("Circular reference detected")
        open_ids.add(id(value))
        is_object = isinstance(value, dict)
        parts.append("{" if is_object else "[")
        entries = _items(value) if isinstance(value, dict) else value
        for number, entry in enumerate(entries):
            if number:
                parts.append(",")
            if is_object:
                parts.append(encode_basestring(entry[0]) + ":")
                entry = entry[1]
            _write(entry, parts, open_ids)
        parts.append("}" if is_object else "]")
        open_ids.discard(id(value))
    else:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def js_string(text: str) -> str:
    """`text` as JavaScript holds it: a surrogate pair ("\\ud83d\\ude00") joined into its one
    character (😀), as a load reads it back; lone surrogates stay."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")  # no surrogate at all: the common case
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return text


def js_length(text: str) -> int:
    """`text.length` in JavaScript: UTF-16 code units (😀 counts 2, Python's `len` 1)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def number_to_string(value: float) -> str:
    """ECMAScript `Number::toString(value)` for a finite double: the shortest digits (`repr`'s)
    placed by the exponent: plain up to 21 digits, `0.000001`, else `1.5e-7` / `1e+21`."""
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


def js_key_rank(key: str) -> tuple[int, int]:
    """Where JavaScript holds an object's key: array indexes (the canonical digits of an integer
    0 ... 2**32 - 2) first, ascending, then the other keys as inserted (sort stably by it)."""
    index = key.isascii() and key.isdigit() and (key == "0" or key[0] != "0") and len(key) <= 10
    return (0, int(key)) if index and int(key) <= _INDEX_MAX else (1, 0)


def _items(value: dict[Any, Any]) -> list[tuple[str, Any]]:
    """An object's entries in JavaScript's order."""
    return sorted(
        ((_key(key), item) for key, item in value.items()), key=lambda e: js_key_rank(e[0])
    )


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
    if len(text) <= 17 and -_EXACT <= (value := int(text)) <= _EXACT:
        return value
    return _finite_float(text)  # float() has no 4,300-digit limit, and refuses 400 digits


_decode = json.JSONDecoder(
    parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_js_int
).decode
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")


def parse(text: str) -> JSON:
    """`JSON.parse(text)`, refusing what JavaScript could not write back (NaN, 1e999) and values
    deeper than `MAX_DEPTH`: a `ValueError` (`JSONDecodeError` with its column: not JSON)."""
    if text.count("[") + text.count("{") > MAX_DEPTH:  # maybe too deep: look before decoding
        _check_depth(text)
    try:
        return _decode(text)  # type: ignore[no-any-return]
    except RecursionError:
        raise ValueError(NO_STACK) from None


def _check_depth(text: str) -> None:
    """Raise `TOO_DEEP` at the bracket opening level `MAX_DEPTH + 1`; strings blanked out."""
    blanked = _STRING.sub(lambda m: " " * len(m.group()), text)
    depth = 0
    for match in _BRACKET.finditer(blanked):
        depth += 1 if match.group() in "[{" else -1
        if depth > MAX_DEPTH:
            raise JSONDecodeError(TOO_DEEP, text, match.start())


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
    return str(err)


def json_type(value: object) -> str:
    """The JSON name of a parsed value's type, for error messages (`an array`, `null`, …)."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    return "null" if value is None else names.get(type(value), "a number")
