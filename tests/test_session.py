"""session.py: the discrimination table, then every edge case docs/ARCHITECTURE.md lists; then
the messages: equal messages hash alike, and a call's key order is how it is written back, not
part of what it is (issue 34)."""

from __future__ import annotations

import errno
import json
import os
import random
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mini_agent import (
    AssistantMessage,
    Message,
    SessionFormatError,
    ToolCall,
    ToolMessage,
    UserMessage,
    append_session,
    estimate_context_chars,
    load_session,
    parse_session_message,
    to_record,
)
from mini_agent.json_form import JSON, js_string, stringify

from .helpers import multi_tool_history, write_lines
from .platforms import MODE_BITS, posix_only

USER = {"role": "user", "content": "x"}
CALL = {"id": "a", "name": "read", "input": {"path": "a.txt"}}


# --- parse_session_message: the chapter's discrimination table, row by row -----------------


@pytest.mark.parametrize("value", [None, [USER], "user", 3, True, 1.5])
def test_parse_rejects_values_that_are_not_objects(value: object) -> None:
    assert parse_session_message(value) is None


@pytest.mark.parametrize(
    "value",
    [
        {"content": "x"},
        {"role": 1, "content": "x"},
        {"role": "user"},
        {"role": "user", "content": None},
        {"role": "user", "content": ["x"]},
    ],
)
def test_parse_requires_string_role_and_content_first(value: dict[str, Any]) -> None:
    assert parse_session_message(value) is None


def test_parse_user_needs_only_content() -> None:
    assert parse_session_message(USER) == UserMessage("x")


def test_parse_assistant_with_calls() -> None:
    value = {"role": "assistant", "content": "", "toolCalls": [CALL]}
    assert parse_session_message(value) == AssistantMessage(
        "", (ToolCall("a", "read", {"path": "a.txt"}),)
    )


def test_parse_assistant_with_an_empty_calls_array() -> None:
    value = {"role": "assistant", "content": "done", "toolCalls": []}
    assert parse_session_message(value) == AssistantMessage("done")


def test_parse_tool_with_id_and_error_flag() -> None:
    value = {"role": "tool", "content": "ok", "toolCallId": "a", "isError": True}
    assert parse_session_message(value) == ToolMessage("a", "ok", is_error=True)


@pytest.mark.parametrize("role", ["nope", "User", "system", ""])
def test_parse_unknown_role_is_none_never_a_default(role: str) -> None:
    assert parse_session_message({"role": role, "content": "x"}) is None


@pytest.mark.parametrize(
    "tool_calls",
    [
        None,
        {},
        "a",
        [None],
        [[CALL]],
        [{"name": "read", "input": 1}],
        [{"id": "a", "input": 1}],
        [{"id": 1, "name": "read", "input": 1}],
        [{"id": "a", "name": None, "input": 1}],
        [{"id": "a", "name": "read"}],
    ],
    ids=[
        "null",
        "object",
        "string",
        "null item",
        "array item",
        "no id",
        "no name",
        "numeric id",
        "null name",
        "no input key",
    ],
)
def test_parse_assistant_calls_are_narrowed_item_by_item(tool_calls: object) -> None:
    value = {"role": "assistant", "content": "", "toolCalls": tool_calls}
    assert parse_session_message(value) is None


def test_parse_assistant_without_tool_calls_key() -> None:
    assert parse_session_message({"role": "assistant", "content": "x"}) is None


@pytest.mark.parametrize("input_value", [None, 0, "", [], {}, {"nested": [1, None]}])
def test_parse_call_input_may_be_any_json_value_null_included(input_value: object) -> None:
    value = {"role": "assistant", "content": "", "toolCalls": [{**CALL, "input": input_value}]}
    message = parse_session_message(value)
    assert isinstance(message, AssistantMessage)
    assert message.tool_calls[0].input == input_value


