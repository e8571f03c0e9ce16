"""exercises.py, notebooks 04-07: the checks pass the package and a faithful reader, and fail
every plausible wrong answer."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from mini_agent import (
    AssistantMessage,
    ContextBudgetError,
    Message,
    ToolMessage,
    UserMessage,
    append_session,
    context_units,
    estimate_context_chars,
    load_session,
    to_record,
    trim_context,
)
from mini_agent.context import SMALLEST_UNIT_TOO_BIG
from mini_agent.json_form import js_length
from mini_agent.session import PathLike, record_line
from teaching import buggy, demo06
from teaching.chapter_variants import chapter_load_session, chapter_stringify
from teaching.exercises import (
    RECORD_CHAPTER_ORDER_NOTE,
    RECORD_FAILURE_CASE,
    CheckReport,
    check_context_max_chars,
    check_context_units,
    check_estimate_context_chars,
    check_load_session,
    check_record,
    check_record_line,
    check_trim_context,
    reference_record,
    separator_readings,
    smallest_budget_keeping_question,
    watched_first_run,
)
from teaching.mistakes import units_adjacent_only, units_off_by_one
from teaching.samples import chapter_picture
from teaching.text import words
from tests.chapter_reference import context_units as literal_units
from tests.chapter_reference import estimate_context_chars as literal_estimate
from tests.chapter_reference import trim_context as literal_trim
from tests.helpers import as_reference

Units = list[list[Message]]


def failed(report: CheckReport) -> list[str]:
    return [r.name for r in report.results if not r.passed]


def names(report: CheckReport) -> list[str]:
    return [r.name for r in report.results]


# --- 04 context_units ---------------------------------------------------------------------


def declares(message: Message, call_id: str) -> bool:
    return isinstance(message, AssistantMessage) and any(
        c.id == call_id for c in message.tool_calls
    )


def reader_units(messages: Sequence[Message], mistake: str = "") -> Units:
    """The chapter's loop, as a reader writes it; `mistake` plants one known error."""
    units: Units = []
    index = len(messages) - 1
    while index >= 0:
        message = messages[index]
        start = index
        if isinstance(message, ToolMessage):
            found = -1
            candidates = range(index - 1, -1, -1)
            if mistake == "farthest assistant":
                candidates = range(0, index)
            for i in candidates:
                if mistake == "any assistant" and isinstance(messages[i], AssistantMessage):
                    found = i
                    break
                if declares(messages[i], message.tool_call_id):
                    found = i
                    break
            if mistake == "assistantIndex > 0":
                start = found if found > 0 else index
            elif mistake == "orphan glued to what precedes":
                start = found if found >= 0 else max(index - 1, 0)
            else:
                start = found if found >= 0 else index
        unit = list(messages[start : index + 1])
        if mistake == "slice without + 1" and start < index:
            unit = list(messages[start:index])  # messages[j:i]: the result itself left out
        if mistake == "two messages" and start < index:
            unit = [messages[start], messages[index]]
        if mistake == "orphans dropped" and isinstance(message, ToolMessage) and start == index:
            unit = []
        if unit:
            units.append(unit) if mistake == "newest first" else units.insert(0, unit)
        index = start - 1
    return units


def forward_units(messages: Sequence[Message]) -> Units:
    """A forward scan: an assistant takes the tool results right after it, nothing between."""
    units: Units = []
    for message in messages:
        if (
            isinstance(message, ToolMessage)
            and units
            and declares(units[-1][0], message.tool_call_id)
        ):
            units[-1].append(message)
        else:
            units.append([message])
    return units


WRONG_UNITS: dict[str, Callable[[Sequence[Message]], Any]] = {
    "one message per unit": lambda messages: [[m] for m in messages],
    "forward scan": forward_units,
    **{
        mistake: partial(reader_units, mistake=mistake)
        for mistake in (
            "farthest assistant",
            "any assistant",
            "assistantIndex > 0",
            "orphan glued to what precedes",
            "orphans dropped",
            "newest first",
            "slice without + 1",
            "two messages",
        )
    },
}


def test_the_package_and_a_faithful_reader_pass_the_unit_check() -> None:
    assert check_context_units(as_reference(context_units)).ok
    assert check_context_units(reader_units).ok
    assert check_context_units(literal_units).ok  # the chapter's loop, transcribed


@pytest.mark.parametrize("name", WRONG_UNITS)
def test_every_plausible_wrong_context_units_fails(name: str) -> None:
    assert not check_context_units(WRONG_UNITS[name]).ok, name


def test_a_wrong_unit_is_shown_by_position_in_the_history() -> None:
    report = check_context_units(WRONG_UNITS["one message per unit"])
    (picture,) = [r for r in report.results if r.name == "本章的那张图"]
    assert picture.detail == (
        "应当返回 [[#0 user], [#1 assistant(a,b), #2 tool a, #3 tool b]]，"
        "但实际返回了 [[#0 user], [#1 assistant(a,b)], [#2 tool a], [#3 tool b]]："
        + words().units_never_grouped
    )


UNITS_NOT_LISTS = "本章的 Message[][] 是数组的数组，本包返回 list 套 list"


def test_units_as_tuples_fail_saying_a_unit_is_a_list_in_the_same_notation() -> None:
    report = check_context_units(lambda ms: [tuple(unit) for unit in reader_units(ms)])
    assert len(failed(report)) == len(report.results) - 1  # all but the empty history
    (picture,) = [r for r in report.results if r.name == "本章的那张图"]
    assert picture.detail == (
        "应当返回 [[#0 user], [#1 assistant(a,b), #2 tool a, #3 tool b]]，"
        "但实际返回了 [(#0 user,), (#1 assistant(a,b), #2 tool a, #3 tool b)]："
        f"消息和分组都对了，但单元是 tuple，应当是 list：{UNITS_NOT_LISTS}；"
        "05 里还要写 unit + kept，tuple 和 list 不能相加"
    )


def test_a_tuple_of_units_fails_saying_the_outer_one_is_a_list_too() -> None:
    outer = check_context_units(lambda ms: tuple(reader_units(ms)))
    assert not any(r.passed for r in outer.results)
    (picture,) = [r for r in outer.results if r.name == "本章的那张图"]
    assert picture.detail == (
        "应当返回 [[#0 user], [#1 assistant(a,b), #2 tool a, #3 tool b]]，"
        "但实际返回了 ([#0 user], [#1 assistant(a,b), #2 tool a, #3 tool b])："
        f"消息和分组都对了，但外层是 tuple，应当是 list：{UNITS_NOT_LISTS}"
    )
    both = check_context_units(lambda ms: tuple(tuple(unit) for unit in reader_units(ms)))
    assert "但外层和每个单元都是 tuple，应当是 list" in both.results[1].detail
    assert both.results[1].detail.startswith("应当返回 [[#0 user]]，但实际返回了 ((#0 user,),)：")


def test_wrong_units_as_tuples_get_no_note_about_lists() -> None:
    wrong = WRONG_UNITS["one message per unit"]
    report = check_context_units(lambda ms: [tuple(unit) for unit in wrong(ms)])
    (picture,) = [r for r in report.results if r.name == "本章的那张图"]
    assert picture.detail == (
        "应当返回 [[#0 user], [#1 assistant(a,b), #2 tool a, #3 tool b]]，"
        "但实际返回了 [(#0 user,), (#1 assistant(a,b),), (#2 tool a,), (#3 tool b,)]："
        + words().units_never_grouped
    )  # the grouping is wrong: that, not the brackets, is what to fix first


