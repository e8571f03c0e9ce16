"""exercises.py, notebooks 01-03: each check passes the package's answer and a reader's
faithful one, fails every plausible wrong answer, and never crashes on a reader's bug."""

from __future__ import annotations

import html
import json
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import mini_agent
from mini_agent import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    load_session,
    parse_session_message,
    to_record,
)
from mini_agent import session as session_module
from mini_agent.session import record_line
from teaching.chapter_variants import chapter_load_session, chapter_stringify
from teaching.exercises import (
    _LONE_CR,
    _SPACES,
    CALLS_CASES,
    DISCRIMINATION_CASES,
    LOAD_CASES,
    UNCHECKED,
    CheckReport,
    _same_load,
    check_load_session,
    check_parse_session_message,
    check_record_line,
    outcome_of,
    record_line_cases,
    run_cases,
    shown,
    with_unchecked_messages,
)
from teaching.style import palette
from teaching.text import words
from tests.helpers import as_reference


def double(x: int) -> int:
    return 2 * x


def failed(report: CheckReport) -> list[str]:
    return [result.name for result in report.results if not result.passed]


# --- the report ----------------------------------------------------------------------------


def test_all_cases_passing() -> None:
    report = run_cases("double", double, double, [("一", (1,)), ("二", (2,))])
    assert report.ok
    assert repr(report) == "double：2 个用例，通过 2 个\n  PASS 一\n  PASS 二"


def test_a_wrong_answer_and_a_crash_are_failed_cases() -> None:
    def buggy(x: int) -> int:
        if x == 2:
            raise KeyError("boom")
        return x

    report = run_cases("double", buggy, double, [("一", (1,)), ("二", (2,)), ("零", (0,))])
    assert not report.ok
    assert repr(report).splitlines() == [
        "double：3 个用例，通过 1 个",
        "  FAIL 一 — 应当返回 2，但实际返回了 1",
        "  FAIL 二 — 应当返回 4，但实际抛出了 KeyError: 'boom'"
        "（释义：字典里没有键 'boom'：取值之前没有先确认这个键在不在）",
        "  PASS 零",
    ]


def test_expected_errors_compare_by_text() -> None:
    def strict(x: int) -> int:
        raise ValueError(f"bad {x}")

    assert outcome_of(strict, 1) == ("error", "ValueError: bad 1")
    assert run_cases("strict", strict, strict, [("一", (1,))]).ok


def test_values_compare_by_type_too() -> None:
    # 1 == True in Python, but a reader who answers 1 where the package answers True is wrong
    report = run_cases("t", lambda: 1, lambda: True, [("一", ())])
    assert not report.ok
    assert report.results[0].detail == "应当返回 True，但实际返回了 1"


def test_report_html_marks_passes_and_failures_in_colour() -> None:
    report = run_cases("double", lambda x: x, double, [("一", (1,)), ("零", (0,))])
    html = report._repr_html_()
    assert f"color:{palette().error}'>✘ FAIL 一" in html
    assert f"color:{palette().tool}'>✔ PASS 零" in html
    assert "0 个" in CheckReport("t", ())._repr_html_()


# --- 01 parse_session_message --------------------------------------------------------------


def reader_parse(value: Any, mistake: str = "") -> Message | None:
    """A reader's transcription of the chapter's parseSessionMessage; `mistake` plants one
    of the errors readers make."""
    if mistake == "dict indexing" and value["role"] == "user":
        return UserMessage(value["content"])
    if not isinstance(value, dict):
        return None
    role: Any = value.get("role")
    content: Any = value.get("content")
    if not isinstance(role, str):
        return None
    if mistake == "role lower-cased":
        role = role.lower()
    if mistake != "content checked only for user" and not isinstance(content, str):
        return None
    if role == "user":
        return UserMessage(content) if isinstance(content, str) else None
    if role == "assistant":
        raw = value.get("toolCalls")
        if raw is None and mistake in ("toolCalls defaults to []", "toolCalls null is []"):
            raw = [] if mistake == "toolCalls defaults to []" or "toolCalls" in value else None
        calls = reader_calls(raw, mistake)
        return None if calls is None else AssistantMessage(content, calls)
    if role == "tool":
        call_id: Any = value.get("toolCallId")
        is_error: Any = value.get("isError")
        if not isinstance(call_id, str) and mistake != "toolCallId any type":
            return None
        if mistake == "isError 0 or 1 allowed":
            ok = is_error in (True, False)  # 1 == True and 0 == False
        elif mistake == "isError truthiness":
            ok, is_error = "isError" in value, bool(is_error)
        else:
            ok = isinstance(is_error, bool)
        return ToolMessage(call_id, content, is_error) if ok else None
    return None


def reader_calls(raw: Any, mistake: str = "") -> tuple[ToolCall, ...] | None:
    if not isinstance(raw, list):
        return None
    items = raw[:1] if mistake == "only the first call checked" else raw
    calls = []
    for item in items:
        if not isinstance(item, dict):
            return None
        if mistake != "call id any type" and not isinstance(item.get("id"), str):
            return None
        if not isinstance(item.get("name"), str):
            return None
        if mistake == "truthy id and name" and not (item["id"] and item["name"]):
            return None
        if "input" not in item and mistake != "missing input is null":
            return None
        if mistake == "input checked by value" and item["input"] is None:  # `.get() is not None`
            return None
        calls.append(ToolCall(item["id"], item["name"], item.get("input")))
    if mistake == "only the first call checked":
        calls += [ToolCall(str(i.get("id")), str(i.get("name")), None) for i in raw[1:]]
    return tuple(calls)


PARSER_MISTAKES = [
    "dict indexing",
    "role lower-cased",
    "content checked only for user",
    "toolCalls defaults to []",
    "toolCalls null is []",
    "toolCallId any type",
    "isError 0 or 1 allowed",
    "isError truthiness",
    "only the first call checked",
    "call id any type",
    "missing input is null",
    "truthy id and name",
]


def test_the_packages_parser_and_a_faithful_reader_pass_every_row() -> None:
    report = check_parse_session_message(as_reference(parse_session_message))
    assert report.ok
    assert len(report.results) == len(DISCRIMINATION_CASES) + len(CALLS_CASES)
    assert check_parse_session_message(reader_parse).ok


def chapter_shaped_parse(value: Any) -> Message | None:
    """01's exercise as its notebook asks for it: the chapter's if-chain, the common
    precondition first and once, then a dispatch on role (90_solutions' answer)."""
    item = value if isinstance(value, dict) else None
    if item is None or not isinstance(item.get("role"), str):
        return None
    if not isinstance(item.get("content"), str):
        return None
    if item["role"] == "user":
        return UserMessage(item["content"])
    if item["role"] == "assistant" and session_module.calls(item.get("toolCalls")):
        tool_calls = [ToolCall(c["id"], c["name"], c["input"]) for c in item["toolCalls"]]
        return AssistantMessage(item["content"], tool_calls)
    if (
        item["role"] == "tool"
        and isinstance(item.get("toolCallId"), str)
        and isinstance(item.get("isError"), bool)
    ):
        return ToolMessage(item["toolCallId"], item["content"], item["isError"])
    return None


def guarded_match_parse(value: Any) -> Message | None:
    """01's 进阶: `match` on role after one guard for the common precondition."""
    item = value if isinstance(value, dict) else None
    if item is None or not isinstance(item.get("role"), str):
        return None
    if not isinstance(item.get("content"), str):
        return None
    content = item["content"]
    match item:
        case {"role": "user"}:
            return UserMessage(content)
        case {"role": "assistant", "toolCalls": list(raw)} if session_module.calls(raw):
            return AssistantMessage(
                content, [ToolCall(c["id"], c["name"], c["input"]) for c in raw]
            )
        case {"role": "tool", "toolCallId": str(call_id), "isError": bool(is_error)}:
            return ToolMessage(call_id, content, is_error)
    return None


