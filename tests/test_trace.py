"""trace.py: the chapter's reverse scan, step by step, as the chapter draws it."""

from __future__ import annotations

import dataclasses
from itertools import pairwise

import pytest
from hypothesis import given

from mini_agent import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage, context_units
from teaching.trace import ScanStep, scan_steps
from tests.chapter_reference import context_units as literal_units

from .helpers import multi_tool_history
from .test_properties import histories


def read(*ids: str) -> AssistantMessage:
    return AssistantMessage("", tuple(ToolCall(call_id, "read", None) for call_id in ids))


def test_the_chapters_picture_takes_two_steps_as_drawn() -> None:
    history = multi_tool_history()
    first, second = scan_steps(history)
    assert (first.index, first.wanted_id, first.found) == (3, "b", 1)
    assert (first.start, first.end, first.next_index) == (1, 4, 0)
    assert first.looked_at == (2, 1)  # tool a is passed over on the way back
    assert first.units == (tuple(history[1:]),)
    assert (second.index, second.wanted_id, second.found, second.next_index) == (0, None, None, -1)
    assert second.units == ((history[0],), tuple(history[1:]))


def test_step_repr_reads_like_the_chapters_drawing() -> None:
    first = next(scan_steps(multi_tool_history()))
    assert repr(first) == (
        "第 1 步：index=3 tool b：往回找 id=b，在 index=1 找到 assistant，slice(1, 4) 是一个单元\n"
        "    units = [ [assistant(a,b), tool a, tool b] ]；index -> 0"
    )


def test_an_orphan_result_is_its_own_unit_after_a_full_search() -> None:
    history: list[Message] = [UserMessage("q"), ToolMessage("x", "lost")]
    step = next(scan_steps(history))
    assert step.is_orphan and step.found is None
    assert step.looked_at == (0,)
    assert step.unit == (history[1],)
    assert step.explain() == (
        "index=1 tool x：往回找遍也没有 assistant 声明 id=x，是孤立结果，自成一个单元"
    )


def test_the_nearest_declaring_assistant_wins() -> None:
    history: list[Message] = [read("a"), ToolMessage("a", "1"), read("a"), ToolMessage("a", "2")]
    step = next(scan_steps(history))
    assert step.found == 2 and step.unit == tuple(history[2:])


def test_a_message_in_between_is_swept_into_the_unit() -> None:
    history: list[Message] = [read("a"), UserMessage("between"), ToolMessage("a", "r")]
    (step,) = scan_steps(history)
    assert step.unit == tuple(history)


def test_no_step_for_an_empty_history() -> None:
    assert list(scan_steps([])) == []


def test_steps_are_immutable() -> None:
    step = next(scan_steps(multi_tool_history()))
    assert isinstance(step, ScanStep)
    with pytest.raises(dataclasses.FrozenInstanceError):
        step.index = 0  # type: ignore[misc]


@given(histories)
def test_the_last_step_holds_the_packages_units(history: list[Message]) -> None:
    steps = list(scan_steps(history))
    final = [list(unit) for unit in steps[-1].units] if steps else []
    assert final == context_units(history)
    assert [step.number for step in steps] == list(range(1, len(steps) + 1))
    assert all(later.index == earlier.next_index for earlier, later in pairwise(steps))


@given(histories)
def test_each_step_is_the_literal_inner_search_of_the_chapter(history: list[Message]) -> None:
    # the steps derive from context.py's scan; here each is checked against the chapter's
    # own backward search, run literally, and the last units against the literal transcription
    steps = list(scan_steps(history))
    for step in steps:
        if step.wanted_id is None:
            continue
        looked_at, found = [], None
        for i in range(step.index - 1, -1, -1):
            looked_at.append(i)
            candidate = history[i]
            if isinstance(candidate, AssistantMessage) and any(
                call.id == step.wanted_id for call in candidate.tool_calls
            ):
                found = i
                break
        assert (step.looked_at, step.found) == (tuple(looked_at), found)
    final = [list(unit) for unit in steps[-1].units] if steps else []
    assert final == literal_units(history)