def test_the_right_units_newest_first_are_told_the_order_is_reversed() -> None:
    report = check_context_units(WRONG_UNITS["newest first"])
    reversed_note = words().units_reversed
    assert reversed_note.startswith("单元都对，但顺序反了：你返回的是从新到旧")
    multi = [r for r in report.results if not r.passed]
    assert multi and all(r.detail.endswith(f"：{reversed_note}") for r in multi)
    wrong_and_reversed = check_context_units(
        lambda ms: WRONG_UNITS["one message per unit"](ms)[::-1]
    )
    (picture,) = [r for r in wrong_and_reversed.results if r.name == "本章的那张图"]
    assert not picture.passed and reversed_note not in picture.detail  # wrong units: no note


def test_a_unit_cut_short_or_cut_to_two_messages_is_told_what_the_slice_holds() -> None:
    for mistake, note in (("slice without + 1", words().units_slice_end),
                          ("two messages", words().units_two_messages)):  # fmt: skip
        report = check_context_units(WRONG_UNITS[mistake])
        (picture,) = [r for r in report.results if r.name == "本章的那张图"]
        assert not picture.passed and picture.detail.endswith(f"：{note}"), mistake
    assert "messages[j:i + 1]" in words().units_slice_end
    assert "不是刚好两条消息" in words().units_two_messages
    # one call, one result: the slice without + 1 loses the result; two messages are right there
    cut = {r.name: r for r in check_context_units(WRONG_UNITS["slice without + 1"]).results}
    assert cut["一次调用，一个结果"].detail.endswith(words().units_slice_end)
    two = {r.name: r for r in check_context_units(WRONG_UNITS["two messages"]).results}
    assert two["一次调用，一个结果"].passed
    for other in ("farthest assistant", "one message per unit", "forward scan"):
        results = check_context_units(WRONG_UNITS[other]).results
        assert not any(words().units_slice_end in r.detail or words().units_two_messages in r.detail
                       for r in results), other  # fmt: skip


def test_the_chapters_own_double_loop_is_the_first_answer_and_fails_only_the_linear_step() -> None:
    # the chapter's double loop, as the oracle transcribes it (a reader writes it so first)
    assert check_context_units(literal_units).ok
    advanced = check_context_units(literal_units, linear=True)
    (step,) = failed(advanced)
    assert step.startswith("进阶：200 条孤立结果")
    (result,) = [r for r in advanced.results if not r.passed]
    assert "读了 20100 次 assistant 的 tool_calls" in result.detail


def indexed_units(messages: Sequence[Message]) -> list[list[Message]]:
    """04's 进阶 as a reader writes it: one forward pass (call id -> latest declarer), then the
    chapter's backward scan looking the declarer up."""
    latest: dict[str, int] = {}
    declared_by = [-1] * len(messages)
    for i, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            declared_by[i] = latest.get(message.tool_call_id, -1)
        elif isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                latest[call.id] = i
    units: list[list[Message]] = []
    index = len(messages) - 1
    while index >= 0:
        found = declared_by[index]
        start = found if found >= 0 else index
        units.insert(0, list(messages[start : index + 1]))
        index = start - 1
    return units


def test_a_forward_scan_passes_the_linear_step() -> None:
    assert check_context_units(as_reference(context_units), linear=True).ok
    assert check_context_units(indexed_units, linear=True).ok
    assert not check_context_units(reader_units, linear=True).ok  # the chapter's loop
    wrong = check_context_units(WRONG_UNITS["orphans dropped"], linear=True)
    assert [r.detail for r in wrong.results if r.name.startswith("进阶：")] == [
        "切出的单元和本章的不同：先让上面的用例全部通过"
    ]


def test_the_farthest_assistant_fails_only_the_repeated_id_case() -> None:
    assert failed(check_context_units(WRONG_UNITS["farthest assistant"])) == [
        "重复的 id：最近的声明者胜出"
    ]


def test_the_earliest_declarer_is_told_to_search_backwards_from_the_result() -> None:
    report = check_context_units(WRONG_UNITS["farthest assistant"])
    (wrong,) = [r for r in report.results if not r.passed]
    assert wrong.detail.endswith("：" + words().units_earliest_declarer)


@pytest.mark.parametrize("name", [name for name in WRONG_UNITS if name != "farthest assistant"])
def test_no_other_wrong_units_are_told_about_the_earliest_declarer(name: str) -> None:
    report = check_context_units(WRONG_UNITS[name])
    assert not any(words().units_earliest_declarer in r.detail for r in report.results)


# --- 05 estimate_context_chars and trim_context ------------------------------------------------


def indexed(chars: Callable[[Message], int]) -> Callable[[Sequence[Message]], int]:
    """A reader's estimate from a per-message count, naming the index of a message it cannot
    serialize (as the chapter says), so that it fails only for what `chars` counts."""

    def estimate(messages: Sequence[Message]) -> int:
        total = 0
        for index, message in enumerate(messages):
            try:
                total += chars(message)
            except ValueError as err:
                raise ValueError(f"message {index}: {err}") from err
        return total

    return estimate


WRONG_ESTIMATES: dict[str, Callable[[Sequence[Message]], float]] = {
    "UTF-8 bytes": indexed(lambda m: len(record_line(m).encode()) + 1),
    "no newline": lambda ms: sum(len(record_line(m)) for m in ms),
    "content only": lambda ms: sum(len(m.content) for m in ms),
    "ASCII escapes": lambda ms: sum(
        len(record_line(m).encode("ascii", "backslashreplace")) + 1 for m in ms
    ),
    "one per message": len,
    "a float": lambda ms: float(estimate_context_chars(ms)),
    "spaces after : and ,": lambda ms: sum(
        len(json.dumps(to_record(m), ensure_ascii=False)) + 1 for m in ms
    ),
    "json.dumps defaults": lambda ms: sum(len(json.dumps(to_record(m))) + 1 for m in ms),
    "json.dumps's ASCII escapes": lambda ms: sum(
        len(json.dumps(to_record(m), separators=(",", ":"))) + 1 for m in ms
    ),
    "two separators per message": lambda ms: estimate_context_chars(ms) + 2 * len(ms),
    "+2 per message (a CRLF)": lambda ms: sum(len(record_line(m)) + 2 for m in ms),
    "a bool": lambda ms: True,
}


def json_stringify_length(message: Message) -> int:
    return len(record_line(message))  # JSON.stringify(message).length, in code points


CHAPTER_ESTIMATES: dict[str, Callable[[Sequence[Message]], int]] = {
    "a newline after each line (the package)": as_reference(estimate_context_chars),
    "the chapter's literal transcription": literal_estimate,
    "one separator between messages": lambda ms: max(
        indexed(json_stringify_length)(ms) + len(ms) - 1, 0
    ),
    "JSON.stringify(messages).length": lambda ms: (
        indexed(json_stringify_length)(ms) + max(len(ms) - 1, 0) + 2
    ),
}