def test_the_chapter_shaped_if_chain_and_a_guarded_match_both_pass() -> None:
    assert check_parse_session_message(chapter_shaped_parse).ok
    assert check_parse_session_message(guarded_match_parse).ok


def test_content_checked_in_every_case_but_one_fails_the_row_the_chapters_table_lacks() -> None:
    # 01's 最容易走错的第一处 in `match` form: `str(content)` copied into each case, and left
    # out of the assistant's; the chapter's table has no row that catches it, the check has
    def forgot_one(value: Any) -> Message | None:
        match value:
            case {"role": "assistant", "content": content, "toolCalls": list(raw)} if (
                session_module.calls(raw)
            ):
                return AssistantMessage(
                    content, [ToolCall(c["id"], c["name"], c["input"]) for c in raw]
                )
        return match_parse(value)

    names = failed(check_parse_session_message(forgot_one))
    assert [name.split("  (")[1] for name in names] == ["assistant 的 content 不是字符串)"]


def match_parse(value: Any) -> Message | None:
    """01's exercise answered with `match`, the precondition copied into every case (it passes;
    01's 进阶 asks for one guard instead): mapping and class patterns (`bool()` is exact)."""
    match value:
        case {"role": "user", "content": str(content)}:
            return UserMessage(content)
        case {"role": "assistant", "content": str(content), "toolCalls": list(raw)}:
            tool_calls = []
            for call in raw:
                match call:
                    case {"id": str(call_id), "name": str(name), "input": call_input}:
                        tool_calls.append(ToolCall(call_id, name, call_input))
                    case _:
                        return None
            return AssistantMessage(content, tool_calls)
        case {
            "role": "tool",
            "content": str(content),
            "toolCallId": str(call_id),
            "isError": bool(is_error),
        }:
            return ToolMessage(call_id, content, is_error)
    return None


def test_a_match_statement_answer_passes_and_int_for_bool_fails() -> None:
    assert check_parse_session_message(match_parse).ok

    def int_pattern(value: Any) -> Message | None:
        match value:
            case {"role": "tool", "content": str(c), "toolCallId": str(i), "isError": int(e)}:
                return ToolMessage(i, c, e)  # type: ignore[arg-type]  # the mistake itself
        return match_parse(value)

    assert len(failed(check_parse_session_message(int_pattern))) == 2  # isError 0 and 1


def test_a_truthy_check_of_id_and_name_fails_exactly_the_empty_string_rows() -> None:
    # the chapter's table: typeof id/name === "string", 放弃了 "松散的 truthy 判断"
    names = failed(check_parse_session_message(lambda v: reader_parse(v, "truthy id and name")))
    assert [name.split("  (")[1] for name in names] == [
        "id 是空字符串也合法：查类型，不查真假)",
        "name 是空字符串也合法：查类型，不查真假)",
    ]


def test_a_parser_that_checks_no_field_and_catches_every_exception_fails() -> None:
    # the checker builds the answer's messages with constructors that check nothing, as the
    # chapter's object literals do: every row whose check was left to them now fails
    report = check_parse_session_message(try_except_parse)
    names = [name.split("  (")[1] for name in failed(report)]
    assert "content 不是字符串)" in names and "isError 是 0，不是布尔值)" in names
    assert "toolCalls 是空对象，不是数组)" in names and "id 不是字符串)" in names


def shortcut_parse(value: Any) -> Message | None:
    """01's shortcut: only `toolCalls` checked (a list), every other field left to the
    constructors, their TypeError (and a missing key's KeyError) caught."""
    try:
        item = value if isinstance(value, dict) else None
        if item is None:
            return None
        if item.get("role") == "user":
            return UserMessage(item["content"])
        if item.get("role") == "assistant" and isinstance(item.get("toolCalls"), list):
            calls = [ToolCall(c["id"], c["name"], c["input"]) for c in item["toolCalls"]]
            return AssistantMessage(item["content"], calls)
        if item.get("role") == "tool":
            return ToolMessage(item["toolCallId"], item["content"], item["isError"])
        return None
    except (TypeError, KeyError):
        return None


def test_a_try_except_around_the_constructors_fails_and_is_told_so() -> None:
    # 01: "别用 try/except 接住构造函数的 TypeError 来代替判别"; graded by the kit's own
    # constructors, this answer passed all 41 rows
    report = check_parse_session_message(shortcut_parse)
    assert not report.ok
    details = [result.detail for result in report.results if not result.passed]
    assert len(details) >= 8
    assert all(detail.endswith(words().leaning_on_constructors) for detail in details)
    # the right answers still pass: 90's if-chain and the package's own (the chapter's code)
    assert check_parse_session_message(chapter_shaped_parse).ok
    assert check_parse_session_message(as_reference(session_module.parse_session_message)).ok


def dict_parse(value: Any) -> Any:
    """The chapter's object literals, written as dicts: right checks, wrong kind of value."""
    message = chapter_shaped_parse(value)
    return None if message is None else to_record(message)


def int_is_error_parse(value: Any) -> Message | None:
    """`isinstance(is_error, int)`: lets 0 and 1 through (bool is a subclass of int)."""
    if isinstance(value, dict) and value.get("role") == "tool":
        item = value
        if (
            isinstance(item.get("content"), str)
            and isinstance(item.get("toolCallId"), str)
            and isinstance(item.get("isError"), int)
        ):
            return ToolMessage(item["toolCallId"], item["content"], item["isError"])
        return None
    return chapter_shaped_parse(value)


def content_unchecked_parse(value: Any) -> Message | None:
    """The content checked for user only (01's 最容易走错的第一处), nothing caught."""
    return reader_parse(value, "content checked only for user")


def first_call_only_parse(value: Any) -> Message | None:
    """The chapter's table, 放弃了什么: `value.every(...)` written as a check of `toolCalls[0]`
    alone (只查第一个（漏后面的坏项）), every call then built as it stands."""
    if isinstance(value, dict) and value.get("role") == "assistant":
        raw = value.get("toolCalls")
        if not isinstance(value.get("content"), str) or not isinstance(raw, list):
            return None
        if raw and reader_calls(raw[:1]) is None:
            return None
        tool_calls = [ToolCall(c["id"], c["name"], c["input"]) for c in raw]
        return AssistantMessage(value["content"], tool_calls)
    return chapter_shaped_parse(value)


def try_except_parse(item: Any) -> Message | None:
    """The reader's try/except answer: no field checked, the constructors' errors caught."""
    try:
        role = item["role"]
        if role == "user":
            return UserMessage(item["content"])
        if role == "assistant":
            tool_calls = [ToolCall(c["id"], c["name"], c["input"]) for c in item["toolCalls"]]
            return AssistantMessage(item["content"], tool_calls)
        if role == "tool":
            return ToolMessage(item["toolCallId"], item["content"], item["isError"])
    except Exception:
        return None
    return None


def _chapter_shaped_iterating(value: Any) -> Message | None:
    item = value if isinstance(value, dict) else None
    if item is None or not isinstance(item.get("role"), str):
        return None
    if not isinstance(item.get("content"), str):
        return None
    if item["role"] == "assistant" and "toolCalls" in item:
        try:
            calls = [ToolCall(c["id"], c["name"], c["input"]) for c in item["toolCalls"]]
        except (TypeError, KeyError):
            return None
        if not all(reader_calls([c.to_record()]) for c in calls):
            return None
        return AssistantMessage(item["content"], calls)
    return chapter_shaped_parse(value)


def calls_the_packages_parser(value: Any) -> Message | None:
    return parse_session_message(value)


def calls_the_parser_by_its_module(value: Any) -> Message | None:
    return session_module.parse_session_message(value)  # a module's attribute, not a name


