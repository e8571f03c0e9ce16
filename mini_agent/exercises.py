"""Checks for the notebooks' exercises: run a reader's function on the chapter's cases.

Each `check_*` function takes the reader's own implementation, runs it on a table of cases,
compares with the package's answer, and returns a `CheckReport` that says what passed and
what failed (and why), without raising.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any


@dataclass(frozen=True)
class CheckResult:
    """One case: its name, whether the reader's answer matched, and what differed."""

    name: str
    passed: bool
    detail: str = ""


@dataclass(frozen=True)
class CheckReport:
    """Every case of one exercise; `ok` when all passed."""

    title: str
    results: tuple[CheckResult, ...]

    @property
    def ok(self) -> bool:
        return all(result.passed for result in self.results)

    def summary(self) -> str:
        passed = sum(result.passed for result in self.results)
        return f"{self.title}: {passed} of {len(self.results)} cases passed"

    def __repr__(self) -> str:
        rows = [self.summary()]
        for result in self.results:
            mark = "PASS" if result.passed else "FAIL"
            rows.append(
                f"  {mark} {result.name}" + ("" if result.passed else f" — {result.detail}")
            )
        return "\n".join(rows)

    def _repr_html_(self) -> str:
        items = "".join(
            f"<li style='color:{'#059669' if r.passed else '#dc2626'}'>"
            f"{'✔' if r.passed else '✘'} {escape(r.name)}"
            f"{'' if r.passed else ' — ' + escape(r.detail)}</li>"
            for r in self.results
        )
        return f"<p><b>{escape(self.summary())}</b></p><ul>{items}</ul>"


Outcome = tuple[str, Any]  # ("value", result) or ("error", "ExceptionType: message")


def outcome_of(function: Callable[..., Any], *args: Any) -> Outcome:
    """What a call gives: its value, or the exception it raised, as comparable data."""
    try:
        return ("value", function(*args))
    except Exception as err:  # a reader's bug is a failed case, not a crashed check
        return ("error", f"{type(err).__name__}: {err}")


def _show(outcome: Outcome, past: bool) -> str:
    kind, value = outcome
    verb = (
        ("raised" if past else "raise") if kind == "error" else ("returned" if past else "return")
    )
    return f"{verb} {value}" if kind == "error" else f"{verb} {value!r}"


def run_cases(
    title: str,
    theirs: Callable[..., Any],
    ours: Callable[..., Any],
    cases: Sequence[tuple[str, tuple[Any, ...]]],
    same: Callable[[Outcome, Outcome], bool] | None = None,
) -> CheckReport:
    """Run `theirs` and `ours` on every case's arguments and compare their outcomes.

    `same` decides equality (default: equal values, or errors of the same text).
    """
    equal = same or (lambda a, b: a == b)
    results = []
    for name, args in cases:
        expected, got = outcome_of(ours, *args), outcome_of(theirs, *args)
        passed = equal(expected, got)
        detail = "" if passed else f"should {_show(expected, False)}, but {_show(got, True)}"
        results.append(CheckResult(name, passed, detail))
    return CheckReport(title, tuple(results))