@pytest.mark.parametrize("reading", CHAPTER_ESTIMATES)
def test_every_reading_of_the_chapters_separator_passes(reading: str) -> None:
    assert check_estimate_context_chars(CHAPTER_ESTIMATES[reading]).ok, reading


def test_the_report_names_the_readers_separator_beside_the_packages() -> None:
    between = check_estimate_context_chars(CHAPTER_ESTIMATES["one separator between messages"])
    assert between.notes[0] == (
        "本章的那张图（4 条消息）：你的分隔开销是消息之间各一个（像 join 的分隔符）；"
        "本包是每条一个换行，估算值正好等于会话文件的字符数"
    )
    array = check_estimate_context_chars(CHAPTER_ESTIMATES["JSON.stringify(messages).length"])
    assert array.notes[0] == (
        "本章的那张图（4 条消息）：你的分隔开销是像 JSON.stringify(messages) 那样：逗号加一对方括号；"
        "本包是每条一个换行，估算值正好等于会话文件的字符数"
    )


def test_the_packages_own_separator_is_named_once() -> None:
    report = check_estimate_context_chars(as_reference(estimate_context_chars))
    assert report.notes == (
        "本章的那张图（4 条消息）：你的分隔开销是每条消息一个，和本包相同：JSONL 每行末尾的换行，"
        "估算值因此正好等于会话文件的字符数",
    )


def test_a_wrong_estimate_is_told_each_reading_with_the_number_it_gives() -> None:
    report = check_estimate_context_chars(lambda ms: 0)
    (picture,) = [r for r in report.results if r.name == "本章的那张图"]
    history = chapter_picture()
    named = {
        "消息之间各一个": CHAPTER_ESTIMATES["one separator between messages"](history),
        "每条一个": CHAPTER_ESTIMATES["a newline after each line (the package)"](history),
        "JSON.stringify(messages) 的逗号和方括号": CHAPTER_ESTIMATES[
            "JSON.stringify(messages).length"
        ](history),
    }
    assert list(named.values()) == [353, 354, 355]
    said = "、".join(f"{total}（{reading}）" for reading, total in named.items())
    assert picture.detail == (
        "应当返回各条 JSON 的长度之和 350，再加本章的一种分隔开销："
        + said.replace("、355", "或 355")
        + "，但实际返回了 0"
    )
    # no message: nothing between and nothing after, but JSON.stringify([]) is "[]"
    assert separator_readings(0) == {0: "消息之间各一个、每条一个", 2: list(named)[-1]}


@pytest.mark.parametrize("name", WRONG_ESTIMATES)
def test_every_plausible_wrong_estimate_fails(name: str) -> None:
    assert not check_estimate_context_chars(WRONG_ESTIMATES[name]).ok, name


EMOJI_CASE = "中文和 emoji（😀 按码点算 1 个，按 UTF-16 码元算 2 个）"


def test_utf8_bytes_are_not_characters() -> None:
    assert failed(check_estimate_context_chars(WRONG_ESTIMATES["UTF-8 bytes"])) == [
        "本章的那张图",
        EMOJI_CASE,
        "内容里的换行和引号按转义后的字符数算",
    ]


@pytest.mark.parametrize(
    ("mistake", "form"),
    [("UTF-8 bytes", "bytes"), ("json.dumps's ASCII escapes", "ascii"),
     ("spaces after : and ,", "spaces"), ("json.dumps defaults", "both")],
)  # fmt: skip
def test_a_line_written_another_way_is_told_which_way(mistake: str, form: str) -> None:
    report = check_estimate_context_chars(WRONG_ESTIMATES[mistake])
    note = dict(words().estimate_forms)[form]
    failing = [r for r in report.results if not r.passed and "message 4" not in r.name]
    assert failing and all(r.detail.endswith(f"：{note}") for r in failing), mistake
    assert not any(r.passed for r in report.results if r.name == EMOJI_CASE)  # no chance pass
    assert report.notes == ()  # in particular no "you counted UTF-16 units"


def test_other_wrong_estimates_get_no_note_on_how_the_line_was_written() -> None:
    forms = [note for _, note in words().estimate_forms]
    for mistake in ("no newline", "content only", "one per message", "two separators per message",
                    "+2 per message (a CRLF)", "ASCII escapes"):  # fmt: skip
        details = [r.detail for r in check_estimate_context_chars(WRONG_ESTIMATES[mistake]).results]
        assert not any(note in detail for note in forms for detail in details), mistake


def test_several_slips_at_once_are_given_the_list_to_go_through() -> None:
    # review 15: ASCII escapes and two separators each at once failed with numbers only
    def two_slips(messages: Sequence[Message]) -> int:
        return sum(len(json.dumps(to_record(m), separators=(",", ":"))) + 2 for m in messages)

    told = [r.detail for r in check_estimate_context_chars(two_slips).results if not r.passed]
    counted = [detail for detail in told if "message 4" not in detail]
    assert counted and all(d.endswith("：" + words().estimate_checklist) for d in counted)
    assert "ensure_ascii=False" in words().estimate_checklist


# the chapter's JSON.stringify(message).length as JavaScript counts it: UTF-16 code units
def utf16_length(message: Message) -> int:
    return len(record_line(message).encode("utf-16-le")) // 2


utf16_estimate = indexed(lambda m: utf16_length(m) + 1)


def test_a_message_that_cannot_be_serialized_is_named_by_its_index() -> None:
    unnamed = check_estimate_context_chars(lambda ms: sum(json_stringify_length(m) + 1 for m in ms))
    assert failed(unnamed) == ["第 5 条消息里有循环引用：报错时带上 message 4"]
    assert unnamed.results[-1].detail == (
        "应当抛出一个带着 message 4 的错误（索引从 0 数起）：本章说“循环引用或不可序列化 message"
        " 会按索引报错”，但实际抛出了 ValueError: Circular reference detected"
        "（释义：有循环引用，写不成 JSON）"
    )
    named = indexed(json_stringify_length)  # names the index, 0-based
    assert check_estimate_context_chars(lambda ms: named(ms) + len(ms)).ok

    def from_one(messages: Sequence[Message]) -> int:  # message 5: counted from 1
        try:
            return named(messages) + len(messages)
        except ValueError as err:
            raise ValueError(str(err).replace("message 4", "message 5")) from err

    assert failed(check_estimate_context_chars(from_one)) == [
        "第 5 条消息里有循环引用：报错时带上 message 4"
    ]


POINTS_NOTE = (
    f"{EMOJI_CASE}：你数的是 Python 的字符（码点，len(str)），😀 算 1 个，得到 41；本章 TypeScript 的 .length "
    "和本包数的是 UTF-16 码元，😀 算 2 个，同样的分隔开销下得到 51。两种都算对，也都不是 token"
)


def test_utf16_units_and_code_points_both_pass_and_code_points_get_a_note() -> None:
    emoji = [UserMessage("中文" + "😀" * 10)]
    assert (estimate_context_chars(emoji), utf16_estimate(emoji)) == (51, 51)
    kit = check_estimate_context_chars(as_reference(estimate_context_chars))
    assert kit.ok and not any("码点" in note for note in kit.notes)
    named = indexed(json_stringify_length)  # code points, each message's index named
    points = check_estimate_context_chars(lambda ms: named(ms) + len(ms))
    assert points.ok and POINTS_NOTE in points.notes
    assert points.notes[0].startswith("本章的那张图（4 条消息）：你的分隔开销是每条消息一个")
    assert points.title == "estimate_context_chars（字符按码点数或按 UTF-16 码元数，都算对）"


