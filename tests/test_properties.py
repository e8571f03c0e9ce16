"""Hypothesis: random histories against the chapter's literal algorithm, and disk round trips."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from mini_agent import (
    AssistantMessage,
    ContextBudgetError,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    append_session,
    context_units,
    estimate_context_chars,
    load_session,
    trim_context,
)
from mini_agent.json_form import JSON
from mini_agent.session import discriminate, parse_session_message, record_line, to_record
from tests.chapter_reference import context_units as literal_units
from tests.chapter_reference import estimate_context_chars as literal_estimate
from tests.chapter_reference import trim_context as literal_trim

# Text that stresses the format: line separators JSON carries raw, CJK, emoji, quotes,
# and lone high surrogates (two highs never pair up, so they round-trip).
tricky = st.sampled_from(
    ["\n", "\r", "\r\n", "\u2028", "\x85", "\x00", '"', "\\", "中文", "😀", "\ud800", "\udbff"]
)
text = st.lists(st.one_of(st.text(max_size=8), tricky), max_size=4).map("".join)
json_values: st.SearchStrategy[JSON] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)  # JavaScript holds these exactly
    | st.floats(allow_nan=False, allow_infinity=False)
    | text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(text, children, max_size=3),
    max_leaves=8,
)
# A small pool of ids makes repeats, orphans and interleavings common.
call_ids = st.sampled_from(["a", "b", "c", "d"])
tool_calls = st.builds(ToolCall, call_ids, st.sampled_from(["read", "grep"]), json_values)
messages: st.SearchStrategy[Message] = st.one_of(
    st.builds(UserMessage, text),
    st.builds(AssistantMessage, text, st.lists(tool_calls, max_size=3).map(tuple)),
    st.builds(ToolMessage, call_ids, text, st.booleans()),
)
histories = st.lists(messages, max_size=25)


@given(histories.filter(bool))
def test_every_message_round_trips_through_disk_byte_for_byte(history: list[Message]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        first, second = Path(folder, "first.jsonl"), Path(folder, "second.jsonl")
        for message in history:
            append_session(first, message)
        expected = "".join(record_line(m) + "\n" for m in history).encode()
        assert first.read_bytes() == expected
        loaded = load_session(first)
        assert loaded == history
        for message in loaded:
            append_session(second, message)
        assert second.read_bytes() == expected


# Without floats, Python's own json writes what JSON.stringify writes, but for a lone surrogate
# (raw here, a six-character escape there): a count made without the kit's serialiser.
float_free: st.SearchStrategy[JSON] = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**53), max_value=2**53) | text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(text, children, max_size=3),
    max_leaves=8,
)
float_free_histories = st.lists(
    st.one_of(
        st.builds(UserMessage, text),
        st.builds(
            AssistantMessage,
            text,
            st.lists(st.builds(ToolCall, call_ids, text, float_free), max_size=3).map(tuple),
        ),
        st.builds(ToolMessage, call_ids, text, st.booleans()),
    ),
    max_size=25,
)


def independent_chars(message: Message) -> int:
    """The message's line and its newline, counted without the kit as JavaScript's `.length`
    counts: a character beyond U+FFFF is two UTF-16 units, an escaped lone surrogate six."""
    dumped = json.dumps(to_record(message), ensure_ascii=False, separators=(",", ":"))
    astral = len(re.findall("[\U00010000-\U0010ffff]", dumped))
    return len(dumped) + astral + 5 * len(re.findall("[\ud800-\udfff]", dumped)) + 1


@given(float_free_histories)
def test_estimate_counts_utf16_units_as_javascript_and_the_literal_one(
    history: list[Message],
) -> None:
    expected = sum(independent_chars(m) for m in history)
    assert estimate_context_chars(history) == literal_estimate(history) == expected


@given(histories)
def test_units_equal_the_literal_algorithms(history: list[Message]) -> None:
    assert context_units(history) == literal_units(history)


def outcome(trim: object, history: list[Message], budget: int) -> object:
    try:
        return trim(history, budget)  # type: ignore[operator]
    except ContextBudgetError as err:
        return str(err)


@given(histories, st.data())
def test_trim_equals_the_literal_algorithm(history: list[Message], data: st.DataObject) -> None:
    # any budget, or one at the edge of a suffix of units, where one unit more or less decides
    units = context_units(history)
    start = sum(len(unit) for unit in units[: data.draw(st.integers(0, len(units)))])
    edge = sum(independent_chars(m) for m in history[start:])
    budget = data.draw(st.integers(1, 3000) | st.integers(edge - 2, edge + 1).filter(bool))
    assert outcome(trim_context, history, budget) == outcome(literal_trim, history, budget)


@given(histories.filter(bool), st.integers(min_value=1, max_value=3000))
def test_trim_keeps_a_suffix_of_whole_units_within_budget(
    history: list[Message], budget: int
) -> None:
    try:
        kept = trim_context(history, budget)
    except ContextBudgetError:
        newest_unit = context_units(history)[-1]
        assert estimate_context_chars(newest_unit) > budget
        return
    assert kept and kept == history[len(history) - len(kept) :]
    assert estimate_context_chars(kept) <= budget
    starts: set[int] = set()
    offset = 0
    for unit in context_units(history):
        starts.add(offset)
        offset += len(unit)
    assert len(history) - len(kept) in starts


# Records close to valid ones: each field present or not, of the right type or not.
_field_values = st.one_of(st.none(), st.booleans(), st.integers(-1, 1), st.text(max_size=3))
near_records = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from(["user", "assistant", "tool", "nope"]) | _field_values,
        "content": _field_values,
        "toolCalls": st.lists(
            st.fixed_dictionaries(
                {}, optional={"id": _field_values, "name": _field_values, "input": _field_values}
            ),
            max_size=2,
        )
        | _field_values,
        "toolCallId": _field_values,
        "isError": _field_values,
    },
)


@given(near_records | json_values)
def test_the_reason_for_a_refused_record_follows_the_parser(value: JSON) -> None:
    message = parse_session_message(value)
    if message is not None:
        return
    reason = discriminate(value)
    assert isinstance(reason, str)
    if not isinstance(value, dict):
        assert reason.startswith("expected a JSON object")
    elif not isinstance(value.get("role"), str) or not isinstance(value.get("content"), str):
        assert reason.endswith("must be a string")
    elif value["role"] in ("assistant", "tool"):
        assert reason.startswith(value["role"] + " needs ")
    else:
        assert value["role"] != "user" and reason.startswith("unknown role")
