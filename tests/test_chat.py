"""chat.py: the live walkthrough command, run directly and through a tiny argparse wrapper."""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from mini_agent import (
    AssistantMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    append_session,
    load_session,
)
from mini_agent import cli_text as text
from mini_agent.cli import main
from mini_agent.live import chat
from mini_agent.session import Message, record_line

from .helpers import english_prose, free_port
from .loopback_server import (
    DONE,
    END_OF_ECHO,
    KEY,
    KEY_ENV,
    PASSWORDS,
    TYPED,
    LoopbackModelServer,
    Reply,
    call_chunk,
    finish_chunk,
    never_shown,
    sse,
    text_chunk,
    text_reply,
)

pytestmark = pytest.mark.usefixtures("loopback_only")

Serve = Callable[..., LoopbackModelServer]


def parse(argv: list[str]) -> argparse.Namespace:
    """What the integrator's `python -m mini_agent chat` does with its subparser."""
    parser = argparse.ArgumentParser(prog="python -m mini_agent chat")
    chat.add_arguments(parser)
    return parser.parse_args(argv)


def argv(server: LoopbackModelServer, *extra: str) -> list[str]:
    return [
        "--session", "s.jsonl", "--base-url", server.base_url, "--model", "test-model",
        "--api-key-env", KEY_ENV, "--timeout", "5", *extra,
    ]  # fmt: skip