HINTS = {  # a planted wrong answer, and the one hint its FAILs carry
    "shortcut": (shortcut_parse, "leaning_on_constructors"),
    "dicts": (dict_parse, "message_as_dict"),
    "isError int": (int_is_error_parse, "is_error_int"),
    "content unchecked": (content_unchecked_parse, "content_in_one_branch"),
    "first call only": (first_call_only_parse, "calls_every"),
    "toolCalls iterated": (_chapter_shaped_iterating, "calls_not_array"),
    "the package's parser": (calls_the_packages_parser, "called_the_answer"),
    "the parser by its module": (calls_the_parser_by_its_module, "called_the_answer"),
}
HINT_NAMES = sorted({name for _, name in HINTS.values()})


def hints_in(report: CheckReport) -> set[str]:
    details = [result.detail for result in report.results]
    return {name for name in HINT_NAMES if any(getattr(words(), name) in d for d in details)}


@pytest.mark.parametrize("mistake", HINTS)
def test_each_wrong_parser_gets_its_named_hint_and_no_other(mistake: str) -> None:
    answer, hint = HINTS[mistake]
    report = check_parse_session_message(answer)
    assert not report.ok
    assert hints_in(report) == {hint}


@pytest.mark.parametrize("mistake", PARSER_MISTAKES)
def test_the_parse_hints_name_only_mistakes_they_are_about(mistake: str) -> None:
    # the other planted mistakes: no hint about constructors standing in, nor about dicts
    report = check_parse_session_message(lambda value: reader_parse(value, mistake))
    assert not hints_in(report) & {"leaning_on_constructors", "message_as_dict"}


def test_checking_only_the_first_call_fails_each_later_bad_call_and_is_told_every() -> None:
    # the chapter's table: `value.every(...)`, 放弃了 "只查第一个（漏后面的坏项）"; a bad second
    # call fails with a KeyError or gets through, and the FAIL says each call must pass
    report = check_parse_session_message(first_call_only_parse)
    fails = [result for result in report.results if not result.passed]
    assert [result.name.split("  (")[1] for result in fails] == [
        "第二项不合格)",
        "第一项合格，第二项的 id 不是字符串)",
    ]
    assert all(result.detail.endswith("：" + words().calls_every) for result in fails)
    assert "KeyError: 'input'" in fails[0].detail  # what it did, then what it missed
    # an answer that checks no call at all is not told it checked the first one only
    unchecked = check_parse_session_message(lambda v: reader_parse(v, "call id any type"))
    assert "calls_every" not in hints_in(unchecked)
    assert "calls_every" in hints_in(
        check_parse_session_message(lambda v: reader_parse(v, "only the first call checked"))
    )


def test_a_dict_for_a_message_is_told_what_the_kit_builds_instead() -> None:
    report = check_parse_session_message(dict_parse)
    user_row = next(r for r in report.results if r.name.endswith("(user)"))
    assert user_row.detail == (
        "应当返回 UserMessage(content='x')，但实际返回了 {'role': 'user', 'content': 'x'}："
        + words().message_as_dict
    )


def test_an_answer_that_raises_one_same_error_everywhere_is_shown_once_then_in_one_line() -> None:
    # v5's review: `lambda v: 1/0` gave 42 near-identical FAIL lines
    report = check_parse_session_message(lambda value: 1 / 0)
    error = "ZeroDivisionError: division by zero"
    assert len(report.results) == 44 and not any(r.passed for r in report.results)
    for shown_report in (repr(report), report._repr_html_()):
        assert shown_report.count("FAIL") == 2 and shown_report.count(error) == 2, shown_report
        assert words().crashed_again(43, error) in shown_report
    crashes_twice = check_parse_session_message(  # two alike are each still listed
        lambda value: 1 / 0 if value == [] or value == "user" else None
    )
    assert repr(crashes_twice).count(error) == 2 and "也都抛出了" not in repr(crashes_twice)


def test_an_answer_that_calls_the_function_it_should_write_fails_every_row() -> None:
    # `return parse_session_message(value)` would pass every row: it is the package's answer
    for answer in (calls_the_packages_parser, calls_the_parser_by_its_module):
        report = check_parse_session_message(answer)
        assert not any(result.passed for result in report.results)
        first, *rest = report.results  # the whole hint once, the rest in one line
        assert first.detail.endswith(words().called_the_answer)
        assert all(r.folded for r in rest) and not first.folded
        for shown_report in (repr(report), report._repr_html_()):
            assert shown_report.count(words().called_the_answer) == 1
            assert shown_report.count(words().called_again(len(rest))) == 1
            assert shown_report.count("FAIL") == 2, shown_report
        assert words().called_again(len(rest)).startswith(f"另外 {len(rest)} 个用例")
    assert session_module.parse_session_message(json.loads('{"role":"user","content":"x"}'))


def test_checking_with_unchecked_constructors_leaves_the_readers_names_alone() -> None:
    before = dict(globals())
    check_parse_session_message(shortcut_parse)
    check_parse_session_message(calls_the_parser_by_its_module)
    assert globals() == before
    assert vars(session_module)["parse_session_message"].__module__ == session_module.__name__
    assert UserMessage is mini_agent.UserMessage and ToolCall is mini_agent.ToolCall
    with pytest.raises(TypeError):
        UserMessage(None)  # type: ignore[arg-type]  # the kit's constructors still check


def test_unchecked_constructors_make_the_kits_own_messages() -> None:
    unchecked = with_unchecked_messages(lambda: UserMessage(None))  # type: ignore[arg-type]
    message = unchecked()
    assert type(message) is UserMessage and message.content is None
    assert isinstance(message, UNCHECKED[UserMessage])  # what a reader's isinstance would see
    made = with_unchecked_messages(lambda: AssistantMessage("x", [ToolCall("a", "r", {})]))()
    assert made == AssistantMessage("x", (ToolCall("a", "r", {}),))  # a list kept as a tuple


@pytest.mark.parametrize("mistake", PARSER_MISTAKES)
def test_every_plausible_wrong_parser_fails(mistake: str) -> None:
    report = check_parse_session_message(lambda value: reader_parse(value, mistake))
    assert not report.ok, mistake


def test_is_error_one_zero_and_the_string_false_are_each_a_failed_row() -> None:
    names = failed(check_parse_session_message(lambda v: reader_parse(v, "isError 0 or 1 allowed")))
    assert [name.split("  (")[1] for name in names] == [
        "isError 是 0，不是布尔值)",
        "isError 是 1，不是布尔值)",
    ]
    names = failed(check_parse_session_message(lambda v: reader_parse(v, "isError truthiness")))
    assert '{"role":"tool","content":"x","toolCallId":"a","isError":"false"}' in names[2]


def test_a_parser_that_raises_on_bad_data_fails_and_says_so() -> None:
    report = check_parse_session_message(lambda v: reader_parse(v, "dict indexing"))
    details = [result.detail for result in report.results if not result.passed]
    assert details[0] == (
        "应当返回 None，但实际抛出了 TypeError: list indices must be integers or slices, not str"
        "（释义：用字符串给数组取下标：没有先确认它是对象）"
    )
    assert any("KeyError: 'role'" in detail for detail in details)


# --- 02 record_line -------------------------------------------------------------------------


def fields_of(message: Message) -> dict[str, Any]:
    """The record a reader builds by hand (`to_record` is the answer's half: refused)."""
    if isinstance(message, UserMessage):
        return {"role": "user", "content": message.content}
    if isinstance(message, AssistantMessage):
        calls = [call.to_record() for call in message.tool_calls]
        return {"role": "assistant", "content": message.content, "toolCalls": calls}
    assert isinstance(message, ToolMessage)
    return {"role": "tool", "content": message.content, "toolCallId": message.tool_call_id,
            "isError": message.is_error}  # fmt: skip


def reader_line(message: Message) -> str:
    return json.dumps(
        fields_of(message), ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )


def dumps_with(**options: Any) -> Callable[[Message], str]:
    settings: dict[str, Any] = {"ensure_ascii": False, "separators": (",", ":"), "allow_nan": False}
    settings |= options
    return lambda message: json.dumps(fields_of(message), **settings)


def without_key(key: str, when: Callable[[Any], bool]) -> Callable[[Message], str]:
    def line(message: Message) -> str:
        record = fields_of(message)
        if key in record and when(record[key]):
            del record[key]
        return json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)

    return line


WRONG_LINES: dict[str, Callable[[Message], str]] = {
    "json.dumps defaults": lambda message: json.dumps(fields_of(message)),
    "ASCII escapes": dumps_with(ensure_ascii=True),
    "spaces after , and :": dumps_with(separators=(", ", ": ")),
    "sorted keys": dumps_with(sort_keys=True),
    "NaN written": dumps_with(allow_nan=True),
    "newline included": lambda message: reader_line(message) + "\n",
    "empty toolCalls left out": without_key("toolCalls", lambda calls: calls == []),
    "isError false left out": without_key("isError", lambda flag: flag is False),
    "pretty-printed": dumps_with(indent=1, separators=(",", ":")),
}


def test_the_packages_record_line_and_a_faithful_reader_pass_every_case() -> None:
    assert check_record_line(as_reference(record_line)).ok
    assert check_record_line(reader_line).ok


def test_the_chapters_json_stringify_passes_nan_written_as_null() -> None:
    # JSON.stringify writes NaN as null; the kit refuses it: both answers pass
    assert check_record_line(chapter_stringify).ok
    (message,) = [m for name, m in record_line_cases() if "NaN" in name]
    assert chapter_stringify(message).endswith('"input":null}]}')


@pytest.mark.parametrize("name", WRONG_LINES)
def test_every_plausible_wrong_record_line_fails(name: str) -> None:
    assert not check_record_line(WRONG_LINES[name]).ok, name


def test_default_json_dumps_fails_exactly_the_non_ascii_and_nan_cases() -> None:
    spaced = dumps_with(ensure_ascii=True, allow_nan=True)
    non_ascii = [name for name, m in record_line_cases() if not to_json(m).isascii()]
    assert "user，emoji 原样写出" in non_ascii
    assert failed(check_record_line(spaced)) == [
        *non_ascii,
        "工具输入里的 NaN：本包拒绝，本章写成 null",
    ]


KEY_ORDER_INFERRED = (
    "本章省略了消息的字面量（return { ... }），键的顺序是本包的推断（role、content，然后是"
    "这个 role 自己的字段；调用里是 id、name、input）；练习要的是和本包写出的会话文件一字不差的一行"
)


def tool_id_first(message: Message) -> str:
    record = fields_of(message)
    if record["role"] == "tool":
        record = {"role": "tool", "toolCallId": record["toolCallId"], **record}
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def test_a_line_with_only_its_keys_in_another_order_is_told_so() -> None:
    report = check_record_line(tool_id_first)
    assert failed(report) == ["tool 结果", "tool 错误：isError true"]
    assert details(report)["tool 结果"] == (
        """应当返回 '{"role":"tool","content":"a 的内容","toolCallId":"a","isError":false}'，"""
        """但实际返回了 '{"role":"tool","toolCallId":"a","content":"a 的内容","isError":false}'："""
        "内容相同，键的顺序不同：你写的是 role、toolCallId、content、isError，"
        f"本包写的是 role、content、toolCallId、isError。{KEY_ORDER_INFERRED}"
    )


def test_the_key_order_note_finds_the_first_object_out_of_order_at_any_depth() -> None:
    sorted_keys = details(check_record_line(WRONG_LINES["sorted keys"]))
    assert sorted_keys["user"].endswith(
        f"内容相同，键的顺序不同：你写的是 content、role，本包写的是 role、content。{KEY_ORDER_INFERRED}"
    )

    def name_first(message: Message) -> str:
        record = fields_of(message)
        if isinstance(message, AssistantMessage):
            record["toolCalls"] = [
                {"name": c.name, "id": c.id, "input": c.input} for c in message.tool_calls
            ]
        return json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)

    inner = details(check_record_line(name_first))
    assert list(inner) == ["assistant，带两个调用", "assistant，调用的 input 是 null", FLOATS]
    assert inner[FLOATS].endswith(
        f"{words().line_floats}；内容相同，键的顺序不同：你写的是 name、id、input，"
        f"本包写的是 id、name、input。{KEY_ORDER_INFERRED}"
    )
    assert (
        "你写的是 name、id、input，本包写的是 id、name、input。" in inner["assistant，带两个调用"]
    )


def test_other_differences_with_the_same_json_value_get_no_key_order_note() -> None:
    for name in ("ASCII escapes", "spaces after , and :", "pretty-printed"):
        assert not any(
            "键的顺序" in d for d in details(check_record_line(WRONG_LINES[name])).values()
        )


def to_json(message: Message) -> str:
    return json.dumps(to_record(message), ensure_ascii=False)


def test_refusing_nan_passes_whatever_the_exception_says() -> None:
    def refuses(message: Message) -> str:
        calls = message.tool_calls if isinstance(message, AssistantMessage) else ()
        if calls and calls[0].input != calls[0].input:  # NaN is not equal to itself
            raise TypeError("no")
        return reader_line(message)

    assert check_record_line(refuses).ok


def details(report: CheckReport) -> dict[str, str]:
    return {result.name: result.detail for result in report.results if not result.passed}


def test_a_report_shows_a_line_as_the_file_holds_it_one_backslash_per_escape() -> None:
    failed_cases = details(check_record_line(WRONG_LINES["ASCII escapes"]))
    assert failed_cases["user，中文原样写出"] == (
        """应当返回 '{"role":"user","content":"记忆续上了"}'，"""
        """但实际返回了 '{"role":"user","content":"\\u8bb0\\u5fc6\\u7eed\\u4e0a\\u4e86"}'："""
        "中文或 emoji 被写成了 \\uXXXX：json.dumps 默认 ensure_ascii=True，JSON.stringify 原样写出；"
        "写 ensure_ascii=False"
    )
    newline = failed_cases["user，内容里的换行仍在同一行"]
    assert newline.startswith("""应当返回 '{"role":"user","content":"第一行\\n第二行"}'""")
    assert "\\\\" not in "".join(failed_cases.values())  # no doubled backslash anywhere


def test_a_trailing_newline_is_shown_as_an_escape_on_the_same_line() -> None:
    detail = details(check_record_line(WRONG_LINES["newline included"]))["user"]
    assert """但实际返回了 '{"role":"user","content":"hello"}\\n'：末尾多了换行""" in detail
    assert "\n" not in detail  # one screen line


def test_when_the_text_looks_the_same_the_report_falls_back_to_python_repr() -> None:
    def raw_newline(message: Message) -> str:  # a real newline where the file needs `\\n`
        return reader_line(message).replace("\\n", "\n")

    detail = details(check_record_line(raw_newline))["user，内容里的换行仍在同一行"]
    assert detail == (
        """应当返回 '{"role":"user","content":"第一行\\\\n第二行"}'，"""
        """但实际返回了 '{"role":"user","content":"第一行\\n第二行"}'"""
    )


def test_shown_values_quote_strings_with_their_text_at_every_depth() -> None:
    message = AssistantMessage("a\\b", (ToolCall("x", "read", {"path": "c:\\d"}),))
    assert shown(message) == (
        "AssistantMessage(content='a\\b', "
        "tool_calls=(ToolCall(id='x', name='read', input={'path': 'c:\\d'}),))"
    )
    assert shown([None, 1, True, ("\t",)]) == "[None, 1, True, ('\\t',)]"


def test_a_record_line_that_writes_nan_is_told_any_exception_will_do() -> None:
    (detail,) = [
        r.detail for r in check_record_line(WRONG_LINES["NaN written"]).results if r.detail
    ]
    assert detail.startswith("应当抛出异常（哪种都行），或照本章返回 '")
    assert '"input":null}]}\'，但实际返回了 ' in detail


