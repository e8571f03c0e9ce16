"""context.py: estimation, unit building and trimming — edge cases of docs/ARCHITECTURE.md."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import overload

import pytest

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
    trim_context,
)
from mini_agent.json_form import js_length
from tests.chapter_reference import context_units as literal_units
from tests.chapter_reference import trim_context as literal_trim

from .helpers import multi_tool_history

SMALLEST = "context budget cannot contain the smallest consistent message unit"
EMPTY = "context budget cannot be empty"


def call(call_id: str) -> ToolCall:
    return ToolCall(call_id, "read", None)


# --- estimate_context_chars ------------------------------------------------------------------


def test_estimate_equals_the_characters_in_the_session_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    history: list[Message] = [*multi_tool_history(), UserMessage("中文 and emoji 😀 \ud800")]
    for message in history:
        append_session(path, message)
    assert estimate_context_chars(history) == js_length(path.read_text(encoding="utf-8"))


def test_estimate_of_nothing_is_zero() -> None:
    assert estimate_context_chars([]) == 0


def test_estimate_counts_utf16_units_as_javascript_not_code_points_or_bytes() -> None:
    base = estimate_context_chars([UserMessage("")])
    assert estimate_context_chars([UserMessage("😀")]) == base + 2  # Python's len would say 1
    assert estimate_context_chars([UserMessage("中")]) == base + 1  # UTF-8 would say 3


@pytest.mark.parametrize(
    "bad_input",
    [{1, 2}, float("nan"), object()],
    ids=["set", "nan", "object"],
)
def test_unserialisable_message_is_reported_with_its_index(bad_input: object) -> None:
    history: list[Message] = [
        *multi_tool_history()[:3],
        AssistantMessage("x", (ToolCall("c", "t", bad_input),)),  # type: ignore[arg-type]
    ]
    with pytest.raises(ValueError, match=r"^message 3 cannot be serialized to JSON: ") as caught:
        estimate_context_chars(history)
    assert caught.value.__cause__ is not None


def test_a_cycle_is_reported_with_its_index() -> None:
    cycle: dict[str, object] = {}
    cycle["self"] = cycle
    history: list[Message] = [UserMessage("x"), AssistantMessage("y", (ToolCall("c", "t", cycle),))]  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^message 1 cannot be serialized"):
        estimate_context_chars(history)


@pytest.mark.parametrize(
    "not_a_list", ["hello", b"hello", UserMessage("x"), None], ids=["str", "bytes", "one", "None"]
)
def test_messages_that_are_not_a_list_are_refused_not_read_a_character_at_a_time(
    not_a_list: object,
) -> None:
    # a str is a sequence too: without the check, `trim_context` would cut "hello" into five
    # "messages" and fail on one of them; `context_units` stays the chapter's loop (no check)
    kind = type(not_a_list).__name__
    with pytest.raises(TypeError, match=rf"^messages must be a list of messages, not {kind}$"):
        trim_context(not_a_list, 100)  # type: ignore[arg-type]


# --- context_units ---------------------------------------------------------------------------


def test_units_of_the_chapters_picture() -> None:
    user, assistant, tool_a, tool_b = multi_tool_history()
    assert context_units(multi_tool_history()) == [[user], [assistant, tool_a, tool_b]]


def test_an_orphan_tool_result_stays_alone_and_no_assistant_is_invented() -> None:
    orphan = ToolMessage("ghost", "result")
    history: list[Message] = [UserMessage("q"), orphan, AssistantMessage("a")]
    assert context_units(history) == [[UserMessage("q")], [orphan], [AssistantMessage("a")]]


def test_a_result_before_its_declaring_assistant_is_an_orphan() -> None:
    early = ToolMessage("a", "too early")
    history: list[Message] = [early, AssistantMessage("", (call("a"),))]
    assert context_units(history) == [[early], [history[1]]]


def test_a_message_between_assistant_and_result_is_swept_into_the_unit() -> None:
    history: list[Message] = [
        AssistantMessage("", (call("a"),)),
        UserMessage("interleaved"),
        ToolMessage("a", "result"),
    ]
    assert context_units(history) == [history]


def test_nearest_declaring_assistant_wins_on_repeated_ids() -> None:
    history: list[Message] = [
        AssistantMessage("first", (call("x"),)),
        ToolMessage("x", "one"),
        AssistantMessage("second", (call("x"),)),
        ToolMessage("x", "two"),
    ]
    assert context_units(history) == [history[:2], history[2:]]


def test_a_result_inside_a_swept_unit_does_not_split_it() -> None:
    history: list[Message] = [
        AssistantMessage("", (call("a"), call("b"))),
        ToolMessage("b", "b first"),
        ToolMessage("a", "a last"),
    ]
    assert context_units(history) == [history]


def test_an_assistant_without_results_is_its_own_unit() -> None:
    history: list[Message] = [AssistantMessage("", (call("a"),)), UserMessage("interrupted")]
    assert context_units(history) == [[history[0]], [history[1]]]


def test_units_of_nothing_are_empty() -> None:
    assert context_units([]) == []


def test_units_match_the_literal_algorithm_on_a_tangled_history() -> None:
    history: list[Message] = [
        ToolMessage("z", "orphan"),
        AssistantMessage("", (call("a"), call("b"))),
        ToolMessage("a", "a"),
        AssistantMessage("", (call("b"),)),
        UserMessage("between"),
        ToolMessage("b", "b"),
        ToolMessage("a", "late a"),
        UserMessage("end"),
    ]
    assert context_units(history) == literal_units(history)


# --- trim_context ----------------------------------------------------------------------------


def test_the_budget_is_inclusive() -> None:
    history = multi_tool_history()
    assert trim_context(history, estimate_context_chars(history)) == history
    assert trim_context(history, estimate_context_chars(history) - 1) == history[1:]


def test_trim_stops_at_the_first_unit_that_does_not_fit() -> None:
    # an older, smaller unit behind a big one is not picked up: the result is a suffix
    history: list[Message] = [UserMessage("s"), UserMessage("x" * 100), UserMessage("newest")]
    budget = estimate_context_chars([history[0], history[2]])
    assert trim_context(history, budget) == [history[2]]


def test_empty_history_fails_loudly() -> None:
    with pytest.raises(ContextBudgetError, match=f"^{EMPTY}$"):
        trim_context([], 1000)


def test_budget_errors_are_value_errors() -> None:
    assert issubclass(ContextBudgetError, ValueError)


@pytest.mark.parametrize("budget", [True, False, 10.0, "100", None])
def test_a_budget_that_is_not_an_int_is_a_type_error(budget: object) -> None:
    with pytest.raises(TypeError, match="max_chars must be an int"):
        trim_context(multi_tool_history(), budget)  # type: ignore[arg-type]


@pytest.mark.parametrize("budget", [0, -1])
def test_a_budget_of_zero_or_less_gets_the_chapters_budget_error(budget: int) -> None:
    # the chapter's loop: the newest unit does not fit, or (no messages) nothing was kept
    with pytest.raises(ContextBudgetError, match=f"^{SMALLEST}$"):
        trim_context(multi_tool_history(), budget)
    with pytest.raises(ContextBudgetError, match=f"^{EMPTY}$"):
        trim_context([], budget)


def test_trim_returns_a_new_list() -> None:
    history = multi_tool_history()
    result = trim_context(history, 10_000)
    assert result == history and result is not history


def test_trim_does_not_serialise_what_it_does_not_keep() -> None:
    unserialisable = AssistantMessage("", (ToolCall("c", "t", {1, 2}),))  # type: ignore[arg-type]
    history: list[Message] = [unserialisable, UserMessage("x" * 50), UserMessage("newest")]
    assert trim_context(history, 40) == [history[2]]
    assert literal_trim(history, 40) == [history[2]]


def test_unserialisable_message_in_the_kept_range_names_its_history_index() -> None:
    history: list[Message] = [
        UserMessage("old"),
        AssistantMessage("", (ToolCall("c", "t", {1, 2}),)),  # type: ignore[arg-type]
        UserMessage("new"),
    ]
    with pytest.raises(ValueError, match=r"^message 1 cannot be serialized"):
        trim_context(history, 10_000)


class CountingHistory(Sequence[Message]):
    """A history that counts how many messages trimming looks at."""

    def __init__(self, messages: list[Message]) -> None:
        self.messages = messages
        self.looks = 0  # messages read, counting repeats

    def __len__(self) -> int:
        return len(self.messages)

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        if isinstance(index, slice):
            self.looks += len(range(*index.indices(len(self.messages))))
            return self.messages[index]
        self.looks += 1
        return self.messages[index]


def test_trim_looks_at_each_message_a_bounded_number_of_times_even_for_orphans() -> None:
    # the worst case of the chapter's inner search: every result an orphan (n²/2 looks there)
    orphans: list[Message] = [ToolMessage(f"lost-{n}", "x") for n in range(5_000)]
    history = CountingHistory(orphans)
    assert trim_context(history, 10**9) == orphans
    assert history.looks <= 3 * len(orphans)


def test_a_value_that_is_not_a_message_is_named_by_index() -> None:
    history = [UserMessage("x"), {"role": "user", "content": "y"}]
    with pytest.raises(TypeError, match=r"^message 1 is not a session message"):
        estimate_context_chars(history)  # type: ignore[arg-type]


def test_the_budget_error_knows_how_big_the_newest_unit_is() -> None:
    # issue 24: a reader told "cannot contain the smallest unit" was not told how big it is
    import pickle

    history = [UserMessage("q"), UserMessage("x" * 50)]
    with pytest.raises(ContextBudgetError) as caught:
        trim_context(history, 40)
    assert str(caught.value) == SMALLEST  # the chapter's phrase, exactly
    assert caught.value.needed == estimate_context_chars(history[1:]) == 79
    assert trim_context(history, caught.value.needed) == history[1:]  # that budget fits it
    assert pickle.loads(pickle.dumps(caught.value)).needed == 79