def chat_with(
    args: argparse.Namespace,
    stdin: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = chat.run(args)
    out, err = capsys.readouterr()
    return code, out, err


def chars(*messages: Message) -> int:
    return sum(len(record_line(message)) + 1 for message in messages)


def on_disk(*messages: Message) -> str:
    return "".join(record_line(message) + "\n" for message in messages)


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the session path is printed as given: keep it short


def test_each_piped_line_is_one_turn_streamed_to_stdout_and_appended(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = serve(text_reply("Hi ", "there."), text_reply("Again."))
    code, out, err = chat_with(parse(argv(server)), "hello\n\nand again\n", monkeypatch, capsys)
    first, second = UserMessage("hello"), UserMessage("and again")
    hi, again = AssistantMessage("Hi there."), AssistantMessage("Again.")
    assert code == 0
    assert out == "Hi there.\nAgain.\n"
    assert err.splitlines() == [
        "s.jsonl: 磁盘上有 0 条消息",
        f"第 1 次请求：磁盘上 1 条消息，{chars(first)} 字符；"
        f"发出 1 条消息，{chars(first)} 字符（不设预算）",
        f"第 2 次请求：磁盘上 3 条消息，{chars(first, hi, second)} 字符；"
        f"发出 3 条消息，{chars(first, hi, second)} 字符（不设预算）",
    ]
    assert (tmp_path / "s.jsonl").read_text(encoding="utf-8") == on_disk(first, hi, second, again)
    assert KEY not in out + err


def test_the_budget_trims_what_is_sent_never_what_is_on_disk(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    question, answer = UserMessage("an old question " * 10), AssistantMessage("an old answer")
    old: list[Message] = [question, answer]
    for message in old:
        append_session(tmp_path / "s.jsonl", message)
    server = serve(text_reply("Fresh."))
    args = parse(argv(server, "--max-chars", "200"))
    code, out, err = chat_with(args, "new\n", monkeypatch, capsys)
    new, fresh = UserMessage("new"), AssistantMessage("Fresh.")
    assert code == 0
    assert out == "Fresh.\n"
    assert err.splitlines()[1:] == [
        f"第 1 次请求：磁盘上 3 条消息，{chars(*old, new)} 字符；"
        f"发出 2 条消息，{chars(answer, new)} 字符（预算 200）"
    ]
    assert server.requests[0].body["messages"] == [
        {"role": "assistant", "content": "an old answer"},
        {"role": "user", "content": "new"},
    ]
    assert load_session(tmp_path / "s.jsonl") == [*old, new, fresh]


def test_a_failed_request_exits_1_keeps_the_file_and_a_rerun_resumes(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = serve(
        Reply(status=500, body=b'{"error":{"message":"overloaded"}}'), text_reply("Back.")
    )
    args = parse(argv(server))
    code, out, err = chat_with(args, "first\nnever sent\n", monkeypatch, capsys)
    assert code == 1
    assert out == ""
    assert "错误：模型服务返回了错误：model server answered HTTP 500 Internal Server Error" in err
    assert err.endswith(
        "overloaded\n失败的这次回复一点也没有记下；它的提问已在磁盘上，还没有回答\n"
        "要续接，把同一条命令再运行一次：第一条提问与没回答的那条相同时，"
        "会从 s.jsonl 里回答它，不会记录两次\n"
    )
    assert (tmp_path / "s.jsonl").read_text(encoding="utf-8") == on_disk(UserMessage("first"))
    code, out, err = chat_with(args, "second\n", monkeypatch, capsys)
    assert (code, out) == (0, "Back.\n")
    assert err.startswith("s.jsonl: 磁盘上有 1 条消息\n")
    assert [m["content"] for m in server.requests[1].body["messages"]] == ["first", "second"]


def test_a_corrupt_session_is_refused_before_the_model_is_asked(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "s.jsonl").write_text('{"role":"user","content":"x"}\n{"role":\n', encoding="utf-8")
    server = serve(text_reply("unused"))
    monkeypatch.setattr(sys, "stdin", io.StringIO("hi\n"))
    code = main(["chat", *argv(server)])  # as `python -m mini_agent chat` runs it
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("s.jsonl:2: invalid session JSON at line 2")  # what `check` says
    assert "  2 | " in err  # and the bad line, as `check` shows it
    assert server.requests == []


def test_a_budget_too_small_for_the_prompt_fails_with_the_chapters_phrase(
    serve: Serve, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    server = serve(text_reply("Hi."))
    code, _, err = chat_with(parse(argv(server, "--max-chars", "5")), "hi\n", monkeypatch, capsys)
    needed = chars(UserMessage("hi"))
    assert code == 1
    assert err.splitlines()[1:] == [
        "s.jsonl: context budget cannot contain the smallest consistent message unit",
        "  释义：预算连最新的那个一致单元都装不下",
        f"  预算 5 字符装不下：最新的一致单元要 {needed} 个字符，--max-chars 至少 {needed}",
        "这条提问已在磁盘上，还没有回答",
        "要续接，把同一条命令再运行一次，并给一个更大的 --max-chars：第一条提问与没回答的那条相同时，"
        "会从 s.jsonl 里回答它，不会记录两次",
    ]
    assert server.requests == []
    args = parse(argv(server, "--max-chars", "500"))
    code, out, _ = chat_with(args, "hi\n", monkeypatch, capsys)
    assert (code, out) == (0, "Hi.\n")
    assert load_session(Path("s.jsonl")) == [UserMessage("hi"), AssistantMessage("Hi.")]


@pytest.mark.parametrize(
    ("option", "value"),
    [("--max-chars", "0"), ("--max-chars", "x"), ("--timeout", "-1"), ("--deadline", "0")],
)
def test_bad_numbers_are_refused_by_the_parser(
    option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        parse(["--session", "s", "--base-url", "http://h", "--model", "m", option, value])
    assert caught.value.code == 2
    assert option in capsys.readouterr().err


def test_text_streamed_before_a_cut_is_shown_but_not_recorded(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    chunks = [text_chunk("Half "), text_chunk("an "), text_chunk("answer"), DONE]
    server = serve(Reply(chunks=chunks, cut_after=2))
    code, out, err = chat_with(parse(argv(server)), "hi\n", monkeypatch, capsys)
    assert (code, out) == (1, "Half an \n")
    assert "model stream was cut before the reply was complete" in err
    assert (tmp_path / "s.jsonl").read_text(encoding="utf-8") == on_disk(UserMessage("hi"))


def test_demo_tools_put_a_tool_unit_in_the_session(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    call = call_chunk(0, id="c1", name="count_chars", arguments='{"text": "你好"}')
    server = serve(Reply(chunks=[call, finish_chunk("tool_calls"), DONE]), text_reply("Two."))
    args = parse(argv(server, "--demo-tools"))
    code, out, err = chat_with(args, "how long is 你好?\n", monkeypatch, capsys)
    assert (code, out) == (0, "Two.\n")
    assert '[工具调用] count_chars {"text":"你好"}' in err.splitlines()
    assert load_session(tmp_path / "s.jsonl") == [
        UserMessage("how long is 你好?"),
        AssistantMessage("", (ToolCall("c1", "count_chars", {"text": "你好"}),)),
        ToolMessage("c1", "2"),
        AssistantMessage("Two."),
    ]
    assert [tool["function"]["name"] for tool in server.requests[0].body["tools"]] == [
        "count_chars"
    ]


# --- resuming after a failure never records a prompt twice (issue 16, bug 3) ----------------

ROOT = Path(__file__).resolve().parent.parent


def command(stdin: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`echo … | python -m mini_agent chat ARGS`, as a reader runs it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), KEY_ENV: KEY}
    return subprocess.run(
        [sys.executable, "-m", "mini_agent", "chat", *args],
        input=stdin,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )


def test_the_same_failing_command_run_twice_records_the_prompt_once_then_resumes(
    tmp_path: Path, serve: Serve
) -> None:
    down = f"http://127.0.0.1:{free_port()}/v1"
    args = ["--session", "s.jsonl", "--model", "m", "--api-key-env", KEY_ENV]
    for _ in range(2):
        done = command("hi\n", *args, "--base-url", down, cwd=tmp_path)
        assert done.returncode == 1
        assert "要续接，把同一条命令再运行一次" in done.stderr
        assert "错误：连不上模型服务：cannot reach the model server" in done.stderr
        assert (tmp_path / "s.jsonl").read_text(encoding="utf-8") == on_disk(UserMessage("hi"))
    server = serve(text_reply("Hello."))
    done = command("hi\n", *args, "--base-url", server.base_url, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "Hello.\n")
    assert "会话以这条提问结尾，还没有回答：现在回答它" in done.stderr
    assert server.requests[0].body["messages"] == [{"role": "user", "content": "hi"}]
    assert load_session(tmp_path / "s.jsonl") == [UserMessage("hi"), AssistantMessage("Hello.")]


def test_a_rerun_after_a_failure_mid_tool_turn_goes_on_from_the_tool_results(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    call = call_chunk(0, id="c1", name="count_chars", arguments='{"text": "abc"}')
    server = serve(
        Reply(chunks=[call, finish_chunk("tool_calls"), DONE]),
        Reply(status=503, body=b'{"error":{"message":"busy"}}'),
        text_reply("Three."),
        text_reply("Bye."),
    )
    args = parse(argv(server, "--demo-tools"))
    code, _, err = chat_with(args, "count abc\n", monkeypatch, capsys)
    assert code == 1
    assert "HTTP 503 Service Unavailable" in err
    unit = [
        UserMessage("count abc"),
        AssistantMessage("", (ToolCall("c1", "count_chars", {"text": "abc"}),)),
        ToolMessage("c1", "3"),
    ]
    assert load_session(tmp_path / "s.jsonl") == unit
    code, out, _ = chat_with(args, "count abc\nbye\n", monkeypatch, capsys)
    assert (code, out) == (0, "Three.\nBye.\n")
    assert len(server.requests[2].body["messages"]) == 3  # the unit as on disk, nothing added
    assert load_session(tmp_path / "s.jsonl") == [
        *unit,
        AssistantMessage("Three."),
        UserMessage("bye"),
        AssistantMessage("Bye."),
    ]


def test_a_failure_at_a_later_prompt_says_which_prompt_to_send_first(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = serve(text_reply("One."), Reply(status=500, body=b"down"))
    code, _, err = chat_with(parse(argv(server)), "one\ntwo\nthree\n", monkeypatch, capsys)
    assert code == 1
    assert "要续接，先把第 2 条提问再发一次：" in err
    assert load_session(tmp_path / "s.jsonl") == [
        UserMessage("one"),
        AssistantMessage("One."),
        UserMessage("two"),
    ]


# --- usage errors: exit 2, nothing read, nothing written ------------------------------------


class Untouchable:
    """A stdin that fails the test when it is read."""

    def __iter__(self) -> Iterator[str]:
        raise AssertionError("stdin was read")


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (["--base-url", "notaurl"], "--base-url: 不是可用的地址：not an http:// or https:// URL"),
        (["--base-url", "http://u:pw-secret@127.0.0.1:x/v1"], "not a URL: http://***@127"),
        (["--base-url", "ftp://127.0.0.1/v1?k=pw-secret"], "URL: ftp://127.0.0.1/v1?***"),
        (["--model", ""], "--model: 不是模型名：''"),
        (["--api-key-env", ""], "--api-key-env: 不是环境变量名：''"),
        (["--api-key-env", "A=B"], "--api-key-env: 不是环境变量名：'A=B'"),
        (["--session", ""], "--session: 不是文件路径：''"),
        (["--deadline", "nan"], "--deadline: 必须大于 0，这里是 'nan'"),
        (["--fsync=yes"], "--fsync: 这个选项不带值，却给了 'yes'"),
    ],
)
def test_a_usage_error_exits_2_and_reads_and_writes_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    change: list[str],
    said: str,
) -> None:
    base = ["--session", "s.jsonl", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
    monkeypatch.setattr(sys, "stdin", Untouchable())
    with pytest.raises(SystemExit) as caught:
        main(["chat", *base, *change])  # a later option overrides the one in `base`
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert said in err
    assert "pw-secret" not in err
    assert list(tmp_path.iterdir()) == []


def test_the_reported_bad_base_url_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    done = command(
        "hi\n", "--session", "s.jsonl", "--base-url", "notaurl", "--model", "m", cwd=tmp_path
    )
    assert done.returncode == 2
    assert "--base-url: 不是可用的地址：not an http:// or https:// URL: notaurl" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_run_refuses_a_bad_base_url_given_without_the_parser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = parse(["--session", "s.jsonl", "--base-url", "http://h", "--model", "m"])
    args.base_url = "http://user:pw-secret@/v1"
    monkeypatch.setattr(sys, "stdin", Untouchable())
    assert chat.run(args) == 2
    err = capsys.readouterr().err
    assert (
        err == "错误：--base-url 不是可用的地址：not an http:// or https:// URL: http://***@/v1\n"
    )
    assert list(tmp_path.iterdir()) == []


# --- secrets and invisible characters never reach the terminal ------------------------------


def test_a_key_or_url_password_echoed_by_the_server_is_never_printed(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    echo = f"key {KEY.upper()} password PW-SECRET-9"
    server = serve(Reply(chunks=[text_chunk("a"), sse_error(echo), DONE]))
    url = server.base_url.replace("http://", "http://user:pw-secret-9@")
    args = parse([*argv(server), "--base-url", url])
    code, out, err = chat_with(args, "hi\n", monkeypatch, capsys)
    assert code == 1
    assert "reported an error mid-stream: key *** password ***" in err
    for secret in (KEY, "pw-secret-9"):
        assert secret.lower() not in (out + err).lower()


def chat_main(
    change: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int | str | None, str]:
    """`python -m mini_agent chat` with `change` after its usual arguments, one prompt on
    stdin: its exit code, and all it printed."""
    base = ["--session", "s.jsonl", "--model", "m", "--api-key-env", KEY_ENV, "--timeout", "5"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("hi\n"))
    try:
        code: int | str | None = main(["chat", *base, *change])
    except SystemExit as stop:
        code = stop.code
    out, err = capsys.readouterr()
    return code, out + err


@pytest.mark.parametrize("password", PASSWORDS)
def test_a_percent_encoded_url_password_is_never_printed_or_recorded(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    password: str,
) -> None:
    # issue 34: the server echoes the credentials in every form (`echo_body`)
    server = serve(Reply(status=401, echo=True))
    url = server.base_url.replace("http://", f"http://alice:{quote(password, safe='')}@")
    code, printed = chat_main(["--base-url", url], monkeypatch, capsys)
    assert code == 1
    assert END_OF_ECHO in printed  # the echo was quoted whole
    assert len(server.requests) == 1
    on_file = (tmp_path / "s.jsonl").read_text(encoding="utf-8")
    assert on_file == on_disk(UserMessage("hi"))
    never_shown(printed + on_file, "alice", password)


@pytest.mark.parametrize(("password", "taken"), TYPED)
def test_a_url_password_typed_unencoded_is_never_printed_or_recorded(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    password: str,
    taken: bool,
) -> None:
    # `--base-url 'http://alice:Sup3rSecret#Pw99@127.0.0.1:1/v1'` printed
    # `not a URL: http://alice:Sup3rSecret#***`
    server = serve(Reply(status=401, echo=True))
    host = server.base_url.removeprefix("http://")
    code, printed = chat_main(
        ["--base-url", f"http://alice:{password}@{host}"], monkeypatch, capsys
    )
    written = "".join(path.read_text(encoding="utf-8") for path in tmp_path.iterdir())
    if taken:
        assert (code, len(server.requests)) == (1, 1)
        assert END_OF_ECHO in printed
        assert written == on_disk(UserMessage("hi"))
    else:
        assert (code, server.requests, written) == (2, [], "")
        hint = "write it as %40 there, and # ? / @ in a user name or password as %23 %3F %2F %40"
        assert f"不是可用的地址：an @ after the host: {hint}: http://***@{host}\n" in printed
    never_shown(printed + written, "alice", password)


def test_a_tool_call_note_shows_control_characters_escaped_and_no_key(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    call = call_chunk(0, id="c1", name="\x1b]0;pwned\x07\u202e", arguments=f'"{KEY.upper()}"')
    server = serve(Reply(chunks=[call, finish_chunk("tool_calls"), DONE]), text_reply("ok"))
    code, _, err = chat_with(parse(argv(server, "--demo-tools")), "hi\n", monkeypatch, capsys)
    assert code == 0
    assert '[工具调用] \\x1b]0;pwned\\x07\\u202e "***"' in err.splitlines()
    assert not {"\x1b", "\x07", "\u202e"} & set(err)


def test_streamed_text_shows_control_characters_escaped_and_records_them_as_sent(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = "a\x1b[2J\x07b\r\n\tc\u202ed\u200be\ud800 世界"
    ascii_only = [  # a lone surrogate travels as a \\ud800 escape, as JSON allows
        "data: " + json.dumps({"choices": [{"delta": {"content": part}}]}) + "\n\n"
        for part in (text[:5], text[5:])
    ]
    server = serve(Reply(chunks=[*ascii_only, finish_chunk("stop")]))
    code, out, _ = chat_with(parse(argv(server)), "hi\n", monkeypatch, capsys)
    assert code == 0
    assert out == "a\\x1b[2J\\x07b\\r\n\tc\\u202ed\\u200be\\ud800 世界\n"
    assert load_session(tmp_path / "s.jsonl")[1] == AssistantMessage(text)


# --- --fsync ----------------------------------------------------------------------------------


@pytest.mark.parametrize("synced", [True, False], ids=["--fsync", "default"])
def test_fsync_syncs_every_record_of_the_session(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    synced: bool,
) -> None:
    real_fsync = os.fsync
    synced_files: list[tuple[int, int]] = []

    def fsync(fd: int) -> None:  # the real sync, noting which file it was
        info = os.fstat(fd)
        synced_files.append((info.st_dev, info.st_ino))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    server = serve(text_reply("One."), text_reply("Two."))
    extra = ["--fsync"] if synced else []
    code, _, _ = chat_with(parse(argv(server, *extra)), "a\nb\n", monkeypatch, capsys)
    assert code == 0
    info = (tmp_path / "s.jsonl").stat()
    syncs_of_the_session = synced_files.count((info.st_dev, info.st_ino))
    assert syncs_of_the_session == (4 if synced else 0)


def sse_error(message: str) -> str:
    return sse({"error": {"message": message}})


# --- it speaks Chinese ------------------------------------------------------------------------


def test_chat_reports_in_chinese_and_quotes_the_servers_english_after_a_lead_in(
    tmp_path: Path,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    call = call_chunk(0, id="c1", name="count_chars", arguments='{"text": "你好"}')
    server = serve(
        Reply(chunks=[call, finish_chunk("tool_calls"), DONE]),
        text_reply("两个字。"),
        Reply(status=500, body=b'{"error":{"message":"overloaded"}}'),
        Reply(status=401, body=b'{"error":{"message":"bad key"}}'),
    )
    args = parse(argv(server, "--demo-tools"))
    said = [chat_with(args, "你好有几个字？\n再问一次\n", monkeypatch, capsys)[2]]
    said.append(chat_with(args, "再问一次\n", monkeypatch, capsys)[2])  # the 401
    said.append(chat_with(parse(argv(server, "--max-chars", "5")), "x\n", monkeypatch, capsys)[2])
    assert "[工具调用] count_chars" in said[0]
    assert "错误：模型服务返回了错误：model server answered HTTP 500" in said[0]
    assert f"错误：{text.model_key_refused(KEY_ENV)}：model server answered HTTP 401" in said[1]
    assert "  释义：预算连最新的那个一致单元都装不下" in said[2]
    leads = [f"错误：{lead}：" for lead in text.MODEL_ERRORS.values()]
    for err in said:
        assert english_prose(err, [*leads, f"{text.model_key_refused(KEY_ENV)}："]) == [], err
        err.encode("gbk")