def test_parse_checks_every_call_not_only_the_first() -> None:
    value = {"role": "assistant", "content": "", "toolCalls": [CALL, {"id": "b", "name": "x"}]}
    assert parse_session_message(value) is None


def test_parse_checks_structure_not_meaning() -> None:
    # duplicate ids and unknown tool names are the agent loop's business, not the parser's
    value = {"role": "assistant", "content": "", "toolCalls": [CALL, {**CALL, "name": "nope"}]}
    assert isinstance(parse_session_message(value), AssistantMessage)


@pytest.mark.parametrize(
    "fields",
    [
        {"isError": False},
        {"toolCallId": "a"},
        {"toolCallId": 1, "isError": False},
        {"toolCallId": "a", "isError": 0},
        {"toolCallId": "a", "isError": 1},
        {"toolCallId": "a", "isError": "false"},
        {"toolCallId": None, "isError": False},
    ],
)
def test_parse_tool_needs_string_id_and_real_boolean(fields: dict[str, Any]) -> None:
    assert parse_session_message({"role": "tool", "content": "x", **fields}) is None


def test_parse_drops_unknown_extra_keys() -> None:
    value = {"role": "user", "content": "x", "timestamp": 1, "meta": {"a": 1}}
    message = parse_session_message(value)
    assert message == UserMessage("x")
    assert message is not None and to_record(message) == USER


def test_parse_never_raises_on_odd_values() -> None:
    for value in [object(), {"role": object(), "content": "x"}, {1: 2}, float("nan")]:
        assert parse_session_message(value) is None


# --- to_record: the on-disk keys and their order -------------------------------------------


def test_to_record_uses_the_chapter_keys_in_order() -> None:
    user, assistant, tool_a, _ = multi_tool_history()
    assert list(to_record(user)) == ["role", "content"]
    assert list(to_record(assistant)) == ["role", "content", "toolCalls"]
    assert list(to_record(tool_a)) == ["role", "content", "toolCallId", "isError"]
    assert to_record(assistant)["toolCalls"] == [
        {"id": "a", "name": "read", "input": {"path": "a.txt"}},
        {"id": "b", "name": "read", "input": {"path": "b.txt"}},
    ]


def test_assistant_tool_calls_are_stored_as_a_tuple() -> None:
    message = AssistantMessage("x", [ToolCall("a", "read", None)])
    assert message.tool_calls == (ToolCall("a", "read", None),)
    assert message == AssistantMessage("x", (ToolCall("a", "read", None),))


def test_messages_have_roles_and_readable_reprs() -> None:
    user, assistant, tool_a, _ = multi_tool_history()
    assert [user.role, assistant.role, tool_a.role] == ["user", "assistant", "tool"]
    assert repr(user) == "UserMessage(content='read two files')"
    assert repr(tool_a) == "ToolMessage(tool_call_id='a', content='contents of a', is_error=False)"
    assert "0x" not in repr(assistant)


# --- load_session ---------------------------------------------------------------------------


def test_missing_file_is_an_empty_session(tmp_path: Path) -> None:
    assert load_session(tmp_path / "nothing-yet.jsonl") == []


def test_an_empty_path_is_refused_by_load_and_append_alike() -> None:
    # open("") is ENOENT, which the chapter's branch would take for a first start: "" names no
    # file, so loading it is refused as appending to it is, with the same error and no file made
    for call in (lambda: load_session(""), lambda: append_session("", UserMessage("hi"))):
        with pytest.raises(OSError) as caught:
            call()
        assert caught.value.errno == errno.EINVAL and caught.value.filename == ""
        assert not isinstance(caught.value, FileNotFoundError)


