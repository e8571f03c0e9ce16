"""messages.py: messages hash, and tool calls compare as JSON objects do (issue 34).

Equal messages must hash alike; a call's key order (`extra`, `keys`) is how it is written
back, not part of what it is.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mini_agent.json_form import JSON, is_array_index, stringify
from mini_agent.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    to_record,
)
from mini_agent.session import parse_session_message


def alike(left: object, right: object) -> None:
    """Equal both ways, and the same hash."""
    assert left == right
    assert right == left
    assert (left != right) is False
    assert hash(left) == hash(right)


def call_from(line: str) -> ToolCall:
    message = parse_session_message(
        {"role": "assistant", "content": "", "toolCalls": [json.loads(line)]}
    )
    assert isinstance(message, AssistantMessage)
    return message.tool_calls[0]


def test_every_kind_of_message_hashes_and_can_be_a_dict_key() -> None:
    messages: list[Message] = [
        UserMessage("hi"),
        AssistantMessage("ok", (ToolCall("c1", "read", {"path": "a", "opts": [1, {"x": None}]}),)),
        AssistantMessage("", (ToolCall("c2", "f", None, (("meta", {"k": [1]}),)),)),
        ToolMessage(tool_call_id="c1", content="text", is_error=True),
    ]
    seen = {message: number for number, message in enumerate(messages)}
    assert len(seen) == len(messages)
    for number, message in enumerate(messages):
        assert seen[message] == number


def test_extra_keys_in_another_order_are_the_same_call_and_keep_their_own_order() -> None:
    first = call_from('{"id":"c","name":"n","input":{},"b":1,"a":{"y":2,"x":[3]}}')
    second = call_from('{"a":{"x":[3],"y":2},"id":"c","b":1,"input":{},"name":"n"}')
    alike(first, second)
    alike(AssistantMessage("", (first,)), AssistantMessage("", (second,)))
    assert list(first.to_record()) == ["id", "name", "input", "b", "a"]
    assert list(second.to_record()) == ["a", "id", "b", "input", "name"]
    assert stringify(first.to_record()) != stringify(second.to_record())


def test_a_call_written_in_another_key_order_equals_the_plain_call() -> None:
    alike(call_from('{"input":{"p":1},"name":"n","id":"c"}'), ToolCall("c", "n", {"p": 1}))


def test_nested_dict_inputs_in_another_key_order_are_equal_and_hash_alike() -> None:
    left = ToolCall("c", "n", {"a": {"b": [1, {"c": "d", "e": None}]}, "f": True})
    right = ToolCall("c", "n", {"f": True, "a": {"b": [1, {"e": None, "c": "d"}]}})
    alike(left, right)
    alike(AssistantMessage("x", [left]), AssistantMessage("x", (right,)))


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (ToolCall("c", "n", {"a": 1}), ToolCall("c", "n", {"a": 2})),
        (ToolCall("c", "n", [1, 2]), ToolCall("c", "n", [2, 1])),
        (ToolCall("c", "n", {}), ToolCall("d", "n", {})),
        (ToolCall("c", "n", {}), ToolCall("c", "m", {})),
        (ToolCall("c", "n", {}, (("x", 1),)), ToolCall("c", "n", {}, (("x", 2),))),
        (ToolCall("c", "n", {}, (("x", 1),)), ToolCall("c", "n", {})),
    ],
)
def test_calls_that_differ_as_json_are_not_equal(left: ToolCall, right: ToolCall) -> None:
    assert left != right
    assert AssistantMessage("", (left,)) != AssistantMessage("", (right,))


def test_a_deep_input_hashes_without_recursion() -> None:
    deep: JSON = []
    for _ in range(100_000):
        deep = [deep]
    message = AssistantMessage("", (ToolCall("c", "n", {"deep": deep}),))
    assert isinstance(hash(message), int)
    assert {message: "found"}[message] == "found"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(
    st.dictionaries(st.text(min_size=1, max_size=4), json_values, max_size=4),
    json_values,
    st.randoms(use_true_random=False),
)
def test_a_message_read_back_in_any_key_order_equals_it_and_hashes_alike(
    extra: dict[str, JSON], value: JSON, shuffler: random.Random
) -> None:
    extra = {key: item for key, item in extra.items() if key not in ("id", "name", "input")}
    record = {"id": "c", "name": "n", "input": value, **extra}
    shuffled = list(record.items())
    shuffler.shuffle(shuffled)
    message = parse_session_message({"role": "assistant", "content": "", "toolCalls": [record]})
    other = parse_session_message(
        {"role": "assistant", "content": "", "toolCalls": [dict(shuffled)]}
    )
    assert isinstance(message, AssistantMessage) and isinstance(other, AssistantMessage)
    alike(message, other)
    alike(parse_session_message(to_record(message)), message)
    alike(parse_session_message(to_record(other)), other)
    written = other.tool_calls[0].to_record()  # in the order read, as JavaScript holds it
    assert list(written) == sorted(
        dict(shuffled), key=lambda key: (0, int(key)) if is_array_index(key) else (1, 0)
    )
