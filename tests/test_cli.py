"""`python -m mini_agent`: run as a reader runs it, in a subprocess; output and exit code."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from mini_agent import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    append_session,
    cli_text,
    context_units,
    load_session,
    store,
)
from mini_agent.cli import ELSEWHERE, EXIT_USAGE, argparse_text, build_parser, main
from mini_agent.cli_text import ARGPARSE, COMMANDS
from mini_agent.glosses import KIT_DETAIL
from mini_agent.listing import SessionListing, TrimListing, UnitsListing
from mini_agent.listing import display_width as columns
from mini_agent.live import chat
from mini_agent.session import SessionFormatError, record_line
from mini_agent.visible import visible_line
from teaching import demo

from .helpers import english_prose, multi_tool_history
from .platforms import MODE_BITS, PEAK_MEMORY, SYMLINKS, posix_only

ROOT = Path(__file__).resolve().parent.parent
SUBCOMMANDS = ["check", "show", "trim", "chat", "repair"]


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


def cli(*args: str, cwd: Path, module: str = "mini_agent") -> Run:
    done = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )
    return Run(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    for message in multi_tool_history():
        append_session(path, message)
    return path


def lines(*rows: str) -> str:
    return "".join(row + "\n" for row in rows)


# --- help and usage -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command", [[], *([name] for name in SUBCOMMANDS)], ids=["top", *SUBCOMMANDS]
)
def test_every_command_has_help_that_documents_the_exit_codes(
    tmp_path: Path, command: list[str]
) -> None:
    run = cli(*command, "--help", cwd=tmp_path)
    assert run.code == 0 and run.err == ""
    assert run.out.startswith(f"用法：python -m mini_agent {' '.join(command)}".rstrip())
    assert "\n退出码：\n" in run.out
    for code in ("0  成功", "1  会话有问题", "2  用法错误"):
        assert code in run.out


@pytest.mark.parametrize(
    "args",
    [[], ["nope"], ["check"], ["trim", "s.jsonl"], ["trim", "s.jsonl", "--max-chars", "0"],
     ["trim", "s.jsonl", "--max-chars", "ten"], ["show", "s.jsonl", "--bogus"]],
    ids=["no-command", "unknown-command", "no-file", "no-budget", "zero-budget", "text-budget",
         "unknown-option"],
)  # fmt: skip
def test_usage_errors_exit_2(session: Path, args: list[str]) -> None:
    run = cli(*args, cwd=session.parent)
    assert run.code == EXIT_USAGE == 2 and run.out == ""
    assert run.err.startswith("用法：python -m mini_agent") and "Traceback" not in run.err
    assert ": 错误：" in run.err.splitlines()[-1]


def test_the_console_script_is_declared_and_runs(tmp_path: Path) -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^mini-agent = "mini_agent\.cli:program"$', pyproject, re.MULTILINE)
    script = Path(sys.executable).parent / "mini-agent"
    done = subprocess.run([script, "--help"], capture_output=True, encoding="utf-8", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("用法：mini-agent ")


# --- check -----------------------------------------------------------------------------------------


def test_check_counts_messages_by_role(session: Path) -> None:
    run = cli("check", "s.jsonl", cwd=session.parent)
    summary = "s.jsonl: 4 条消息，353 字符；按角色：user 1 条、assistant 1 条、tool 2 条\n"
    assert run == Run(0, summary, "")


def test_check_points_at_the_bad_line_with_a_visible_excerpt(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"role":"user","content":"x"}\n\n{"role":"user","content":"a\tb\x01c"\n')
    run = cli("check", "s.jsonl", cwd=tmp_path)
    assert run.code == 1 and run.out == ""
    assert run.err == lines(
        "s.jsonl:3: invalid session JSON at line 3",
        "  本包补充：Invalid control character at column 28",
        "  释义：第 3 行不是合法的 JSON：第 28 列的字符串里有未转义的控制字符",
        '  3 | {"role":"user","content":"a\\tb\\x01c"',  # the line as it is, controls shown
    )


def test_check_names_a_bad_record(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"role":"user","content":"x"}\n{"role":"assistant","content":"y"}\n', encoding="utf-8"
    )
    run = cli("check", "s.jsonl", cwd=tmp_path)
    assert run.code == 1
    assert run.err.splitlines()[:3] == [
        "s.jsonl:2: invalid session record at line 2",
        "  本包补充：assistant needs toolCalls: an array of {id, name, input}",
        "  释义：第 2 行是 JSON，却不是一条合法的消息：assistant 必须带 toolCalls（由 {id, name, input} "
        "组成的数组）",
    ]


@pytest.mark.parametrize(
    ("line", "phrase"),
    [('{"role":"user","content":"x"', "invalid session JSON at line 2"),
     ('{"role":"tool","content":"x","isError":false}', "invalid session record at line 2"),
     ("[1,2]", "invalid session record at line 2")],
)  # fmt: skip
def test_a_bad_line_is_reported_with_the_chapters_phrase_alone_on_its_first_line(
    tmp_path: Path, line: str, phrase: str
) -> None:
    # the chapter's phrase and line end the first line; the kit's English detail is on the
    # next one, marked as the kit's, and the 释义 after it
    (tmp_path / "s.jsonl").write_text(
        f'{{"role":"user","content":"x"}}\n{line}\n', encoding="utf-8"
    )
    run = cli("check", "s.jsonl", cwd=tmp_path)
    first, detail, meaning = run.err.splitlines()[:3]
    assert first == f"s.jsonl:2: {phrase}"
    with pytest.raises(SessionFormatError) as raised:
        load_session(tmp_path / "s.jsonl")
    error = raised.value
    assert str(error) == f"{phrase}: {error.detail}"  # the exception's own text is unchanged
    assert detail == f"  {KIT_DETAIL}：{error.detail}"
    assert meaning.startswith("  释义：第 2 行")


def test_a_missing_file_is_refused_saying_load_session_would_return_an_empty_session(
    tmp_path: Path,
) -> None:
    assert load_session(tmp_path / "missing.jsonl") == []  # the library: no file, no session
    run = cli("check", "missing.jsonl", cwd=tmp_path)
    assert run.code == 1
    said = run.err.splitlines()
    assert said[1] == "  释义：文件不存在"
    assert said[2] == cli_text.MISSING_FILE
    assert "load_session" in said[2] and "[]" in said[2] and "空会话" in said[2]


@pytest.mark.parametrize("command", [["check"], ["show"], ["trim", "--max-chars", "9"], ["repair"]])
def test_an_empty_path_is_said_to_be_empty_not_a_missing_file(
    tmp_path: Path, command: list[str]
) -> None:
    run = cli(*command, "", cwd=tmp_path)  # `check "$SESSION"` with the variable unset
    said = run.err.splitlines()  # repair too: Path("") is ".", the folder it runs in
    assert run.code == 1 and said[0].endswith(  # the kit's refusal, not the system's error
        "拒绝使用这个文件：'': the path is empty: it names no file"
    )
    assert said[1:] == ["  释义：路径是空字符串：没有给出文件名"], run.err  # no "load_session → []"


def test_a_file_saved_as_gbk_is_told_to_be_saved_as_utf8(tmp_path: Path) -> None:
    # Notepad's "ANSI" on a Chinese Windows is GBK: the line is not UTF-8, but reads as GBK
    record = '{"role":"user","content":"你好，记忆续上了"}\n'
    (tmp_path / "s.jsonl").write_bytes(record.encode("gbk"))
    run = cli("check", "s.jsonl", cwd=tmp_path)
    first, detail, meaning = run.err.splitlines()[:3]
    assert first == "s.jsonl:1: invalid session JSON at line 1"
    assert detail.startswith(f"  {KIT_DETAIL}：not UTF-8 at column 27; ")
    assert "save it as UTF-8" in detail
    assert meaning.endswith(
        "它像是 GBK 编码（中文 Windows 记事本的“ANSI”）：请用“另存为”选 UTF-8 编码保存"
    )
    # bytes that are not UTF-8 and not GBK either get no such hint
    (tmp_path / "s.jsonl").write_bytes(b'{"role":"user","content":"\xff\xfe"}\n')
    assert "GBK" not in cli("check", "s.jsonl", cwd=tmp_path).err


@pytest.mark.parametrize(
    ("before", "content"),
    [("", "你好"), ("", "你好，记忆"), ("中", "你好，")],
    ids=["gbk", "gbk-bytes-that-spell-utf8", "utf8-then-gbk"],
)
def test_the_excerpt_of_a_gbk_line_shows_each_byte_past_ascii_not_a_mix(
    tmp_path: Path, before: str, content: str
) -> None:
    # GBK's bytes may happen to spell UTF-8 (好， is BA C3 A3 AC, and C3 A3 is "ã"): from the
    # first byte that is not UTF-8 on, every byte past ASCII is \xNN, none decoded by chance;
    # what comes before it is UTF-8, and shown as text
    line = f'{{"role":"user","content":"{before}'.encode() + f'{content}"}}'.encode("gbk")
    (tmp_path / "s.jsonl").write_bytes(line + b"\n")
    run = cli("check", "s.jsonl", cwd=tmp_path)
    assert f"not UTF-8 at column {27 + len(before)}" in run.err.splitlines()[1]
    escaped = "".join(f"\\x{byte:02x}" for byte in content.encode("gbk"))
    assert run.err.splitlines()[3] == f'  1 | {{"role":"user","content":"{before}{escaped}"}}'


def test_check_shows_the_part_of_a_long_line_where_it_breaks(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"role":"user","content":"' + "x" * 500 + '"}}\n', encoding="utf-8")
    run = cli("check", "s.jsonl", cwd=tmp_path)
    excerpt = run.err.splitlines()[3]
    assert excerpt.startswith("  1 | …") and "}}" in excerpt and len(excerpt) < 90


def test_check_suggests_repair_for_a_torn_last_line(session: Path) -> None:
    with session.open("ab") as file:
        file.write(b'{"role":"assistant","content":"half')
    run = cli("check", "s.jsonl", cwd=session.parent)
    assert run.code == 1
    assert run.err.splitlines()[0] == "s.jsonl:5: invalid session JSON at line 5"
    assert run.err.splitlines()[4] == (
        "  最后一行不完整（写的时候被打断了？）："
        "`python -m mini_agent repair s.jsonl` 会把它移进备份文件"
    )


def test_check_names_a_byte_order_mark_and_shows_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + lines('{"role":"user","content":"x"}').encode())
    run = cli("check", "s.jsonl", cwd=tmp_path)
    assert run.code == 1 and run.err == lines(
        "s.jsonl:1: invalid session JSON at line 1",
        "  本包补充：byte-order mark (U+FEFF) at column 1; save as UTF-8 without BOM",
        "  释义：第 1 行不是合法的 JSON：第 1 列有字节顺序标记（BOM），请存成不带 BOM 的 UTF-8"
        "（记事本“另存为”时编码选“UTF-8”，不选“带有 BOM 的 UTF-8”）",
        '  1 | \\ufeff{"role":"user","content":"x"}',
    )


def test_check_escapes_format_characters_in_the_excerpt(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes('{"role":"user","content":"\u202eabc\u200b"} x\n'.encode())
    run = cli("check", "s.jsonl", cwd=tmp_path)
    assert run.err.splitlines()[3] == '  1 | {"role":"user","content":"\\u202eabc\\u200b"} x'


def test_check_offers_repair_only_for_a_record_cut_off(session: Path) -> None:
    complete = session.read_bytes()
    for tail, offered in [
        ('{"role":"user","content":"中'.encode()[:-1], True),  # cut inside a character
        (b'{"role":"user","content":"x"}\0\0\0\0', True),  # a record, then NULs a crash left
        (b'{"role":"user","content":"x"}x', False),
        (b'{"role":"user"oops', False),
    ]:
        session.write_bytes(complete + tail)
        run = cli("check", "s.jsonl", cwd=session.parent)
        assert run.code == 1 and ("repair s.jsonl" in run.err) == offered, tail
        assert (cli("repair", "s.jsonl", cwd=session.parent).code == 0) == offered, tail
        kept = tail.rstrip(b"\0") if tail.endswith(b"\0") else b""  # a whole record stays
        assert session.read_bytes() == (complete + kept if offered else complete + tail)


def test_excerpts_escape_every_invisible_character_and_never_cut_an_escape() -> None:
    hidden = "\ufeff\u202e\u200b\u00ad\u2028\x85\x00\ud800\U000e0001"
    assert visible_line("a" + hidden + "中") == (
        "a\\ufeff\\u202e\\u200b\\xad\\u2028\\x85\\x00\\ud800\\U000e0001中"
    )
    assert visible_line("\u3000 \u00a0é", 9) == "\u3000 \u00a0é"  # spaces one can see stay
    assert visible_line("ab\x00\x00\x00", 9) == "ab\\x00…"  # not "ab\\x00\\x…"
    assert visible_line("x" * 10, 10) == "x" * 10 and visible_line("x" * 11, 10) == "x" * 9 + "…"


MEASURE = """
import resource, sys
from mini_agent.cli import main
from mini_agent.session import SessionFormatError, load_session
if sys.argv[1] == "load":
    try:
        load_session(sys.argv[2])
    except SessionFormatError:
        pass