def test_a_directory_raises_the_os_error_not_a_format_error(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        load_session(tmp_path)


def test_permission_denied_propagates_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_lines(tmp_path / "s.jsonl", json.dumps(USER))
    denied = PermissionError(errno.EACCES, "Permission denied", str(path))

    def refuse(*args: object, **kwargs: object) -> object:
        raise denied

    monkeypatch.setattr("mini_agent.store._OPENER", refuse)  # what opens every session file
    with pytest.raises(PermissionError) as caught:
        load_session(path)
    assert caught.value is denied


def test_other_io_errors_propagate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr("mini_agent.store._OPENER", broken)
    with pytest.raises(OSError, match="Input/output error"):
        load_session(tmp_path / "s.jsonl")


def test_truncated_second_line_is_invalid_json_at_line_2(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", json.dumps(USER), '{"role":"assistant","cont')
    with pytest.raises(SessionFormatError, match=r"^invalid session JSON at line 2\b") as caught:
        load_session(path)
    assert caught.value.line == 2
    assert caught.value.path == path
    assert isinstance(caught.value.__cause__, json.JSONDecodeError)


def test_valid_json_bad_record_on_line_2(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", json.dumps(USER), '{"role":"assistant","content":"x"}')
    with pytest.raises(SessionFormatError, match=r"^invalid session record at line 2: ") as caught:
        load_session(path)
    assert caught.value.line == 2


def test_a_bad_line_is_never_skipped_even_with_good_lines_after(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", json.dumps(USER), "{", json.dumps(USER))
    with pytest.raises(SessionFormatError, match="line 2"):
        load_session(path)


def test_blank_lines_keep_physical_line_numbers(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", json.dumps(USER), "", "", "[1,")
    with pytest.raises(SessionFormatError, match=r"^invalid session JSON at line 4\b"):
        load_session(path)


def test_blank_lines_are_skipped(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", "", json.dumps(USER), "", json.dumps(USER), "")
    assert load_session(path) == [UserMessage("x"), UserMessage("x")]


def test_crlf_files_load(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"role":"user","content":"a"}\r\n\r\n{"role":"user","content":"b"}\r\n')
    assert load_session(path) == [UserMessage("a"), UserMessage("b")]


def test_a_final_line_without_newline_loads(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(USER), encoding="utf-8")
    assert load_session(path) == [UserMessage("x")]


@pytest.mark.parametrize(
    ("raw", "line"),
    [
        (b"\xef\xbb\xbf" + json.dumps(USER).encode(), 1),  # byte-order mark
        (b'{"role":"user","content":"x"}\r\n\r\r\n', 2),  # a lone \r left over
        (b"   \n", 1),  # spaces alone
        (b"\t\n", 1),
        (
            b'{"role":"user","content":"x"}\n{"role":"tool","content":"x","toolCallId":"a","isError":NaN}\n',
            2,
        ),
        (b'{"role":"user","content":"x","n":Infinity}\n', 1),
        (b'{"role":"user","content":"x","n":-Infinity}\n', 1),
        (b'{"role":"user","content":"x"}\n\n{"role":"user","content":"\xff"}\n', 3),  # not UTF-8
        (b'{"role":"user","content":"x"} {"role":"user","content":"y"}\n', 1),  # two values
        (b"[" * 100_000 + b"\n", 1),  # nested too deeply for the decoder
    ],
    ids=[
        "bom",
        "lone-cr",
        "spaces",
        "tab",
        "nan",
        "infinity",
        "-infinity",
        "not-utf8",
        "two-values",
        "deep-nesting",
    ],
)
def test_lines_that_are_not_json(tmp_path: Path, raw: bytes, line: int) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(raw)
    with pytest.raises(
        SessionFormatError, match=rf"^invalid session JSON at line {line}\b"
    ) as caught:
        load_session(path)
    assert caught.value.__cause__ is not None


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x1c", "\x0b", "\x0c", "\r"])
def test_only_newline_splits_lines(tmp_path: Path, separator: str) -> None:
    # str.splitlines() would cut these; JSON may carry them raw inside strings
    message = UserMessage(f"before{separator}after")
    path = tmp_path / "s.jsonl"
    append_session(path, message)
    assert load_session(path) == [message]


def test_error_message_explains_the_record(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", '{"role":"nope","content":"x"}')
    with pytest.raises(SessionFormatError) as caught:
        load_session(path)
    assert str(caught.value) == 'invalid session record at line 1: unknown role "nope"'


# --- append_session --------------------------------------------------------------------------


def test_append_writes_one_line_per_message(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    for message in multi_tool_history():
        append_session(path, message)
    assert path.read_text(encoding="utf-8").splitlines() == [
        '{"role":"user","content":"read two files"}',
        '{"role":"assistant","content":"reading both","toolCalls":[{"id":"a","name":"read","input":{"path":"a.txt"}},{"id":"b","name":"read","input":{"path":"b.txt"}}]}',
        '{"role":"tool","content":"contents of a","toolCallId":"a","isError":false}',
        '{"role":"tool","content":"contents of b","toolCallId":"b","isError":false}',
    ]
    assert load_session(path) == multi_tool_history()


def test_append_is_one_write_per_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    writes: list[bytes] = []
    real_write = os.write

    def counting_write(fd: int, data: Any) -> int:
        writes.append(bytes(data))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", counting_write)
    path = tmp_path / "s.jsonl"
    append_session(path, UserMessage("one"))
    append_session(path, UserMessage("two"))
    assert writes == [b'{"role":"user","content":"one"}\n', b'{"role":"user","content":"two"}\n']


def test_append_never_glues_onto_an_unterminated_last_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(USER), encoding="utf-8")  # no trailing newline
    append_session(path, UserMessage("y"))
    assert load_session(path) == [UserMessage("x"), UserMessage("y")]


def test_append_adds_no_blank_line_after_a_terminated_file(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", json.dumps(USER, separators=(",", ":")))
    append_session(path, UserMessage("y"))
    assert path.read_text(encoding="utf-8") == (
        '{"role":"user","content":"x"}\n{"role":"user","content":"y"}\n'
    )


@posix_only(MODE_BITS)
def test_new_session_files_are_private(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    old = os.umask(0)
    try:
        append_session(path, UserMessage("secret"))
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@posix_only(MODE_BITS)
def test_append_keeps_an_existing_files_mode(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.touch(mode=0o644)
    path.chmod(0o644)
    append_session(path, UserMessage("x"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_append_with_fsync_flushes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    path = tmp_path / "s.jsonl"
    append_session(path, UserMessage("x"))
    assert synced == []
    append_session(path, UserMessage("y"), fsync=True)
    assert len(synced) == 1


def test_lone_surrogate_is_escaped_and_loads_back(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    message = UserMessage("broken \ud800 half")
    append_session(path, message)
    assert path.read_bytes() == b'{"role":"user","content":"broken \\ud800 half"}\n'
    assert load_session(path) == [message]


def test_non_ascii_is_written_as_itself(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    append_session(path, UserMessage("你好 😀"))
    assert path.read_text(encoding="utf-8") == '{"role":"user","content":"你好 😀"}\n'


@pytest.mark.parametrize(
    "message",
    [
        AssistantMessage("x", (ToolCall("a", "t", {1, 2}),)),  # type: ignore[arg-type]
        AssistantMessage("x", (ToolCall("a", "t", float("nan")),)),
        AssistantMessage("x", (ToolCall("a", "t", object()),)),  # type: ignore[arg-type]
    ],
    ids=["set", "nan", "object"],
)
def test_append_refuses_what_json_cannot_hold_and_keeps_the_file(
    tmp_path: Path, message: Message
) -> None:
    path = write_lines(tmp_path / "s.jsonl", '{"role":"user","content":"x"}')
    before = path.read_bytes()
    with pytest.raises((TypeError, ValueError)):
        append_session(path, message)
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    "message",
    [
        AssistantMessage("x", (ToolCall("a", "t", (1, 2)),)),  # type: ignore[arg-type]
        AssistantMessage("x", (ToolCall("a", "t", {1: "one"}),)),  # type: ignore[dict-item]
        AssistantMessage("x", (ToolCall("a", "t", "\ud83d\ude00"),)),  # a pair in an input
    ],
    ids=["tuple-input", "int-keys", "surrogate-pair-in-input"],
)
def test_append_refuses_a_message_that_would_not_load_back_unchanged(
    tmp_path: Path, message: Message
) -> None:
    path = tmp_path / "s.jsonl"
    with pytest.raises(ValueError, match="would not load back unchanged"):
        append_session(path, message)
    assert not path.exists() or path.read_bytes() == b""


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda: UserMessage(None), "UserMessage.content must be a str, not NoneType"),  # type: ignore[arg-type]
        (lambda: ToolMessage("a", "x", is_error=1), "ToolMessage.is_error must be a bool, not int"),  # type: ignore[arg-type]
        (lambda: ToolMessage("a", b"x"), "ToolMessage.content must be a str, not bytes"),  # type: ignore[arg-type]
        (
            lambda: AssistantMessage("", [{"id": "a", "name": "t", "input": {}}]),  # type: ignore[list-item]
            r"AssistantMessage.tool_calls\[0\] must be a ToolCall, not dict",
        ),
        (lambda: AssistantMessage("", "abc"), "tool_calls must be a sequence of ToolCall, not str"),  # type: ignore[arg-type]
        (lambda: ToolCall(1, "t", None), "ToolCall.id must be a str, not int"),  # type: ignore[arg-type]
    ],
    ids=["null-content", "int-is-error", "bytes-content", "dict-call", "str-calls", "int-id"],
)
def test_constructors_refuse_a_wrong_type_at_once(make: Callable[[], object], says: str) -> None:
    with pytest.raises(TypeError, match=says):
        make()


def test_tool_message_takes_its_fields_by_name() -> None:
    by_name = ToolMessage(tool_call_id="a", content="result", is_error=True)
    assert (by_name.tool_call_id, by_name.content, by_name.is_error) == ("a", "result", True)
    assert repr(by_name) == "ToolMessage(tool_call_id='a', content='result', is_error=True)"


def test_a_surrogate_pair_as_two_code_points_is_refused_with_the_way_out(tmp_path: Path) -> None:
    # JavaScript holds "\ud83d\ude00" as the one character a load reads back
    path = tmp_path / "s.jsonl"
    with pytest.raises(ValueError, match=r"a surrogate pair as two code points \(see js_string\)"):
        append_session(path, ToolMessage("a", "\ud83d\ude00"))
    message = ToolMessage("a", js_string("\ud83d\ude00 and a lone \ud800"))
    assert message.content == "😀 and a lone \ud800"
    append_session(path, message)
    assert load_session(path) == [message]


def test_format_errors_survive_pickling() -> None:
    import pickle

    err = SessionFormatError("invalid session JSON at line", "s.jsonl", 2, "Expecting value")
    copy = pickle.loads(pickle.dumps(err))
    assert (str(copy), copy.path, copy.line, copy.phrase) == (str(err), "s.jsonl", 2, err.phrase)


def test_append_after_an_unterminated_bad_record_does_not_promise_repair(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"role":"user","content":"x"}\n{"role":"nope","content":"x"}')
    with pytest.raises(SessionFormatError, match=r"invalid last line$") as caught:
        append_session(path, UserMessage("y"))
    assert caught.value.line == 2 and "repair" not in str(caught.value)


def test_fsync_on_a_new_file_also_syncs_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[str] = []
    monkeypatch.setattr("mini_agent.store.sync_folder", synced.append)
    append_session(tmp_path / "s.jsonl", UserMessage("x"), fsync=True)
    append_session(tmp_path / "s.jsonl", UserMessage("y"), fsync=True)
    assert synced == [str(tmp_path)]


def test_a_message_whose_input_changed_is_measured_and_written_as_it_is_now(
    tmp_path: Path,
) -> None:
    # no cached line: a message never goes stale, and nothing refuses it without saying why
    tool_input: dict[str, JSON] = {"path": "a"}
    message = AssistantMessage("", (ToolCall("1", "read", tool_input),))
    before = estimate_context_chars([message])
    tool_input["path"] = "a much longer path"
    assert estimate_context_chars([message]) == before + len(" much longer path")
    path = tmp_path / "s.jsonl"
    append_session(path, message)
    assert load_session(path) == [message]
    assert path.read_text(encoding="utf-8") == message.line + "\n"


@pytest.mark.parametrize(
    "calls",
    [
        '[{"id":"a","name":"n","input":{},"type":"function"}]',
        '[{"type":"function","id":"a","input":null,"name":"n"}]',
        '[{"0":1,"id":"a","name":"n","input":[],"z":{"k":2}}]',
    ],
    ids=["after", "before-and-reordered", "index-key"],
)
def test_extra_keys_in_a_tool_call_survive_a_round_trip_in_the_order_written(
    tmp_path: Path, calls: str
) -> None:
    # the chapter's calls() is a type guard: its record keeps item.toolCalls as written
    line = '{"role":"assistant","content":"","toolCalls":' + calls + "}"
    source = write_lines(tmp_path / "in.jsonl", line)
    (message,) = load_session(source)
    copy = tmp_path / "out.jsonl"
    append_session(copy, message)
    assert copy.read_text(encoding="utf-8") == line + "\n"
    assert estimate_context_chars([message]) == len(line) + 1
    assert load_session(copy) == [message]


@pytest.mark.parametrize(
    "value", [float("nan"), float("inf"), -float("inf"), 2**53 + 1, 10**400], ids=repr
)
def test_numbers_and_depths_javascript_cannot_hold_are_refused_before_anything_is_written(
    tmp_path: Path, value: JSON
) -> None:
    # one row of the differences: JSON.stringify writes NaN and Infinity as null and 2**53 + 1
    # as another number (the log would hold another input than the model sent); JSON.parse
    # reads 1e999 as Infinity and nests deeper than the kit's one limit: refused with the line
    path = tmp_path / "s.jsonl"
    append_session(path, UserMessage("before"))
    before = path.read_bytes()
    with pytest.raises(ValueError):
        append_session(path, AssistantMessage("", [ToolCall("a", "n", {"x": value})]))
    assert path.read_bytes() == before
    for written in ("1e999", "[" * 600 + "]" * 600):
        line = '{"role":"assistant","content":"","toolCalls":[{"id":"a","name":"n","input":%s}]}'
        path.write_text(f'{{"role":"user","content":"x"}}\n{line % written}\n', encoding="utf-8")
        with pytest.raises(SessionFormatError, match=r"^invalid session JSON at line 2\b"):
            load_session(path)


# --- the messages: hash and compare as JSON objects do ---------------------------------------


def alike(left: object, right: object) -> None:
    """Equal both ways, and the same hash."""
    assert left == right
    assert right == left
    assert (left != right) is False
    assert hash(left) == hash(right)


def call_from(line: str) -> ToolCall:
    message = parse_session_message(
        {"role": "assistant", "content": "", "toolCalls": [json.loads(line)]}
    )
    assert isinstance(message, AssistantMessage)
    return message.tool_calls[0]


def test_every_kind_of_message_hashes_and_can_be_a_dict_key() -> None:
    messages: list[Message] = [
        UserMessage("hi"),
        AssistantMessage("ok", (ToolCall("c1", "read", {"path": "a", "opts": [1, {"x": None}]}),)),
        AssistantMessage("", (ToolCall("c2", "f", None, (("meta", {"k": [1]}),)),)),
        ToolMessage(tool_call_id="c1", content="text", is_error=True),
    ]
    seen = {message: number for number, message in enumerate(messages)}
    assert len(seen) == len(messages)
    for number, message in enumerate(messages):
        assert seen[message] == number


def test_extra_keys_in_another_order_are_the_same_call_and_keep_their_own_order() -> None:
    first = call_from('{"id":"c","name":"n","input":{},"b":1,"a":{"y":2,"x":[3]}}')
    second = call_from('{"a":{"x":[3],"y":2},"id":"c","b":1,"input":{},"name":"n"}')
    alike(first, second)
    alike(AssistantMessage("", (first,)), AssistantMessage("", (second,)))
    assert list(first.to_record()) == ["id", "name", "input", "b", "a"]
    assert list(second.to_record()) == ["a", "id", "b", "input", "name"]
    assert stringify(first.to_record()) != stringify(second.to_record())


def test_a_call_written_in_another_key_order_equals_the_plain_call() -> None:
    alike(call_from('{"input":{"p":1},"name":"n","id":"c"}'), ToolCall("c", "n", {"p": 1}))


def test_nested_dict_inputs_in_another_key_order_are_equal_and_hash_alike() -> None:
    left = ToolCall("c", "n", {"a": {"b": [1, {"c": "d", "e": None}]}, "f": True})
    right = ToolCall("c", "n", {"f": True, "a": {"b": [1, {"e": None, "c": "d"}]}})
    alike(left, right)
    alike(AssistantMessage("x", [left]), AssistantMessage("x", (right,)))


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (ToolCall("c", "n", {"a": 1}), ToolCall("c", "n", {"a": 2})),
        (ToolCall("c", "n", [1, 2]), ToolCall("c", "n", [2, 1])),
        (ToolCall("c", "n", {}), ToolCall("d", "n", {})),
        (ToolCall("c", "n", {}), ToolCall("c", "m", {})),
        (ToolCall("c", "n", {}, (("x", 1),)), ToolCall("c", "n", {}, (("x", 2),))),
        (ToolCall("c", "n", {}, (("x", 1),)), ToolCall("c", "n", {})),
    ],
)
def test_calls_that_differ_as_json_are_not_equal(left: ToolCall, right: ToolCall) -> None:
    assert left != right
    assert AssistantMessage("", (left,)) != AssistantMessage("", (right,))


def test_a_deep_input_hashes_without_recursion() -> None:
    deep: JSON = []
    for _ in range(100_000):
        deep = [deep]
    message = AssistantMessage("", (ToolCall("c", "n", {"deep": deep}),))
    assert isinstance(hash(message), int)
    assert {message: "found"}[message] == "found"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(
    st.dictionaries(st.text(min_size=1, max_size=4), json_values, max_size=4),
    json_values,
    st.randoms(use_true_random=False),
)
def test_a_message_read_back_in_any_key_order_equals_it_and_hashes_alike(
    extra: dict[str, JSON], value: JSON, shuffler: random.Random
) -> None:
    extra = {key: item for key, item in extra.items() if key not in ("id", "name", "input")}
    record = {"id": "c", "name": "n", "input": value, **extra}
    shuffled = list(record.items())
    shuffler.shuffle(shuffled)
    message = parse_session_message({"role": "assistant", "content": "", "toolCalls": [record]})
    other = parse_session_message(
        {"role": "assistant", "content": "", "toolCalls": [dict(shuffled)]}
    )
    assert isinstance(message, AssistantMessage) and isinstance(other, AssistantMessage)
    alike(message, other)
    alike(parse_session_message(to_record(message)), message)
    alike(parse_session_message(to_record(other)), other)
    written = other.tool_calls[0].to_record()  # in the order read, as JavaScript holds it
    read = list(dict(shuffled))  # array indexes first, ascending; then the rest, as read
    indexes = sorted(
        (key for key in read if key.isascii() and key.isdigit() and str(int(key)) == key), key=int
    )
    assert list(written) == indexes + [key for key in read if key not in indexes]