# --- 03 load_session -------------------------------------------------------------------------


def refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # as JSON.parse: NaN and Infinity are not JSON


def test_an_answer_that_keeps_blank_lines_is_told_to_skip_them_not_about_u2028() -> None:
    # review 14: without `if not line: continue`, the only hint was U+2028's, and wrong
    told = details(check_load_session(lambda path: reader_load(path, "blank lines kept")))
    blank = [
        name for name, detail in told.items() if detail.endswith(words().blank_line_not_skipped)
    ]
    assert {"空文件：[]", "空行被跳过", "内容里有原样的 U+2028：只按 \\n 分行"} <= set(blank), told
    assert not any(words().split_at_u2028 in detail for detail in told.values())
    assert "if not line: continue" in words().blank_line_not_skipped


def test_an_answer_that_gives_the_other_layers_phrase_is_told_which_is_which() -> None:
    # review 16: a JSON error raised as `invalid session record` got no reason
    told = details(check_load_session(lambda path: reader_load(path, "one phrase for both")))
    assert told and all(d.endswith(words().phrases_swapped) for d in told.values()), told


def test_an_answer_that_skips_only_bad_records_is_told_bad_lines_are_never_skipped() -> None:
    # review 17: `continue` where the parser said None got no reason
    def skips_records(path: Path) -> list[Message]:
        text = path.read_bytes().decode("utf-8") if path.is_file() else ""
        messages = []
        for number, line in enumerate(text.split("\n"), start=1):
            if not line:
                continue
            try:
                value = json.loads(line)
            except ValueError as err:
                raise ValueError(f"invalid session JSON at line {number}") from err
            message = parse_session_message(value)
            if message is not None:  # the mistake: a line that is no record, skipped
                messages.append(message)
        return messages

    told = details(check_load_session(skips_records))
    assert "第 2 行 assistant 缺少 toolCalls" in told
    assert told["第 2 行 assistant 缺少 toolCalls"].endswith(words().bad_line_skipped)


def test_an_answer_that_appends_the_parsers_none_is_told_to_raise() -> None:
    # review 12: `messages.append(parse_session_message(value))` got no reason
    def appends_none(path: Path) -> list[Any]:
        text = path.read_bytes().decode("utf-8") if path.is_file() else ""
        return [parse_session_message(json.loads(line)) for line in text.split("\n") if line]

    told = [d for d in details(check_load_session(appends_none)).values() if "None" in d]
    assert told and all(d.endswith(words().none_in_messages) for d in told)


def test_an_answer_that_reads_nan_gets_a_note_not_a_fail() -> None:
    # review 11: json.loads reads NaN, which the chapter's JSON.parse refuses
    assert words().load_reads_nan not in check_load_session(reader_load).notes
    noted = check_load_session(lambda path: reader_load(path, "reads NaN"))
    assert noted.ok and words().load_reads_nan in noted.notes
    assert "parse_constant" in words().load_reads_nan and "不计较" in words().load_reads_nan
    starter = check_load_session(lambda path: [*reader_load(path, "reads NaN"), 1])
    assert not starter.ok and starter.notes == ()  # not before the cases pass: not a FAIL's noise


def reader_load(path: Path, mistake: str = "") -> list[Message]:
    """A reader's load_session: physical lines, blank lines skipped, the chapter's phrases."""
    try:
        if mistake == "read_text":  # universal newlines: a lone \r becomes \n
            text = path.read_text(encoding="utf-8")
        else:
            text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        if mistake == "missing file raises":
            raise
        return []
    except OSError:
        if mistake == "every OS error is []":
            return []
        raise
    lines = text.splitlines() if mistake == "splitlines" else text.split("\n")
    messages = []
    for number, line in enumerate(lines, start=1):
        if mistake == "strip" and not line.strip():
            continue
        if not line and mistake != "blank lines kept":
            continue
        if mistake == "logical line numbers":  # the chapter's split("\n").filter(Boolean)
            number = sum(1 for earlier in lines[:number] if earlier)
        logical = sum(1 for earlier in lines[:number] if earlier)
        if mistake == "zero-based":
            number -= 1
        try:
            refuse = None if mistake == "reads NaN" else refuse_constant
            value = json.loads(line, parse_constant=refuse)
        except ValueError as err:
            if mistake == "bad lines skipped":
                continue
            raise ValueError(f"invalid session JSON at line {number}") from err
        message = parse_session_message(value)
        if message is None:
            if mistake == "bad lines skipped":
                continue
            phrase = "JSON" if mistake == "one phrase for both" else "record"
            if mistake == "record errors count non-blank lines":
                number = logical
            raise ValueError(f"invalid session {phrase} at line {number}")
        messages.append(message)
    return messages


BAD_SECOND_LINES = [  # the cases whose line 2 is bad, in LOAD_CASES' order
    "第 2 行 JSON 被截断",
    "第 2 行 assistant 缺少 toolCalls",
    "第 2 行 tool 缺少 toolCallId",
    "第 2 行 role 未知",
    "第 2 行是 JSON，但不是对象",
]

LOAD_MISTAKES = [
    "missing file raises",
    "every OS error is []",
    "splitlines",
    "strip",
    "zero-based",
    "bad lines skipped",
    "one phrase for both",
    "read_text",
    "record errors count non-blank lines",
]


def test_the_packages_loader_and_a_faithful_reader_pass_every_case() -> None:
    report = check_load_session(as_reference(load_session))
    assert report.ok
    assert len(report.results) == len(LOAD_CASES) + 2  # the directory, one numbering
    assert check_load_session(reader_load).ok


@pytest.mark.parametrize("mistake", LOAD_MISTAKES)
def test_every_plausible_wrong_loader_fails(mistake: str) -> None:
    assert not check_load_session(lambda path: reader_load(path, mistake)).ok, mistake


# Which cases each loader fails, as measured on Linux: the same on Windows, where a case file
# written in text mode would get \r\n line ends and other verdicts (the Windows run checks it).
VERDICTS = {
    "": [],
    "logical line numbers": [],
    "missing file raises": ["文件不存在：[]"],
    "every OS error is []": ["路径是目录：操作系统错误照常抛出"],
    "splitlines": ["内容里有原样的 U+2028：只按 \\n 分行", _LONE_CR],
    "read_text": [_LONE_CR],
    "record errors count non-blank lines": [
        "两种坏行的行号用同一种数法：都数物理行，或者都照本章数非空行"
    ],
    "strip": ["只有空格的一行不算空行"],
    "zero-based": [
        *BAD_SECOND_LINES,
        "坏的第 2 行不会被跳过，即使后面还有好行",
        "空行之后的坏行：物理行 4，或照本章数非空行：第 2 行",
        "空行之后的坏记录：物理行 3，或照本章数非空行：第 2 行",  # by chance: from_zero_by_chance
        "只有空格的一行不算空行",
        _LONE_CR,
    ],
    "bad lines skipped": [
        *BAD_SECOND_LINES,
        "坏的第 2 行不会被跳过，即使后面还有好行",
        "空行之后的坏行：物理行 4，或照本章数非空行：第 2 行",
        "空行之后的坏记录：物理行 3，或照本章数非空行：第 2 行",
        "只有空格的一行不算空行",
        _LONE_CR,
    ],
    "one phrase for both": [
        *BAD_SECOND_LINES[1:],
        "空行之后的坏记录：物理行 3，或照本章数非空行：第 2 行",
    ],
}