else:
    main(["check", sys.argv[2]])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak_kib(what: str, path: Path) -> int:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, what, str(path)],
        capture_output=True, encoding="utf-8", timeout=120, check=False, cwd=ROOT,
    )  # fmt: skip
    assert done.stdout.strip().isdigit(), done.stderr
    return int(done.stdout)


@posix_only(PEAK_MEMORY)
@pytest.mark.parametrize("start", [b"", b'{"role":"user","content":"'], ids=["zeros", "torn"])
def test_check_on_a_huge_bad_line_needs_no_more_memory_than_loading_it(
    tmp_path: Path, start: bytes
) -> None:
    path = tmp_path / "s.jsonl"
    with path.open("wb") as file:  # sparse: 32 MiB of zeros that take no disk
        file.write(start)
        file.truncate(32 << 20)
    load, check = peak_kib("load", path), peak_kib("check", path)
    # quoting the line reads it a chunk at a time: nothing beyond what loading needed (one more
    # copy of the line would be 32 MiB, over the 10 % allowed)
    assert load > 90_000 and check <= 1.1 * load, (load, check)
    path.unlink()


@pytest.mark.parametrize(
    ("name", "message", "meaning"),
    [("missing.jsonl", "missing.jsonl: No such file or directory", "文件不存在"),
     (".", ".: Is a directory", "这个路径是目录，不是文件")],
)  # fmt: skip
def test_os_errors_exit_1_with_the_systems_words_and_their_meaning(
    tmp_path: Path, name: str, message: str, meaning: str
) -> None:
    for command in (["check", name], ["show", name], ["trim", name, "--max-chars", "9"],
                    ["repair", name]):  # fmt: skip
        run = cli(*command, cwd=tmp_path)
        said = [f"python -m mini_agent: 操作系统报错：{message}", f"  释义：{meaning}"]
        if name == "missing.jsonl":  # where load_session itself would return []
            said.append(cli_text.MISSING_FILE)
        assert run == Run(1, "", lines(*said)), command


