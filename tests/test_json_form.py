"""JSON as JavaScript writes and reads it: numbers, key order, big integers, the nesting limit.

The literal forms below are what node writes (checked against real node at scale in
tests/test_node_differential.py); docs/JSON_FORM.md states the rules.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mini_agent import (
    AssistantMessage,
    SessionFormatError,
    ToolCall,
    append_session,
    json_form,
    load_session,
)
from mini_agent.json_form import (
    JSON,
    MAX_DEPTH,
    NO_STACK,
    TOO_DEEP,
    js_length,
    number_to_string,
    parse,
    stringify,
)

# The DESIGN examples, and the edges of each rule: value -> what JSON.stringify writes.
NUMBERS = [
    (1.0, "1"),
    (-0.0, "0"),
    (0.0, "0"),
    (1e16, "10000000000000000"),
    (1e21, "1e+21"),
    (1e20, "100000000000000000000"),
    (1e-5, "0.00001"),
    (1e-6, "0.000001"),
    (1e-7, "1e-7"),
    (1.5e-7, "1.5e-7"),
    (123e-20, "1.23e-18"),
    (5e-324, "5e-324"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (-1.7976931348623157e308, "-1.7976931348623157e+308"),
    (0.1, "0.1"),
    (0.1 + 0.2, "0.30000000000000004"),
    (-1.5, "-1.5"),
    (100.0, "100"),
    (1.5e16, "15000000000000000"),
    (123456789.125, "123456789.125"),
    (1e-4, "0.0001"),
    (9.999999999999999e-5, "0.00009999999999999999"),
    (2.0**60, "1152921504606847000"),
    (2**53, "9007199254740992"),
    (-(2**53), "-9007199254740992"),
    (2**53 - 1, "9007199254740991"),
    (2**60, "1152921504606847000"),  # an int beyond 2^53 that is a double: written as JS does
    (10**21, "1e+21"),
]


@pytest.mark.parametrize(("value", "expected"), NUMBERS, ids=[text for _, text in NUMBERS])
def test_numbers_are_written_as_number_to_string(value: float, expected: str) -> None:
    assert stringify(value) == expected
    assert stringify([value]) == f"[{expected}]"
    assert stringify({"n": value}) == f'{{"n":{expected}}}'


def _reference(value: float) -> str:
    """ECMAScript Number::toString, step by step as the standard words it, from Decimal."""
    if value == 0:
        return "0"
    _, digits, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    s = "".join(map(str, digits))
    k = len(s)
    n = int(exponent) + k  # value = s * 10**(n - k)
    prefix = "-" if value < 0 else ""
    if k <= n <= 21:
        return prefix + s + "0" * (n - k)
    if 0 < n <= 21:
        return prefix + s[:n] + "." + s[n:]
    if -6 < n <= 0:
        return prefix + "0." + "0" * (-n) + s
    e = n - 1
    mantissa = s if k == 1 else s[0] + "." + s[1:]
    return prefix + mantissa + "e" + ("+" if e >= 0 else "-") + str(abs(e))


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_number_to_string_follows_the_standard_and_reads_back(value: float) -> None:
    text = number_to_string(value)
    assert text == _reference(value)
    assert float(text) == value


@pytest.mark.parametrize(
    ("text", "units"),
    [
        ("", 0),
        ("hello", 5),
        ("你好，世界", 5),
        ("😀", 2),
        ("a😀b𠀋", 6),
        ("👨\u200d👩", 5),
        ("\ud800", 1),
    ],
)
def test_js_length_counts_utf16_units_as_javascripts_length(text: str, units: int) -> None:
    # node: "a😀b𠀋".length === 6; a lone surrogate is one unit
    assert js_length(text) == units


def test_integer_like_keys_come_first_in_ascending_order() -> None:
    value = {"1": 0, "b": 1, "0": 2, "4294967294": 3, "4294967295": 4, "01": 5, "-1": 6, "1.5": 7}
    expected = '{"0":2,"1":0,"4294967294":3,"b":1,"4294967295":4,"01":5,"-1":6,"1.5":7}'  # 2^32-1 is not an array index, so it keeps its place among the others
    assert stringify(value) == expected


def test_key_order_is_javascripts_at_every_depth() -> None:
    value = {"z": [{"10": 1.0, "9": -0.0, "x": {"2": 1e21, "a": 1e-7, "1": None}}], "3": 2}
    assert stringify(value) == '{"3":2,"z":[{"9":0,"10":1,"x":{"1":null,"2":1e+21,"a":1e-7}}]}'


def test_keys_that_are_not_strings_become_what_javascript_makes_of_them() -> None:
    assert stringify({2: "a", 1.0: "b", None: "c", False: "d"}) == (
        '{"1":"b","2":"a","null":"c","false":"d"}'
    )


json_values: st.SearchStrategy[JSON] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(["0", "1", "10", "b", "", "01", "a"]), children, max_size=4
        )
    ),
    max_leaves=12,
)


@given(json_values)
def test_the_fast_path_writes_what_the_exact_walk_writes(value: JSON) -> None:
    parts: list[str] = []
    json_form._write(value, parts, set())
    assert stringify(value) == "".join(parts)


@given(json_values)
def test_what_is_written_reads_back_equal_and_is_written_again_the_same(value: JSON) -> None:
    text = stringify(value)
    assert parse(text) == value
    assert stringify(parse(text)) == text


# --- integers beyond ±2^53 and beyond the double range --------------------------------


def test_an_int_javascript_cannot_hold_is_refused_on_writing() -> None:
    for value in (2**53 + 1, -(2**53) - 1, 12345678901234567890):
        with pytest.raises(ValueError, match=r"beyond ±2\^53 and not a double: JavaScript"):
            stringify({"id": value})


def test_integers_beyond_two_to_the_53_are_read_as_javascript_reads_them() -> None:
    assert parse("9007199254740993") == 9007199254740992.0  # the nearest double
    assert parse("12345678901234567890") == 12345678901234567168.0
    assert stringify(parse("12345678901234567890")) == "12345678901234567000"
    assert parse("9007199254740992") == 2**53 and isinstance(parse("9007199254740992"), int)


@pytest.mark.parametrize("digits", [400, 4_301, 5_000])
def test_numbers_beyond_the_double_range_get_one_clear_error(digits: int) -> None:
    # never "use sys.set_int_max_str_digits()": the limit is JavaScript's, not Python's
    with pytest.raises(ValueError, match=r"is out of range \(JavaScript reads it as Infinity\)"):
        parse("7" * digits)
    with pytest.raises(ValueError, match=r"is out of range \(JavaScript reads it as Infinity\)"):
        parse("[-" + "7" * digits + "]")
    with pytest.raises(ValueError, match=r"is out of range \(JavaScript reads it as Infinity\)"):
        stringify(7 * 10 ** (digits - 1))


def test_a_session_line_with_a_huge_integer_names_it_clearly(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    line = '{"role":"assistant","content":"","toolCalls":[{"id":"a","name":"n","input":%s}]}'
    path.write_text(line % ("9" * 5_000) + "\n", encoding="utf-8")
    with pytest.raises(SessionFormatError) as caught:
        load_session(path)
    assert str(caught.value).startswith("invalid session JSON at line 1: number 99999")
    assert "(5000 digits) is out of range" in str(caught.value)
    assert "set_int_max_str_digits" not in str(caught.value)
    with pytest.raises(ValueError, match="is out of range") as refused:
        append_session(tmp_path / "t.jsonl", AssistantMessage("", (ToolCall("a", "n", 9**5000),)))
    assert "set_int_max_str_digits" not in str(refused.value)
    assert not (tmp_path / "t.jsonl").exists()


# --- the nesting limit ----------------------------------------------------------------


def _nested(depth: int) -> JSON:
    value: JSON = 0
    for _ in range(depth):
        value = [value]
    return value


def test_the_limit_is_the_same_for_writing_and_reading() -> None:
    deepest = stringify(_nested(MAX_DEPTH))
    assert deepest == "[" * MAX_DEPTH + "0" + "]" * MAX_DEPTH
    assert parse(deepest) == _nested(MAX_DEPTH)
    with pytest.raises(ValueError, match=TOO_DEEP.replace("(", r"\(").replace(")", r"\)")):
        stringify(_nested(MAX_DEPTH + 1))
    with pytest.raises(json.JSONDecodeError) as caught:
        parse("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    assert caught.value.msg == TOO_DEEP and caught.value.colno == MAX_DEPTH + 1
    assert json_form.describe_error(caught.value) == f"{TOO_DEEP} at column {MAX_DEPTH + 1}"


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"code": "[{" * 2_000, "n": [1.5, {"a": "]}"}]})
    assert parse(text) == json.loads(text)


def test_a_cycle_is_refused_not_a_crash() -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        stringify(loop)


_RUN_AT_THE_LIMIT = """
import sys
from pathlib import Path
from mini_agent import AssistantMessage, ToolCall, append_session, load_session, trim_context
from mini_agent import estimate_context_chars
from mini_agent.cli import main
from mini_agent.json_form import MAX_DEPTH, parse, stringify
folder, limit = Path(sys.argv[1]), int(sys.argv[2])
def nested(depth):
    value = 0
    for _ in range(depth):
        value = [value]
    return value
