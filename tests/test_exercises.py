"""exercises.py: a reader's function is checked case by case, never crashing the check."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from mini_agent import Message, UserMessage, load_session, parse_session_message, to_record
from mini_agent.messages import record_line
from mini_agent.teaching.exercises import (
    CALLS_CASES,
    DISCRIMINATION_CASES,
    LOAD_CASES,
    CheckReport,
    _same_load,
    check_load_session,
    check_parse_session_message,
    check_record_line,
    outcome_of,
    record_line_cases,
    run_cases,
)


def double(x: int) -> int:
    return 2 * x


def test_all_cases_passing() -> None:
    report = run_cases("double", double, double, [("one", (1,)), ("two", (2,))])
    assert report.ok
    assert repr(report) == "double: 2 of 2 cases passed\n  PASS one\n  PASS two"


def test_a_wrong_answer_and_a_crash_are_failed_cases() -> None:
    def buggy(x: int) -> int:
        if x == 2:
            raise KeyError("boom")
        return x

    report = run_cases("double", buggy, double, [("one", (1,)), ("two", (2,)), ("zero", (0,))])
    assert not report.ok
    assert repr(report).splitlines() == [
        "double: 1 of 3 cases passed",
        "  FAIL one — should return 2, but returned 1",
        "  FAIL two — should return 4, but raised KeyError: 'boom'",
        "  PASS zero",
    ]


def test_expected_errors_compare_by_text() -> None:
    def strict(x: int) -> int:
        raise ValueError(f"bad {x}")

    assert outcome_of(strict, 1) == ("error", "ValueError: bad 1")
    assert run_cases("strict", strict, strict, [("one", (1,))]).ok


def test_report_html_marks_failures() -> None:
    report = CheckReport("t", ())
    assert report.ok and "0 of 0" in report._repr_html_()


# --- the three exercise checks of notebooks 01-03 ------------------------------------------


def failed(report: CheckReport) -> list[str]:
    return [result.name for result in report.results if not result.passed]


def test_the_packages_parser_passes_every_discrimination_and_calls_row() -> None:
    report = check_parse_session_message(parse_session_message)
    assert report.ok
    assert len(report.results) == len(DISCRIMINATION_CASES) + len(CALLS_CASES)


def test_a_parser_that_checks_only_the_first_call_fails_the_second_item_row() -> None:
    def first_call_only(value: Any) -> Message | None:
        if isinstance(value, dict) and isinstance(value.get("toolCalls"), list):
            value = {**value, "toolCalls": value["toolCalls"][:1]}
        return parse_session_message(value)

    report = check_parse_session_message(first_call_only)
    assert [name.split("  (")[1] for name in failed(report)] == [
        "second item bad)",
        "structure, not meaning)",
    ]


def test_a_parser_that_raises_on_bad_data_fails_and_says_so() -> None:
    def indexing(value: Any) -> Message | None:
        if value["role"] == "user":  # crashes on [] and "user" instead of answering None
            return UserMessage(value["content"])
        return parse_session_message(value)

    report = check_parse_session_message(indexing)
    details = [result.detail for result in report.results if not result.passed]
    assert (
        details[0]
        == "should return None, but raised TypeError: list indices must be integers or slices, not str"
    )
    assert any("KeyError: 'role'" in detail for detail in details)


def test_the_packages_record_line_passes_every_case() -> None:
    assert check_record_line(record_line).ok


def test_a_record_line_with_default_json_dumps_fails_spacing_and_non_ascii() -> None:
    def spaced(message: Message) -> str:
        return json.dumps(to_record(message), separators=(",", ":"))

    assert failed(check_record_line(spaced)) == [
        "user, Chinese written as itself",
        "user, emoji written as itself",
        "NaN in a tool input is refused",
    ]


def test_refusing_nan_passes_whatever_the_exception_says() -> None:
    def refuses(message: Message) -> str:
        raise TypeError("no")

    report = check_record_line(refuses)
    assert failed(report) == [name for name, _ in record_line_cases()][:-1]


def chapter_load(path: Path) -> list[Message]:
    """The chapter's loadSession in Python: `split("\\n").filter(Boolean)` line numbers."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    messages = []
    for number, line in enumerate([line for line in text.split("\n") if line], start=1):
        try:
            value = json.loads(line)
        except ValueError as err:
            raise ValueError(f"invalid session JSON at line {number}") from err
        message = parse_session_message(value)
        if message is None:
            raise ValueError(f"invalid session record at line {number}")
        messages.append(message)
    return messages


def test_the_packages_loader_passes_every_case() -> None:
    report = check_load_session(load_session)
    assert report.ok
    assert len(report.results) == len(LOAD_CASES) + 1


def test_the_chapters_line_count_fails_only_the_blank_lines_cases() -> None:
    report = check_load_session(chapter_load)
    assert failed(report) == [
        "physical line number after blank lines",
        "bad record after a blank line: physical line 3",
    ]
    details = [result.detail for result in report.results if not result.passed]
    assert details[0].endswith("but raised ValueError: invalid session JSON at line 2")
    assert details[1].endswith("but raised ValueError: invalid session record at line 2")


def test_a_loader_that_swallows_every_os_error_fails_the_directory_case() -> None:
    def swallowing(path: Path) -> list[Message]:
        try:
            return load_session(path)
        except OSError:
            return []

    assert failed(check_load_session(swallowing)) == [
        "path is a directory: the OS error propagates"
    ]


def test_the_load_report_never_shows_the_temp_directory() -> None:
    def shows_path(path: Path) -> list[Message]:
        raise RuntimeError(f"cannot read {path!r} at {path}")

    report = check_load_session(shows_path)
    text = repr(report) + report._repr_html_()
    assert "case3.jsonl" in text
    assert tempfile.gettempdir() not in text


def test_format_errors_compare_by_phrase_and_line_number() -> None:
    expected = ("error", "SessionFormatError: invalid session JSON at line 2: Expecting value")
    assert _same_load(expected, ("error", "ValueError: invalid session JSON at line 2"))
    assert not _same_load(expected, ("error", "ValueError: invalid session JSON at line 20"))
    assert not _same_load(expected, ("error", "ValueError: invalid session record at line 2"))
    assert not _same_load(expected, ("value", []))


def test_a_load_failure_names_the_phrase_and_line_not_an_exception_type() -> None:
    def skipping_bad_json(path: Path) -> list[Message]:
        try:
            return load_session(path)
        except ValueError:
            return []

    (detail,) = [
        r.detail
        for r in check_load_session(skipping_bad_json).results
        if r.name == "line 2 truncated JSON"
    ]
    assert (
        detail
        == "should raise an error starting with 'invalid session JSON at line 2', but returned []"
    )


def test_a_record_line_that_writes_nan_is_told_any_exception_will_do() -> None:
    def writes_nan(message: Message) -> str:
        return json.dumps(to_record(message), ensure_ascii=False, separators=(",", ":"))

    (detail,) = [r.detail for r in check_record_line(writes_nan).results if not r.passed]
    assert detail.startswith("should raise (any exception), but returned ")