def test_utf16_units_without_a_separator_still_fail() -> None:
    report = check_estimate_context_chars(indexed(utf16_length))
    assert failed(report) == ["本章的那张图"]  # one message: "between messages" adds nothing


def test_two_separators_per_message_get_the_chapters_sentence_back() -> None:
    report = check_estimate_context_chars(WRONG_ESTIMATES["+2 per message (a CRLF)"])
    (picture,) = [r for r in report.results if r.name == "本章的那张图"]
    chapter = "对每条完整 Message 使用 JSON.stringify(message) 的字符长度，再加分隔开销"
    assert not picture.passed and f"本章说“estimateContextChars() {chapter}”" in picture.detail
    assert "每条 1 个就是 354" in picture.detail


def chapters_trim(messages: Sequence[Message], max_chars: int) -> list[Message]:
    """老z's drawing as a reader writes it first: `unit + kept` re-measured at every step."""
    kept: list[Message] = []
    for unit in reversed(context_units(messages)):
        if estimate_context_chars([*unit, *kept]) > max_chars:
            if not kept:
                raise ValueError(
                    "context budget cannot contain the smallest consistent message unit"
                )
            break
        kept = [*unit, *kept]
    if not kept:
        raise ValueError("context budget cannot be empty")
    return kept


def test_the_chapters_own_trim_loop_is_the_first_answer_and_fails_only_the_linear_step() -> None:
    assert check_trim_context(chapters_trim).ok
    assert check_trim_context(literal_trim).ok
    advanced = check_trim_context(chapters_trim, linear=True)
    (step,) = failed(advanced)
    assert step.startswith("进阶：")
    (result,) = [r for r in advanced.results if not r.passed]
    assert "序列化了 20100 次" in result.detail and "平方级" in result.detail


def test_a_running_total_passes_the_linear_step() -> None:
    assert check_trim_context(reader_trim, linear=True).ok
    assert check_trim_context(as_reference(trim_context), linear=True).ok


def test_a_linear_trim_that_is_wrong_fails_the_linear_step_for_being_wrong() -> None:
    report = check_trim_context(lambda m, n: reader_trim(m, n, "oldest first"), linear=True)
    assert [r.detail for r in report.results if r.name.startswith("进阶：")] == [
        "裁剪结果和本章的不同：先让上面的用例全部通过"
    ]


def reader_trim(messages: Sequence[Message], max_chars: int, mistake: str = "") -> list[Message]:
    """The chapter's trimContext, as a reader writes it; `mistake` plants one known error."""
    units = context_units(messages)
    if not units and mistake != "empty is []":
        raise ValueError("context budget cannot be empty")
    kept: list[Message] = []
    used = 0
    for unit in reversed(units):
        size = estimate_context_chars(unit)
        fits = used + size < max_chars if mistake == "strict <" else used + size <= max_chars
        if mistake == "unit measured alone":
            fits = size <= max_chars
        if not fits:
            if mistake == "skip what does not fit":
                continue
            break
        kept = [*unit, *kept] if mistake != "oldest first" else [*kept, *unit]
        if mistake == "unit inserted whole":
            kept = [unit, *kept[len(unit) :]]  # type: ignore[list-item]  # kept.insert(0, unit)
        used += size
    if not kept and units and mistake != "nothing fits is []":
        raise ValueError("context budget cannot contain the smallest consistent message unit")
    return kept


def per_message_trim(messages: Sequence[Message], max_chars: int) -> list[Message]:
    kept: list[Message] = []
    for message in reversed(messages):
        if estimate_context_chars([message, *kept]) > max_chars:
            break
        kept.insert(0, message)
    return kept


TRIM_MISTAKES = [
    "empty is []",
    "strict <",
    "skip what does not fit",
    "oldest first",
    "nothing fits is []",
    "unit measured alone",
    "unit inserted whole",
]


def test_the_package_and_a_faithful_reader_pass_the_trim_check() -> None:
    assert check_trim_context(as_reference(trim_context)).ok
    assert check_trim_context(reader_trim).ok
    assert check_trim_context(literal_trim).ok  # the chapter's trimContext, transcribed


@pytest.mark.parametrize("mistake", TRIM_MISTAKES)
def test_every_plausible_wrong_trim_fails(mistake: str) -> None:
    assert not check_trim_context(lambda m, n: reader_trim(m, n, mistake)).ok, mistake


def test_per_message_trimming_fails_the_half_unit_and_error_cases() -> None:
    names = failed(check_trim_context(per_message_trim))
    assert "不拆单元：装得下两个结果、装不下它们的 assistant" in names
    assert "差一个字符装不下最新的单元：报错" in names
    assert "没有可发的：预算不能为空" in names
    assert "预算装得下全部" not in names


def test_a_missing_error_is_described_by_its_message_not_its_type() -> None:
    details = {r.name: r.detail for r in check_trim_context(per_message_trim).results}
    assert details["没有可发的：预算不能为空"] == (
        "应当抛出消息为 'context budget cannot be empty' 的错误"
        "（释义：裁剪后一个单元也没有，上下文不能为空），但实际返回了 []："
        + words().should_throw_empty
    )


def test_any_exception_type_with_the_chapters_phrase_passes() -> None:
    def plain_value_error(messages: Sequence[Message], max_chars: int) -> list[Message]:
        try:
            return reader_trim(messages, max_chars)
        except ContextBudgetError as err:
            raise ValueError(str(err)) from None

    assert check_trim_context(plain_value_error).ok


def test_the_right_messages_out_of_order_are_told_to_keep_the_historys_order() -> None:
    report = check_trim_context(lambda m, n: reader_trim(m, n, "oldest first"))
    note = words().kept_out_of_order
    out_of_order = [r for r in report.results if not r.passed]
    assert [r.name for r in out_of_order] == [
        "预算装得下全部",
        "预算恰好等于整段历史（比较用 >：刚好等于也装得下）",
        "预算停在一个单元中间：整个丢掉它，不留半个",
        "遇到第一个装不下的单元就停，不跳过",
    ]
    assert all(r.detail.endswith(f"：{note}") for r in out_of_order)
    skipping = check_trim_context(lambda m, n: reader_trim(m, n, "skip what does not fit"))
    assert not any(note in r.detail for r in skipping.results)  # other messages: no order note


def test_a_unit_inserted_whole_or_measured_alone_is_told_what_the_chapter_does() -> None:
    nested = check_trim_context(lambda m, n: reader_trim(m, n, "unit inserted whole"))
    failing = [r for r in nested.results if not r.passed]
    assert failing and all(r.detail.endswith(f"：{words().kept_nested}") for r in failing)
    assert "kept.unshift(...unit)" in words().kept_nested
    alone = check_trim_context(lambda m, n: reader_trim(m, n, "unit measured alone"))
    failing = [r for r in alone.results if not r.passed]
    assert "差一个字符：最早的单元被丢掉" in [r.name for r in failing]
    assert all(r.detail.endswith(f"：{words().kept_too_much}") for r in failing)
    skipping = check_trim_context(lambda m, n: reader_trim(m, n, "skip what does not fit"))
    assert not any(words().kept_too_much in r.detail for r in skipping.results)