def test_a_line_of_spaces_kept_as_blank_is_told_why_it_is_a_bad_line() -> None:
    # JSON.parse("   ") throws, and filter(Boolean) keeps "   ": the FAIL says both
    report = check_load_session(lambda path: reader_load(path, "strip"))
    spaces = next(result for result in report.results if result.name == "只有空格的一行不算空行")
    assert not spaces.passed and spaces.detail.endswith("：" + words().spaces_not_blank)
    # (in words, not as "   ": HTML shows three spaces as one)
    assert all(
        said in words().spaces_not_blank for said in ("filter(Boolean)", "真值", "JSON.parse")
    )
    others = [r.detail for r in report.results if r.name != spaces.name]
    assert not any(words().spaces_not_blank in detail for detail in others)


@pytest.mark.parametrize("mistake", VERDICTS, ids=lambda mistake: mistake or "faithful")
def test_each_loader_fails_the_same_cases_on_every_system(mistake: str) -> None:
    assert failed(check_load_session(lambda path: reader_load(path, mistake))) == VERDICTS[mistake]


def test_a_loader_that_reads_text_mode_is_told_about_the_lone_carriage_return() -> None:
    report = check_load_session(lambda path: reader_load(path, "read_text"))
    (detail,) = [r.detail for r in report.results if not r.passed]
    assert detail.startswith(
        "应当抛出以 'invalid session JSON at line 1' 开头的错误（释义：第 1 行不是合法的 JSON），"
        "但实际返回了 [UserMessage(content='hi'), UserMessage(content='hi')]：Path.read_text"
    )
    assert "read_bytes().decode" in detail


def test_physical_lines_for_one_error_and_non_blank_lines_for_the_other_fail() -> None:
    report = check_load_session(
        lambda path: reader_load(path, "record errors count non-blank lines")
    )
    (result,) = [r for r in report.results if not r.passed]
    assert "两种数法" in result.detail
    # each numbering on its own passes both blank-line cases
    assert check_load_session(lambda path: reader_load(path, "logical line numbers")).ok


def test_the_chapters_line_count_passes() -> None:
    # split("\n").filter(Boolean) numbers non-blank lines: the chapter's way is not a bug
    assert check_load_session(lambda path: reader_load(path, "logical line numbers")).ok
    assert check_load_session(chapter_load_session).ok


def test_a_wrong_line_number_names_both_right_answers() -> None:
    report = check_load_session(lambda path: reader_load(path, "zero-based"))
    details = {r.name: r.detail for r in report.results if not r.passed}
    assert details["空行之后的坏行：物理行 4，或照本章数非空行：第 2 行"] == (
        "应当抛出以 'invalid session JSON at line 4' 开头的错误（释义：第 4 行不是合法的 JSON），"
        "或照本章抛出以 'invalid session JSON at line 2' 开头的错误（释义：第 2 行不是合法的 JSON），"
        "但实际抛出了 ValueError: invalid session JSON at line 3（释义：第 3 行不是合法的 JSON）："
        + words().line_numbers_from_one
    )


def test_a_directory_refused_the_windows_way_passes_the_directory_case() -> None:
    # Path.read_text on a directory: IsADirectoryError on POSIX, PermissionError on Windows
    def as_on_windows(path: Path) -> list[Message]:
        if path.is_dir():
            raise PermissionError(13, "Permission denied", str(path))
        return reader_load(path)

    assert check_load_session(as_on_windows).ok


def test_a_loader_that_swallows_every_os_error_fails_the_directory_case() -> None:
    report = check_load_session(lambda path: reader_load(path, "every OS error is []"))
    assert failed(report) == ["路径是目录：操作系统错误照常抛出"]


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
    report = check_load_session(lambda path: reader_load(path, "bad lines skipped"))
    (detail,) = [r.detail for r in report.results if r.name == "第 2 行 JSON 被截断"]
    assert detail == (
        "应当抛出以 'invalid session JSON at line 2' 开头的错误（释义：第 2 行不是合法的 JSON），"
        "但实际返回了 [UserMessage(content='hi')]：" + words().bad_line_skipped
    )


@pytest.mark.parametrize(
    ("name", "note"),
    [
        ("newline included", "末尾多了换行：这一行不含 \\n，append_session 写盘时才加上它"),
        ("spaces after , and :", "多了空格：json.dumps 默认在逗号和冒号后面加空格"),
        ("pretty-printed", "多了空格"),
    ],
)
def test_the_same_json_written_another_way_says_which_way(name: str, note: str) -> None:
    # Python's json.dumps defaults are the likely mistakes of a reader who knows JSON.stringify
    report = details(check_record_line(WRONG_LINES[name]))
    assert len(report) == len(record_line_cases()) - 1  # all but NaN, refused by either
    assert all(f"：{note}" in detail for detail in report.values()), report


def test_escaped_non_ascii_is_told_to_write_it_as_itself() -> None:
    escaped = details(check_record_line(dumps_with(ensure_ascii=True)))
    assert "user" not in escaped and "user，emoji 原样写出" in escaped
    assert all(
        detail.endswith(
            "：中文或 emoji 被写成了 \\uXXXX：json.dumps 默认 ensure_ascii=True，"
            "JSON.stringify 原样写出；写 ensure_ascii=False"
        )
        for detail in escaped.values()
    ), escaped


def test_defaults_of_json_dumps_get_every_note_that_applies_and_a_wrong_value_none() -> None:
    both = details(check_record_line(dumps_with(ensure_ascii=True, separators=None)))
    assert "多了空格" in both["user，中文原样写出"] and "\\uXXXX" in both["user，中文原样写出"]
    assert "：多了空格" in both["user"] and "\\uXXXX" not in both["user"]


def test_a_wrong_phrase_on_the_lone_carriage_return_gets_no_note_about_read_text() -> None:
    def wrong_phrase(path: Path) -> object:
        try:
            return reader_load(path, "")
        except Exception as err:
            raise ValueError(str(err).replace("invalid session", "Invalid session")) from None

    report = check_load_session(wrong_phrase)
    (lone,) = [r for r in report.results if r.name == _LONE_CR]
    assert not lone.passed and "read_text" not in lone.detail


def test_a_record_with_other_keys_is_told_which() -> None:
    empty_calls = details(check_record_line(WRONG_LINES["empty toolCalls left out"]))
    assert list(empty_calls) == ["没有调用的 assistant：toolCalls []"]
    assert '没有调用时也要写 "toolCalls":[]' in empty_calls["没有调用的 assistant：toolCalls []"]
    no_flag = details(check_record_line(WRONG_LINES["isError false left out"]))
    assert no_flag["tool 结果"].endswith("：少了键 isError：本章的每种记录都带着它的全部字段")

    def snake_case(message: Message) -> str:
        record = {
            re.sub(r"[A-Z]", lambda m: "_" + m[0].lower(), key): value
            for key, value in fields_of(message).items()
        }
        return json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)

    snake = details(check_record_line(snake_case))
    assert snake and all("磁盘上的键是本章的驼峰写法" in d for d in snake.values()), snake


def test_nan_written_as_nan_is_told_how_to_refuse_it_or_write_null() -> None:
    (detail,) = details(check_record_line(WRONG_LINES["NaN written"])).values()
    assert detail.endswith("写 allow_nan=False 让它报错，或者照本章写成 null")


def test_an_answer_that_calls_the_parsers_branches_or_the_loaders_loop_fails() -> None:
    # the one implementation's helpers are the answer too: discriminate (01's branches) and
    # parse_session_lines / parse_session_bytes (03's line loop), by name or as an attribute
    def by_discriminate(value: Any) -> Message | None:
        message = session_module.discriminate(value)
        return None if isinstance(message, str) else message

    def by_the_loop(path: Path) -> list[Message]:
        from mini_agent import store

        try:
            return session_module.parse_session_lines(store.read_lines(path), path)
        except FileNotFoundError:
            return []

    assert not check_parse_session_message(by_discriminate).ok
    assert not check_load_session(by_the_loop).ok
    assert check_load_session(as_reference(session_module.load_session)).ok


