"""Checks for the notebooks' exercises: run a reader's function on the chapter's cases.

Each `check_*` function takes the reader's own implementation, runs it on a table of cases,
compares with the package's answer, and returns a `CheckReport` that says what passed and
what failed (and why), without raising.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from ..context import context_units as _context_units
from ..context import estimate_context_chars as _estimate_context_chars
from ..context import trim_context as _trim_context
from ..messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    record_line,
)
from ..session import INVALID_JSON, INVALID_RECORD, load_session, parse_session_message
from .trace import label


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
    expect: Callable[[Outcome], str] | None = None,
) -> CheckReport:
    """Run `theirs` and `ours` on every case's arguments and compare their outcomes.

    `same` decides equality (default: equal values, or errors of the same text); `expect`
    words what a FAIL says the answer should do, as loosely as `same` judges it (default: the
    package's exact outcome).
    """
    equal = same or (lambda a, b: a == b)
    should = expect or (lambda outcome: _show(outcome, False))
    results = []
    for name, args in cases:
        expected, got = outcome_of(ours, *args), outcome_of(theirs, *args)
        passed = equal(expected, got)
        detail = "" if passed else f"should {should(expected)}, but {_show(got, True)}"
        results.append(CheckResult(name, passed, detail))
    return CheckReport(title, tuple(results))


# --- 01 JSONL 的判别式读取: the reader writes parse_session_message ------------------------

DISCRIMINATION_CASES: tuple[tuple[str, str], ...] = (
    ("not an object", "[]"),
    ("not an object", '"user"'),
    ("not an object", "null"),
    ("role missing", '{"content":"x"}'),
    ("role not a string", '{"role":1,"content":"x"}'),
    ("content missing", '{"role":"user"}'),
    ("content not a string", '{"role":"user","content":null}'),
    ("user", '{"role":"user","content":"x"}'),
    ("user, unknown extra key dropped", '{"role":"user","content":"x","extra":true}'),
    ("assistant, empty toolCalls", '{"role":"assistant","content":"x","toolCalls":[]}'),
    (
        "assistant with a call",
        '{"role":"assistant","content":"","toolCalls":[{"id":"a","name":"read","input":{"path":"a.txt"}}]}',
    ),
    ("assistant without toolCalls", '{"role":"assistant","content":"x"}'),
    ("tool", '{"role":"tool","content":"ok","toolCallId":"a","isError":false}'),
    ("tool error", '{"role":"tool","content":"boom","toolCallId":"a","isError":true}'),
    ("tool without toolCallId", '{"role":"tool","content":"x","isError":false}'),
    ("tool without isError", '{"role":"tool","content":"x","toolCallId":"a"}'),
    ("isError 0 is not a boolean", '{"role":"tool","content":"x","toolCallId":"a","isError":0}'),
    ("unknown role", '{"role":"nope","content":"x"}'),
    ("unknown role", '{"role":"system","content":"x"}'),
)
"""(what the row shows, one JSON line): the chapter's discrimination table, row by row."""

CALLS_CASES: tuple[tuple[str, str], ...] = (
    ("input may be null", '[{"id":"a","name":"now","input":null}]'),
    ("input key missing", '[{"id":"a","name":"read"}]'),
    ("id not a string", '[{"id":1,"name":"read","input":{}}]'),
    ("name not a string", '[{"id":"a","name":null,"input":{}}]'),
    ("item is null", "[null]"),
    ("item is an array", '[["a","read",{}]]'),
    ("second item bad", '[{"id":"a","name":"read","input":{}},{"id":"b","name":"read"}]'),
    ("toolCalls not an array", '{"id":"a","name":"read","input":{}}'),
    (
        "structure, not meaning",
        '[{"id":"a","name":"no_such_tool","input":1},{"id":"a","name":"no_such_tool","input":2}]',
    ),
)
"""(what the row shows, a toolCalls value): the chapter's calls() choices table."""


def assistant_with_calls(tool_calls: str) -> str:
    """An assistant JSON line whose `toolCalls` is the given JSON text."""
    return f'{{"role":"assistant","content":"","toolCalls":{tool_calls}}}'


def parse_cases() -> list[tuple[str, str]]:
    """(case name, JSON line) for every discrimination row and every calls() row."""
    rows = [(f"{line}  ({why})", line) for why, line in DISCRIMINATION_CASES]
    rows += [
        (f"toolCalls {value}  ({why})", assistant_with_calls(value)) for why, value in CALLS_CASES
    ]
    return rows


def check_parse_session_message(fn: Callable[[Any], Any]) -> CheckReport:
    """The reader's `parse_session_message(value)` against the package's, on parsed JSON."""
    cases = [(name, (json.loads(line),)) for name, line in parse_cases()]
    return run_cases("parse_session_message", fn, parse_session_message, cases)


# --- 02 写入与恢复的正常路径: the reader writes message -> on-disk line ----------------------


def record_line_cases() -> list[tuple[str, Message]]:
    """(case name, message) covering every role, non-ASCII, escapes and what JSON refuses."""
    return [
        ("user", UserMessage("hello")),
        ("user, Chinese written as itself", UserMessage("记忆续上了")),
        ("user, emoji written as itself", UserMessage("ok 👍")),
        ("user, newline inside content stays on one line", UserMessage("line one\nline two")),
        ("user, quotes and backslash escaped", UserMessage('say "hi" \\ bye')),
        ("assistant without calls: toolCalls []", AssistantMessage("done")),
        (
            "assistant with two calls",
            AssistantMessage(
                "reading both",
                (
                    ToolCall("a", "read", {"path": "a.txt"}),
                    ToolCall("b", "read", {"path": "b.txt"}),
                ),
            ),
        ),
        ("assistant, call input null", AssistantMessage("", (ToolCall("t", "now", None),))),
        ("tool result", ToolMessage("a", "contents of a")),
        ("tool error: isError true", ToolMessage("b", "file not found", is_error=True)),
        (
            "NaN in a tool input is refused",
            AssistantMessage("", (ToolCall("c", "calc", float("nan")),)),
        ),
    ]


def _same_or_both_refused(expected: Outcome, got: Outcome) -> bool:
    # Refusing is what matters, not the exception's wording.
    return expected[0] == got[0] == "error" or expected == got


def _any_refusal(expected: Outcome) -> str:
    return "raise (any exception)" if expected[0] == "error" else _show(expected, False)


def check_record_line(fn: Callable[[Any], Any]) -> CheckReport:
    """The reader's `record_line(message)` (the on-disk line, without its newline)."""
    cases = [(name, (message,)) for name, message in record_line_cases()]
    return run_cases("record_line", fn, record_line, cases, _same_or_both_refused, _any_refusal)


# --- 03 损坏记录的错误路径: the reader writes load_session -----------------------------------

_USER = '{"role":"user","content":"hi"}'
_ASSISTANT = '{"role":"assistant","content":"","toolCalls":[{"id":"a","name":"read","input":{"path":"a.txt"}}]}'
_TOOL = '{"role":"tool","content":"contents of a","toolCallId":"a","isError":false}'

LOAD_CASES: tuple[tuple[str, str | None], ...] = (
    ("missing file: []", None),
    ("empty file: []", ""),
    ("three valid lines", f"{_USER}\n{_ASSISTANT}\n{_TOOL}\n"),
    ("blank lines are skipped", f"\n{_USER}\n\n{_USER}\n"),
    ("last line without newline", f"{_USER}\n{_USER}"),
    ("line 2 truncated JSON", f'{_USER}\n{{"role":"assistant","cont\n'),
    ("line 2 assistant without toolCalls", f'{_USER}\n{{"role":"assistant","content":"x"}}\n'),
    (
        "line 2 tool without toolCallId",
        f'{_USER}\n{{"role":"tool","content":"x","isError":false}}\n',
    ),
    ("line 2 unknown role", f'{_USER}\n{{"role":"nope","content":"x"}}\n'),
    ("line 2 JSON but not an object", f"{_USER}\n[1,2]\n"),
    ("bad line 2 not skipped, good lines after", f"{_USER}\n{{\n{_USER}\n"),
    ("physical line number after blank lines", f"{_USER}\n\n\n[1,\n"),
    (
        "bad record after a blank line: physical line 3",
        f'{_USER}\n\n{{"role":"nope","content":"x"}}\n',
    ),
)
"""(case name, file text, or `None` for a file that does not exist)."""

# the chapter's two phrases, as session.py defines them, followed by the line number
_FORMAT_ERROR = re.compile(f"((?:{re.escape(INVALID_JSON)}|{re.escape(INVALID_RECORD)}) \\d+)")


def _same_load(expected: Outcome, got: Outcome) -> bool:
    """Same messages; for a format error the same phrase and line; else the same OS error."""
    if expected[0] == "value" or got[0] == "value":
        return expected == got
    expected_type, _, expected_text = str(expected[1]).partition(": ")
    got_type, _, got_text = str(got[1]).partition(": ")
    phrase = _FORMAT_ERROR.match(expected_text)
    if phrase is None:
        return expected_type == got_type
    return re.match(re.escape(phrase.group(1)) + r"(?!\d)", got_text) is not None


def _load_expectation(expected: Outcome) -> str:
    """A format error by its phrase and line (any exception type); an OS error exactly."""
    if expected[0] == "error":
        phrase = _FORMAT_ERROR.match(str(expected[1]).partition(": ")[2])
        if phrase is not None:
            return f"raise an error starting with '{phrase.group(1)}'"
    return _show(expected, False)


def check_load_session(fn: Callable[[Any], Any]) -> CheckReport:
    """The reader's `load_session(path)`: files written here, compared with the package's.

    A format error passes when the reader's message starts with the chapter's phrase and the
    same line number; the temp directory never appears in the report.
    """
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cases: list[tuple[str, tuple[Any, ...]]] = []
        for number, (name, text) in enumerate(LOAD_CASES, start=1):
            path = root / f"case{number}.jsonl"
            if text is not None:
                path.write_text(text, encoding="utf-8")
            cases.append((name, (path,)))
        (root / "a-directory").mkdir()
        cases.append(("path is a directory: the OS error propagates", (root / "a-directory",)))
        report = run_cases("load_session", fn, load_session, cases, _same_load, _load_expectation)
    hidden = [str(root) + os.sep, str(root)]
    results = []
    for result in report.results:
        detail = result.detail
        for text in hidden:
            detail = detail.replace(text, "")
        results.append(CheckResult(result.name, result.passed, detail))
    return CheckReport(report.title, tuple(results))


# --- notebooks 04-05 ---------------------------------------------------------------------------
# Checks for the exercises of 04_context_units and 05_character_budget. A reader's answer is
# compared with the package's on the chapter's cases; lists of messages are shown by their
# place in the case's history (`#1 assistant(a,b)`) so that a wrong unit is easy to spot.


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


def _message_expectation(expected: Outcome) -> str:
    if expected[0] == "error":
        return f"raise an error with the message '{str(expected[1]).split(': ', 1)[-1]}'"
    return _show(expected, False)


def check_context_units(function: Callable[[Sequence[Message]], Any]) -> CheckReport:
    """Check a reader's `context_units(messages)` (units oldest first) on the chapter's cases."""
    cases = [(name, (history,)) for name, history in _unit_cases()]
    return run_cases(
        "context_units",
        _shown(function),
        _shown(_context_units),
        cases,
        _same_text,
        _message_expectation,
    )


def check_estimate_context_chars(function: Callable[[Sequence[Message]], Any]) -> CheckReport:
    """Check a reader's `estimate_context_chars(messages)`: the characters of the JSONL lines."""
    cases: list[tuple[str, tuple[Any, ...]]] = [
        ("empty history", ([],)),
        ("one user message", ([UserMessage("hi")],)),
        ("a picture like the chapter's", (chapter_history(),)),
        ("Chinese and emoji count one character each", ([UserMessage("中文😀")],)),
        ("an error result", ([ToolMessage("a", "boom", is_error=True)],)),
    ]
    return run_cases(
        "estimate_context_chars",
        function,
        _estimate_context_chars,
        cases,
        _same_text,
        _message_expectation,
    )


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
    return run_cases(
        "trim_context",
        _shown(function),
        _shown(_trim_context),
        cases,
        _same_text,
        _message_expectation,
    )