# a record holds its input 3 deep: {"toolCalls":[{"input": ...}]}
at_limit = AssistantMessage("", (ToolCall("a", "n", nested(MAX_DEPTH - 3)),))
beyond = AssistantMessage("", (ToolCall("a", "n", nested(MAX_DEPTH - 2)),))
deep_line = '{"role":"user","content":"","n":' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}"
append_session(folder / "ok.jsonl", at_limit)  # before the limit: append compares messages
(folder / "bad.jsonl").write_text(deep_line + "\\n", encoding="utf-8")
sys.setrecursionlimit(limit)
def attempt(name, run):
    try:
        print(name, "ok", run())
    except (ValueError, RecursionError) as err:
        print(name, type(err).__name__, err)
attempt("parse", lambda: parse(stringify({"n": nested(MAX_DEPTH - 1)})) is not None)
attempt("parse beyond", lambda: parse(deep_line))
attempt("load", lambda: len(load_session(folder / "ok.jsonl")))
attempt("load beyond", lambda: load_session(folder / "bad.jsonl"))
attempt("estimate", lambda: estimate_context_chars(load_session(folder / "ok.jsonl")))
attempt("trim", lambda: len(trim_context(load_session(folder / "ok.jsonl"), 10_000)))
attempt("trim beyond", lambda: trim_context([beyond], 10_000))
attempt("append beyond", lambda: append_session(folder / "ok.jsonl", beyond))
attempt("append", lambda: append_session(folder / "again.jsonl", at_limit))  # compares at any depth
attempt("check", lambda: main(["check", str(folder / "ok.jsonl")]))
attempt("check beyond", lambda: main(["check", str(folder / "bad.jsonl")]))
"""


def _run_at_the_limit(tmp_path: Path, recursion_limit: int) -> str:
    folder = tmp_path / str(recursion_limit)
    folder.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", _RUN_AT_THE_LIMIT, str(folder), str(recursion_limit)],
        capture_output=True,
        encoding="utf-8",
        timeout=60,
        check=True,
    )
    return (done.stdout + done.stderr).replace(str(folder), "FOLDER")


def test_one_limit_for_append_load_trim_and_the_cli_and_no_recursion_error(
    tmp_path: Path,
) -> None:
    usual = _run_at_the_limit(tmp_path, 1_000)
    assert usual.count(TOO_DEEP) == 5  # parse, load, trim, append and check beyond it
    assert "parse ok True\n" in usual and "load ok 1\n" in usual and "trim ok 1\n" in usual
    assert "append ok None\n" in usual
    assert "message 0 cannot be serialized to JSON: " + TOO_DEEP in usual
    assert "invalid session JSON at line 1: " + TOO_DEEP in usual
    # a caller that lowers the recursion limit below the depth gets a clear error, never a
    # RecursionError (a documented limit: docs/JSON_FORM.md)
    lowered = _run_at_the_limit(tmp_path, 120)
    assert "RecursionError" not in usual + lowered and NO_STACK in lowered
    assert "parse beyond JSONDecodeError " + TOO_DEEP in lowered  # looked at before decoding
    assert "invalid session JSON at line 1: " + TOO_DEEP in lowered


def test_a_thread_with_a_small_stack_reads_and_writes_the_deepest_value() -> None:
    deepest = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    hostile = ["[" * 100_000, "[" * 100_000 + "]" * 100_000, '{"a":' * 5_000]
    results: list[object] = []

    def work() -> None:
        results.append(stringify(parse(deepest)) == deepest)
        for text in hostile:  # refused, however deep, without a crash
            with pytest.raises(json.JSONDecodeError, match=r"nested deeper than 500"):
                parse(text)
            results.append(True)

    old = threading.stack_size(256 * 1024)  # the C decoder needs ~200 bytes a level
    try:
        thread = threading.Thread(target=work)
        thread.start()
        thread.join(timeout=30)
    finally:
        threading.stack_size(old)
    assert results == [True] * 4


def test_the_package_uses_no_private_json_api() -> None:
    package = Path(json_form.__file__).parent
    for source in package.rglob("*.py"):
        assert not re.search(r"\b_json\b", source.read_text(encoding="utf-8")), source
