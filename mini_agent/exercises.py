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

from .messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    record_line,
)
from .session import load_session, parse_session_message


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


def check_record_line(fn: Callable[[Any], Any]) -> CheckReport:
    """The reader's `record_line(message)` (the on-disk line, without its newline)."""
    cases = [(name, (message,)) for name, message in record_line_cases()]
    return run_cases("record_line", fn, record_line, cases, _same_or_both_refused)


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

_FORMAT_ERROR = re.compile(r"(invalid session (?:JSON|record) at line \d+)")


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
        report = run_cases("load_session", fn, load_session, cases, _same_load)
    hidden = [str(root) + os.sep, str(root)]
    results = []
    for result in report.results:
        detail = result.detail
        for text in hidden:
            detail = detail.replace(text, "")
        results.append(CheckResult(result.name, result.passed, detail))
    return CheckReport(report.title, tuple(results))
