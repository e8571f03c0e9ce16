"""Checks for the notebooks' exercises: run a reader's answer on the chapter's cases.

Every check is one call that returns a `CheckReport` (shown as a list of PASS/FAIL lines,
in Chinese), never raises, and passes the package's own answer:

    check_parse_session_message(fn)   01  fn(value) -> Message | None
    check_record_line(fn)             02  fn(message) -> str (the line, no newline)
    check_load_session(fn)            03  fn(path) -> list[Message]
    check_context_units(fn)           04  fn(messages) -> list[list[Message]]
    check_estimate_context_chars(fn)  05  fn(messages) -> int
    check_trim_context(fn)            05  fn(messages, max_chars) -> list[Message]
    check_context_max_chars(n)        06  a budget: does request 3 of 06's first run keep the
                                          user's question? (`smallest=True`: and no smaller
                                          budget would)
    check_record(fn)                  07  fn(messages, session_path, message) -> None, the
                                          loop's record(), in either order (the chapter's
                                          push-then-append, or disk first);
                                          `buggy.seeded_record` is the exercise's wrong one

A check handed something it cannot call as the exercise's function (a name in quotes, a
function with other parameters) runs no case: its report is one line saying why
(`CheckReport.refusal`). A reason repeated on several FAILs is shown in full once, then as
同上 (`CheckResult.hints`).

`report.ok` is True when every case passed. Reports name messages by their place in the
case's history (`#1 assistant(a,b)`), show strings as their text in quotes (`shown`: a
session line's `\\n` as the file holds it, not Python's doubled `\\\\n`) and never show a
temporary path.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import json
import os
import re
import sys
import tempfile
import types
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, fields, is_dataclass, replace
from pathlib import Path
from typing import Any, TypeVar, cast

from mini_agent.agent import run_agent
from mini_agent.context import EMPTY_CONTEXT, SMALLEST_UNIT_TOO_BIG, ContextBudgetError
from mini_agent.context import context_units as _context_units
from mini_agent.context import estimate_context_chars as _estimate_context_chars
from mini_agent.context import trim_context as _trim_context
from mini_agent.model_client import ScriptedClient
from mini_agent.session import (
    INVALID_JSON,
    INVALID_RECORD,
    AssistantMessage,
    Message,
    PathLike,
    ToolCall,
    ToolMessage,
    UserMessage,
    append_session,
    discriminate,
    load_session,
    parse_session_bytes,
    parse_session_lines,
    parse_session_message,
    record_line,
    to_record,
)
from mini_agent.visible import visible_line, visible_text

from . import demo06
from .buggy import Record
from .chapter_variants import chapter_load_session, chapter_stringify
from .glosses import gloss_shown, gloss_text
from .mistakes import (
    like_a_typescript_literal,
    units_adjacent_only,
    units_earliest_declarer,
    units_off_by_one,
)
from .samples import chapter_picture
from .style import page, palette, visible_html
from .text import FAIL, PASS, request_line, words
from .trace import label
from .watch import DiskWatchingClient, Watched

_Check = TypeVar("_Check", bound=Callable[..., "CheckReport"])
CRASHES_FOLDED = 3  # cases that raised one same error: the first is shown, the rest in a line


@dataclass(frozen=True)
class CheckResult:
    """One case: its name, whether the reader's answer matched, and what differed. `folded`:
    a FAIL for the same reason as one shown before it; a report shows all of them as one line
    (`Words.called_again`), where the first of them would be."""

    name: str
    passed: bool
    detail: str = ""
    folded: bool = False
    hints: tuple[tuple[str, str], ...] = ()
    """The reasons at the end of `detail`, each (the separator before it, its text): a report
    shows a reason in full the first time only (`Words.same_as_above`)."""
    crashed: str = ""
    """The error the answer raised where the case wanted a value (`Type: message`): when
    `CRASHES_FOLDED` or more cases raised the same, a report shows the first, then one line."""


def hinted(result: CheckResult, *reasons: str) -> CheckResult:
    """`result`, its detail followed by the `reasons` (the first after `：`, the rest `；`)."""
    said = [
        (("：" if n == 0 else "；"), reason) for n, reason in enumerate(r for r in reasons if r)
    ]
    if not said:
        return result
    detail = result.detail + "".join(sep + reason for sep, reason in said)
    return replace(result, detail=detail, hints=(*result.hints, *said))


@dataclass(frozen=True)
class CheckReport:
    """Every case of one exercise; `ok` when all passed. `notes`: what the check saw on the
    way (06's budget check lists each request), shown under the summary."""

    title: str
    results: tuple[CheckResult, ...]
    notes: tuple[str, ...] = ()
    refusal: str = ""
    """Why no case ran (the check was handed no function, or the wrong one): one line."""

    @property
    def ok(self) -> bool:
        return not self.refusal and all(result.passed for result in self.results)

    def summary(self) -> str:
        passed = sum(result.passed for result in self.results)
        return words().report_summary(self.title, passed, len(self.results))

    def shown_results(self) -> list[CheckResult]:
        """The results a report lists: the folded ones as one FAIL where the first of them
        would be, its name saying how many (`Words.called_again`)."""
        folded = sum(result.folded for result in self.results)
        crashes = Counter(r.crashed for r in self.results if r.crashed and not r.folded)
        rows: list[CheckResult] = []
        said: set[str] = set()  # the reasons shown in full so far
        for result in self.results:
            if result.folded:
                if not any(row.folded for row in rows):
                    rows.append(CheckResult(words().called_again(folded), False, "", folded=True))
                continue
            crashes_alike = crashes[result.crashed] >= CRASHES_FOLDED  # case after case
            if crashes_alike and result.crashed in said:
                continue
            if result.passed or not result.hints:
                rows.append(result)
            else:
                ending = "".join(sep + reason for sep, reason in result.hints)
                reasons = [sep + (words().same_as_above(reason) if reason in said else reason)
                           for sep, reason in result.hints]  # fmt: skip
                said.update(reason for _, reason in result.hints)
                rows.append(
                    replace(result, detail=result.detail.removesuffix(ending) + "".join(reasons))
                )
            if crashes_alike:  # the first of them shown, the others in one line
                said.add(result.crashed)
                more = words().crashed_again(crashes[result.crashed] - 1, result.crashed)
                rows.append(CheckResult(more, False))
        return rows

    def __repr__(self) -> str:
        if self.refusal:
            return visible_text(f"{self.title}：{self.refusal}")
        rows = [self.summary(), *(f"  {note}" for note in self.notes)]
        for result in self.shown_results():
            mark = PASS if result.passed else FAIL
            said = "" if result.passed or not result.detail else f" — {result.detail}"
            rows.append(f"  {mark} {result.name}{said}")
        return visible_text("\n".join(rows))

    def _repr_html_(self) -> str:
        colours = palette()
        if self.refusal:
            said = visible_html(f"{self.title}：{self.refusal}")
            return page(f"<p style='color:{colours.error}'><b>{said}</b></p>")
        notes = "".join(f"<div>{visible_html(note)}</div>" for note in self.notes)
        items = "".join(
            f"<li style='color:{colours.tool if r.passed else colours.error}'>"
            f"{'✔' if r.passed else '✘'} {PASS if r.passed else FAIL} {visible_html(r.name)}"
            f"{'' if r.passed or not r.detail else ' — ' + visible_html(r.detail)}</li>"
            for r in self.shown_results()
        )
        return page(f"<p><b>{visible_html(self.summary())}</b></p>{notes}<ul>{items}</ul>")

    def _ipython_display_(self) -> None:
        # a check shows its report itself (`_reported`); the cell's value shows it only elsewhere
        if getattr(self, "_shown_in_cell", None) != _cell_running():
            _publish(self)


# --- in a notebook, a check shows its report itself ------------------------------------------
# Only a cell's last value is shown: two checks in one cell would show one report. So each
# check displays its own, and the report it returns shows nothing more in that cell (it still
# shows when asked for in another). Which cell runs: IPython's pre_run_cell events, counted
# from the first check run in the kernel; outside IPython nothing is shown or hooked.


class _Cells:
    shell: object = None
    count = 0

    @classmethod
    def next(cls, *_: object) -> None:
        cls.count += 1


def _ipython() -> Any:
    ipython = sys.modules.get("IPython")  # never imported here: a script has no cells
    return None if ipython is None else ipython.get_ipython()


def _cell_running() -> int | None:
    shell = _ipython()
    if shell is None:
        return None
    if _Cells.shell is not shell:
        shell.events.register("pre_run_cell", _Cells.next)
        _Cells.shell = shell
    return _Cells.count


def _publish(report: CheckReport) -> None:
    from IPython.display import display

    bundle = {"text/plain": repr(report), "text/html": report._repr_html_()}
    display(bundle, raw=True)  # type: ignore[no-untyped-call]


_checking = 0  # checks running: only the outermost one shows its report


def _reported(check: _Check) -> _Check:
    """`check`, showing its report where it runs in a notebook cell."""

    @functools.wraps(check)
    def run(*args: Any, **kwargs: Any) -> CheckReport:
        global _checking
        _checking += 1
        try:
            report = check(*args, **kwargs)
        finally:
            _checking -= 1
        cell = _cell_running()
        if cell is not None and not _checking:
            _publish(report)
            object.__setattr__(report, "_shown_in_cell", cell)
        return report

    return cast(_Check, run)


def _takes(name: str, *parameters: str) -> Callable[[_Check], _Check]:
    """A check that first makes sure it was handed a function it can call as the exercise's
    `name(*parameters)`; if not, its report is one line saying so, and no case runs."""

    def decorate(check: _Check) -> _Check:
        @functools.wraps(check)
        def run(function: Any, *args: Any, **kwargs: Any) -> CheckReport:
            refusal = _refusal(function, name, parameters)
            if refusal:
                return CheckReport(name, (), refusal=refusal)
            return check(function, *args, **kwargs)

        return cast(_Check, run)

    return decorate


def _refusal(function: Any, name: str, parameters: Sequence[str]) -> str:
    """Why `function` cannot be called as `name(*parameters)`; "" when it can (or when its
    signature cannot be read: then the cases tell)."""
    w = words()
    if not callable(function):
        return w.not_a_function(shown(function))
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return ""
    try:
        signature.bind(*(None for _ in parameters))
    except TypeError:
        own = f"{getattr(function, '__name__', '')}{signature}"
        return w.wrong_parameters(f"{name}({', '.join(parameters)})", len(parameters), own)
    return ""


Outcome = tuple[str, Any]  # ("value", result) or ("error", "ExceptionType: message")


def outcome_of(function: Callable[..., Any], *args: Any) -> Outcome:
    """What a call gives: its value, or the exception it raised, as comparable data."""
    try:
        return ("value", function(*args))
    except Exception as err:  # a reader's bug is a failed case, not a crashed check
        return ("error", f"{type(err).__name__}: {err}")


def shown(value: Any) -> str:
    """A value as a report prints it: Python's repr, except that a string is its text between
    single quotes — `\\n` in a session line stays one backslash and an `n`, as in the file —
    with only invisible characters escaped (`visible_line`: a real newline shows as `\\n`)."""
    if isinstance(value, str):
        return f"'{visible_line(value, sys.maxsize)}'"
    if isinstance(value, (_Shown, _ShownTuple)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(map(shown, value)) + "]"
    if isinstance(value, tuple):
        items = ", ".join(map(shown, value))
        return f"({items},)" if len(value) == 1 else f"({items})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{shown(k)}: {shown(v)}" for k, v in value.items()) + "}"
    if is_dataclass(value) and not isinstance(value, type):
        items = ", ".join(
            f"{f.name}={shown(getattr(value, f.name))}" for f in fields(value) if f.repr
        )
        return f"{type(value).__name__}({items})"
    return repr(value)


def _shown_value(outcome: Outcome) -> str:
    kind, value = outcome
    if kind != "error":
        return shown(value)
    meaning = gloss_shown(str(value))
    return str(value) if meaning is None else f"{value}（释义：{meaning}）"


def _should(outcome: Outcome) -> str:
    return words().should(outcome[0], _shown_value(outcome))


def _but(outcome: Outcome) -> str:
    return words().but(outcome[0], _shown_value(outcome))


def _differing(expected: Outcome, got: Outcome) -> tuple[Outcome, Outcome]:
    """The two outcomes to print: as `shown` gives them, unless that hides their difference
    (a raw newline beside a written `\\n`), then as Python's repr."""
    if expected[0] != "value" or got[0] != "value" or shown(expected[1]) != shown(got[1]):
        return expected, got
    return (expected[0], _Repr(expected[1])), (got[0], _Repr(got[1]))


class _Repr:
    """A value that `shown` prints as Python's repr."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return repr(self.value)


def run_cases(
    title: str,
    theirs: Callable[..., Any],
    ours: Callable[..., Any],
    cases: Sequence[tuple[str, tuple[Any, ...]]],
    same: Callable[[Outcome, Outcome], bool] | None = None,
    expect: Callable[[Outcome], str] | None = None,
    why: Callable[[Outcome, Outcome], str | Sequence[str]] = lambda expected, got: "",
) -> CheckReport:
    """Run `theirs` and `ours` on every case's arguments and compare their outcomes.

    `same` decides equality (default: equal values of the same type, or errors of the same
    text); `expect` words what a FAIL says the answer should do, as loosely as `same` judges
    it (default: the package's exact outcome); `why`, given both outcomes, what a FAIL adds
    after them ("" for nothing).
    """
    equal = same or _strictly_equal
    should = expect or _should
    results = []
    for name, args in cases:
        expected, got = outcome_of(ours, *args), outcome_of(theirs, *args)
        passed = equal(expected, got)
        shown_expected, shown_got = _differing(expected, got)
        result = CheckResult(name, passed)
        if not passed:
            said = words().should_but(should(shown_expected), _but(shown_got))
            result = CheckResult(name, False, said, crashed=_crash(got))
            result = hinted(result, *_reasons(why(expected, got)))
        results.append(result)
    return CheckReport(title, tuple(results))


def _crash(got: Outcome) -> str:
    """The error of `got` when it is a crash (`ZeroDivisionError: …`), not one of the errors an
    answer raises on purpose for a bad line or budget; else ""."""
    kind = str(got[1]).partition(":")[0] if got[0] == "error" else ""
    return "" if kind in ("", *_RAISED_ON_PURPOSE, "SessionFormatError") else str(got[1])


def _reasons(said: str | Sequence[str]) -> tuple[str, ...]:
    return (said,) if isinstance(said, str) else tuple(said)


def _strictly_equal(expected: Outcome, got: Outcome) -> bool:
    """Equal, and of the same types all the way down: `1 == True`, but `isError: 1` is not
    `isError: true`."""
    return expected == got and _types(expected) == _types(got)


def _types(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_types(item) for item in value))
    if isinstance(value, dict):
        return tuple((key, _types(item)) for key, item in value.items())
    if isinstance(value, (UserMessage, AssistantMessage, ToolMessage, ToolCall)):
        return (type(value).__name__, tuple(_types(getattr(value, f.name)) for f in fields(value)))
    return type(value).__name__


# --- 01 JSONL 的判别式读取: the reader writes parse_session_message ------------------------

DISCRIMINATION_CASES: tuple[tuple[str, str], ...] = (
    ("不是对象", "[]"),
    ("不是对象", '"user"'),
    ("不是对象", "null"),
    ("缺少 role", '{"content":"x"}'),
    ("role 不是字符串", '{"role":1,"content":"x"}'),
    ("缺少 content", '{"role":"user"}'),
    ("content 不是字符串", '{"role":"user","content":null}'),
    ("user", '{"role":"user","content":"x"}'),
    ("user，多余的键被丢掉", '{"role":"user","content":"x","extra":true}'),
    ("assistant，toolCalls 为空数组", '{"role":"assistant","content":"x","toolCalls":[]}'),
    (
        "assistant，带一个调用",
        '{"role":"assistant","content":"","toolCalls":[{"id":"a","name":"read","input":{"path":"a.txt"}}]}',
    ),
    ("assistant 缺少 toolCalls", '{"role":"assistant","content":"x"}'),
    ("tool", '{"role":"tool","content":"ok","toolCallId":"a","isError":false}'),
    ("tool，错误结果", '{"role":"tool","content":"boom","toolCallId":"a","isError":true}'),
    ("content 是空字符串也合法：查类型，不查真假", '{"role":"user","content":""}'),
    (
        "toolCallId 是空字符串也合法：查类型，不查真假",
        '{"role":"tool","content":"x","toolCallId":"","isError":false}',
    ),
    ("tool 缺少 toolCallId", '{"role":"tool","content":"x","isError":false}'),
    ("tool 缺少 isError", '{"role":"tool","content":"x","toolCallId":"a"}'),
    ("isError 是 0，不是布尔值", '{"role":"tool","content":"x","toolCallId":"a","isError":0}'),
    ("isError 是 1，不是布尔值", '{"role":"tool","content":"x","toolCallId":"a","isError":1}'),
    (
        'isError 是字符串 "false"，不是布尔值',
        '{"role":"tool","content":"x","toolCallId":"a","isError":"false"}',
    ),
    ("isError 是 null", '{"role":"tool","content":"x","toolCallId":"a","isError":null}'),
    ("toolCallId 不是字符串", '{"role":"tool","content":"x","toolCallId":1,"isError":false}'),
    ("tool 的 content 不是字符串", '{"role":"tool","content":1,"toolCallId":"a","isError":false}'),
    # the row the chapter's table lacks (01's 最容易走错的第一处): content checked in one branch only
    (
        "assistant 的 content 不是字符串",
        '{"role":"assistant","content":null,"toolCalls":[]}',
    ),
    ("assistant 的 toolCalls 是 null", '{"role":"assistant","content":"x","toolCalls":null}'),
    ("未知 role", '{"role":"nope","content":"x"}'),
    ("未知 role", '{"role":"system","content":"x"}'),
    ("role 区分大小写", '{"role":"User","content":"x"}'),
)
"""(what the row shows, one JSON line): the chapter's discrimination table, row by row."""

CALLS_CASES: tuple[tuple[str, str], ...] = (
    ("input 可以是 null", '[{"id":"a","name":"now","input":null}]'),
    ("缺少 input 键", '[{"id":"a","name":"read"}]'),
    ("id 不是字符串", '[{"id":1,"name":"read","input":{}}]'),
    ("name 不是字符串", '[{"id":"a","name":null,"input":{}}]'),
    ("name 缺失", '[{"id":"a","input":{}}]'),
    ("id 是空字符串也合法：查类型，不查真假", '[{"id":"","name":"read","input":{}}]'),
    ("name 是空字符串也合法：查类型，不查真假", '[{"id":"a","name":"","input":{}}]'),
    ("某一项是 null", "[null]"),
    ("某一项是数组", '[["a","read",{}]]'),
    ("第二项不合格", '[{"id":"a","name":"read","input":{}},{"id":"b","name":"read"}]'),
    # the chapter's `value.every(...)`: a bad call after a good one that no KeyError gives away
    (
        "第一项合格，第二项的 id 不是字符串",
        '[{"id":"a","name":"read","input":{}},{"id":2,"name":"read","input":{}}]',
    ),
    ("toolCalls 不是数组", '{"id":"a","name":"read","input":{}}'),
    # an empty object or string iterates like an empty list: only a type check refuses them
    ("toolCalls 是空对象，不是数组", "{}"),
    ("toolCalls 是空字符串，不是数组", '""'),
    (
        "只查结构，不查含义",
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


class _Unchecked(type):
    """The metaclass of the constructors `with_unchecked_messages` hands a reader's answer:
    `isinstance(message, UserMessage)` still holds there for the kit's own messages."""

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls.__bases__[0])


def _unchecked(kind: type[Any]) -> type[Any]:
    """`kind`, called the same way, making the same message (of the kit's own class, so it
    compares equal) without checking a field, as TypeScript's object literal does; a list of
    tool calls becomes the tuple the kit's constructor keeps (a shape, not a check)."""
    signature = inspect.signature(kind.__init__)

    def __new__(cls: type[Any], *args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(None, *args, **kwargs)  # a wrong call still is a TypeError
        bound.apply_defaults()
        fields = dict(list(bound.arguments.items())[1:])  # without `self`
        if isinstance(fields.get("tool_calls"), list):
            fields["tool_calls"] = tuple(fields["tool_calls"])
        return like_a_typescript_literal(kind, **fields)

    namespace = {"__new__": __new__, "__module__": kind.__module__, "__doc__": kind.__doc__}
    return _Unchecked(kind.__name__, (kind,), namespace)


UNCHECKED: dict[type[Any], type[Any]] = {
    kind: _unchecked(kind) for kind in (UserMessage, AssistantMessage, ToolMessage, ToolCall)
}
"""The kit's message classes, and each one's constructor that checks nothing."""


class CalledTheAnswer(Exception):
    """Raised where a reader's answer calls the function the exercise asks it to write."""


REFUSED_CALLS: list[str] = []  # what the stand-ins refused in this check's run: `answer_hinted`


def _refusing(answer: Callable[..., Any] | str) -> Callable[..., Any]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        name = answer if isinstance(answer, str) else f"{answer.__module__}.{answer.__qualname__}"
        REFUSED_CALLS.append(name)  # seen even when the answer's own `except` swallows it
        raise CalledTheAnswer(name)

    return refuse


def _attributes_read(code: types.CodeType) -> set[str]:
    """The attribute (and global) names `code` and the functions inside it read."""
    inner = (c for c in code.co_consts if isinstance(c, types.CodeType))
    return set(code.co_names).union(*map(_attributes_read, inner))


def _handed_in(
    fn: types.FunctionType, answers: Sequence[Callable[..., Any]], attributes: Sequence[str]
) -> str | None:
    """What the reader handed in instead of writing it: the package's own function, or an
    answer's attribute (a message's `.line` is `record_line`)."""
    if any(fn is answer for answer in answers) and fn.__module__.startswith("mini_agent"):
        return f"{fn.__module__}.{fn.__qualname__}"
    read = _attributes_read(fn.__code__)
    return next((f"Message.{name}" for name in attributes if name in read), None)


def with_unchecked_messages(
    fn: Callable[..., Any], answers: Sequence[Callable[..., Any]] = ()
) -> Callable[..., Any]:
    """`fn` run where the names it reads for the kit's message classes (`UserMessage`,
    `AssistantMessage`, `ToolMessage`, `ToolCall`) are constructors that check nothing, like
    the chapter's object literals: a check the answer leaves to the constructors, or to a
    `try/except` around them, no longer stands in for its own (`in_exercise`)."""
    return in_exercise(fn, answers, unchecked_messages=True)


def in_exercise(
    fn: Callable[..., Any],
    answers: Sequence[Callable[..., Any]] = (),
    *,
    unchecked_messages: bool = False,
    attributes: Sequence[str] = (),
) -> Callable[..., Any]:
    """`fn` run where the `answers` (the function the exercise asks for, the package's and
    the chapter's), by name or as a module's attribute, raise `CalledTheAnswer` (as does `fn`
    itself when it is the package's answer, or reads one of `attributes`); with
    `unchecked_messages`, where the kit's message classes are `UNCHECKED`'s constructors.
    Its helpers (functions of the same namespace) are run the same way; the namespace itself
    is copied, never changed. Anything but a plain function (a `functools.partial`, a
    builtin) is returned as it is."""
    if not isinstance(fn, types.FunctionType):
        return fn
    if (handed_in := _handed_in(fn, answers, attributes)) is not None:
        return _refusing(handed_in)
    if any(fn is answer for answer in answers):
        return fn  # the chapter's variant, graded as an answer
    original = fn.__globals__
    names = dict(original)
    for name, value in original.items():
        for kind, unchecked in UNCHECKED.items() if unchecked_messages else ():
            if value is kind:
                names[name] = unchecked
        for answer in answers:
            if value is answer:
                names[name] = _refusing(answer)
        if isinstance(value, types.ModuleType):  # `mini_agent.UserMessage`, `session.calls`
            swaps: dict[str, Any] = {
                attribute: _refusing(held)
                for attribute, held in vars(value).items()
                if any(held is answer for answer in answers)
            }
            for attribute, held in vars(value).items() if unchecked_messages else ():
                if isinstance(held, type) and held in UNCHECKED:
                    swaps[attribute] = UNCHECKED[held]
            if swaps:
                module = types.ModuleType(value.__name__)  # a copy: the module is left alone
                vars(module).update(vars(value), **swaps)
                names[name] = module

    def rebound(function: types.FunctionType) -> types.FunctionType:
        copy = types.FunctionType(
            function.__code__, names, function.__name__, function.__defaults__, function.__closure__
        )
        copy.__kwdefaults__ = function.__kwdefaults__
        return copy

    for name, value in original.items():
        if isinstance(value, types.FunctionType) and value.__globals__ is original:
            names[name] = rebound(value)
    return rebound(fn)


def _wrong_fields(value: Any) -> bool:
    """A message (or a call in it) whose fields the kit's constructors would have refused."""
    if isinstance(value, AssistantMessage):
        calls = value.tool_calls
        return (
            not isinstance(value.content, str)
            or not isinstance(calls, tuple)
            or any(not isinstance(call, ToolCall) or _wrong_fields(call) for call in calls)
        )
    if isinstance(value, ToolCall):
        return not (isinstance(value.id, str) and isinstance(value.name, str))
    if isinstance(value, ToolMessage):
        return not (
            isinstance(value.tool_call_id, str)
            and isinstance(value.content, str)
            and type(value.is_error) is bool
        )
    return isinstance(value, UserMessage) and not isinstance(value.content, str)


def _holds_dicts(value: Any) -> bool:
    """A dict where a message belongs, or an assistant whose calls are dicts."""
    if isinstance(value, dict):
        return True
    calls = value.tool_calls if isinstance(value, AssistantMessage) else ()
    return isinstance(calls, (list, tuple)) and any(isinstance(call, dict) for call in calls)


def _first_call_only(value: Any, answer: Callable[[Any], Any]) -> bool:
    """`value` an assistant whose first call passes and a later one does not, and `answer`
    refuses those later calls on their own: it checked the first call only (`every`)."""
    raw = value.get("toolCalls") if isinstance(value, dict) else None
    if not isinstance(raw, list) or len(raw) < 2:
        return False
    first, rest = {**value, "toolCalls": raw[:1]}, {**value, "toolCalls": raw[1:]}
    if parse_session_message(first) is None or parse_session_message(rest) is not None:
        return False
    return outcome_of(answer, rest) == ("value", None)


def _parse_why(
    expected: Outcome, got: Outcome, checked: Outcome, value: Any, answer: Callable[[Any], Any]
) -> str:
    """What a FAIL of `parse_session_message` on `value` adds (`got`: the outcome of `answer`,
    the reader's with unchecked constructors, `checked`: with the kit's): the constructors'
    TypeError, caught, standing in for the answer's own check; only the first call checked; a
    dict for a message; an int let through as isError; a message with a wrong field, which no
    constructor refuses here; "" for anything else."""
    w = words()
    if _strictly_equal(expected, checked):
        return w.leaning_on_constructors
    if _first_call_only(value, answer):
        return w.calls_every
    raised = str(got[1]).partition(":")[0] if got[0] == "error" else ""
    if expected == ("value", None) and raised in _RAISED_ON_PURPOSE:  # on purpose: no crash
        return w.parser_never_raises
    if got[0] != "value":
        return ""
    given, value = value, got[1]
    calls = given.get("toolCalls") if isinstance(given, dict) else None
    odd_input = isinstance(calls, list) and any(  # null, a number: any JSON, not only objects
        isinstance(c, dict) and "input" in c and not isinstance(c["input"], dict) for c in calls
    )
    if value is None and expected[1] is not None and _filled(given) != given:
        kind, message = outcome_of(answer, _filled(given))
        if kind == "value" and message is not None:  # with "x" for each "" it makes the message
            return w.empty_string_falsy
    if value is None and expected == ("value", expected[1]) and expected[1] and odd_input:
        objects = [{**c, "input": {}} if isinstance(c, dict) else c for c in calls or ()]
        kind, message = outcome_of(answer, {**given, "toolCalls": objects})
        if kind == "value" and message is not None:  # with {} for each input it makes the message
            return w.input_may_be_null  # `.get("input") is not None`: the key's value, not the key
    roles = ("user", "assistant", "tool")
    taken = value is not None and isinstance(given, dict) and given.get("role") not in roles
    if expected == ("value", None) and taken:
        return w.unknown_role_taken  # a fallback branch: what the chapter's 没有兜底 rules out
    if _holds_dicts(value) and (expected[0] == "value" and expected[1] is not None):
        return w.message_as_dict
    if isinstance(value, ToolMessage) and type(value.is_error) is int:
        return w.is_error_int
    if isinstance(value, (AssistantMessage, ToolMessage)) and not isinstance(value.content, str):
        return w.content_in_one_branch  # checked for user (or none), not before the dispatch
    if _wrong_fields(value):
        return w.unchecked_field
    raw = given.get("toolCalls") if isinstance(given, dict) else None
    if isinstance(value, AssistantMessage) and isinstance(raw, (dict, str)):
        return w.calls_not_array  # iterated as if it were a list
    return ""


def _filled(value: Any) -> Any:
    """`value` with "x" for each empty string in it: what an answer that tests `if x:` accepts."""
    if isinstance(value, dict):
        return {key: _filled(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_filled(item) for item in value]
    return "x" if value == "" else value


@_reported
@_takes("parse_session_message", "value")
def check_parse_session_message(fn: Callable[[Any], Any]) -> CheckReport:
    """The reader's `parse_session_message(value)` against the package's, on parsed JSON.

    The answer runs with constructors that check nothing (`with_unchecked_messages`), as the
    chapter's object literals do: its own checks are what the exercise asks for; calling the
    package's `parse_session_message` instead raises `CalledTheAnswer`. It also runs
    with the kit's, so that a FAIL can say when their `TypeError` was standing in for a check.
    """
    cases = [(name, (json.loads(line),)) for name, line in parse_cases()]
    answers = (parse_session_message, discriminate)
    REFUSED_CALLS.clear()
    unchecked, guarded = with_unchecked_messages(fn, answers), in_exercise(fn, answers)
    checked: list[tuple[Outcome, Any]] = []

    def theirs(value: Any) -> Any:
        checked.append((outcome_of(guarded, value), value))  # `why` reads it after this case
        return unchecked(value)

    report = run_cases(
        "parse_session_message",
        theirs,
        parse_session_message,
        cases,
        _strictly_equal,
        _should,
        lambda expected, got: _parse_why(expected, got, *checked[-1], unchecked),
    )
    return answer_hinted(report)


def answer_hinted(report: CheckReport) -> CheckReport:
    """`report`, its first FAIL where the answer called the function it should write (its
    `CalledTheAnswer`) followed by `Words.called_the_answer`, the others like it folded into
    one line; a note when the answer swallowed that error in an `except` of its own."""
    said, results = f"{CalledTheAnswer.__name__}: ", list[CheckResult]()
    refused, notes = sorted(set(REFUSED_CALLS)), report.notes
    REFUSED_CALLS.clear()
    if refused and not any(said in r.detail for r in report.results):
        notes = (*notes, words().called_and_swallowed("、".join(refused)))
    for r in report.results:
        if not r.passed and said in r.detail:  # the whole hint once, the rest in one line
            if any(said in result.detail for result in results):
                r = CheckResult(r.name, r.passed, r.detail, folded=True)
            else:
                r = hinted(r, words().called_the_answer)
        results.append(r)
    return CheckReport(report.title, tuple(results), notes)


def _guarded(
    *answers: Callable[..., Any], attributes: Sequence[str] = ()
) -> Callable[[_Check], _Check]:
    """A check whose reader's function (its first argument) runs `in_exercise`: calling the
    `answers` fails, and the report says why (`answer_hinted`)."""

    def decorate(check: _Check) -> _Check:
        @functools.wraps(check)
        def run(function: Callable[..., Any], *args: Any, **kwargs: Any) -> CheckReport:
            REFUSED_CALLS.clear()
            reader = in_exercise(function, answers, attributes=attributes)
            return answer_hinted(check(reader, *args, **kwargs))

        return cast(_Check, run)

    return decorate


def run_either(
    title: str,
    theirs: Callable[..., Any],
    ours: Callable[..., Any],
    chapters: Callable[..., Any],
    cases: Sequence[tuple[str, tuple[Any, ...]]],
    same: Callable[[Outcome, Outcome], bool],
    expect: Callable[[Outcome], str],
    why: Callable[[Outcome, Outcome, Outcome], str | Sequence[str]] = (
        lambda expected, got, chapter: ""
    ),
) -> CheckReport:
    """`run_cases` with two right answers: the package's (`ours`) and the chapter's literal
    one (`chapters`). Where the kit differs on purpose, agreeing with either passes, and a
    FAIL names both, then what `why` says of the package's outcome, the reader's and the
    chapter's."""
    results = []
    for name, args in cases:
        got = outcome_of(theirs, *args)
        expected, chapter = outcome_of(ours, *args), outcome_of(chapters, *args)
        passed = same(expected, got) or same(chapter, got)
        result = CheckResult(name, passed)
        if not passed:
            shown_expected, shown_got = _differing(expected, got)
            should = expect(shown_expected)
            if not same(expected, chapter):
                should += "，或照本章" + expect(_differing(chapter, got)[0]).removeprefix("应当")
            said = words().should_but(should, _but(shown_got))
            result = CheckResult(name, False, said, crashed=_crash(got))
            result = hinted(result, *_reasons(why(expected, got, chapter)))
        results.append(result)
    return CheckReport(title, tuple(results))


# --- 02 写入与恢复的正常路径: the reader writes message -> on-disk line ----------------------


def record_line_cases() -> list[tuple[str, Message]]:
    """(case name, message) covering every role, non-ASCII, escapes and what JSON refuses."""
    return [
        ("user", UserMessage("hello")),
        ("user，中文原样写出", UserMessage("记忆续上了")),
        ("user，emoji 原样写出", UserMessage("ok 👍")),
        ("user，内容里的换行仍在同一行", UserMessage("第一行\n第二行")),
        ("user，引号和反斜杠被转义", UserMessage('say "hi" \\ bye')),
        ("没有调用的 assistant：toolCalls []", AssistantMessage("done")),
        (
            "assistant，带两个调用",
            AssistantMessage(
                "两个都读一下",
                (
                    ToolCall("a", "read", {"path": "a.txt"}),
                    ToolCall("b", "read", {"path": "b.txt"}),
                ),
            ),
        ),
        ("assistant，调用的 input 是 null", AssistantMessage("", (ToolCall("t", "now", None),))),
        ("tool 结果", ToolMessage("a", "a 的内容")),
        ("tool 错误：isError true", ToolMessage("b", "文件不存在", is_error=True)),
        (  # what JavaScript writes otherwise than json.dumps (07a's table; 1e21: alike)
            "工具输入里的小数：JSON.stringify 写 1 和 1e-7，json.dumps 写 1.0 和 1e-07，都算对",
            AssistantMessage("", (ToolCall("d", "scale", {"factor": 1.0, "epsilon": 1e-7}),)),
        ),
        (
            "工具输入里的 NaN：本包拒绝，本章写成 null",
            AssistantMessage("", (ToolCall("c", "calc", float("nan")),)),
        ),
    ]


def _same_or_both_refused(expected: Outcome, got: Outcome) -> bool:
    # Refusing is what matters, not the exception's wording (calling the answer is no refusal).
    called = CalledTheAnswer.__name__ in str(got[1])
    return (expected[0] == got[0] == "error" and not called) or expected == got


def python_form(message: Message) -> str:
    """The line `json.dumps` writes with JSON.stringify's settings: the same as the package's
    but for numbers (`1.0`, `1e-07` where JavaScript writes `1`, `1e-7`)."""
    return json.dumps(
        to_record(message), ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )


def _any_refusal(expected: Outcome) -> str:
    return words().any_exception if expected[0] == "error" else _should(expected)


def _other_key_order(ours: Any, theirs: Any) -> tuple[list[str], list[str]] | None:
    """In two equal JSON values, the first object (outermost first) whose keys come in another
    order: (its keys in `theirs`, in `ours`); `None` when every order is the same."""
    pending = [(ours, theirs)]
    while pending:
        a, b = pending.pop(0)
        if isinstance(a, dict) and isinstance(b, dict):
            if list(a) != list(b):
                return list(b), list(a)
            pending.extend((a[key], b[key]) for key in a)
        elif isinstance(a, list) and isinstance(b, list):
            pending.extend(zip(a, b, strict=True))
    return None


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NO_SPACE = str.maketrans("", "", " \t\r\n")
_NON_ASCII_ESCAPE = re.compile(r"\\u(?:00[89a-fA-F][0-9a-fA-F]|0[1-9a-fA-F]\w\w|[1-9a-fA-F]\w{3})")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")


def _line_differences(expected: Outcome, got: Outcome) -> str | list[str]:
    """When the reader's line is the package's JSON written another way, what the way is: a
    newline at the end, spaces between the tokens (`json.dumps`' default separators),
    `\\uXXXX` for text JavaScript writes as itself (`ensure_ascii`), keys in another order;
    "" when the JSON itself differs (the FAIL's two lines say how)."""
    w = words()
    if got[0] != "value" or not isinstance(got[1], str):
        return ""
    if expected[0] != "value":  # the package refuses NaN; json.dumps writes it by default
        return w.line_nan if "NaN" in got[1] else ""
    line, theirs = expected[1], got[1]
    notes = []
    if theirs.endswith("\n") and not line.endswith("\n"):
        notes.append(w.line_newline)
        theirs = theirs.rstrip("\r\n")
    try:
        ours_value, their_value = json.loads(line), json.loads(theirs)
    except ValueError:
        return notes
    if ours_value != their_value:  # dicts compare without their order; 1.0 == 1
        notes += _key_notes(ours_value, their_value)
    if _JSON_STRING.sub("", theirs) != _JSON_STRING.sub("", theirs).translate(_NO_SPACE):
        notes.append(w.line_spaces)
    if len(_NON_ASCII_ESCAPE.findall(theirs)) > len(_NON_ASCII_ESCAPE.findall(line)):
        notes.append(w.line_ascii)
    if ours_value != their_value:
        return notes
    if _NUMBER.findall(_JSON_STRING.sub("", theirs)) != _NUMBER.findall(_JSON_STRING.sub("", line)):
        notes.append(w.line_floats)
    orders = _other_key_order(ours_value, their_value)
    if orders is not None:
        notes.append(w.only_key_order(*orders))
    return notes


def _key_notes(ours: Any, theirs: Any) -> list[str]:
    """What a record's keys lack or add beside the package's: snake_case names (the disk keeps
    the chapter's camelCase), a missing `toolCalls` of a call-less assistant, any other key."""
    if not isinstance(ours, dict) or not isinstance(theirs, dict):
        return []
    w = words()
    missing = [key for key in ours if key not in theirs]
    extra = [key for key in theirs if key not in ours]
    notes = []
    if any("_" in key for key in extra):
        notes.append(w.line_snake_case)
    elif missing == ["toolCalls"] and ours["toolCalls"] == []:
        notes.append(w.line_empty_calls)
    elif missing:
        notes.append(w.line_missing(missing))
    return notes


@_reported
@_takes("record_line", "message")
@_guarded(record_line, chapter_stringify, to_record, attributes=("line",))
def check_record_line(fn: Callable[[Any], Any]) -> CheckReport:
    """The reader's `record_line(message)` (the on-disk line, without its newline): the
    package's line, or the chapter's `JSON.stringify` (NaN written as null). A line that
    differs only in the order of its keys fails, and says so: the chapter elides the message
    literals, and the order is the package's inference (02 says so). A line that is the same
    JSON written another way says which way (`_line_differences`)."""
    messages = [message for _, message in record_line_cases()]
    cases = [(name, (message,)) for name, message in record_line_cases()]
    # numbers json.dumps writes otherwise (1.0 for 1): Python's, not the chapter's, so they
    # pass, and a note says where the package writes them as JavaScript does
    pythons = {line: python_form(m) for m in messages if (line := _line_or_none(m)) is not None}
    pythons = {line: form for line, form in pythons.items() if form != line}
    differing = [m for m in messages if _line_or_none(m) in pythons]

    def same(expected: Outcome, got: Outcome) -> bool:
        floats = expected[0] == got[0] == "value" and pythons.get(expected[1]) == got[1]
        return floats or _same_or_both_refused(expected, got)

    report = run_either(
        "record_line",
        fn,
        record_line,
        chapter_stringify,
        cases,
        same,
        _any_refusal,
        lambda expected, got, chapter: _line_differences(expected, got),
    )
    floats = any(outcome_of(fn, m) == ("value", python_form(m)) for m in differing)
    return CheckReport(report.title, report.results, (words().line_floats,) if floats else ())


def _line_or_none(message: Message) -> str | None:
    try:
        return record_line(message)
    except ValueError:  # NaN: the package refuses it
        return None


# --- 03 损坏记录的错误路径: the reader writes load_session -----------------------------------

_USER = '{"role":"user","content":"hi"}'
_ASSISTANT = '{"role":"assistant","content":"","toolCalls":[{"id":"a","name":"read","input":{"path":"a.txt"}}]}'
_TOOL = '{"role":"tool","content":"a 的内容","toolCallId":"a","isError":false}'

_LONE_CR = "两条记录之间只有一个 \\r：不是换行，第 1 行不是合法的 JSON"
_SKIPPED = "坏的第 2 行不会被跳过，即使后面还有好行"
_SPACES = "只有空格的一行不算空行"  # a FAIL says why: `Words.spaces_not_blank`
_BLANK_THEN_BAD = (  # where the two numberings differ: the kit's physical line, the chapter's
    "空行之后的坏行：物理行 4，或照本章数非空行：第 2 行",
    "空行之后的坏记录：物理行 3，或照本章数非空行：第 2 行",
)

LOAD_CASES: tuple[tuple[str, str | None], ...] = (
    ("文件不存在：[]", None),
    ("空文件：[]", ""),
    ("三行合法记录", f"{_USER}\n{_ASSISTANT}\n{_TOOL}\n"),
    ("空行被跳过", f"\n{_USER}\n\n{_USER}\n"),
    ("最后一行没有换行", f"{_USER}\n{_USER}"),
    ("第 2 行 JSON 被截断", f'{_USER}\n{{"role":"assistant","cont\n'),
    ("第 2 行 assistant 缺少 toolCalls", f'{_USER}\n{{"role":"assistant","content":"x"}}\n'),
    (
        "第 2 行 tool 缺少 toolCallId",
        f'{_USER}\n{{"role":"tool","content":"x","isError":false}}\n',
    ),
    ("第 2 行 role 未知", f'{_USER}\n{{"role":"nope","content":"x"}}\n'),
    ("第 2 行是 JSON，但不是对象", f"{_USER}\n[1,2]\n"),
    (_SKIPPED, f"{_USER}\n{{\n{_USER}\n"),
    (_BLANK_THEN_BAD[0], f"{_USER}\n\n\n[1,\n"),
    (_BLANK_THEN_BAD[1], f'{_USER}\n\n{{"role":"nope","content":"x"}}\n'),
    (_SPACES, f"{_USER}\n   \n"),
    ("内容里有原样的 U+2028：只按 \\n 分行", f'{{"role":"user","content":"a\u2028b"}}\n{_USER}\n'),
    (_LONE_CR, f"{_USER}\r{_USER}\n"),
)
"""(case name, file text, or `None` for a file that does not exist)."""

# the chapter's two phrases, as session.py defines them, followed by the line number
_FORMAT_ERROR = re.compile(f"((?:{re.escape(INVALID_JSON)}|{re.escape(INVALID_RECORD)}) \\d+)")


def _same_load(expected: Outcome, got: Outcome) -> bool:
    """Same messages; for a format error the same phrase and line; else an OS error let through
    (any kind: opening a directory is IsADirectoryError on POSIX, PermissionError on Windows)."""
    if expected[0] == "value" or got[0] == "value":
        return expected == got
    expected_type, _, expected_text = str(expected[1]).partition(": ")
    got_type, _, got_text = str(got[1]).partition(": ")
    phrase = _FORMAT_ERROR.match(expected_text)
    if phrase is None:
        return _is_os_error(got_type) if _is_os_error(expected_type) else expected_type == got_type
    return re.match(re.escape(phrase.group(1)) + r"(?!\d)", got_text) is not None


def _is_os_error(name: str) -> bool:
    kind = getattr(builtins, name, None)
    return isinstance(kind, type) and issubclass(kind, OSError)


def _load_expectation(expected: Outcome) -> str:
    """A format error by its phrase and line (any exception type); an OS error exactly."""
    if expected[0] == "error":
        phrase = _FORMAT_ERROR.match(str(expected[1]).partition(": ")[2])
        if phrase is not None:
            return words().should_raise_starting(phrase.group(1), gloss_text(phrase.group(1)))
    return _should(expected)


def _phrase_and_line(outcome: Outcome) -> tuple[str, int] | None:
    """A raised error's chapter phrase and line number, when its message starts with them."""
    if outcome[0] != "error":
        return None
    found = _FORMAT_ERROR.match(str(outcome[1]).partition(": ")[2])
    if found is None:
        return None
    phrase, _, number = found.group(1).rpartition(" ")
    return phrase, int(number)


def _load_why(expected: Outcome, got: Outcome, chapter: Outcome, skips: bool = False) -> str:
    """What a FAIL of `load_session` adds: an OS error other than a missing file read as an
    empty session; a message not in the chapter's words; line 0, or a line one less than the
    kit's or the chapter's (lines counted from 0); else `_lone_cr_why`; else, from an answer
    that `skips` bad lines, a bad line read back as no message."""
    w = words()
    if expected[0] == "error" and got == ("value", []):
        kind = str(expected[1]).partition(": ")[0]
        if _is_os_error(kind) and kind != FileNotFoundError.__name__:
            return w.only_missing_file_is_empty
    wanted = [_phrase_and_line(expected), _phrase_and_line(chapter)]
    if wanted[0] is not None and got[0] == "error" and _phrase_and_line(got) is None:
        message = str(got[1]).partition(": ")[2]
        if not message.startswith((INVALID_JSON, INVALID_RECORD)):
            return w.chapter_phrase
    said = _phrase_and_line(got)
    if said is not None and wanted[0] is not None and said[0] != wanted[0][0]:
        return w.phrases_swapped  # the other layer's phrase: JSON for record, or record for JSON
    if said is not None and said[1] == 0:
        return w.line_zero
    if said is not None and any(want == (said[0], said[1] + 1) for want in wanted):
        return w.line_numbers_from_one
    if note := _lone_cr_why(expected, got, skips):
        return note
    if got[0] == "value" and isinstance(got[1], list) and None in got[1]:
        return w.none_in_messages  # parse_session_message's None appended, not raised
    record_skipped = wanted[0] is not None and wanted[0][0] == INVALID_RECORD  # a record, too
    if (skips or record_skipped) and wanted[0] is not None and got[0] == "value":
        return w.bad_line_skipped if isinstance(got[1], list) else ""
    return ""


def _lone_cr_why(expected: Outcome, got: Outcome, skips: bool = False) -> str:
    """The note for a lone `\r` read as a line break (`read_text`, `splitlines`): two messages
    where line 1 is not JSON; for a U+2028 read as one (`splitlines`): line 1 not JSON where
    it is; "" for any other failure (a wrong phrase has its own FAIL)."""
    split_at_cr = got[0] == "value" and isinstance(got[1], list) and len(got[1]) == 2
    line_one = expected[0] == "error" and f"{INVALID_JSON} 1:" in str(expected[1])
    if split_at_cr and line_one:
        return words().lone_carriage_return
    held = expected[0] == "value" and any("\u2028" in m.content for m in expected[1])
    split_at_u2028 = got[0] == "error" and f"{INVALID_JSON} 1:" in f"{got[1]}:"  # its first half
    if skips and got[0] == "value" and isinstance(got[1], list):  # its halves skipped
        split_at_u2028 = not any("\u2028" in getattr(m, "content", "") for m in got[1])
    return words().split_at_u2028 if held and split_at_u2028 else ""


@_reported
@_takes("load_session", "path")
@_guarded(load_session, chapter_load_session, parse_session_lines, parse_session_bytes)
def check_load_session(fn: Callable[[Any], Any]) -> CheckReport:
    """The reader's `load_session(path)`: files written here, compared with the package's and
    the chapter's (`chapter_load_session`: `split("\\n").filter(Boolean)` numbers non-blank lines).

    A format error passes when the reader's message starts with the chapter's phrase and the
    same line number as either; the temp directory never appears in the report.
    """
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cases: list[tuple[str, tuple[Any, ...]]] = []
        for number, (name, text) in enumerate(LOAD_CASES, start=1):
            path = root / f"case{number}.jsonl"
            if text is not None:  # bytes: write_text would turn each \n into \r\n on Windows
                path.write_bytes(text.encode("utf-8"))
            cases.append((name, (path,)))
        (root / "a-directory").mkdir()
        cases.append(("路径是目录：操作系统错误照常抛出", (root / "a-directory",)))
        # a bad line between good ones read back as messages: the answer skips bad lines
        (bad,) = [args for name, args in cases if name == _SKIPPED]
        skipped = outcome_of(fn, *bad)
        skips = skipped[0] == "value" and isinstance(skipped[1], list) and len(skipped[1]) > 0
        report = run_either(
            "load_session",
            fn,
            load_session,
            chapter_load_session,
            cases,
            _same_load,
            _load_expectation,
            lambda expected, got, chapter: _load_why(expected, got, chapter, skips),
        )
        numbering = _one_numbering(fn, [args for name, args in cases if name in _BLANK_THEN_BAD])
        blank_met = {name for name, (path,) in cases if _stops_at_a_blank_line(fn, path)}
        nan = root / "nan.jsonl"  # json.loads reads NaN, JSON.parse does not: noted, not counted
        nan.write_bytes(b'{"role":"user","content":"x","n":NaN}\n')
        reads_nan = outcome_of(fn, nan)[0] == "value"
        # the line of spaces read back as no message: it was skipped as a blank line
        (spaces,) = [args for name, args in cases if name == _SPACES]
        skipped_spaces = outcome_of(fn, *spaces)[0] == "value"
    # the folder as printed and inside a repr (where Windows' backslashes are doubled)
    hidden = [str(root) + os.sep, str(root)]
    hidden = [*(repr(text)[1:-1] for text in hidden), *hidden]
    w = words()
    zero = {w.line_numbers_from_one, w.line_zero}  # the answer numbers lines from 0
    from_zero = any(reason in zero for r in report.results for _, reason in r.hints)
    results = []
    for result in report.results:
        detail = result.detail
        for text in hidden:
            detail = detail.replace(text, "")
        result = replace(result, detail=detail)
        if not result.passed and result.name == _SPACES and skipped_spaces and not skips:
            result = hinted(result, w.spaces_not_blank)
        if not result.passed and result.name in blank_met and not result.hints:
            result = hinted(result, w.blank_line_not_skipped)
        if result.passed and from_zero and result.name in _BLANK_THEN_BAD:
            result = CheckResult(result.name, False, w.from_zero_by_chance)  # one blank line: -1
        results.append(result)
    passed = numbering.passed and all(result.passed for result in results)
    notes = (w.load_reads_nan,) if reads_nan and passed else ()  # once the rest is right
    return CheckReport(report.title, (*results, numbering), (*report.notes, *notes))


def _stops_at_a_blank_line(fn: Callable[[Any], Any], path: Path) -> bool:
    """The answer refuses an empty line of the file at `path` as JSON (no `filter(Boolean)`)."""
    said = _phrase_and_line(outcome_of(fn, path))
    if said is None or said[0] != INVALID_JSON or not path.is_file():
        return False
    lines = path.read_bytes().split(b"\n")
    return 0 < said[1] <= len(lines) and lines[said[1] - 1] == b""


def _one_numbering(fn: Callable[[Any], Any], cases: Sequence[tuple[Any, ...]]) -> CheckResult:
    """The case that each passing answer to the blank-line cases numbers lines one way: the
    kit's physical lines for both errors, or the chapter's non-blank lines for both."""
    ways = []
    for args in cases:
        got = outcome_of(fn, *args)
        ways.append(
            {
                way
                for way, right in (("kit", load_session), ("chapter", chapter_load_session))
                if _same_load(outcome_of(right, *args), got)
            }
        )
    # an answer wrong in one of the cases already fails it: this case judges only the mix
    mixed = all(ways) and not set.intersection(*ways)
    return CheckResult(words().one_numbering, not mixed, words().mixed_numbering if mixed else "")


# --- notebooks 04-05 ---------------------------------------------------------------------------
# Checks for the exercises of 04_context_units and 05_character_budget. A reader's answer is
# compared with the package's on the chapter's cases; lists of messages are shown by their
# place in the case's history (`#1 assistant(a,b)`) so that a wrong unit is easy to spot.


def _read(*ids: str) -> AssistantMessage:
    return AssistantMessage(
        "读文件", tuple(ToolCall(call_id, "read", {"path": f"{call_id}.txt"}) for call_id in ids)
    )


def _result(call_id: str) -> ToolMessage:
    return ToolMessage(call_id, f"{call_id} 的内容")


def _unit_cases() -> list[tuple[str, list[Message]]]:
    return [
        ("空历史", []),
        ("只有一条 user", [UserMessage("你好")]),
        (
            "纯聊天，没有工具",
            [UserMessage("你好"), AssistantMessage("你好。"), UserMessage("再见")],
        ),
        ("本章的那张图", chapter_picture()),
        ("一次调用，一个结果", [UserMessage("问"), _read("a"), _result("a")]),
        ("孤立结果自成一个单元", [UserMessage("问"), _result("x")]),
        (
            "完整一轮之后的孤立结果",
            [UserMessage("问"), _read("a"), _result("a"), _result("zz")],
        ),
        (
            "最近的 assistant 不是声明者：比对 id，接着往前找",
            [UserMessage("问"), _read("a"), _read("b"), _result("a")],
        ),
        (
            "夹在 assistant 和结果之间的消息被一起划进单元",
            [_read("a"), UserMessage("插一句"), _result("a")],
        ),
        (
            "重复的 id：最近的声明者胜出",
            [_read("a"), _result("a"), UserMessage("再来"), _read("a"), _result("a")],
        ),
        ("结果一直没回来的 assistant", [UserMessage("问"), _read("a", "b")]),
        ("结果只回来一半", [UserMessage("问"), _read("a", "b"), _result("a")]),
        (
            "两轮",
            [
                UserMessage("问"),
                _read("a"),
                _result("a"),
                AssistantMessage("好了"),
                *chapter_picture(),
            ],
        ),
    ]


def _tag(history: Sequence[Message], message: Any) -> str:
    """`#index label` of a message of `history`, else the message as `shown` prints it."""
    for index, candidate in enumerate(history):
        if candidate is message:
            return f"#{index} {label(message)}"
    matches = [i for i, candidate in enumerate(history) if candidate == message]
    if matches:
        return f"#{matches[0]} {label(message)}"
    return shown(message)


class _Shown(list):  # type: ignore[type-arg]
    """A list of messages (or of units) that compares by value and prints by position."""

    def __init__(self, value: Any, history: Sequence[Message]) -> None:
        super().__init__(value)
        self.history = history

    def __repr__(self) -> str:
        return _bracketed(self, self._tag)

    def _tag(self, message: Any) -> str:
        return _tag(self.history, message)


class _ShownTuple(tuple):  # type: ignore[type-arg]
    """A reader's tuple of units, printed as `_Shown` prints a list (and never equal to one)."""

    history: Sequence[Message] = ()

    def __repr__(self) -> str:
        return _bracketed(self, lambda message: _tag(self.history, message))


def _bracketed(items: list[Any] | tuple[Any, ...], tag: Callable[[Any], str]) -> str:
    """Messages as tags, units in their brackets: [] for a list, () for a tuple (as Python
    writes one), so that a tuple where a list belongs shows."""
    if items and all(isinstance(item, (list, tuple)) for item in items):
        inside = ", ".join(_bracketed(unit, tag) for unit in items)
    else:
        inside = ", ".join(map(tag, items))
    if isinstance(items, list):
        return f"[{inside}]"
    return f"({inside},)" if len(items) == 1 else f"({inside})"


def _shown(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function`, its list answers wrapped to print by position in the history (args[0]);
    units that are tuples keep their parentheses, so the two sides are told apart."""

    def call(history: Sequence[Message], *rest: Any) -> Any:
        value = function(history, *rest)
        if isinstance(value, (list, tuple)) and all(
            isinstance(item, (list, *_MESSAGE_TYPES))
            or (isinstance(item, tuple) and all(isinstance(m, _MESSAGE_TYPES) for m in item))
            for item in value
        ):
            if isinstance(value, list):
                return _Shown(value, history)
            if value and type(value) is tuple:  # a tuple of units: shown, still a tuple
                units = _ShownTuple(value)
                units.history = history
                return units
        return value

    return call


def _both_sequences(expected: Outcome, got: Outcome) -> bool:
    """Both calls returned, the reader's a list or tuple: the outcomes a note on how the
    reader's sequence differs can compare."""
    return expected[0] == got[0] == "value" and isinstance(got[1], (list, tuple))


def _units_not_lists(expected: Outcome, got: Outcome) -> str:
    """When the reader's units hold the right messages in a tuple where a list belongs (the
    units, or the list of them), the note that says so; otherwise ""."""
    if not _both_sequences(expected, got):
        return ""
    units = list(got[1])
    if not all(isinstance(unit, (list, tuple)) for unit in units):
        return ""
    if [list(unit) for unit in units] != [list(unit) for unit in expected[1]]:
        return ""
    outer = not isinstance(got[1], list)
    inner = any(not isinstance(unit, list) for unit in units)
    return words().units_not_lists(outer, inner) if outer or inner else ""


def _as_units(outcome: Outcome) -> list[list[Any]] | None:
    """A returned list (or tuple) of units as lists, else `None`."""
    value = outcome[1]
    if outcome[0] != "value" or not isinstance(value, (list, tuple)):
        return None
    if not all(isinstance(unit, (list, tuple)) for unit in value):
        return None
    return [list(unit) for unit in value]


def _unit_mistakes(function: Callable[[Sequence[Message]], Any]) -> set[str]:
    """The scan mistakes `function` makes, told by what it returns on three small histories:
    "never" (a result not grouped even right after its assistant), "adjacent" (grouped only
    when its assistant is the message right before), "> 0" (an assistant at index 0 never
    grouped). On the cases these can cut alike; here each is seen alone."""
    question, call, aside, answer = (
        UserMessage("问"),
        _read("a"),
        UserMessage("插一句"),
        _result("a"),
    )

    def alone(history: list[Message]) -> bool:  # every message its own unit
        return _as_units(outcome_of(function, history)) == [[message] for message in history]

    if alone([question, call, answer]):
        return {"never"}
    found = set()
    if alone([question, call, aside, answer]):
        found.add("adjacent")
    if alone([call, answer]):
        found.add("> 0")
    return found


def _units_why(expected: Outcome, got: Outcome, mistakes: Collection[str] = ()) -> str:
    """What a FAIL of `context_units` adds: the units as tuples (`_units_not_lists`), the
    right units newest first (the `unshift` read as `append`), no result grouped at all, the
    declarer searched from the start (`units_earliest_declarer`: the earliest one, not the
    nearest), only the message before searched or `> 0` (each where `_unit_mistakes` saw
    it), a unit without the result the scan met (`messages[j:i]`), or one of two messages
    where the chapter slices the whole run."""
    if note := _units_not_lists(expected, got):
        return note
    if not _both_sequences(expected, got):
        return ""
    if not all(isinstance(unit, (list, tuple)) for unit in got[1]):
        return ""
    theirs, ours = [list(unit) for unit in got[1]], [list(unit) for unit in expected[1]]
    if theirs == ours:
        return ""
    if theirs[::-1] == ours:
        return words().units_reversed
    if "never" in mistakes and all(len(unit) == 1 for unit in theirs):
        return words().units_never_grouped
    history = getattr(got[1], "history", None)  # `_shown` keeps it beside the answer
    if history is not None and (
        theirs == units_earliest_declarer(history) or _not_nearest(theirs, history)
    ):
        return words().units_earliest_declarer
    if history is not None:  # only a mistake the answer makes, where it cuts this case
        cuts = (("adjacent", units_adjacent_only, words().units_adjacent_only),
                ("> 0", units_off_by_one, words().units_off_by_one))  # fmt: skip
        if said := [
            hint for name, cut, hint in cuts if name in mistakes and theirs == cut(history)
        ]:
            return "；".join(said)
    present = {id(message) for unit in theirs for message in unit}
    if len(present) < sum(len(unit) for unit in theirs):  # a message in two units
        return words().units_overlap
    if any(_undeclared(unit) for unit in theirs):
        return words().units_wrong_declarer
    whole = [unit for unit in ours if len(unit) >= 2 and unit not in theirs]
    if any(unit[:-1] in theirs and id(unit[-1]) not in present for unit in whole):
        return words().units_slice_end  # messages[j:i] for messages[j:i + 1]: the result lost
    if any(
        len(unit) >= 3
        and [unit[0], unit[-1]] in theirs
        and any(id(message) not in present for message in unit[1:-1])
        for unit in whole
    ):
        return words().units_two_messages  # what lay between them lost
    return ""


def _not_nearest(units: list[list[Any]], history: Sequence[Message]) -> bool:
    """A unit from an assistant to a result with a nearer assistant declaring the same id
    between them: the declarer was searched from the start, not back from the result."""
    where = {id(message): index for index, message in enumerate(history)}
    for unit in units:
        first, last = (unit[0], unit[-1]) if len(unit) >= 2 else (None, None)
        if isinstance(first, AssistantMessage) and isinstance(last, ToolMessage):
            start, end = where.get(id(first), -1), where.get(id(last), -1)
            between = history[start + 1 : end] if 0 <= start < end else []
            declarers = [m for m in between if isinstance(m, AssistantMessage)]
            if any(call.id == last.tool_call_id for m in declarers for call in m.tool_calls):
                return True
    return False


def _undeclared(unit: list[Any]) -> bool:
    """A unit that opens with an assistant and holds a result none of its calls declares."""
    first = unit[0] if unit else None
    if not isinstance(first, AssistantMessage):
        return False
    ids = {call.id for call in first.tool_calls}
    return any(isinstance(m, ToolMessage) and m.tool_call_id not in ids for m in unit[1:])


_RAISED_ON_PURPOSE = {"ContextBudgetError", "ValueError", "RuntimeError", "Exception"}
"""Exceptions an answer raises itself (a TypeError or an IndexError is a crash, not a phrase)."""


def _trim_why(
    expected: Outcome,
    got: Outcome,
    function: Callable[..., Any],
    messages: Sequence[Message],
    max_chars: int,
) -> str:
    """What a FAIL of `trim_context` adds: a budget exactly full refused (`>=` for `>`: one
    more character and the answer keeps what it should), an error in the reader's own words,
    else `_kept_why`."""
    w = words()
    if expected[0] == "value" and _kept_less(expected, got):
        extra = _measured_extra(function)
        return w.budget_equal_fits if extra == 1 else w.kept_too_little(_PROBE_CHARS, extra or None)
    if expected[0] == got[0] == "error":
        kind, _, message = str(got[1]).partition(": ")
        if kind in _RAISED_ON_PURPOSE and message not in (SMALLEST_UNIT_TOO_BIG, EMPTY_CONTEXT):
            return w.trim_chapter_phrase
        if EMPTY_CONTEXT in str(expected[1]) and message == SMALLEST_UNIT_TOO_BIG:
            return w.empty_is_not_too_small
    return _kept_why(expected, got)


def _kept_less(expected: Outcome, got: Outcome) -> bool:
    """The reader's answer kept a newer part of what the chapter keeps, or refused the budget."""
    if got[0] == "error":
        return SMALLEST_UNIT_TOO_BIG in str(got[1]) or EMPTY_CONTEXT in str(got[1])
    theirs, ours = got[1], list(expected[1])
    return (
        isinstance(theirs, list)
        and len(theirs) < len(ours)
        and ours[len(ours) - len(theirs) :] == theirs
    )


_PROBE: list[Message] = [UserMessage("问题"), UserMessage("回答")]  # two units, one character each
_PROBE_CHARS = _estimate_context_chars(_PROBE)


def _measured_extra(function: Callable[..., Any]) -> int | None:
    """How many characters more than the chapter's count the reader's `trim_context` needs to
    keep both messages of `_PROBE` (1: `>=` for `>`; 2: a newline counted twice), or None."""
    for extra in range(3 * _PROBE_CHARS):
        kind, value = outcome_of(function, list(_PROBE), _PROBE_CHARS + extra)
        if kind == "value" and isinstance(value, (list, tuple)) and list(value) == _PROBE:
            return extra
    return None


def _splits_a_unit(kept: Any) -> bool:
    """`kept` (a `_shown` answer) holds a message of some unit of its history but not all of it."""
    history = getattr(kept, "history", None)
    if history is None or not isinstance(kept, list):
        return False
    held = {id(message) for message in kept if not isinstance(message, list)}
    units = _context_units(list(history))
    return any(0 < sum(id(m) in held for m in unit) < len(unit) for unit in units)


def _kept_why(expected: Outcome, got: Outcome) -> str:
    """What a FAIL of `trim_context` adds: a unit inserted whole (`kept.insert(0, unit)`), more
    kept than the chapter keeps (each unit measured alone, not with `kept`), or the right
    messages out of order (`kept + unit` for `unit + kept`)."""
    if got[0] == "value" and _splits_a_unit(got[1]):
        return words().kept_split_unit  # message by message, as the chapter's table rejects
    if expected[0] == "error" and got[0] == "value":
        return (
            words().should_throw
            if SMALLEST_UNIT_TOO_BIG in expected[1]
            else words().should_throw_empty
        )
    if not _both_sequences(expected, got):
        return ""
    theirs, ours = list(got[1]), list(expected[1])
    if theirs == ours:
        return ""
    if any(isinstance(item, (list, tuple)) for item in theirs):
        return words().kept_nested
    history = list(getattr(got[1], "history", ()))  # `_shown` keeps it beside the answer
    newest = history[len(history) - len(theirs) :]
    if len(ours) < len(theirs) <= len(history) and theirs == newest:  # more of the newest end
        return words().kept_too_much
    if len(ours) < len(theirs) and theirs[len(theirs) - len(ours) :] == ours:  # a gap before
        return words().kept_skipping
    older = len(history) - len(ours)  # where the chapter's kept messages begin
    if any(m is kept for m in history[:older] for kept in theirs):  # past a unit that did not fit
        return words().kept_skipping
    same_messages = sorted(map(repr, theirs)) == sorted(map(repr, ours))
    return words().kept_out_of_order if same_messages else ""


_MESSAGE_TYPES = (UserMessage, AssistantMessage, ToolMessage)


def _same_text(expected: Outcome, got: Outcome) -> bool:
    """Equal values, or errors with the same message (any exception type will do)."""
    if expected[0] == got[0] == "error":
        return str(expected[1]).split(": ", 1)[-1] == str(got[1]).split(": ", 1)[-1]
    return _strictly_equal(expected, got)


def _message_expectation(expected: Outcome) -> str:
    if expected[0] == "error":
        message = str(expected[1]).split(": ", 1)[-1]
        return words().should_raise_message(message, gloss_text(message))
    return _should(expected)


@_reported
@_takes("context_units", "messages")
@_guarded(_context_units)
def check_context_units(
    function: Callable[[Sequence[Message]], Any], *, linear: bool = False
) -> CheckReport:
    """Check a reader's `context_units(messages)` (units oldest first) on the chapter's cases:
    the chapter's own double loop passes. A unit must be a list, as in the package and in 05's
    `unit + kept` (a tuple plus a list is a TypeError): a tuple fails, and the report says so. With `linear` (04's 进阶), one more case: many orphan
    results, where the chapter's inner search reads every earlier assistant's `tool_calls` for
    each of them (n²/2 reads) and a forward scan reads each once."""
    cases = [(name, (history,)) for name, history in _unit_cases()]
    mistakes = _unit_mistakes(function)
    report = run_cases(
        "context_units",
        _shown(function),
        _shown(_context_units),
        cases,
        _same_text,
        _message_expectation,
        lambda expected, got: _units_why(expected, got, mistakes),
    )
    if not linear:
        return report
    return CheckReport(report.title, (*report.results, _linear_units_case(function)))


class _CountingAssistant(AssistantMessage):
    """An assistant that counts how often its `tool_calls` are read: the inner search's cost."""

    reads = 0

    def __getattribute__(self, name: str) -> Any:
        if name == "tool_calls":
            _CountingAssistant.reads += 1
        return super().__getattribute__(name)


class _CountingUser(UserMessage):
    """A user message that counts how often its `content` is read: one serialisation each."""

    reads = 0

    def __getattribute__(self, name: str) -> Any:
        if name == "content":
            _CountingUser.reads += 1
        return super().__getattribute__(name)


LINEAR_PAIRS = 200
LINEAR_FACTOR = (
    4  # a forward scan reads each assistant's tool_calls about once; allow 4 per message
)


def _linear_units_case(function: Callable[[Sequence[Message]], Any]) -> CheckResult:
    w = words()
    history: list[Message] = [UserMessage("开始")]
    for k in range(LINEAR_PAIRS):  # an assistant with its call, then a result nobody declared
        history += [_CountingAssistant("", (ToolCall(f"c{k}", "read", {}),)), _result(f"lost{k}")]
    name = w.linear_units_case(LINEAR_PAIRS)
    expected = outcome_of(_context_units, history)
    _CountingAssistant.reads = 0
    got = outcome_of(function, history)
    reads, limit = _CountingAssistant.reads, LINEAR_FACTOR * len(history)
    if not _same_text(expected, got):
        return CheckResult(name, False, w.linear_wrong_units)
    if reads > limit:
        return CheckResult(name, False, w.linear_units_too_many(reads, limit))
    return CheckResult(name, True)


def _cycle() -> dict[str, Any]:
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle  # JSON.stringify: "Converting circular structure to JSON"
    return cycle


ESTIMATE_CASES: tuple[tuple[str, tuple[Message, ...]], ...] = (
    ("空历史", ()),
    ("一条 user", (UserMessage("hi"),)),
    ("本章的那张图", tuple(chapter_picture())),
    (
        "中文和 emoji（😀 按码点算 1 个，按 UTF-16 码元算 2 个）",
        (UserMessage("中文" + "😀" * 10),),  # apart from json.dumps' 3 spaces and from bytes
    ),
    ("一条错误结果", (ToolMessage("a", "boom", is_error=True),)),
    ("内容里的换行和引号按转义后的字符数算", (UserMessage('一行\n"二"'),)),
    (
        "第 5 条消息里有循环引用：报错时带上 message 4",
        (*chapter_picture(), AssistantMessage("", (ToolCall("c", "tool", _cycle()),))),
    ),
)
"""(case name, messages) for `check_estimate_context_chars`; the last one cannot be
serialized, and the error must name its index (the chapter's example: a cycle in message 5)."""


def separator_readings(count: int) -> dict[int, str]:
    """What "再加分隔开销" adds for `count` messages on each of the chapter's readings: the
    overhead, and the readings that give it. One separator between messages (count - 1), one
    after each (count: the package's newline), or the commas and the two brackets of
    `JSON.stringify(messages)` (count + 1; 2 for no message)."""
    readings: dict[int, list[str]] = {}
    for overhead, reading in (
        (max(count - 1, 0), "消息之间各一个"),
        (count, "每条一个"),
        (max(count - 1, 0) + 2, "JSON.stringify(messages) 的逗号和方括号"),
    ):
        readings.setdefault(overhead, []).append(reading)
    return {overhead: "、".join(names) for overhead, names in readings.items()}


def _separator_note(count: int, overhead: int) -> str:
    if overhead == count:
        return "你的分隔开销是每条消息一个，和本包相同：JSONL 每行末尾的换行，估算值因此正好等于会话文件的字符数"
    if overhead == count - 1:
        reading = "消息之间各一个（像 join 的分隔符）"
    else:
        reading = "像 JSON.stringify(messages) 那样：逗号加一对方括号"
    return f"你的分隔开销是{reading}；本包是每条一个换行，估算值正好等于会话文件的字符数"


_FORMS: dict[str, Callable[[Message], int]] = {  # json.dumps' defaults, and bytes for characters
    "spaces": lambda m: len(json.dumps(to_record(m), ensure_ascii=False)),
    "ascii": lambda m: len(json.dumps(to_record(m), separators=(",", ":"))),
    "both": lambda m: len(json.dumps(to_record(m))),
    "bytes": lambda m: len(record_line(m).encode("utf-8")),
}


def _forms_of(
    history: Sequence[Message], lines: int, value: int, allowed: dict[int, str]
) -> list[str]:
    """The ways of writing the lines (json.dumps' spaces or \\uXXXX, UTF-8 bytes) that, with
    one of the chapter's separators, give a wrong estimate `value` (`lines`: their length as
    JSON.stringify writes them)."""
    totals = {name: sum(map(_FORMS[name], history)) for name in _FORMS}
    return [n for n, total in totals.items() if total != lines and value - total in allowed]


def _with_form_notes(results: list[CheckResult], forms: dict[int, list[str]]) -> list[CheckResult]:
    """The failed cases' details, with a note on the one form that explains every one of them
    (`forms`: a failed case's index, the forms that fit its value); none when no form does.
    One case alone can fit by chance (one message with 2 separators is one with json.dumps'
    3 spaces and none), and bytes and spaces both add 36 to the chapter's picture."""
    fitting = [name for name, _ in words().estimate_forms if forms
               and all(name in fits for fits in forms.values())]  # fmt: skip
    if not fitting:  # several slips at once (or another way to count): the list to go through
        checklist = words().estimate_checklist
        return [hinted(r, checklist) if i in forms and not r.hints else r
                for i, r in enumerate(results)]  # fmt: skip
    note = dict(words().estimate_forms)[fitting[0]]
    return [hinted(r, note) if index in forms else r for index, r in enumerate(results)]


@_reported
@_takes("estimate_context_chars", "messages")
@_guarded(_estimate_context_chars, attributes=("record_chars", "line"))
def check_estimate_context_chars(function: Callable[[Sequence[Message]], Any]) -> CheckReport:
    """Check a reader's `estimate_context_chars(messages)`: the `JSON.stringify` length of
    each message (compact, non-ASCII as written), plus a separator overhead.

    The chapter says only "再加分隔开销", so any of its readings passes (`separator_readings`:
    between messages, after each, or an array's brackets and commas); the report's note says
    which one the reader chose on the chapter's picture, beside the package's (one newline per
    message, so the estimate is the session file's length). "Length" passes counted either
    way: in UTF-16 units (JavaScript's `.length`: the chapter and the package) or in code
    points (Python's `len`), a note saying so where the two differ. Bytes, ASCII escapes,
    spaces after `:` and `,`, no separator at all, or a float still fail; when one of
    json.dumps' defaults or UTF-8 bytes explains every failed case, their details say which. A message that cannot
    be serialized must raise an error that names its index, as the chapter says.
    """
    w = words()
    results: list[CheckResult] = []
    notes: list[str] = []
    forms: dict[int, list[str]] = {}  # a failed case's index: the forms that explain its value
    for name, messages in ESTIMATE_CASES:
        history = list(messages)
        expected = outcome_of(_estimate_context_chars, history)
        got = outcome_of(function, history)
        if expected[0] == "error":  # a message that cannot be serialized: which one?
            where = re.search(r"message \d+", expected[1])
            assert where is not None, expected
            named = got[0] == "error" and re.search(rf"\b{where.group()}\b", got[1]) is not None
            detail = "" if named else w.should_but(w.error_with_index(where.group()), _but(got))
            results.append(CheckResult(name, named, detail))
            continue
        count = len(history)
        lines = expected[1] - count  # the JSON.stringify lengths alone, in UTF-16 units
        points = sum(len(record_line(message)) for message in history)  # in code points
        allowed = separator_readings(count)
        value = got[1]
        counted = got[0] == "value" and isinstance(value, int) and not isinstance(value, bool)
        in_utf16 = counted and value - lines in allowed
        in_code_points = counted and not in_utf16 and value - points in allowed
        result = CheckResult(name, in_code_points or in_utf16)
        if in_code_points or in_utf16:
            pass
        elif got[0] == "value" and count > 1 and value - lines == 2 * count:
            result = CheckResult(name, False, w.two_per_message(value, lines + count))
        else:
            result = CheckResult(
                name, False, w.should_but(w.separator_choices(lines, allowed), _but(got))
            )
            if counted and value in (lines, points) and count:
                result = hinted(result, w.no_separator)
            if counted and value > 0:  # an attempt (the starter's 0 is none): what explains it
                forms[len(results)] = _forms_of(history, lines, value, allowed)
        if in_code_points:
            # like with like: the reader's separators, counted in UTF-16 units
            notes.append(f"{name}：{w.counted_code_points(value, value + (lines - points))}")
        if (in_code_points or in_utf16) and count > 1:
            overhead = value - (lines if in_utf16 else points)
            notes.append(f"{name}（{count} 条消息）：{_separator_note(count, overhead)}")
        results.append(result)
    return CheckReport(w.estimate_title, tuple(_with_form_notes(results, forms)), tuple(notes))


@_reported
@_takes("trim_context", "messages", "max_chars")
@_guarded(_trim_context)
def check_trim_context(
    function: Callable[[Sequence[Message], int], Any], *, linear: bool = False
) -> CheckReport:
    """Check a reader's `trim_context(messages, max_chars)` on budget edges and both errors:
    the chapter's own loop (re-measuring `unit + kept` at every step) passes. With `linear`
    (05's 进阶), one more case: a long history within the budget, where re-measuring
    serialises the kept messages again at every step (n²/2) and a running total once each."""
    picture = chapter_picture()
    whole = _estimate_context_chars(picture)
    newest_unit = _estimate_context_chars(picture[1:])
    both_results = _estimate_context_chars(picture[2:])
    short_question = UserMessage("q")
    skip_trap: list[Message] = [short_question, AssistantMessage("很长的回答" * 20), *picture]
    # one more than the question and the picture: `>=` for `>` with a skip keeps the question too
    skip_budget = whole + _estimate_context_chars([short_question]) + 1
    thanks: list[Message] = [*picture, UserMessage("谢谢"), AssistantMessage("不客气")]
    half_unit = _estimate_context_chars(thanks[3:])  # tool b and the last two: not a unit
    orphaned: list[Message] = [UserMessage("问"), _result("x")]
    orphan_only = _estimate_context_chars(orphaned[1:])
    cases: list[tuple[str, tuple[Any, ...]]] = [
        ("预算装得下全部", (picture, 10_000)),
        ("预算恰好等于整段历史（比较用 >：刚好等于也装得下）", (picture, whole)),
        ("差一个字符：最早的单元被丢掉", (picture, whole - 1)),
        ("预算恰好等于最新的单元（比较用 >：刚好等于也装得下）", (picture, newest_unit)),
        (
            "不拆单元：装得下两个结果、装不下它们的 assistant",
            (picture, both_results),
        ),
        ("差一个字符装不下最新的单元：报错", (picture, newest_unit - 1)),
        ("预算停在一个单元中间：整个丢掉它，不留半个", (thanks, half_unit)),
        ("预算 1", (picture, 1)),
        ("没有可发的：预算不能为空", ([], 100)),
        ("孤立结果可以单独保留", (orphaned, orphan_only)),
        ("遇到第一个装不下的单元就停，不跳过", (skip_trap, skip_budget)),
    ]
    asked: list[tuple[Any, ...]] = []

    def theirs(*args: Any) -> Any:
        asked.append(args)  # `why` reads the case's arguments after this case
        return _shown(function)(*args)

    report = run_cases(
        "trim_context",
        theirs,
        _shown(_trim_context),
        cases,
        _same_text,
        _message_expectation,
        lambda expected, got: _trim_why(expected, got, function, *asked[-1]),
    )
    if not linear:
        return report
    return CheckReport(report.title, (*report.results, _linear_trim_case(function)))


def _linear_trim_case(function: Callable[[Sequence[Message], int], Any]) -> CheckResult:
    w = words()
    history: list[Message] = [_CountingUser(f"第 {k} 个问题") for k in range(LINEAR_PAIRS)]
    budget = _estimate_context_chars(history)
    name = w.linear_trim_case(len(history))
    expected = outcome_of(_trim_context, history, budget)
    _CountingUser.reads = 0
    got = outcome_of(function, history, budget)
    reads, limit = _CountingUser.reads, LINEAR_FACTOR * len(history)
    if not _same_text(expected, got):
        return CheckResult(name, False, w.linear_wrong_trim)
    if reads > limit:
        return CheckResult(name, False, w.linear_trim_too_many(reads, limit))
    return CheckResult(name, True)


# --- 06 会话与上下文的责任边界: choose context_max_chars ------------------------------------


def watched_first_run(max_chars: int | None) -> list[Watched]:
    """Notebook 06's first run with budget `max_chars`, in a throwaway folder: per request,
    the file at that moment beside what was sent."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "session.jsonl"
        watcher = DiskWatchingClient(ScriptedClient(demo06.FIRST_RUN.turns), path)
        run_agent(
            demo06.FIRST_RUN.prompt,
            client=watcher,
            tools=demo06.TOOLS,
            session_path=path,
            context_max_chars=max_chars,
        )
        return watcher.requests


def smallest_budget_keeping_question() -> int:
    """The least `context_max_chars` whose request 3 still holds the question: request 3
    keeps message 0 only when it keeps everything in memory, so it is all of that."""
    return _estimate_context_chars(watched_first_run(None)[2].disk)


@_reported
def check_context_max_chars(max_chars: Any, *, smallest: bool = False) -> CheckReport:
    """Run 06's first run (three requests) with the reader's `context_max_chars`: does request
    3 still hold the user's question? With `smallest`, also: would no smaller budget do?

    The report's notes list, per request, the file's messages and characters beside those sent.
    """
    w = words()
    title = f"context_max_chars = {shown(max_chars)}"
    question = w.keeps_question(3)
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
        return CheckReport(title, (), refusal=w.budget_refused(shown(max_chars)))
    try:
        requests = watched_first_run(max_chars)
    except ContextBudgetError as err:  # the chapter's phrase, and beside it its 释义
        refused = w.run_refused(_shown_value(("error", f"{type(err).__name__}: {err}")))
        return CheckReport(title, (CheckResult(question, False, refused),))
    third = requests[2]
    kept = len(third.sent) == len(third.disk)  # message 0, the question, is the oldest
    results = [CheckResult(question, kept, "" if kept else w.question_dropped)]
    # short by the separators alone: the sum of the lines' lengths, but not the +1 of each
    lengths = _estimate_context_chars(third.disk) - len(third.disk)
    if not kept and lengths <= max_chars < lengths + len(third.disk):
        results = [hinted(results[0], w.budget_forgot_separator)]
    if smallest:
        least = smallest_budget_keeping_question()
        results.append(
            CheckResult(w.smallest_budget, max_chars == least, w.budget_vs_least(max_chars, least))
        )
    # each request: what was on disk beside what was sent; in characters only once the least
    # budget is found (before that, request 3's characters on disk are the answer)
    notes, passed = [], smallest and all(result.passed for result in results)
    for number, request in enumerate(requests, start=1):
        disk, sent = request.disk, request.sent
        if passed:
            line = request_line(number, disk, sent, max_chars)
        else:
            line = w.request_counts(number, len(disk), len(sent), max_chars)
        notes.append(line + w.sent_span(len(disk) - len(sent), len(disk)))
    return CheckReport(title, tuple(results), tuple(notes))


def _run_messages(*stages: demo06.Stage) -> list[list[Message]]:
    """The messages each stage adds to 06's session, run after one another."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "session.jsonl"
        added, before = [], 0
        for stage in stages:
            result = run_agent(
                stage.prompt,
                client=ScriptedClient(stage.turns),
                tools=demo06.TOOLS,
                session_path=path,
            )
            added.append(list(result.messages[before:]))
            before = len(result.messages)
        return added


# --- 07 源码走查: find the bug in record() --------------------------------------------------


def reference_record(
    messages: list[Message], session_path: PathLike | None, message: Message
) -> None:
    """The chapter's `record()` with its state passed in: `messages.push`, then
    `appendSession` when there is a session path."""
    messages.append(message)
    if session_path is not None:
        append_session(session_path, message)


class CountedSession(os.PathLike[str]):
    """A session file whose `len()` is its messages on disk: falsy while new, and a real path
    all the same, which `run_agent` records to (PEP 8: `if x` is not `if x is not None`)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __len__(self) -> int:
        return len(load_session(self.path))


RECORD_FAILURE_CASE = "写盘失败时把错误抛出去，不吞掉"
RECORD_CHAPTER_ORDER_NOTE = (
    "你的 record 先进内存、再写磁盘（本章的顺序）：写盘被拒绝时，内存比磁盘多一条。"
    "本章这样做有什么隐患？本包先写磁盘，见 07a_beyond_the_chapter.ipynb#disk-first"
)


@_reported
@_takes("record", "messages", "session_path", "message")
def check_record(record: Record) -> CheckReport:
    """Replay every `record()` call of 06's runs through the reader's `record(messages,
    session_path, message)`, as `run_agent`'s loop makes them, and compare memory and disk
    after each call with what `run_agent` itself leaves.

    A refused write must raise; either order passes (the chapter's push-then-append and the
    package's disk-first), and the chapter's order earns a note with the question it raises.
    """
    w = words()
    first, restarted = _run_messages(demo06.FIRST_RUN, demo06.RESTART)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        results = [
            _replay(w.record_case_with_path, record, [], folder / "a.jsonl", first),
            _replay_restart(record, folder / "b.jsonl", first, restarted),
        ]
        unchanged = w.record_list_only_with_path if results[0].passed else w.record_list_unchanged
        results.append(_replay(w.record_case_without_path, record, [], None, first, unchanged))
        failure, memory_ahead = _record_failure(record, folder / "missing" / "session.jsonl")
        results.append(failure)
        falsy = _replay(w.record_case_falsy_path, record, [], folder / "c.jsonl", first,
                        given=CountedSession(folder / "c.jsonl"))  # fmt: skip
        truthy = not falsy.passed and results[0].passed  # only the path's truthiness differs
        # the chapter's own `if (options.sessionPath)`: a PASS of its own name, and a note
        results.append(CheckResult(w.record_case_falsy_chapter, True) if truthy else falsy)
    notes = [RECORD_CHAPTER_ORDER_NOTE] if memory_ahead else []
    notes += [w.record_truthy_path] if truthy else []
    return CheckReport("record", tuple(results), tuple(notes))


def _replay(
    name: str,
    record: Record,
    memory: list[Message],
    path: Path | None,
    messages: Sequence[Message],
    unchanged: str | None = None,
    given: PathLike | None = None,
) -> CheckResult:
    """Replay `messages` through `record` (handed `given`, another name for `path`, if set); a
    FAIL where the caller's list did not grow at all says `unchanged` (by default: the list
    rebound, not appended to)."""
    w = words()
    unchanged = w.record_list_unchanged if unchanged is None else unchanged
    start = list(memory)
    for count, message in enumerate(messages, start=1):
        expected = [*start, *messages[:count]]
        before = path.read_bytes() if path is not None and path.exists() else b""
        kind, value = outcome_of(record, memory, path if given is None else given, message)
        if kind == "error":
            return CheckResult(name, False, w.record_raised(count, label(message), str(value)))
        if path is not None and not (path.read_bytes() if path.exists() else b"").startswith(
            before
        ):
            return CheckResult(name, False, w.record_rewrote(count, label(message)))
        for where, state in ((w.memory, memory), (w.disk, _disk(path))):
            if state is not None and state != expected:
                tags = _tags(expected), _tags(state)
                result = CheckResult(
                    name, False, w.record_differs(count, label(message), where, *tags)
                )
                if state is memory and memory == start:  # not one message more in memory
                    result = hinted(result, unchanged)
                elif state == [*expected, message]:  # the message twice at the end
                    result = hinted(result, w.record_twice(where))
                return result
    return CheckResult(name, True)


def _replay_restart(
    record: Record, path: Path, first: Sequence[Message], restarted: Sequence[Message]
) -> CheckResult:
    # a blank line the loader skips: a record() that rewrites the file from memory drops it
    for number, message in enumerate(first):
        if number == 1:
            with path.open("ab") as file:
                file.write(b"\n")
        append_session(path, message)
    return _replay(words().record_case_restart, record, load_session(path), path, restarted)


def _record_failure(record: Record, path: Path) -> tuple[CheckResult, bool]:
    """A write the disk refuses: the error must reach the caller, and memory may hold the
    message (the chapter's order) or not (disk first), nothing else. Also: is memory ahead?"""
    w = words()
    memory: list[Message] = []
    message = UserMessage(demo06.FIRST_RUN.prompt)
    refused = outcome_of(reference_record, [], path, message)  # the disk's own error
    kind, raised = outcome_of(record, memory, path, message)
    if kind != "error":
        return CheckResult(RECORD_FAILURE_CASE, False, w.record_swallowed), False
    disk_error, raised_type = str(refused[1]).partition(":")[0], str(raised).partition(":")[0]
    if raised_type != disk_error and not _is_os_error(raised_type):  # not the disk's error
        said = str(raised).replace(str(path.parent.parent) + os.sep, "")  # no temp folder
        return CheckResult(
            RECORD_FAILURE_CASE, False, w.record_other_error(disk_error, said)
        ), False
    if memory not in ([], [message]):
        detail = w.record_differs(1, label(message), w.memory, [label(message)], _tags(memory))
        return CheckResult(RECORD_FAILURE_CASE, False, detail), False
    return CheckResult(RECORD_FAILURE_CASE, True), bool(memory)


def _disk(path: Path | None) -> list[Message] | None:
    return None if path is None else load_session(path)


def _tags(messages: Sequence[Message]) -> list[str]:
    return [label(message) for message in messages]