def test_a_line_built_on_to_record_is_told_it_called_the_answer() -> None:
    # to_record is the exercise's first half (the fields, isError included): not an answer
    report = check_record_line(lambda m: json.dumps(to_record(m), ensure_ascii=False))
    assert not any(r.passed for r in report.results if "NaN" not in r.name)
    assert words().called_the_answer in report.results[0].detail


def test_an_input_of_null_taken_for_a_missing_key_is_told_the_chapter_checks_the_key() -> None:
    # a third reader: `c.get("input") is not None` failed "input 可以是 null" with no reason
    def by_value(value: Any) -> Any:
        return reader_parse(value, "input checked by value")

    failed = [r for r in check_parse_session_message(by_value).results if not r.passed]
    assert [r.name.split("  ")[0] for r in failed] == ["toolCalls " + CALLS_CASES[0][1]]
    assert words().input_may_be_null in failed[0].detail


def test_an_answer_with_no_assistant_branch_yet_is_not_told_about_a_null_input() -> None:
    # review 8: with only the user branch written, the null-input case alone got the hint
    def user_only(item: Any) -> Any:
        user = isinstance(item, dict) and item.get("role") == "user"
        return (
            UserMessage(item["content"]) if user and isinstance(item.get("content"), str) else None
        )

    told = [r.detail for r in check_parse_session_message(user_only).results if not r.passed]
    assert told and not any(words().input_may_be_null in detail for detail in told)


def test_an_answer_that_tests_strings_for_truth_is_told_an_empty_string_is_a_string() -> None:
    # review 10: `if not item.get("toolCallId")` passed every case; now "" cases fail, named
    def truthy(item: Any) -> Any:
        if not isinstance(item, dict) or not isinstance(item.get("content"), str):
            return None
        if item.get("role") == "user" and item["content"]:
            return UserMessage(item["content"])
        if item.get("role") == "tool" and item.get("toolCallId") and item.get("isError") in (0, 1):
            return ToolMessage(item["toolCallId"], item["content"], item["isError"])
        return parse_session_message(item) if item.get("role") == "assistant" else None

    report = check_parse_session_message(truthy)
    told = {r.name.split("(")[-1].rstrip(")"): r.detail for r in report.results if not r.passed}
    for name in (
        "content 是空字符串也合法：查类型，不查真假",
        "toolCallId 是空字符串也合法：查类型，不查真假",
    ):
        assert told[name].endswith(words().empty_string_falsy), told
    assert "isinstance(x, str)" in words().empty_string_falsy


def test_a_parser_with_a_fallback_branch_is_told_the_chapter_has_none() -> None:
    # review 19: every unknown role taken as a user message got no reason
    def fallback(item: Any) -> Any:
        if isinstance(item, dict) and isinstance(item.get("content"), str):
            return UserMessage(item["content"])  # any role, even "nope"
        return UserMessage("x") if isinstance(item, list) else None  # not an object, taken too

    told = details(check_parse_session_message(fallback))
    roles = [d for name, d in told.items() if "未知 role" in name or "区分大小写" in name]
    assert len(roles) == 3 and all(d.endswith(words().unknown_role_taken) for d in roles)


def test_a_parser_that_raises_is_told_it_only_tells_what_a_value_is() -> None:
    # review 15: `raise ValueError("bad role")` for an unknown role got no reason
    def raises(item: Any) -> Any:
        if isinstance(item, dict) and item.get("role") not in ("user", "assistant", "tool"):
            raise ValueError("bad role")
        return None

    told = [d for d in details(check_parse_session_message(raises)).values() if "bad role" in d]
    assert told and all(d.endswith(words().parser_never_raises) for d in told)


def test_an_input_required_to_be_an_object_is_told_any_json_will_do() -> None:
    # review 14: isinstance(input, dict) failed "只查结构，不查含义" (input 1) with no reason
    def object_inputs(item: Any) -> Any:
        calls = item.get("toolCalls") if isinstance(item, dict) else None
        if isinstance(calls, list) and any(
            isinstance(c, dict) and not isinstance(c.get("input"), dict) for c in calls
        ):
            return None
        return reader_parse(item)

    told = details(check_parse_session_message(object_inputs))
    assert len(told) == 2 and all(d.endswith(words().input_may_be_null) for d in told.values())


def test_calling_the_answer_inside_ones_own_except_is_told_in_a_note() -> None:
    # a third reader: `try: return parse_session_message(value) except Exception: return None`
    # got ten bare FAILs, since its except swallowed the CalledTheAnswer
    def swallowing(value: Any) -> Any:
        try:
            return parse_session_message(value)
        except Exception:
            return None

    report = check_parse_session_message(swallowing)
    assert not report.ok and not any("CalledTheAnswer" in r.detail for r in report.results)
    assert report.notes[-1] == words().called_and_swallowed(
        "mini_agent.session.parse_session_message"
    )
    assert not check_parse_session_message(as_reference(parse_session_message)).notes  # cleared


def test_handing_in_the_package_or_its_line_is_not_an_answer() -> None:
    # the second reader: `lambda m: m.line` and the package's own functions passed every case
    assert not check_record_line(lambda message: message.line).ok
    assert not check_parse_session_message(parse_session_message).ok
    assert not check_load_session(load_session).ok
    told = check_record_line(lambda message: message.line).results[0].detail
    assert "CalledTheAnswer: Message.line" in told and words().called_the_answer in told


def test_constructors_reached_through_the_module_check_nothing_either() -> None:
    # `mini_agent.UserMessage(...)` bypassed the unchecked constructors (39 of 41 passed)
    def through_the_module(value: Any) -> Any:
        try:
            if value["role"] == "user":
                return mini_agent.UserMessage(value["content"])
            if value["role"] == "tool":
                return mini_agent.ToolMessage(
                    value["toolCallId"], value["content"], value["isError"]
                )
            calls = [
                mini_agent.ToolCall(c["id"], c["name"], c["input"]) for c in value["toolCalls"]
            ]
            return mini_agent.AssistantMessage(value["content"], calls)
        except (TypeError, KeyError):
            return None

    report = check_parse_session_message(through_the_module)
    assert not report.ok
    assert any(words().leaning_on_constructors in r.detail for r in report.results)


def test_splitlines_at_u2028_is_told_why() -> None:
    def by_splitlines(path: Path) -> list[Message]:
        if not Path(path).exists():
            return []
        messages = []
        text = Path(path).read_bytes().decode("utf-8")
        for number, line in enumerate(text.splitlines(), start=1):
            if not line:
                continue
            try:
                value = json.loads(line)
            except ValueError:
                raise ValueError(f"invalid session JSON at line {number}") from None
            message = session_module.parse_session_message(value)
            if message is None:
                raise ValueError(f"invalid session record at line {number}")
            messages.append(message)
        return messages

    (told,) = [r.detail for r in check_load_session(by_splitlines).results if "U+2028" in r.name]
    assert told.endswith(words().split_at_u2028)


# --- 03: the reader's numbering from 0, the reader's own phrase --------------------------


def numbered_from_zero(path: Path) -> list[Message]:
    """03 as a reader wrote it: `enumerate(text.split("\\n"))` without `start=1`."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except FileNotFoundError:
        return []
    messages = []
    for number, line in enumerate(text.split("\n")):
        if not line:
            continue
        try:
            value = json.loads(line)
        except ValueError:
            raise ValueError(f"invalid session JSON at line {number}") from None
        message = parse_session_message(value)
        if message is None:
            raise ValueError(f"invalid session record at line {number}")
        messages.append(message)
    return messages


def in_chinese(path: Path) -> list[Message]:
    """03 with the phrases translated: `第 N 行不是合法的 JSON` for the chapter's English."""
    try:
        return reader_load(path)
    except ValueError as err:
        number = str(err).rsplit(" ", 1)[-1]
        kind = "JSON" if "JSON" in str(err) else "会话记录"
        raise ValueError(f"第 {number} 行不是合法的{kind}") from None


