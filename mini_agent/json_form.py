"""Beyond the chapter: JSON exactly as JavaScript writes it, and read as strictly as it reads it.

TypeScript has both built in (`JSON.stringify`, `JSON.parse`); Python's `json` differs in the
details, so the one place that makes up the difference is here. The chapter's files call
`stringify` and `parse` and never see `json` itself.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, TypeAlias

JSON: TypeAlias = bool | int | float | str | list["JSON"] | dict[str, "JSON"] | None
"""Any JSON value, as `parse` returns it."""

# JSON.stringify's form: no spaces, non-ASCII as itself, no NaN/Infinity.
_encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_surrogate = re.compile("[\ud800-\udfff]")


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def stringify(value: Any) -> str:
    """`JSON.stringify(value)`: compact, non-ASCII as itself, lone surrogates escaped.

    Raises `TypeError`, `ValueError` or `RecursionError` for what JSON cannot hold
    (a set, an object, NaN, a cycle).
    """
    text = _encoder.encode(value)
    if not text.isascii() and _surrogate.search(text):
        # A raw surrogate cannot be written as UTF-8; JavaScript escapes it, and so do we.
        text = _surrogate.sub(_escape_surrogate, text)
    return text


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # 1e999: JSON.parse makes it Infinity, which no JSON can hold
        raise ValueError(f"number {text} is out of range")
    return value


_decoder = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


def parse(text: str) -> JSON:
    """`JSON.parse(text)`, refusing what JavaScript could not write back (NaN, 1e999).

    Raises `ValueError` (a `json.JSONDecodeError` when the text is not JSON, with its column)
    or `RecursionError`.
    """
    value: JSON = _decoder.decode(text)
    return value


def error_column(err: BaseException) -> int | None:
    """The 1-based column an error of `parse` points at, when it knows one."""
    return err.colno if isinstance(err, json.JSONDecodeError) else None


def describe_error(err: BaseException) -> str:
    """A short reason for an error of `parse`, e.g. `Expecting value at column 3`."""
    if isinstance(err, json.JSONDecodeError):
        # "Unterminated string starting at" + " at column 38" would say "at" twice
        return f"{err.msg.removesuffix(' at')} at column {err.colno}"
    if isinstance(err, RecursionError):
        return "nested too deeply"
    return str(err)


def json_type(value: object) -> str:
    """The JSON name of a parsed value's type, for error messages (`an array`, `null`, …)."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    return "null" if value is None else names.get(type(value), "a number")
