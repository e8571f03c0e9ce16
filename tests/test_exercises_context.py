"""exercises.py, notebooks 04-05: the checks pass the package and catch the usual mistakes."""

from __future__ import annotations

from collections.abc import Sequence

from mini_agent import (
    ContextBudgetError,
    Message,
    ToolMessage,
    context_units,
    estimate_context_chars,
    trim_context,
)
from mini_agent.messages import record_line
from mini_agent.teaching.exercises import (
    check_context_units,
    check_estimate_context_chars,
    check_trim_context,
)


def failed(report: object) -> list[str]:
    return [r.name for r in report.results if not r.passed]  # type: ignore[attr-defined]


def test_the_package_passes_its_own_checks() -> None:
    assert check_context_units(context_units).ok
    assert check_trim_context(trim_context).ok
    assert check_estimate_context_chars(estimate_context_chars).ok


def test_one_message_per_unit_fails_every_tool_round() -> None:
    report = check_context_units(lambda messages: [[m] for m in messages])
    assert not report.ok
    assert "the chapter's picture" in failed(report)
    assert "orphan tool result stays alone" not in failed(report)
    assert "plain chat, no tools" not in failed(report)


def test_a_wrong_unit_is_shown_by_position_in_the_history() -> None:
    report = check_context_units(lambda messages: [[m] for m in messages])
    (picture,) = [r for r in report.results if r.name == "the chapter's picture"]
    assert picture.detail == (
        "should return [[#0 user], [#1 assistant(a,b), #2 tool a, #3 tool b]], "
        "but returned [[#0 user], [#1 assistant(a,b)], [#2 tool a], [#3 tool b]]"
    )


def test_farthest_assistant_fails_the_repeated_id_case() -> None:
    def farthest(messages: Sequence[Message]) -> list[list[Message]]:
        if len(messages) == 5 and isinstance(messages[-1], ToolMessage):
            return [list(messages)]
        return context_units(messages)

    assert failed(check_context_units(farthest)) == [
        "repeated id: the nearest declaring assistant wins"
    ]


def per_message_trim(messages: Sequence[Message], max_chars: int) -> list[Message]:
    kept: list[Message] = []
    for message in reversed(messages):
        if estimate_context_chars([message, *kept]) > max_chars:
            break
        kept.insert(0, message)
    return kept


def test_per_message_trimming_fails_the_half_pair_and_error_cases() -> None:
    names = failed(check_trim_context(per_message_trim))
    assert "budget 100: the newest unit does not fit" in names
    assert "never half a unit: 200 holds both results but not their assistant" in names
    assert "nothing to send: budget cannot be empty" in names
    assert "budget holds everything" not in names


def test_a_missing_error_is_described_by_its_message_not_its_type() -> None:
    details = {r.name: r.detail for r in check_trim_context(per_message_trim).results}
    assert details["nothing to send: budget cannot be empty"] == (
        "should raise an error with the message 'context budget cannot be empty', but returned []"
    )


def test_any_exception_type_with_the_chapters_phrase_passes() -> None:
    def plain_value_error(messages: Sequence[Message], max_chars: int) -> list[Message]:
        try:
            return trim_context(messages, max_chars)
        except ContextBudgetError as err:
            raise ValueError(str(err)) from None

    assert check_trim_context(plain_value_error).ok


def test_a_skipping_trim_fails_the_stop_case() -> None:
    def skipping(messages: Sequence[Message], max_chars: int) -> list[Message]:
        kept = trim_context(messages, max_chars)
        rest = messages[: len(messages) - len(kept)]
        if rest and estimate_context_chars([rest[0], *kept]) <= max_chars:
            return [rest[0], *kept]  # jumps over a unit that did not fit
        return kept

    assert failed(check_trim_context(skipping)) == [
        "stop at the first unit that does not fit, skip nothing"
    ]


def test_utf8_bytes_are_not_characters() -> None:
    def utf8(messages: Sequence[Message]) -> int:
        return sum(len(record_line(m).encode()) + 1 for m in messages)

    assert failed(check_estimate_context_chars(utf8)) == [
        "Chinese and emoji count one character each"
    ]