def test_a_skipping_trim_with_greater_or_equal_fails_the_stop_case_and_is_told() -> None:
    # review 11: `>=` and `continue` together kept exactly the chapter's units in the stop case
    def both(messages: Sequence[Message], max_chars: int) -> list[Message]:
        kept: list[Message] = []
        for unit in reversed(context_units(messages)):
            if estimate_context_chars(unit + kept) >= max_chars:
                continue
            kept = unit + kept
        if not kept:
            raise ContextBudgetError(SMALLEST_UNIT_TOO_BIG)
        return kept

    told = {r.name: r.detail for r in check_trim_context(both).results if not r.passed}
    assert "遇到第一个装不下的单元就停，不跳过" in told
    skipped = [name for name, detail in told.items() if words().kept_skipping in detail]
    assert "预算恰好等于最新的单元（比较用 >：刚好等于也装得下）" in skipped, told
    assert told["没有可发的：预算不能为空"].endswith(words().empty_is_not_too_small)


def test_a_skipping_trim_fails_the_stop_case() -> None:
    report = check_trim_context(lambda m, n: reader_trim(m, n, "skip what does not fit"))
    assert "遇到第一个装不下的单元就停，不跳过" in failed(report)
    assert "预算恰好等于整段历史（比较用 >：刚好等于也装得下）" not in failed(report)


# --- 06 context_max_chars ----------------------------------------------------------------------


def test_request_three_keeps_the_question_from_the_whole_memory_on() -> None:
    least = smallest_budget_keeping_question()
    assert least == 750  # notebook 06's figure: 7 messages in memory at request 3
    for budget in (least, least + 1, 10**6):
        assert check_context_max_chars(budget).ok, budget
    assert check_context_max_chars(least, smallest=True).ok


@pytest.mark.parametrize("wrong", [700, 749, 50, 1, 0, -750, True, "750", 750.0, None])
def test_every_wrong_budget_fails(wrong: Any) -> None:
    assert not check_context_max_chars(wrong).ok


def test_a_budget_above_the_least_fails_only_when_the_least_is_asked_for() -> None:
    report = check_context_max_chars(751, smallest=True)
    assert [r.passed for r in report.results] == [True, False]
    assert report.results[1].detail.startswith("还有更小的预算也做得到：最小的预算正好装下")
    assert "750" not in repr(report).replace("= 751", "")  # review 10: no characters to copy


def test_a_budget_far_above_the_least_does_not_show_the_answer_before_the_least_is_found() -> None:
    # review 10: 100000 passed the first check, whose notes then listed request 3's 750
    for smallest in (False, True):
        shown = repr(check_context_max_chars(100_000, smallest=smallest))
        assert "750" not in shown and not re.search(r"\d 字符", shown), shown
    assert "750 字符" in repr(check_context_max_chars(750, smallest=True))


def test_a_wrong_budget_lists_what_each_request_sent_but_not_the_characters() -> None:
    # 06 asks the reader to predict the least budget: request 3's characters on disk are it
    report = check_context_max_chars(700)
    assert repr(report).splitlines() == [
        "context_max_chars = 700：1 个用例，通过 0 个",
        "  第 1 次请求：磁盘上 1 条消息；发出 1 条消息（预算 700）：发出 #0 到 #0，带着提问",
        "  第 2 次请求：磁盘上 4 条消息；发出 4 条消息（预算 700）：发出 #0 到 #3，带着提问",
        "  第 3 次请求：磁盘上 7 条消息；发出 6 条消息（预算 700）：发出 #1 到 #6，提问被裁掉",
        "  FAIL 第 3 次请求仍然带着用户的提问（#0 user） — "
        "用户的提问被裁掉了：预算装不下这次请求时内存里的全部消息"
        "（通过之后再列出每次请求的字符数；现在先用上面每条消息的字符数自己算一算）",
    ]
    for budget in (700, 749):
        for smallest in (False, True):
            shown = repr(check_context_max_chars(budget, smallest=smallest))
            assert "750" not in shown.replace(f"= {budget}", ""), (budget, smallest)


def test_a_budget_just_below_the_least_says_what_it_cannot_hold() -> None:
    report = check_context_max_chars(749, smallest=True)
    assert report.results[1].detail.startswith("这个预算装不下提问连同它后面的全部消息")


def test_the_right_budget_lists_the_characters_each_request_sent() -> None:
    report = check_context_max_chars(750, smallest=True)
    assert report.ok
    assert (
        "  第 3 次请求：磁盘上 7 条消息，750 字符；发出 7 条消息，750 字符（预算 750）：发出 #0 到 #6，带着提问"
        in repr(report).splitlines()
    )


def test_a_budget_below_the_newest_unit_reports_the_chapters_error_with_its_gloss() -> None:
    for budget in (40, 50):  # below the first request (63 characters)
        (result,) = check_context_max_chars(budget).results
        assert not result.passed
        assert result.detail == (
            "run_agent 没有跑完：裁剪时抛出了 ContextBudgetError: context budget cannot contain"
            " the smallest consistent message unit（释义：预算连最新的那个一致单元都装不下）"
        )


# --- 07 record() ------------------------------------------------------------------------------


def disk_first(messages: list[Message], session_path: PathLike | None, message: Message) -> None:
    if session_path is not None:
        append_session(session_path, message)
    messages.append(message)


def test_the_chapters_push_then_append_passes_with_a_question() -> None:
    report = check_record(reference_record)  # the chapter's order
    assert report.ok
    assert report.notes == (RECORD_CHAPTER_ORDER_NOTE,)


def test_the_packages_disk_first_order_passes_without_a_note() -> None:
    report = check_record(disk_first)
    assert report.ok
    assert report.notes == ()


def test_a_record_that_adds_the_refused_message_twice_fails() -> None:
    def twice(messages: list[Message], session_path: PathLike | None, message: Message) -> None:
        messages.append(message)
        if session_path is not None:
            try:
                append_session(session_path, message)
            except OSError:
                messages.append(message)
                raise

    assert failed(check_record(twice)) == ["写盘失败时把错误抛出去，不吞掉"]


def test_a_record_that_rewrites_the_whole_file_fails_the_restart_and_says_why() -> None:
    # the design table's rejected option: 单文件全量重写 (the file as memory would write it)
    def rewrites(messages: list[Message], session_path: PathLike | None, message: Message) -> None:
        messages.append(message)
        if session_path is not None:
            text = "".join(record_line(earlier) + "\n" for earlier in messages)
            Path(session_path).write_bytes(text.encode("utf-8"))

    report = check_record(rewrites)
    assert failed(report) == ["重启续上：从磁盘读回之后接着记录"]
    assert report.results[1].detail.startswith(
        "第 1 次 record（user）之后，文件里原有的字节变了（原来中间的一个空行没了）"
    )


