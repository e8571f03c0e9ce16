"""glosses: every error detail a notebook shows gets a one-line Chinese gloss under it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mini_agent import (
    ContextBudgetError,
    SessionFormatError,
    UserMessage,
    load_session,
    trim_context,
)
from mini_agent.glosses import gloss, gloss_text
from mini_agent.tools import Tool
from teaching import glosses as notebook
from teaching.errors import show_error

TRAILING_COMMA = (
    "第 30 列应当是带双引号的键" if sys.version_info < (3, 13) else "第 29 列多了一个结尾逗号"
)
BROKEN = [
    ('{"role":"user","content":"a', "从第 26 列开始的字符串没有收尾的引号"),
    ('{"role":"user" "content":"a"}', "应当还有逗号或右括号"),
    # Python 3.13's json names the trailing comma itself (3.12: "property name ... at column 30")
    ('{"role":"user","content":"a",}', TRAILING_COMMA),
    ('{"role":"user","content":"a"}}', "后面还有多余的内容"),
    ("[1,", "应当出现一个 JSON 值"),
    ("[1]", "这一行是数组，不是 JSON 对象"),
    ('"x"', "这一行是字符串，不是 JSON 对象"),
    ("null", "这一行是 null，不是 JSON 对象"),
    ('{"role":"user","content":1}', "content 必须是字符串"),
    ('{"role":1,"content":"a"}', "role 必须是字符串"),
    ('{"role":"assistant","content":"a"}', "assistant 必须带 toolCalls"),
    ('{"role":"tool","content":"a","isError":false}', "tool 必须带字符串 toolCallId"),
    ('{"role":"tool","content":"a","toolCallId":"c"}', "tool 必须带布尔值 isError"),
    ('{"role":"nope","content":"a"}', 'role "nope" 不是 user、assistant、tool 之一'),
]


@pytest.mark.parametrize(("line", "meaning"), BROKEN)
def test_each_load_error_detail_is_glossed(tmp_path: Path, line: str, meaning: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"role":"user","content":"x"}\n' + line + "\n", encoding="utf-8")
    shown = show_error(lambda: load_session(path), SessionFormatError)
    first, detail, second = repr(shown).split("\n")
    error = shown.error
    assert isinstance(error, SessionFormatError)
    assert shown.message == str(error) == f"{error.phrase} 2: {error.detail}"  # unchanged
    assert first == f"SessionFormatError: {error.phrase} 2"  # the chapter's phrase, alone
    assert detail == f"  本包补充：{error.detail}"
    assert second.startswith("  释义：第 2 行")
    assert meaning in second


def test_the_budget_errors_are_glossed() -> None:
    shown = show_error(
        lambda: trim_context([UserMessage("很长的问题" * 20)], 10), ContextBudgetError
    )
    assert repr(shown).endswith("\n  释义：预算连最新的那个一致单元都装不下")


def test_os_errors_are_glossed_by_their_strerror(tmp_path: Path) -> None:
    assert (
        gloss(IsADirectoryError(21, "Is a directory", str(tmp_path))) == "这个路径是目录，不是文件"
    )
    assert gloss(PermissionError(13, "Permission denied")) == "没有读（或写）这个文件的权限"


def test_an_os_error_quoted_as_text_is_glossed_by_its_strerror() -> None:
    # 03's exercise report quotes `IsADirectoryError: [Errno 21] Is a directory: 'a-directory'`
    error = IsADirectoryError(21, "Is a directory", "a-directory")
    assert notebook.gloss_text(str(error)) == "这个路径是目录，不是文件"
    assert notebook.gloss_text("[Errno 13] Permission denied") == "没有读（或写）这个文件的权限"


def test_a_phrase_without_a_detail_is_glossed_by_its_phrase() -> None:
    # a reader's load_session (or the chapter's) raises the bare phrase
    assert gloss_text("invalid session JSON at line 2") == "第 2 行不是合法的 JSON"
    assert gloss_text("invalid session record at line 7") == "第 7 行是 JSON，却不是一条合法的消息"


def test_an_unknown_error_gets_no_gloss_line() -> None:
    shown = show_error(lambda: 1 / 0, ZeroDivisionError)
    assert shown.gloss is None
    assert repr(shown) == "ZeroDivisionError: division by zero"


def test_a_key_error_is_glossed_by_its_type() -> None:
    # its message is only the key: what it means is the type's (01's report: a missing input)
    table: dict[str, int] = {}
    shown = show_error(lambda: table["input"], KeyError)
    assert repr(shown) == (
        "KeyError: 'input'\n  释义：字典里没有键 'input'：取值之前没有先确认这个键在不在"
    )
    assert notebook.gloss_shown("KeyError: 'input'") == shown.gloss.removeprefix("释义：")  # type: ignore[union-attr]
    assert notebook.gloss_shown("ValueError: 'input'") is None  # the same text, another type
    assert (
        notebook.gloss_shown("ValueError: Circular reference detected") == "有循环引用，写不成 JSON"
    )


def test_a_torn_last_line_refusal_glosses_both_halves() -> None:
    text = (
        "invalid session JSON at line 2: Unterminated string starting at column 14; "
        "refusing to append after an incomplete last line (`python -m mini_agent repair` can cut it)"
    )
    said = gloss_text(text)
    assert said is not None
    assert said.startswith("第 2 行不是合法的 JSON：从第 14 列开始的字符串没有收尾的引号")
    assert "拒绝追加：文件的最后一行写到一半" in said


@pytest.mark.parametrize(
    ("text", "meaning"),
    [
        (
            "Out of range float values are not JSON compliant: nan",
            "NaN、Infinity 不是 JSON，拒绝写入",
        ),
        ("Circular reference detected", "有循环引用，写不成 JSON"),
        ("Object of type set is not JSON serializable", "set 类型的值写不成 JSON"),
        (
            "a FIFO, not a regular file: a session cannot be kept there",
            "这个路径不是普通文件，会话不能放在这里",
        ),
        ("message 3 cannot be serialized to JSON: x", "第 3 条消息（从 0 数起）写不成 JSON"),
        ("No space left on device", "磁盘已满"),
    ],
)
def test_the_appendix_errors_are_glossed_too(text: str, meaning: str) -> None:
    assert notebook.gloss_text(text) == meaning


def test_the_message_constructors_type_errors_are_glossed() -> None:
    # a reader's match-statement parser that skips a check meets these in 01's exercise
    from mini_agent import ToolCall, ToolMessage

    for make, meaning in [
        (lambda: ToolMessage("a", "x", 0), "is_error 必须是布尔值，这里是 int"),  # type: ignore[arg-type]
        (lambda: ToolCall(1, "read", {}), "id 必须是字符串，这里是 int"),  # type: ignore[arg-type]
    ]:
        shown = show_error(make, TypeError)
        assert shown.gloss is not None and meaning in shown.gloss


@pytest.mark.parametrize(
    ("arguments", "meaning"),
    [
        ({"context_max_chars": "700"}, "预算 context_max_chars 必须是整数"),  # 06's `demo.budget`
        ({"max_turns": 2.0}, "max_turns 必须是整数，这里是 float"),
        ({"max_turns": 0}, "max_turns 至少是 1，这里是 0"),
        ({"prompt": 123}, "提示 prompt 必须是字符串，这里是 int"),
        ({"prompt": None}, "要同时给出 session_path"),
        ({"tools": [1]}, "tools 应当是 Tool 的列表"),
        ({"tools": [Tool("read", "读文件", lambda _: "")] * 2}, "工具名不能重复"),
        ({"session_path": 3}, "session_path 应当是路径"),
        ({}, "剧本用完了：第 1 次请求没有写好的回答（剧本只有 0 轮）"),
    ],
)
def test_every_refusal_of_run_agent_is_glossed(arguments: dict[str, object], meaning: str) -> None:
    # v5's review: `demo.budget = '700'` in 06 showed run_agent's TypeError with no 释义
    from mini_agent import ScriptedClient, run_agent

    call = {"prompt": "hi", "client": ScriptedClient([]), **arguments}
    shown = show_error(lambda: run_agent(**call), Exception)  # type: ignore[arg-type]
    assert shown.gloss is not None and meaning in shown.gloss, shown


@pytest.mark.parametrize(
    ("messages", "meaning"),
    [
        ("s.jsonl", "先用 load_session(路径) 读出消息"),  # review 10: a path for the messages
        ([{"role": "user", "content": "x"}], "是 dict：先把它变成消息对象"),
        (["x"], "列表里要放 UserMessage、AssistantMessage、ToolMessage"),  # review 11: no dict
    ],
)
def test_messages_that_are_not_messages_are_told_what_to_pass(
    messages: object, meaning: str
) -> None:
    from mini_agent import trim_context

    shown = show_error(lambda: trim_context(messages, 500), TypeError)  # type: ignore[arg-type]
    assert shown.gloss is not None and meaning in shown.gloss, shown.gloss


def test_an_exercise_report_glosses_the_errors_it_quotes() -> None:
    from mini_agent import ToolMessage
    from teaching.exercises import check_parse_session_message

    def careless(value: object) -> object:
        assert isinstance(value, dict)
        return ToolMessage(value["toolCallId"], value["content"], value["isError"])

    report = repr(check_parse_session_message(careless))
    assert "ToolMessage.is_error must be a bool, not int（释义：构造 ToolMessage 时" in report


def test_a_torn_last_line_gloss_says_repair_can_cut_it() -> None:
    said = gloss_text("refusing to append after an incomplete last line (repair can cut it)")
    assert said == "拒绝追加：文件的最后一行写到一半，可以用 repair 剪掉这一行"


def test_unparsable_streamed_tool_arguments_are_glossed() -> None:
    said = notebook.gloss_text(
        "invalid JSON arguments for tool read: Expecting ',' delimiter at column 17"
    )
    assert (
        said
        == "模型给工具 read 的参数拼起来不是合法的 JSON：第 17 列这里应当还有逗号或右括号（常见于 JSON 没写完）"
    )


def test_a_json_decode_error_of_the_standard_library_gets_its_gloss() -> None:
    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads("\r")  # 07a: the empty CRLF line the chapter hands to JSON.parse
    assert notebook.gloss(caught.value) == "第 2 列应当出现一个 JSON 值"


def test_the_kits_refusals_of_a_file_are_glossed_with_what_to_do(tmp_path: Path) -> None:
    from mini_agent.store import refuse_linked, symlink_refused

    assert (gloss(symlink_refused(tmp_path / "s.jsonl")) or "").startswith("这是符号链接")
    (tmp_path / "a").touch()
    (tmp_path / "b").hardlink_to(tmp_path / "a")
    with pytest.raises(OSError) as linked:
        refuse_linked((tmp_path / "a").stat(), tmp_path / "a")
    assert (gloss(linked.value) or "").startswith("这个文件有 2 个名字（硬链接）")


def test_a_failed_repair_step_is_glossed_with_the_systems_reason() -> None:
    failed = OSError(28, "cannot write a backup of its torn last line: No space left on device")
    assert gloss(failed) == "写不了写到一半的最后一行的备份：磁盘已满"


def test_every_refusal_reason_of_repair_is_glossed(tmp_path: Path) -> None:
    from mini_agent.repair import RepairRefusedError, repair_session

    good = b'{"role":"user","content":"x"}\n'
    for damage in [b'{"ro\n' + good, b'{"ro\n' + good + b'{"ro', b'{"ro\n', b'{"role":"x","content":"x"}',
                   good + b"\0\0x", b'"role":1}', b"\xff{", b"{\x01"]:  # fmt: skip
        path = tmp_path / "s.jsonl"
        path.write_bytes(good + damage)
        with pytest.raises(RepairRefusedError) as refused:
            repair_session(path)
        said = gloss_text(refused.value.reason)
        # bytes that are not UTF-8 (b"\xff{") are to be saved again as UTF-8, not cut out
        ending = "另存为不带 BOM 的 UTF-8；不要删行" if b"\xff" in damage else "直到没有）"
        assert said is not None and said.endswith(ending), refused.value.reason


def test_the_demos_read_tool_errors_are_glossed() -> None:
    from mini_agent.json_form import JSON
    from teaching import demo06

    cases: tuple[tuple[JSON, str], ...] = (
        (None, "read 工具的输入必须是带字符串 path 的对象"),
        ({"path": "x"}, "没有文件 x"),
    )
    for tool_input, meaning in cases:
        shown = show_error(lambda: demo06.read_file(tool_input), (ValueError, FileNotFoundError))  # noqa: B023
        assert shown.gloss == f"释义：{meaning}"


def test_in_on_a_value_that_is_not_an_object_is_glossed() -> None:
    # review 13: `"id" in c` on a null item of toolCalls, in 01's exercise
    meaning = notebook.gloss_text("argument of type 'NoneType' is not iterable")
    assert (
        meaning is not None
        and meaning.startswith("对 NoneType 用了 in")
        and "record(item)" in meaning
    )


def test_a_none_path_and_a_string_indexed_by_a_string_are_glossed() -> None:
    # review 19: 07's record without `is not None`, 01's value["role"] on "user"
    none_path = notebook.gloss_text("expected str, bytes or os.PathLike object, not NoneType")
    assert none_path is not None and "if session_path is not None" in none_path
    indexed = notebook.gloss_text("string indices must be integers, not 'str'")
    assert indexed is not None and "isinstance(value, dict)" in indexed


def test_get_on_a_value_that_is_not_an_object_is_glossed() -> None:
    # a reader's parser that calls value.get(...) before checking it is a dict (01's exercise)
    for kind in ("list", "str", "int", "NoneType"):
        meaning = notebook.gloss_text(f"'{kind}' object has no attribute 'get'")
        assert meaning is not None and meaning.startswith(f"对 {kind} 调用了 .get"), kind


def test_an_empty_path_is_glossed_as_empty_not_as_a_missing_file() -> None:
    empty = FileNotFoundError(2, "No such file or directory", "")  # open(""), os.lstat("")
    assert gloss(empty) == "路径是空字符串：没有给出文件名"  # the command line's
    said = notebook.gloss(empty)  # the notebooks': the chapter's `if (options.sessionPath)` too
    assert said is not None and said.startswith("路径是空字符串") and "sessionPath" in said
    missing = FileNotFoundError(2, "No such file or directory", "missing.jsonl")
    assert gloss(missing) == notebook.gloss(missing) == "文件不存在"