def test_lines_numbered_from_zero_are_told_lines_count_from_one() -> None:
    report = check_load_session(numbered_from_zero)
    told = details(report)
    assert len(told) == 10
    # review 8: the bad record after one blank line matched the chapter's numbering by chance
    by_chance = "空行之后的坏记录：物理行 3，或照本章数非空行：第 2 行"
    assert told.pop(by_chance) == words().from_zero_by_chance
    assert all(detail.endswith("：" + words().line_numbers_from_one) for name, detail in
               told.items() if name != _LONE_CR), told  # fmt: skip
    # the lone \r: line 0, which no editor shows
    assert told[_LONE_CR].endswith("：" + words().line_zero)
    assert not any(words().spaces_not_blank in detail for detail in told.values())


def test_the_strip_hint_is_for_an_answer_that_skips_the_line_of_spaces_only() -> None:
    for answer in (numbered_from_zero, in_chinese):
        spaces = details(check_load_session(answer))["只有空格的一行不算空行"]
        assert words().spaces_not_blank not in spaces


def test_a_phrase_of_ones_own_is_told_to_use_the_chapters_words() -> None:
    told = details(check_load_session(in_chinese))
    assert len(told) == 10
    assert all(detail.endswith("：" + words().chapter_phrase) for detail in told.values()), told
    assert all(
        said in words().chapter_phrase
        for said in ("invalid session JSON at line N", "invalid session record at line N")
    )
    # a right phrase with a wrong number is not told about the phrase
    zero = details(check_load_session(numbered_from_zero))
    assert not any(words().chapter_phrase in detail for detail in zero.values())


# --- 02: numbers JavaScript writes otherwise, several differences in one line ----------------

FLOATS = "工具输入里的小数：JSON.stringify 写 1 和 1e-7，json.dumps 写 1.0 和 1e-07，都算对"


def test_floats_json_dumps_writes_otherwise_are_a_known_difference_noted_not_counted() -> None:
    (message,) = [m for name, m in record_line_cases() if name == FLOATS]
    assert record_line(message).endswith('"input":{"factor":1,"epsilon":1e-7}}]}')  # as node
    assert reader_line(message).endswith('"input":{"factor":1.0,"epsilon":1e-07}}]}')
    report = check_record_line(reader_line)
    assert report.ok and report.notes == (words().line_floats,)
    assert "07a_beyond_the_chapter.ipynb#json-stringify" in words().line_floats
    for right in (as_reference(record_line), chapter_stringify):
        assert check_record_line(right).ok and check_record_line(right).notes == ()

    def other_float(message: Message) -> str:  # neither JavaScript's form nor json.dumps'
        return reader_line(message).replace("1e-07", "0.0000001")

    assert failed(check_record_line(other_float)) == [FLOATS]


def starter_line(message: Message) -> str:
    """02's starter code: the tool record lacks isError; json.dumps escapes Chinese."""
    fields = fields_of(message)
    fields.pop("isError", None)
    return json.dumps(fields, separators=(",", ":"))


def test_a_line_with_several_differences_is_told_each_of_them() -> None:
    told = details(check_record_line(starter_line))["tool 结果"]
    assert "\\u7684" in repr(told)  # the escape shown as the reader's line holds it
    assert told.endswith(
        "：少了键 isError：本章的每种记录都带着它的全部字段；" + words().line_ascii
    ), told


# --- 01: toolCalls that is no array, the precondition moved into a branch ---------------


def test_tool_calls_iterated_not_checked_as_an_array_is_told_is_array() -> None:
    report = check_parse_session_message(_chapter_shaped_iterating)
    told = details(report)
    assert [name.split("  (")[1] for name in told] == [
        "toolCalls 是空对象，不是数组)",
        "toolCalls 是空字符串，不是数组)",
    ]
    assert all(detail.endswith("：" + words().calls_not_array) for detail in told.values())
    assert "Array.isArray(value) && value.every" in words().calls_not_array
    # the try/except answer the reader wrote: bare FAILs on these rows before
    shortcut = details(check_parse_session_message(try_except_parse))
    for row in ("空对象", "空字符串"):
        (detail,) = [d for name, d in shortcut.items() if f"toolCalls 是{row}，不是数组" in name]
        assert detail.endswith("：" + words().calls_not_array), detail


def test_content_checked_in_one_branch_is_told_the_common_precondition() -> None:
    told = details(check_parse_session_message(content_unchecked_parse))
    assert told and all(d.endswith("：" + words().content_in_one_branch) for d in told.values())
    assert all(said in words().content_in_one_branch for said in ("公共前提", "判别顺序"))


# --- a hint repeated on many cases is said once -------------------------------------------


def spaced_line(message: Message) -> str:
    """02 with json.dumps' default separators: a space after every `:` and `,`."""
    return json.dumps(fields_of(message), ensure_ascii=False)


@pytest.mark.parametrize(
    ("check", "answer", "hint"),
    [
        (check_parse_session_message, shortcut_parse, "leaning_on_constructors"),
        (check_record_line, spaced_line, "line_spaces"),
        (check_load_session, numbered_from_zero, "line_numbers_from_one"),
    ],
)
def test_a_hint_repeated_on_many_cases_is_shown_in_full_once(
    check: Callable[[Any], CheckReport], answer: Callable[..., Any], hint: str
) -> None:
    # the fifth reader: one explanation printed 9 to 13 times in one report
    report = check(answer)
    text = getattr(words(), hint)
    hinted = [r for r in report.results if not r.passed and text in r.detail]
    assert len(hinted) >= 5  # every FAIL still carries its hint, for tests and tools
    for shown_report, written in ((repr(report), str), (report._repr_html_(), html.escape)):
        assert shown_report.count(written(text)) == 1, shown_report
        assert shown_report.count(written(words().same_as_above(text))) == len(hinted) - 1
        assert shown_report.count("FAIL") == len(failed(report))  # every case still listed


# --- 03: the reasons the fifth reader missed ---------------------------------------------


def starter_load(path: Path) -> list[Message]:
    """03's starter code, run as it stands."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError:
        return []
    messages = []
    lines = [line for line in text.splitlines() if line]
    for number, line in enumerate(lines, start=1):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        message = parse_session_message(value)
        if message is None:
            raise ValueError(f"invalid session record at line {number}")
        messages.append(message)
    return messages


def test_swallowing_every_os_error_is_told_only_a_missing_file_is_empty() -> None:
    report = check_load_session(lambda path: reader_load(path, "every OS error is []"))
    (detail,) = details(report).values()
    assert detail.endswith("：" + words().only_missing_file_is_empty)
    assert all(said in words().only_missing_file_is_empty
               for said in ("FileNotFoundError", "ENOENT", "其他错误原样向上抛，不吞"))  # fmt: skip


def test_skipping_bad_lines_is_told_the_chapter_never_skips() -> None:
    for answer in (starter_load, lambda path: reader_load(path, "bad lines skipped")):
        told = details(check_load_session(answer))
        skipped = told["坏的第 2 行不会被跳过，即使后面还有好行"]
        assert skipped.endswith("：" + words().bad_line_skipped)
        # the line of spaces was skipped as a bad line, not as a blank one: no strip() hint
        assert told[_SPACES].endswith("：" + words().bad_line_skipped)
        assert not any(words().spaces_not_blank in detail for detail in told.values())
    assert "行号" in words().bad_line_skipped


def test_the_starter_is_told_splitlines_splits_at_u2028() -> None:
    told = details(check_load_session(starter_load))
    assert told["内容里有原样的 U+2028：只按 \\n 分行"].endswith("：" + words().split_at_u2028)
    assert all(said in words().split_at_u2028 for said in ("U+2029", "\\x85", 'split("\\n")'))
    directory = told["路径是目录：操作系统错误照常抛出"]  # the starter's `except OSError`
    assert directory.endswith("：" + words().only_missing_file_is_empty)