def test_a_record_that_appends_twice_shows_both_sides_in_full_or_names_what_they_share() -> None:
    def twice(messages: list[Message], session_path: PathLike | None, message: Message) -> None:
        messages.append(message)
        if session_path is not None:
            append_session(session_path, message)
            if len(messages) in (1, 4):
                append_session(session_path, message)

    report = check_record(twice)
    assert report.results[0].detail == (  # review 17: and what a second copy most likely means
        "第 1 次 record（user）之后，磁盘上应当有 1 条 [#0 user]，实际有 2 条 [#0 user, #1 user]："
        + words().record_twice("磁盘上")
    )
    assert words().record_differs(4, "tool c2", "磁盘上", ["a", "b", "c", "d"], list("abcdd")) == (
        "第 4 次 record（tool c2）之后，磁盘上应当有 4 条 [#0 到 #3 两边相同]，"
        "实际有 5 条 [#0 到 #3 两边相同, #4 d]"
    )


def test_a_record_that_asks_if_the_path_is_truthy_passes_with_a_note() -> None:
    # the chapter writes `if (options.sessionPath)`: asking the path's truthiness is its own
    # test, so it passes; a note says what `is not None` adds (a falsy path object that is real)
    def truthy(messages: list[Message], session_path: PathLike | None, message: Message) -> None:
        messages.append(message)
        if session_path:
            append_session(session_path, message)

    report = check_record(truthy)
    assert failed(report) == [] and words().record_case_falsy_path not in names(report)
    assert names(report)[-1] == words().record_case_falsy_chapter  # review 12: 5 cases, not 4
    assert words().record_truthy_path in report.notes and "is not None" in report.notes[-1]
    falsy = check_record(disk_first)  # is not None, disk first: the falsy path is written
    assert names(falsy)[-1] == words().record_case_falsy_path and falsy.results[-1].passed
    assert words().record_truthy_path not in falsy.notes
    seeded = check_record(buggy.seeded_record)  # a bug elsewhere: the falsy case stays a case
    assert words().record_truthy_path not in seeded.notes


@pytest.mark.parametrize("name", [name for name, _ in buggy.WRONG_RECORDS])
def test_every_wrong_record_fails(name: str) -> None:
    wrong = dict(buggy.WRONG_RECORDS)[name]
    assert not check_record(wrong).ok, name


def test_the_seeded_bug_shows_only_without_a_session_path() -> None:
    report = check_record(buggy.seeded_record)
    assert failed(report) == ["没有 session_path：只记在内存里"]
    assert report.results[2].detail == (
        "第 1 次 record（user）之后，内存应当有 1 条 [#0 user]，实际有 0 条 []："
        + words().record_list_only_with_path
    )  # the starter's bug is where the append stands, not a rebinding
    assert "进内存这一步不该看有没有 session_path" in words().record_list_only_with_path


def test_a_record_that_crashes_is_a_failed_case_not_a_crashed_check() -> None:
    def crashes(messages: list[Message], session_path: PathLike | None, message: Message) -> None:
        raise KeyError("oops")

    report = check_record(crashes)
    assert failed(report)[:3] == [r.name for r in report.results][:3]
    assert report.results[0].detail == "第 1 次 record（user）抛出了 KeyError: 'oops'"


def test_the_record_check_leaves_no_file_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    assert tempfile.gettempdir() == str(tmp_path)  # the checks' folders go here
    check_record(buggy.swallows_disk_errors)
    check_context_max_chars(750)
    assert list(tmp_path.iterdir()) == []
    assert demo06.FIRST_RUN.context_max_chars == 700


def test_a_record_that_rebinds_the_list_is_told_to_change_the_callers_list() -> None:
    def rebinds(messages: list[Message], session_path: PathLike | None, message: Message) -> None:
        if session_path is not None:
            append_session(session_path, message)
        messages = messages + [message]  # noqa: RUF005 - the TypeScript spread habit, on purpose

    report = check_record(rebinds)
    unchanged = words().record_list_unchanged
    assert unchanged.startswith("传进来的列表一条也没多")
    assert [r.name for r in report.results if unchanged in r.detail] == failed(report)
    assert len(failed(report)) == 4  # every case but the refused write

    # a list that grows wrongly (the message twice) gets no such note
    def twice(messages: list[Message], session_path: PathLike | None, message: Message) -> None:
        messages += [message, message]

    assert not any(unchanged in r.detail for r in check_record(twice).results)


# --- every exercise: calling the function it asks for is not an answer ----------------------


# answers that call, by their global names (as a notebook's cell does), what they should write
CALLING: dict[str, tuple[Callable[..., CheckReport], Callable[..., Any]]] = {
    "record_line": (check_record_line, lambda message: record_line(message)),
    "chapter json_stringify": (
        check_record_line,
        lambda message: chapter_stringify(message),
    ),
    "load_session": (check_load_session, lambda path: load_session(path)),
    "chapter load_session": (check_load_session, lambda path: chapter_load_session(path)),
    "context_units": (check_context_units, lambda messages: context_units(messages)),
    "estimate_context_chars": (
        check_estimate_context_chars,
        lambda messages: estimate_context_chars(messages),
    ),
    "trim_context": (check_trim_context, lambda messages, n: trim_context(messages, n)),
}


@pytest.mark.parametrize("name", CALLING)
def test_an_answer_that_calls_the_function_it_should_write_fails_and_is_told_so(
    name: str,
) -> None:
    # each of these answers passed every case before: what it calls is the right answer
    check, answer = CALLING[name]
    report = check(answer)
    # every case fails, but where any refusal will do (02's NaN) or nothing is compared
    # (03's one numbering for both errors)
    assert len(failed(report)) >= len(report.results) - 1
    told = [result for result in report.results if "CalledTheAnswer" in result.detail]
    assert words().called_the_answer in told[0].detail and not told[0].folded
    assert all(result.folded for result in told[1:])  # shown as one line
    assert repr(report).count(words().called_again(len(told) - 1)) == 1
    assert sum("CalledTheAnswer" in result.detail for result in report.results) >= 3


def test_an_answer_may_call_the_packages_other_functions() -> None:
    # 05's starter measures with the package's estimate_context_chars; 03's parses each line
    # with its parse_session_message: only the function the exercise asks for is refused
    def trim_with_the_package_helpers(messages: Sequence[Message], n: int) -> list[Message]:
        kept: list[Message] = []
        for unit in reversed(context_units(messages)):
            if estimate_context_chars(unit + kept) > n:
                if not kept:
                    raise ContextBudgetError(
                        "context budget cannot contain the smallest consistent message unit"
                    )
                break
            kept = unit + kept
        if not kept:
            raise ContextBudgetError("context budget cannot be empty")
        return kept

    assert check_trim_context(trim_with_the_package_helpers).ok


def test_greater_than_zero_for_the_declarer_gets_the_chapters_second_pitfall() -> None:
    # "最容易走错的第二处": `assistantIndex > 0` loses an assistant at index 0
    def greater_than_zero(messages: Sequence[Message]) -> list[list[Message]]:
        return units_off_by_one(messages)

    report = check_context_units(greater_than_zero)
    assert not report.ok
    assert all(r.detail.endswith(words().units_off_by_one) for r in report.results if not r.passed)


