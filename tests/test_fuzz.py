"""Hypothesis: random byte-level damage to a valid session file, against a literal reading.

The property, precisely. Let a valid file (written by `append_session`) be damaged by a few
random edits — bytes replaced, inserted, deleted, the file truncated. Then `load_session`
on the damaged bytes either

- returns exactly what the damaged text says: read line by line as docs/ARCHITECTURE.md describes
  (split on `\\n`, one `\\r` dropped, blank lines skipped, each line `json.loads` then
  `parse_session_message`) — so damage that leaves every line valid, such as a changed
  letter inside a string, loads as the changed text, and no damage loads as the original;
- or raises `SessionFormatError` naming the first line that this reading refuses, with the
  right phrase — and never a line of the undamaged beginning of the file.

It never raises anything else. `repair_session`, on the same bytes, loses nothing: it
refuses (file untouched), finds nothing to do, or splits the bytes into a file that loads
and a backup, which together are exactly the damaged bytes.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from mini_agent import Message, SessionFormatError, load_session, parse_session_message
from mini_agent.repair import repair_session
from mini_agent.session import INVALID_JSON, INVALID_RECORD, record_line

from .test_properties import histories

Outcome = list[Message] | tuple[str, int]  # the messages, or (phrase, line) of the refusal


def _reject(name: str) -> None:
    raise ValueError(name)


def literal_load(data: bytes) -> Outcome:
    """The reading (docs/ARCHITECTURE.md) of a session file, written as plainly as possible."""
    messages: list[Message] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        if raw == b"":
            continue
        try:
            value = json.loads(raw.decode("utf-8"), parse_constant=_reject, parse_int=_as_js_reads)
            if any(v in (float("inf"), float("-inf")) for v in _numbers(value)):
                raise ValueError("out of range")
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            return (INVALID_JSON, number)
        message = parse_session_message(value)
        if message is None:
            return (INVALID_RECORD, number)
        messages.append(message)
    return messages


def _as_js_reads(text: str) -> int | float:
    """An integer token as JavaScript reads it: exact up to ±2^53, else the nearest double."""
    value = int(text)
    return value if abs(value) <= 2**53 else float(text)


def _numbers(value: object) -> list[float]:
    if isinstance(value, float):
        return [value]
    if isinstance(value, list):
        return [n for item in value for n in _numbers(item)]
    if isinstance(value, dict):
        return [n for item in value.values() for n in _numbers(item)]
    return []


def actual_load(path: Path) -> Outcome:
    try:
        return load_session(path)
    except SessionFormatError as err:
        return (err.phrase, err.line)


# Edits that break JSON in interesting ways: line breaks, quotes, escapes, brackets,
# bytes that are not UTF-8 or start a multi-byte character, and numbers out of range.
interesting = st.sampled_from(
    [b"\n", b"\r", b"\r\n", b'"', b"\\", b"{", b"}", b"[", b",", b":", b" ", b"\x00",
     b"\xff", b"\xc3", b"\xe4\xb8", b"NaN", b"1e999", b"null", b"true", b"\n\n"]
)  # fmt: skip
position = st.integers(min_value=0, max_value=1 << 20)
edits = st.one_of(
    st.tuples(st.just("replace"), position, st.integers(0, 255).map(lambda b: bytes([b]))),
    st.tuples(st.just("insert"), position, interesting | st.binary(min_size=1, max_size=3)),
    st.tuples(st.just("delete"), position, st.integers(1, 6)),
    st.tuples(st.just("truncate"), position, st.just(0)),
)


def damage(data: bytes, changes: list[tuple[str, int, object]]) -> bytes:
    for kind, where, what in changes:
        at = where % (len(data) + 1)
        if kind == "replace" and at < len(data):
            assert isinstance(what, bytes)
            data = data[:at] + what + data[at + 1 :]
        elif kind == "insert":
            assert isinstance(what, bytes)
            data = data[:at] + what + data[at:]
        elif kind == "delete":
            assert isinstance(what, int)
            data = data[:at] + data[at + what :]
        elif kind == "truncate":
            data = data[:at]
    return data


def first_changed_line(original: bytes, damaged: bytes) -> int:
    """The physical line of the first byte where the two differ (past the end counts)."""
    same = 0
    for a, b in zip(original, damaged, strict=False):
        if a != b:
            break
        same += 1
    return original.count(b"\n", 0, same) + 1


@given(histories.filter(bool), st.lists(edits, min_size=0, max_size=4))
def test_damaged_file_loads_as_its_text_says_or_fails_at_the_first_bad_line(
    history: list[Message], changes: list[tuple[str, int, object]]
) -> None:
    original = "".join(record_line(m) + "\n" for m in history).encode()
    damaged = damage(original, changes)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "s.jsonl")
        path.write_bytes(damaged)
        outcome = actual_load(path)  # any other exception fails the test
    assert outcome == literal_load(damaged)
    if damaged == original:
        assert outcome == history
    intact = first_changed_line(original, damaged) - 1  # lines before it are untouched
    if isinstance(outcome, tuple):
        assert outcome[1] > intact
    else:
        assert outcome[:intact] == history[:intact]


@given(histories.filter(bool), st.lists(edits, min_size=1, max_size=3))
def test_repair_loses_no_byte(
    history: list[Message], changes: list[tuple[str, int, object]]
) -> None:
    damaged = damage("".join(record_line(m) + "\n" for m in history).encode(), changes)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "s.jsonl")
        path.write_bytes(damaged)
        try:
            report = repair_session(path)
        except SessionFormatError:
            assert path.read_bytes() == damaged  # refused: untouched
            assert [p.name for p in Path(folder).iterdir()] == ["s.jsonl"]
            return
        kept = path.read_bytes()
        cut = report.backup.read_bytes() if report.backup is not None else b""
        assert kept + cut == damaged and cut == report.cut
        assert load_session(path) == list(report.messages)


# 50 examples: one cut point over a history; every cut inside a record is also walked byte by
# byte by test_repair.py::test_every_prefix_of_a_record_is_torn_and_nothing_else_is
@settings(max_examples=50)
@given(histories.filter(bool), st.integers(min_value=0))
def test_a_file_cut_anywhere_repairs_to_its_complete_records(
    history: list[Message], cut: int
) -> None:
    original = "".join(record_line(m) + "\n" for m in history).encode()
    truncated = original[: cut % (len(original) + 1)]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "s.jsonl")
        path.write_bytes(truncated)
        report = repair_session(path)
        loaded = load_session(path)
    complete = truncated.count(b"\n")
    # a cut just before a newline leaves a whole record without its newline: it stays
    whole = [len(record_line(m).encode()) for m in history]
    ends_a_record = sum(whole[: complete + 1]) + complete == len(truncated)
    assert loaded == history[: complete + (1 if ends_a_record else 0)]
    assert report.repaired == (
        not ends_a_record and not truncated.endswith(b"\n") and bool(truncated)
    )
