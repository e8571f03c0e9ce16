"""exercises.py: a reader's function is checked case by case, never crashing the check."""

from __future__ import annotations

from mini_agent.exercises import CheckReport, outcome_of, run_cases


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