def test_skipping_a_unit_that_does_not_fit_is_told_to_stop_there() -> None:
    def skipping(messages: Sequence[Message], max_chars: int) -> list[Message]:
        kept: list[Message] = []
        used = 0
        for unit in reversed(context_units(messages)):
            size = estimate_context_chars(unit)
            if used + size > max_chars:
                if not kept:
                    raise ContextBudgetError(SMALLEST_UNIT_TOO_BIG)
                continue  # the mistake: the chapter breaks here
            kept, used = unit + kept, used + size
        if not kept:
            raise ContextBudgetError("context budget cannot be empty")
        return kept

    report = check_trim_context(skipping)
    assert [r.detail.endswith(words().kept_skipping) for r in report.results if not r.passed] == [
        True,  # a unit in the middle skipped, a smaller one before it kept
        True,
    ]


def test_trimming_message_by_message_is_told_it_splits_a_unit() -> None:
    # review 12: message by message (the granularity the chapter's table rejects) passed 7 of
    # 10 cases, and its FAILs were told only that the chapter throws there
    def per_message(messages: Sequence[Message], max_chars: int) -> list[Message]:
        kept: list[Message] = []
        for message in reversed(messages):
            if estimate_context_chars([message, *kept]) > max_chars:
                if not kept:
                    raise ContextBudgetError(SMALLEST_UNIT_TOO_BIG)
                break
            kept = [message, *kept]
        if not kept:
            raise ContextBudgetError("context budget cannot be empty")
        return kept

    told = {r.name: r.detail for r in check_trim_context(per_message).results if not r.passed}
    assert "预算停在一个单元中间：整个丢掉它，不留半个" in told and len(told) == 3
    assert all(d.endswith(words().kept_split_unit) for d in told.values()), told


def test_handing_in_the_package_functions_or_record_chars_is_not_an_answer() -> None:
    assert not check_context_units(context_units).ok
    assert not check_trim_context(trim_context).ok
    assert not check_estimate_context_chars(estimate_context_chars).ok
    assert not check_estimate_context_chars(lambda ms: sum(m.record_chars for m in ms)).ok


def test_a_missing_separator_and_a_missing_throw_are_told_why() -> None:
    # the third reader: these FAILs gave only the numbers
    def no_separator(messages: Sequence[Message]) -> int:
        return sum(js_length(record_line(m)) for m in messages)

    estimate = check_estimate_context_chars(no_separator)
    assert any(words().no_separator in r.detail for r in estimate.results if not r.passed)

    def never_throws(messages: Sequence[Message], max_chars: int) -> list[Message]:
        kept: list[Message] = []
        for unit in reversed(context_units(messages)):
            if estimate_context_chars(unit + kept) > max_chars:
                break
            kept = unit + kept
        return kept

    details = [r.detail for r in check_trim_context(never_throws).results if not r.passed]
    assert details and all(
        d.endswith((words().should_throw, words().should_throw_empty)) for d in details
    )


def test_pairing_a_result_with_the_message_before_only_is_told_to_search() -> None:
    # the fourth reader: the commonest wrong scan had no hint, or the `> 0` one alone
    report = check_context_units(lambda messages: units_adjacent_only(messages))
    fails = [r.detail for r in report.results if not r.passed]
    assert fails and all(words().units_adjacent_only in detail for detail in fails)


BETWEEN = "夹在 assistant 和结果之间的消息被一起划进单元"


def test_the_full_search_with_greater_than_zero_is_told_only_about_greater_than_zero() -> None:
    # the fifth reader: on the case with a message between, the first diagnosis was "只看了紧
    # 挨着的前一条……tool b 前面是 tool a", about a mistake not made and a message not there
    report = check_context_units(WRONG_UNITS["assistantIndex > 0"])
    told = {r.name: r.detail for r in report.results if not r.passed}
    assert BETWEEN in told
    for detail in told.values():
        assert detail.endswith("：" + words().units_off_by_one), detail
        assert words().units_adjacent_only not in detail and "或者" not in detail
    assert "tool b" not in told[BETWEEN]


def test_the_adjacent_only_hint_names_no_message_a_case_may_lack() -> None:
    report = check_context_units(lambda messages: units_adjacent_only(messages))
    told = [r.detail for r in report.results if not r.passed]
    assert told and all(d.endswith("：" + words().units_adjacent_only) for d in told)
    assert "tool b" not in words().units_adjacent_only
    assert not any(words().units_off_by_one in d for d in told)


def starter_units(messages: Sequence[Message]) -> Units:
    """04's starter code, run as it stands: each message its own unit."""
    units: Units = []
    index = len(messages) - 1
    while index >= 0:
        units.insert(0, [messages[index]])
        index -= 1
    return units


def test_the_starter_that_groups_nothing_is_told_exactly_that() -> None:
    report = check_context_units(starter_units)
    told = [r.detail for r in report.results if not r.passed]
    assert len(told) == 8
    assert all(d.endswith("：" + words().units_never_grouped) for d in told), told
    assert not any(
        hint in d for d in told for hint in (words().units_adjacent_only, words().units_off_by_one)
    )


def scan_with(
    matches_id: bool = True, jumps: bool = True, earliest_pair: bool = False
) -> Callable[[Sequence[Message]], Units]:
    """The chapter's scan, its declarer found with or without comparing ids, and its index
    after a unit set before the assistant or just one back; with `earliest_pair`, the declarer
    searched from the start and put in a unit with the result alone."""

    def scan(messages: Sequence[Message]) -> Units:
        units: Units = []
        index = len(messages) - 1
        while index >= 0:
            message = messages[index]
            if isinstance(message, ToolMessage):
                searched = range(index) if earliest_pair else range(index - 1, -1, -1)
                found = [
                    i
                    for i in searched
                    if isinstance(messages[i], AssistantMessage)
                    and (not matches_id or declares(messages[i], message.tool_call_id))
                ]
                if found:
                    whole = list(messages[found[0] : index + 1])
                    units.insert(0, [whole[0], message] if earliest_pair else whole)
                    index = found[0] - 1 if jumps else index - 1
                    continue
            units.insert(0, [message])
            index -= 1
        return units

    return scan


def test_a_declarer_found_without_comparing_ids_is_told_to_compare_them() -> None:
    # review 12: the nearest assistant, whatever it declares: one case caught it, with no reason
    told = {r.name: r.detail for r in check_context_units(scan_with(matches_id=False)).results
            if not r.passed}  # fmt: skip
    assert set(told) == {
        "完整一轮之后的孤立结果",
        "最近的 assistant 不是声明者：比对 id，接着往前找",
    }
    assert next(iter(told.values())).endswith("：" + words().units_wrong_declarer)
    assert "call.id === message.toolCallId" in words().units_wrong_declarer


def test_the_earliest_declarer_taken_with_the_result_alone_is_told_to_search_back() -> None:
    # reviews 18 and 19: [[#0 assistant(a), #4 tool a]] for a repeated id got no reason
    earliest_pair = scan_with(earliest_pair=True)
    told = {r.name: r.detail for r in check_context_units(earliest_pair).results if not r.passed}
    assert told["重复的 id：最近的声明者胜出"].endswith(words().units_earliest_declarer)


