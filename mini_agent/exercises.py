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


# --- notebooks 04-05 ---------------------------------------------------------------------------
# Checks for the exercises of 04_context_units and 05_character_budget. A reader's answer is
# compared with the package's on the chapter's cases; lists of messages are shown by their
# place in the case's history (`#1 assistant(a,b)`) so that a wrong unit is easy to spot.

from .context import context_units as _context_units  # noqa: E402
from .context import estimate_context_chars as _estimate_context_chars  # noqa: E402
from .context import trim_context as _trim_context  # noqa: E402
from .messages import (  # noqa: E402
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    label,
)


def _read(*ids: str) -> AssistantMessage:
    return AssistantMessage(
        "reading", tuple(ToolCall(call_id, "read", {"path": f"{call_id}.txt"}) for call_id in ids)
    )


def _result(call_id: str) -> ToolMessage:
    return ToolMessage(call_id, f"contents of {call_id}")


def chapter_history() -> list[Message]:
    """The chapter's picture: [user] [assistant a,b] [tool a] [tool b]."""
    return [UserMessage("read two files"), _read("a", "b"), _result("a"), _result("b")]


def _unit_cases() -> list[tuple[str, list[Message]]]:
    return [
        ("empty history", []),
        ("one user message", [UserMessage("hi")]),
        (
            "plain chat, no tools",
            [UserMessage("hi"), AssistantMessage("hello"), UserMessage("bye")],
        ),
        ("the chapter's picture", chapter_history()),
        ("one call, one result", [UserMessage("q"), _read("a"), _result("a")]),
        ("orphan tool result stays alone", [UserMessage("q"), _result("x")]),
        (
            "orphan after a complete round",
            [UserMessage("q"), _read("a"), _result("a"), _result("zz")],
        ),
        (
            "a message between assistant and result is swept in",
            [_read("a"), UserMessage("interrupting"), _result("a")],
        ),
        (
            "repeated id: the nearest declaring assistant wins",
            [_read("a"), _result("a"), UserMessage("again"), _read("a"), _result("a")],
        ),
        ("assistant whose results never came", [UserMessage("q"), _read("a", "b")]),
        (
            "two rounds",
            [
                UserMessage("q"),
                _read("a"),
                _result("a"),
                AssistantMessage("done"),
                *chapter_history(),
            ],
        ),
    ]


class _Shown(list):  # type: ignore[type-arg]
    """A list of messages (or of units) that compares by value and prints by position."""

    def __init__(self, value: Any, history: Sequence[Message]) -> None:
        super().__init__(value)
        self.history = history

    def _tag(self, message: Any) -> str:
        for index, candidate in enumerate(self.history):
            if candidate is message:
                return f"#{index} {label(message)}"
        matches = [i for i, candidate in enumerate(self.history) if candidate == message]
        if matches:
            return f"#{matches[0]} {label(message)}"
        return repr(message)

    def __repr__(self) -> str:
        if all(isinstance(item, list) for item in self):
            return "[" + ", ".join("[" + ", ".join(map(self._tag, u)) + "]" for u in self) + "]"
        return "[" + ", ".join(map(self._tag, self)) + "]"


def _shown(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function`, its list answers wrapped to print by position in the history (args[0])."""

    def call(history: Sequence[Message], *rest: Any) -> Any:
        value = function(history, *rest)
        if isinstance(value, list) and all(
            isinstance(item, (list, *_MESSAGE_TYPES)) for item in value
        ):
            return _Shown(value, history)
        return value

    return call


_MESSAGE_TYPES = (UserMessage, AssistantMessage, ToolMessage)


def _same_text(expected: Outcome, got: Outcome) -> bool:
    """Equal values, or errors with the same message (any exception type will do)."""
    if expected[0] == got[0] == "error":
        return str(expected[1]).split(": ", 1)[-1] == str(got[1]).split(": ", 1)[-1]
    return expected == got


def check_context_units(function: Callable[[Sequence[Message]], Any]) -> CheckReport:
    """Check a reader's `context_units(messages)` (units oldest first) on the chapter's cases."""
    cases = [(name, (history,)) for name, history in _unit_cases()]
    return run_cases("context_units", _shown(function), _shown(_context_units), cases, _same_text)


def check_estimate_context_chars(function: Callable[[Sequence[Message]], Any]) -> CheckReport:
    """Check a reader's `estimate_context_chars(messages)`: the characters of the JSONL lines."""
    cases: list[tuple[str, tuple[Any, ...]]] = [
        ("empty history", ([],)),
        ("one user message", ([UserMessage("hi")],)),
        ("the chapter's picture", (chapter_history(),)),
        ("Chinese and emoji count one character each", ([UserMessage("中文😀")],)),
        ("an error result", ([ToolMessage("a", "boom", is_error=True)],)),
    ]
    return run_cases("estimate_context_chars", function, _estimate_context_chars, cases, _same_text)


def check_trim_context(function: Callable[[Sequence[Message], int], Any]) -> CheckReport:
    """Check a reader's `trim_context(messages, max_chars)` on budget edges and both errors."""
    picture = chapter_history()
    whole = _estimate_context_chars(picture)
    newest_unit = _estimate_context_chars(picture[1:])
    short_question = UserMessage("q")
    skip_trap: list[Message] = [short_question, AssistantMessage("a long answer " * 10), *picture]
    skip_budget = whole + _estimate_context_chars([short_question])
    orphaned: list[Message] = [UserMessage("q"), _result("x")]
    orphan_only = _estimate_context_chars(orphaned[1:])
    cases: list[tuple[str, tuple[Any, ...]]] = [
        ("budget holds everything", (picture, 10_000)),
        ("budget exactly the whole history", (picture, whole)),
        ("one character short: the oldest unit goes", (picture, whole - 1)),
        ("budget exactly the newest unit", (picture, newest_unit)),
        ("never half a unit: 200 holds both results but not their assistant", (picture, 200)),
        ("budget 100: the newest unit does not fit", (picture, 100)),
        ("budget 1", (picture, 1)),
        ("nothing to send: budget cannot be empty", ([], 100)),
        ("an orphan tool result can be kept alone", (orphaned, orphan_only)),
        ("stop at the first unit that does not fit, skip nothing", (skip_trap, skip_budget)),
    ]
    return run_cases("trim_context", _shown(function), _shown(_trim_context), cases, _same_text)