@posix_only(MODE_BITS)
def test_permission_denied_exits_1_without_a_traceback(
    session: Path, deny: Callable[[Path, int], None], capsys: pytest.CaptureFixture[str]
) -> None:
    deny(session, 0o200)  # no read permission (the kernel refuses: see the deny fixture)
    assert main(["check", str(session)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == lines(
        f"python -m mini_agent: 操作系统报错：{session}: Permission denied",
        "  释义：没有读（或写）这个文件的权限",
    )


# --- show and trim ----------------------------------------------------------------------------------


def test_show_prints_the_session_view_as_notebooks_do(session: Path) -> None:
    run = cli("show", "s.jsonl", cwd=session.parent)
    assert run == Run(0, repr(SessionListing(multi_tool_history())) + "\n", "")
    assert run.out.startswith("4 条消息，353 字符\n  [0] user             read two files\n")


def test_show_units_groups_calls_with_their_results(session: Path) -> None:
    run = cli("show", "--units", "s.jsonl", cwd=session.parent)
    assert run == Run(0, repr(UnitsListing(context_units(multi_tool_history()))) + "\n", "")
    assert "单元 2: [assistant(a,b) | tool a | tool b]  310 字符" in run.out


def test_trim_shows_kept_and_dropped_units(session: Path) -> None:
    append_session(session, UserMessage("and now?"))
    run = cli("trim", "s.jsonl", "--max-chars", "360", cwd=session.parent)
    assert run == Run(0, repr(TrimListing(load_session(session), 360)) + "\n", "")
    assert run.out.splitlines() == [
        "预算 360 字符：保留 2/3 个单元、4/5 条消息，用了 347 字符",
        "  丢弃 单元 1: [user]  43 字符",
        "  保留 单元 2: [assistant(a,b) | tool a | tool b]  310 字符",
        "  保留 单元 3: [user]  37 字符",
    ]


def test_trim_reports_the_chapters_budget_error_once_and_the_budget_it_needs(
    session: Path,
) -> None:
    run = cli("trim", "s.jsonl", "--max-chars", "100", cwd=session.parent)
    assert run.code == 1
    assert run.out.splitlines()[:3] == [
        "预算 100 字符：",
        "context budget cannot contain the smallest consistent message unit",  # alone on its line
        "释义：预算连最新的那个一致单元都装不下",
    ]
    # stderr adds what the listing lacks: the terminal shows the phrase and its 释义 once
    assert run.err == lines(
        "s.jsonl: 预算 100 字符装不下：最新的一致单元要 310 个字符，--max-chars 至少 310"
    )
    assert (run.out + run.err).count("context budget cannot") == 1
    assert cli("trim", "s.jsonl", "--max-chars", "310", cwd=session.parent).code == 0
    assert cli("trim", "s.jsonl", "--max-chars", "309", cwd=session.parent).code == 1


def test_trim_of_an_empty_session_cannot_be_empty(tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_bytes(b"")
    run = cli("trim", "s.jsonl", "--max-chars", "100", cwd=tmp_path)
    assert run == Run(
        1,
        lines(
            "预算 100 字符：",
            "context budget cannot be empty",
            "释义：裁剪后一个单元也没有，上下文不能为空",
        ),
        lines("s.jsonl: 会话里没有消息：多大的预算都装不出一个不空的上下文"),
    )


# --- repair -------------------------------------------------------------------------------------------


def test_repair_moves_a_torn_last_line_to_a_backup(session: Path) -> None:
    complete = session.read_bytes()
    session.write_bytes(complete + b'{"role":"tool","content":"cut sho')
    run = cli("repair", "s.jsonl", cwd=session.parent)
    said = (
        "s.jsonl: 已把写到一半的最后一行（第 5 行，33 字节）剪进 s.jsonl.torn；现在能加载 4 条消息"
    )
    assert run == Run(0, said + "\n", "")
    assert session.read_bytes() == complete
    assert (session.parent / "s.jsonl.torn").read_bytes() == b'{"role":"tool","content":"cut sho'
    again = cli("repair", "s.jsonl", cwd=session.parent)
    assert again == Run(0, "s.jsonl: 没有要修复的地方；能加载 4 条消息\n", "")


def test_repair_counts_one_byte_and_one_message_without_a_plural(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"role":"user","content":"x"}\n{')
    run = cli("repair", "s.jsonl", cwd=tmp_path)
    said = (
        "s.jsonl: 已把写到一半的最后一行（第 2 行，1 字节）剪进 s.jsonl.torn；现在能加载 1 条消息"
    )
    assert run == Run(0, said + "\n", "")
    assert cli("check", "s.jsonl", cwd=tmp_path).out.startswith("s.jsonl: 1 条消息，30 字符；")


def test_repair_never_overwrites_an_older_backup(session: Path) -> None:
    complete = session.read_bytes()
    for tail in (b'{"role":"us', b'{"ro'):
        session.write_bytes(complete + tail)
        assert cli("repair", "s.jsonl", cwd=session.parent).code == 0
    assert (session.parent / "s.jsonl.torn").read_bytes() == b'{"role":"us'
    assert (session.parent / "s.jsonl.torn.2").read_bytes() == b'{"ro'


@posix_only(SYMLINKS)
def test_repair_refuses_a_symlink_and_names_it(session: Path) -> None:
    complete = session.read_bytes()
    session.write_bytes(complete + b'{"ro')
    link = session.parent / "link.jsonl"
    link.symlink_to(session.name)
    run = cli("repair", "link.jsonl", cwd=session.parent)
    assert run.code == 1 and run.out == ""
    assert run.err.startswith(
        "python -m mini_agent: 拒绝使用这个文件：link.jsonl: a symbolic link: sessions are not "
        "followed through links"
    )
    assert run.err.splitlines()[1].startswith("  释义：这是符号链接：会话从不经过链接读写")
    assert link.is_symlink() and session.read_bytes() == complete + b'{"ro'


REFUSED = "s.jsonl: 拒绝修复，文件原样未动："
ADVICE_MEANING = (
    "；要保留还能读的部分：先复制这个文件，再在编辑器里删掉坏的行"
    "（`python -m mini_agent check FILE` 会指出第一处坏行：删掉它再查，直到没有）"
)
UNTERMINATED = (
    "  释义：第 5 行不是合法的 JSON：从第 9 列开始的字符串没有收尾的引号（常见于写到一半的行）"
)
ONLY_TORN = "：repair 只剪掉写到一半的最后一行"


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (b'{"role":"us\n{"role":"user","content":"x"}\n',
         ["s.jsonl:5: invalid session JSON at line 5",
          "  本包补充：Unterminated string starting at column 9",
          UNTERMINATED,
          '  5 | {"role":"us',
          REFUSED + "第 5 行坏了，而它不是最后一行" + ONLY_TORN + ADVICE_MEANING]),
        (b'{"role":"us\n{"role":"user","content":"x"}\n{"role":"us',
         ["s.jsonl:5: invalid session JSON at line 5",
          "  本包补充：Unterminated string starting at column 9",
          UNTERMINATED,
          '  5 | {"role":"us',
          REFUSED + "第 5 行坏了，坏的不只是写到一半的最后一行（第 7 行）" + ONLY_TORN
          + ADVICE_MEANING]),
        (b'{"role":"nope","content":"x"}',
         ["s.jsonl:5: invalid session record at line 5",
          '  本包补充：unknown role "nope"',
          '  释义：第 5 行是 JSON，却不是一条合法的消息：role "nope" 不是 user、assistant、tool 之一',
          '  5 | {"role":"nope","content":"x"}',
          REFUSED + "最后一行（第 5 行）不是写到一半的记录：它是完整的 JSON，却不是一条记录"
          + ADVICE_MEANING]),
        (b'{"role":"user","content":"x"}\0\0\0\0x',
         ["s.jsonl:5: invalid session JSON at line 5",
          "  本包补充：Extra data at column 30",
          "  释义：第 5 行不是合法的 JSON：第 30 列起，一个完整的 JSON 值后面还有多余的内容",
          '  5 | {"role":"user","content":"x"}\\x00\\x00\\x00\\x00x',
          REFUSED + "最后一行（第 5 行）不是写到一半的记录：它含有控制字节（NUL？），记录里不会有"
          + ADVICE_MEANING]),
        (b'"role":"user","content":"x"}',
         ["s.jsonl:5: invalid session JSON at line 5",
          "  本包补充：Extra data at column 7",
          "  释义：第 5 行不是合法的 JSON：第 7 列起，一个完整的 JSON 值后面还有多余的内容",
          '  5 | "role":"user","content":"x"}',
          REFUSED + "最后一行（第 5 行）不是写到一半的记录：每条记录都以 `{` 开头，它不是"
          + ADVICE_MEANING]),
    ],
    ids=["bad-line-before-the-last", "bad-line-before-a-torn-last", "complete-but-invalid-last",
         "record-NULs-then-more", "a-record-cut-at-its-start"],
)  # fmt: skip
def test_repair_refuses_other_damage_says_why_and_leaves_the_file(
    session: Path, damage: bytes, said: list[str]
) -> None:
    damaged = session.read_bytes() + damage
    session.write_bytes(damaged)
    run = cli("repair", "s.jsonl", cwd=session.parent)
    assert (run.code, run.out, run.err.splitlines()) == (1, "", said)
    assert session.read_bytes() == damaged
    assert sorted(p.name for p in session.parent.iterdir()) == ["s.jsonl"]


@pytest.mark.parametrize(
    "first", ["\ufeff".encode() + record_line(UserMessage("a")).encode(),
              record_line(UserMessage("你好")).encode("gbk")], ids=["bom", "gbk"],
)  # fmt: skip
def test_repair_refuses_a_file_in_another_encoding_for_its_encoding_not_its_place(
    tmp_path: Path, first: bytes
) -> None:
    # the first of two lines: where it stands plays no part, saving the file again does
    (tmp_path / "s.jsonl").write_bytes(
        first + b"\n" + record_line(UserMessage("b")).encode() + b"\n"
    )
    refused = cli("repair", "s.jsonl", cwd=tmp_path).err.splitlines()[-1]
    assert refused == (
        REFUSED
        + "第 1 行读不成纯 UTF-8：是 GBK 之类的别的编码，或者开头多了 BOM（记事本的“带有 BOM 的 UTF-8”）"
        + ONLY_TORN
        + "；是文件的编码不对：用编辑器打开，另存为不带 BOM 的 UTF-8；不要删行"
    )  # fmt: skip


def test_repairs_refusal_gives_its_reason_in_chinese_and_the_english_stays_in_the_error(
    session: Path,
) -> None:
    # the refusal's line is a Chinese sentence; English is only what it quotes: the chapter's
    # phrase and the kit's detail, on the error's own lines above it
    session.write_bytes(session.read_bytes() + b'{"role":"us\n{"role":"user","content":"x"}\n')
    *error, refused = cli("repair", "s.jsonl", cwd=session.parent).err.splitlines()
    assert error[:2] == ["s.jsonl:5: invalid session JSON at line 5",
                         "  本包补充：Unterminated string starting at column 9"]  # fmt: skip
    assert refused.startswith(REFUSED + "第 5 行坏了") and english_prose(refused) == [], refused


def test_an_all_zero_file_is_refused_not_cut_to_an_empty_session(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with path.open("wb") as file:
        file.truncate(1 << 20)  # what a crash can leave: the size grew, the data never came
    run = cli("repair", "s.jsonl", cwd=tmp_path)
    assert run.code == 1 and run.err.splitlines() == [
        "s.jsonl:1: invalid session JSON at line 1",
        "  本包补充：Expecting value at column 1",
        "  释义：第 1 行不是合法的 JSON：第 1 列应当出现一个 JSON 值",
        "  1 | " + "\\x00" * 17 + "…",
        REFUSED
        + "最后一行（第 1 行）不是写到一半的记录：文件的每个字节都是 NUL：一条记录也没留下；"
        "把这个文件挪走" + ADVICE_MEANING,
    ]
    assert path.stat().st_size == 1 << 20 and sorted(tmp_path.iterdir()) == [path]


# --- big sessions ----------------------------------------------------------------------------------


def test_a_session_past_the_read_chunk_checks_and_shows_whole(tmp_path: Path) -> None:
    history = multi_tool_history()  # 12,000 lines: just over one 1 MiB read chunk
    text = "".join(record_line(history[n % 4]) + "\n" for n in range(12_000))
    assert store.CHUNK < len(text.encode()) < 2 * store.CHUNK
    (tmp_path / "s.jsonl").write_text(text, encoding="utf-8")
    check = cli("check", "s.jsonl", cwd=tmp_path)
    summary = "12000 条消息，1059000 字符；按角色：user 3000 条、assistant 3000 条、tool 6000 条"
    assert check == Run(0, f"s.jsonl: {summary}\n", "")
    show = cli("show", "s.jsonl", cwd=tmp_path)
    assert show.code == 0 and show.err == ""
    rows = show.out.splitlines()
    assert len(rows) == 12_001 and rows[-1] == "  [11999] tool b           contents of b"


def test_show_piped_into_a_reader_that_stops_early_is_quiet(tmp_path: Path) -> None:
    text = "".join(record_line(UserMessage(f"message {n}")) + "\n" for n in range(50_000))
    (tmp_path / "s.jsonl").write_bytes(text.encode())
    process = subprocess.Popen(
        [sys.executable, "-m", "mini_agent", "show", "s.jsonl"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    # a text stream ends its lines as the system does: \r\n on Windows
    line = f"50000 条消息，{len(text)} 字符{os.linesep}"
    # UTF-8 on every system: conftest.py sets PYTHONIOENCODING for the Pythons the tests start
    # (what a GBK console gets is the windows part's command-line checks and test_gbk_locale.py)
    assert process.stdout.readline() == line.encode("utf-8")
    process.stdout.close()  # like `| head -1`
    assert process.stderr.read() == b""
    assert process.wait(timeout=60) == 1


# --- plain argparse ------------------------------------------------------------------------------


def test_chat_brings_its_own_arguments_and_run() -> None:
    parser = build_parser("mini-agent")
    chat_args = ["chat", "--session", "f", "--base-url", "http://127.0.0.1:1/v1", "--model", "m"]
    args = parser.parse_args([*chat_args, "--timeout", "2.5"])
    assert (args.run, args.timeout) == (chat.run, 2.5)


@pytest.mark.parametrize("timeout", ["0", "-1", "nan", "soon"])
def test_a_timeout_that_is_not_a_positive_number_is_a_usage_error(
    tmp_path: Path, timeout: str
) -> None:
    run = cli("chat", "--session", "s.jsonl", "--base-url", "http://127.0.0.1:1/v1",
              "--model", "m", "--timeout", timeout, cwd=tmp_path)  # fmt: skip
    assert run.code == 2 and "参数 --timeout: " in run.err
    assert not (tmp_path / "s.jsonl").exists()


# --- what the CLI imports, and whose streams it touches ----------------------------------------

# the CLI's own modules only: never the notebooks' apparatus, IPython or widgets; the live
# client only for `chat`
IMPORTED = """
import sys
from mini_agent.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(" ".join(sorted(m for m in sys.modules
                      if m.split(".")[0] in ("teaching", "IPython", "ipywidgets")
                      or m.startswith("mini_agent.live"))))
"""


@pytest.mark.parametrize(
    ("args", "imported"),
    [(["check", "s.jsonl"], ""), (["repair", "s.jsonl"], ""), (["--help"], ""),
     (["show", "s.jsonl"], ""), (["trim", "s.jsonl", "--max-chars", "99"], ""),
     (["chat", "--help"], "mini_agent.live.chat")],
    ids=["check", "repair", "help", "show", "trim", "chat"],
)  # fmt: skip
def test_a_command_imports_only_what_it_runs(session: Path, args: list[str], imported: str) -> None:
    done = subprocess.run([sys.executable, "-c", IMPORTED, *args], cwd=session.parent,
                          capture_output=True, encoding="utf-8", timeout=60, check=True)  # fmt: skip
    modules = done.stdout.splitlines()[-1].split()
    assert (imported in modules) if imported else modules == [], modules
    assert not [m for m in modules if not m.startswith("mini_agent.live")], modules


def test_a_command_elsewhere_is_named_by_its_module_and_worded_like_the_others() -> None:
    assert {"chat": chat.__name__} == ELSEWHERE
    assert set(COMMANDS) == {"check", "show", "trim", "repair", *ELSEWHERE}


def test_main_called_as_a_library_leaves_the_streams_alone(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["check", str(session)]) == 0
    assert sys.stdout is out and out.errors == "strict"  # the caller's stream, as it was


def test_the_program_never_fails_on_a_terminal_that_cannot_show_chinese(tmp_path: Path) -> None:
    append_session(tmp_path / "s.jsonl", UserMessage("记忆"))
    done = subprocess.run(
        [sys.executable, "-m", "mini_agent", "show", "s.jsonl"],
        cwd=tmp_path, capture_output=True, timeout=60,
        env={**os.environ, "PYTHONIOENCODING": "ascii"},
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == b""
    assert done.stdout.decode("ascii").splitlines()[1].endswith("user             \\u8bb0\\u5fc6")


# --- it speaks Chinese ------------------------------------------------------------------------

HELPS = [["--help"], *([name, "--help"] for name in SUBCOMMANDS)]
CHAT = ["chat", "--session", "s.jsonl", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
USAGE_ERRORS = [
    [], ["nope"], ["trim", "s.jsonl"], ["trim", "s.jsonl", "--max-chars"],
    ["trim", "s.jsonl", "--max-chars", "ten"], ["trim", "s.jsonl", "--max-chars", "0"],
    ["show", "s.jsonl", "--bogus"], [*CHAT, "--de", "1"], [*CHAT, "--fsync=yes"],
    [*CHAT, "--model", ""], [*CHAT, "--timeout", "nan"], [*CHAT, "--base-url", "notaurl"],
]  # fmt: skip
# what the system, argparse's caller or a library says in English, quoted after a Chinese lead-in
QUOTED_AFTER = (cli_text.OS_ERROR, cli_text.REFUSED_FILE, cli_text.BAD_BASE_URL, KIT_DETAIL)


def said(*args: str) -> str:
    """All that `main(args)` prints, out and err, run in this process (a usage error or a help
    exits: that is part of what it does); `demo …` is the notebooks' `python -m teaching.demo`,
    built on this command line's parser."""
    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        contextlib.suppress(SystemExit),
    ):
        if args[:1] == ("demo",):
            demo.main(list(args[1:]))
        else:
            main(list(args))
    return out.getvalue() + err.getvalue()


def chinese_samples(folder: Path) -> dict[str, str]:
    """What the CLI prints for every help, every kind of usage error and a run of each
    command, good and bad, on a session in Chinese."""
    for message in MESSAGES:
        append_session(folder / "s.jsonl", message)
    complete = (folder / "s.jsonl").read_bytes()
    (folder / "torn.jsonl").write_bytes(complete + '{"role":"user","content":"写到'.encode())
    (folder / "bad.jsonl").write_bytes(complete + b'{"role":"nope","content":"x"}\n')
    runs = [*HELPS, ["demo", "--help"], *USAGE_ERRORS, ["check", "s.jsonl"], ["show", "s.jsonl"],
            ["show", "--units", "s.jsonl"], ["trim", "s.jsonl", "--max-chars", "500"],
            ["trim", "s.jsonl", "--max-chars", "10"], ["check", "bad.jsonl"],
            ["check", "torn.jsonl"], ["repair", "torn.jsonl"], ["repair", "torn.jsonl"],
            ["repair", "bad.jsonl"], ["check", "missing.jsonl"], ["check", "."],
            *[["demo", "--session", "d.jsonl"]] * 3, ["demo", "--session", "e.jsonl", "--max-chars", "99"]]  # fmt: skip
    return {" ".join(args): said(*args) for args in runs}


MESSAGES: list[Message] = [
    UserMessage("读一下说明.txt"),
    AssistantMessage("先读文件", (ToolCall("c1", "read", {"path": "说明.txt"}),)),
    ToolMessage("c1", "会话是一串 JSON 行"),
    AssistantMessage("说明里说：会话是一串 JSON 行"),
]


def test_the_cli_speaks_chinese_apart_from_what_it_quotes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    samples = chinese_samples(tmp_path)
    for args, text in samples.items():
        assert text and re.search("[\u4e00-\u9fff]", text), args  # every run says something
        assert english_prose(text, QUOTED_AFTER) == [], (args, text)
        text.encode("gbk")  # a Chinese Windows console shows it all, escapes needed for none
    # the chapter's phrases stay verbatim; an error reported with one has its 释义 under it
    # (a bad line: after the kit's detail, marked as the kit's)
    shown = "".join(samples.values()).splitlines()
    for error in ("bad.jsonl:5: invalid session record at line 5", "context budget cannot contain",
                  "e.jsonl: context budget cannot", "python -m mini_agent: 操作系统报错：."):  # fmt: skip
        at = next(i for i, line in enumerate(shown) if line.startswith(error))
        at += shown[at + 1].startswith(f"  {KIT_DETAIL}：")
        assert shown[at + 1].lstrip().startswith("释义："), shown[at : at + 2]


def test_the_prose_check_finds_english(tmp_path: Path) -> None:
    assert english_prose("s.jsonl: 4 messages load") == ["messages", "load"]
    assert english_prose("用法：python -m mini_agent trim [-h] --max-chars N FILE") == []
    assert english_prose("s.jsonl: 操作系统报错：s.jsonl: No such file", ["操作系统报错"]) == []
    assert english_prose("  3 | the file's own line") == []


@pytest.mark.parametrize("args", [*HELPS, ["demo", "--help"]], ids=" ".join)
def test_every_help_fits_80_columns_of_a_terminal(
    args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    shown = said(*args)
    assert shown.startswith("用法：") and "\n选项：\n" in shown and "\n退出码：\n" in shown
    assert "show this help" not in shown and "显示这段帮助并退出" in shown
    too_wide = [line for line in shown.splitlines() if columns(line) > 80]
    assert too_wide == [], too_wide


def test_a_long_usage_goes_on_under_its_first_option(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    usage = said("chat", "--help").split("\n\n")[0].splitlines()
    assert len(usage) > 1
    first = columns(usage[0].partition("[-h]")[0])  # where the options begin, in columns
    assert all(len(line) - len(line.lstrip()) == first for line in usage[1:]), usage


def test_argparse_text_translates_argparse_messages_and_leaves_others_alone() -> None:
    assert argparse_text("the following arguments are required: --session, --model") == (
        "缺少必需的参数：--session, --model"
    )
    assert argparse_text("argument COMMAND: invalid choice: 'x' (choose from 'check', 'show')") == (
        "参数 COMMAND: 没有这个选择：'x'（可选：'check', 'show'）"
    )
    assert argparse_text("argument --n: expected one argument") == "参数 --n: 后面要跟一个值"
    assert (
        argparse_text("something argparse may say one day") == "something argparse may say one day"
    )


# argparse's strings that the table does not translate, and why our parsers never print them
NOT_IN_THE_TABLE = {
    "'required' is an invalid argument for positionals": "a mistake in our code, not a usage error",
    "%r is not callable": "a mistake in our code",
    ".__call__() not defined": "a mistake in our code",
    "cannot have multiple subparser arguments": "a mistake in our code",
    "cannot merge actions - two groups are named %r": "a mistake in our code",
    "conflicting subparser alias: %s": "a mistake in our code",
    "conflicting subparser: %s": "a mistake in our code",
    "dest= is required for options like %r": "a mistake in our code",
    "invalid conflict_resolution value: %r": "a mistake in our code",
    "mutually exclusive arguments must be optional": "a mistake in our code",
    "unexpected option string: %s": "a mistake in our code",
    "conflicting option string: %s": "a mistake in our code",
    "conflicting option strings: %s": "a mistake in our code",
    "invalid option string %(option)r: must start with a character %(prefix_chars)r": (
        "a mistake in our code"
    ),
    "unknown parser %(parser_name)r (choices: %(choices)s)": "'invalid choice' comes first",
    "can't open '%(filename)s': %(error)s": "no argparse.FileType",
    'argument "-" with mode %r': "no argparse.FileType",
    "not allowed with argument %s": "no mutually exclusive group",
    "one of the arguments %s is required": "no mutually exclusive group",
    "expected %s argument": "no nargs=N",
    "expected %s arguments": "no nargs=N",
    "show program's version number and exit": "no --version",
    " (default: %(default)s)": "no ArgumentDefaultsHelpFormatter",
    "subcommands": "add_subparsers gets no title",
    "%(heading)s:": "3.13's heading: HelpFormatter writes '：' after a Chinese one",
    "argument '%(argument_name)s' is deprecated": "nothing deprecated",
    "command '%(parser_name)s' is deprecated": "nothing deprecated",
    "option '%(option)s' is deprecated": "nothing deprecated",
    "%(prog)s: warning: %(message)s\n": "nothing deprecated",
}
ARGPARSE_HERE = """
import argparse, ast, contextlib, inspect, io, json, sys
from mini_agent.cli import main
from mini_agent.cli_text import ARGPARSE
tree = ast.parse(inspect.getsource(argparse))
constants = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
msgids = sorted(
    arg.value
    for n in ast.walk(tree)
    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("_", "ngettext")
    for arg in n.args[:2]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
)
said = {}
for args in json.loads(sys.argv[1]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            main(args)
        except SystemExit:
            pass
    said[" ".join(args)] = out.getvalue()
unknown_keys = sorted(key for key in ARGPARSE if key not in constants)
print(json.dumps({"version": list(sys.version_info[:2]), "msgids": msgids,
                  "unknown_keys": unknown_keys, "said": said}))
"""


def pythons() -> list[str]:
    """This Python, and every other CPython 3.10 or later found on PATH that runs."""
    found = [sys.executable]
    for minor in range(10, 16):
        name = shutil.which(f"python3.{minor}")
        if name is None or minor == sys.version_info.minor:
            continue
        probe = subprocess.run([name, "-c", "import sys; print(sys.version_info[:2])"],
                               capture_output=True, encoding="utf-8", timeout=60)  # fmt: skip
        if probe.returncode == 0 and probe.stdout.strip() == f"(3, {minor})":
            found.append(name)  # a pyenv shim without that version fails the probe
    return found


@pytest.mark.parametrize("python", pythons(), ids=lambda name: Path(name).name)
def test_argparse_speaks_chinese_on_every_python_here(tmp_path: Path, python: str) -> None:
    runs = [*HELPS, *USAGE_ERRORS]
    done = subprocess.run(
        [python, "-c", ARGPARSE_HERE, json.dumps(runs)], cwd=tmp_path, capture_output=True,
        encoding="utf-8", timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["unknown_keys"] == []  # every key is a string of this argparse
    untranslated = set(seen["msgids"]) - set(ARGPARSE) - set(NOT_IN_THE_TABLE)
    assert untranslated == set(), f"Python {seen['version']}: translate or explain {untranslated}"
    for args, text in seen["said"].items():
        assert text.startswith("用法："), (args, text)
        assert english_prose(text, QUOTED_AFTER) == [], (seen["version"], args, text)
        if args.endswith("--help"):
            assert all(columns(line) <= 80 for line in text.splitlines()), (args, text)