def test_a_scan_that_steps_one_back_after_a_unit_is_told_where_to_jump() -> None:
    # review 12: `index -= 1` after a unit put the assistant in several units, with no reason
    told = [r.detail for r in check_context_units(scan_with(jumps=False)).results if not r.passed]
    assert len(told) >= 5 and told[0].endswith("：" + words().units_overlap)
    assert "index = assistantIndex - 1" in words().units_overlap


def trim_with(
    fits: Callable[[int, int], bool] = lambda chars, budget: chars <= budget,
    phrase: str = SMALLEST_UNIT_TOO_BIG,
    measure: Callable[[list[Message]], int] = estimate_context_chars,
) -> Any:
    """The chapter's loop with another comparison, phrase or way to count what is kept."""

    def trim(messages: Sequence[Message], max_chars: int) -> list[Message]:
        kept: list[Message] = []
        for unit in reversed(context_units(messages)):
            if not fits(measure(unit + kept), max_chars):
                if not kept:
                    raise ContextBudgetError(phrase)
                break
            kept = unit + kept
        if not kept:
            raise ContextBudgetError("context budget cannot be empty")
        return kept

    return trim


def test_a_budget_exactly_full_refused_is_told_the_chapter_compares_with_greater() -> None:
    report = check_trim_context(trim_with(lambda chars, budget: chars < budget))  # `>=`
    told = {r.name: r.detail for r in report.results if not r.passed}
    assert "预算恰好等于整段历史（比较用 >：刚好等于也装得下）" in told
    assert told and all(d.endswith("：" + words().budget_equal_fits) for d in told.values()), told
    assert (
        "estimateContextChars" in words().budget_equal_fits
        and "> maxChars" in words().budget_equal_fits
    )


@pytest.mark.parametrize(
    ("extra", "measure"),
    [
        (2, lambda kept: estimate_context_chars(kept) + len(kept)),  # each newline counted twice
        (26, lambda kept: sum(len(json.dumps(to_record(m))) + 1 for m in kept)),  # ", " and \uXXXX
    ],
    ids=["newline-twice", "json.dumps-defaults"],
)
def test_an_answer_that_measures_more_than_the_chapter_is_told_by_how_much(
    extra: int, measure: Callable[[list[Message]], int]
) -> None:
    # v5's review: counting a newline twice kept less than the chapter, and its first FAIL had no
    # reason while a one-message case was told `>=` (one more character was enough there)
    report = check_trim_context(trim_with(measure=measure))
    told = [r.detail for r in report.results if not r.passed]
    assert told and all("保留的比本章少" in d and "别写 >=" not in d for d in told), told
    assert f"字符多量了 {extra} 个" in told[0] and "estimate_context_chars(unit + kept)" in told[0]


def test_an_answer_that_drops_what_fits_for_another_reason_is_told_it_keeps_less() -> None:
    def newest_unit_only(messages: Sequence[Message], max_chars: int) -> list[Message]:
        return literal_trim(messages, max_chars)[-1:]  # the last message alone, at any budget

    told = [r.detail for r in check_trim_context(newest_unit_only).results if not r.passed]
    assert told and "你的函数丢掉了本章装得下的单元" in told[0], told


def test_an_error_in_ones_own_words_is_told_to_use_the_chapters_phrase() -> None:
    report = check_trim_context(trim_with(lambda c, b: c <= b, phrase="budget too small"))
    told = [r.detail for r in report.results if not r.passed]
    assert told and all(d.endswith("：" + words().trim_chapter_phrase) for d in told), told
    assert SMALLEST_UNIT_TOO_BIG in words().trim_chapter_phrase
    # one wording with 03's: the same rule, each exercise's own phrases
    assert words().trim_chapter_phrase.startswith(words().phrase_rule)
    assert words().chapter_phrase.startswith(words().phrase_rule)
    # a right answer and a `>=` are not told about the phrase
    for answer in (trim_with(lambda c, b: c <= b), trim_with(lambda c, b: c < b)):
        assert not any(
            words().trim_chapter_phrase in r.detail for r in check_trim_context(answer).results
        )


# --- a check handed something it cannot call as the exercise's function --------------------


def test_a_name_in_quotes_is_refused_in_one_line() -> None:
    # the fifth reader: 42 lines of "TypeError: 'str' object is not callable"
    from teaching.exercises import check_parse_session_message

    report = check_parse_session_message("my_parse_session_message")  # type: ignore[arg-type]
    shown_report = repr(report)
    assert not report.ok and report.results == ()
    assert len(shown_report.splitlines()) == 1, shown_report
    assert "你传的不是函数：'my_parse_session_message'" in shown_report
    assert "要传函数本身，不加引号、不加括号" in shown_report and "TypeError" not in shown_report
    assert "不加引号、不加括号" in check_record(None)._repr_html_()  # type: ignore[arg-type]


def test_a_function_with_the_wrong_parameters_is_refused_saying_how_many() -> None:
    report = check_record(lambda a, b: None)  # type: ignore[arg-type,misc]
    shown_report = repr(report)
    assert not report.ok and report.results == ()
    assert len(shown_report.splitlines()) == 1, shown_report
    assert "3 个参数" in shown_report and "record(messages, session_path, message)" in shown_report
    assert "PASS" not in shown_report and "positional" not in shown_report
    one: Any = lambda messages: messages  # noqa: E731
    assert repr(check_trim_context(one)).count("2 个参数") == 1

    # defaults and *args can take the call: they are checked, not refused
    def extra(messages: Any, path: Any, message: Any, extra: Any = None) -> None:
        reference_record(messages, path, message)

    def star(*args: Any) -> Any:
        return trim_context(*args)

    assert check_record(extra).results and check_trim_context(star).results


def test_an_error_that_is_not_the_disks_is_no_refused_write() -> None:
    # "写盘失败时把错误抛出去" passed for a record() that crashed on its own
    def crashes(messages: list[Message], session_path: PathLike | None, message: Message) -> None:
        raise TypeError("takes 2 positional arguments but 3 were given")

    report = check_record(crashes)
    (failure,) = [r for r in report.results if r.name == RECORD_FAILURE_CASE]
    assert not failure.passed and "TypeError" in failure.detail


def test_a_budget_that_is_not_an_int_is_refused_in_one_line_under_no_case() -> None:
    for wrong in ("750", 750.0, None, True, 0, -3):
        report = check_context_max_chars(wrong)
        shown_report = repr(report)
        assert not report.ok and report.results == (), wrong
        assert len(shown_report.splitlines()) == 1, shown_report
        assert words().budget_not_positive in shown_report
        assert words().keeps_question(3) not in shown_report
    assert "'750'" in repr(check_context_max_chars("750"))


def test_a_budget_short_by_the_separators_is_told_to_count_them_without_the_answer() -> None:
    least = smallest_budget_keeping_question()
    third = watched_first_run(None)[2].disk
    without = sum(js_length(record_line(m)) for m in third)  # the lines' lengths alone
    assert least - without == len(third)  # 743 and 750 in 06
    for budget in (without, least - 1):
        report = check_context_max_chars(budget, smallest=True)
        shown_report = repr(report)
        assert shown_report.count(words().budget_forgot_separator) == 1, shown_report
        assert str(least) not in shown_report
    for budget in (without - 1, least, least + 1):
        assert words().budget_forgot_separator not in repr(check_context_max_chars(budget))
