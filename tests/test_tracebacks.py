"""An error raised in a reader's own cell, in real IPython: the traceback IPython shows, then the
same 释义 `show_error` gives; the kit's own frames left out below the reader's; anything the kit
cannot explain shown exactly as IPython shows it (teaching/tracebacks.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mini_agent import (
    AssistantMessage,
    ContextBudgetError,
    ScriptedClient,
    SessionFormatError,
    UserMessage,
    load_session,
    trim_context,
)
from teaching import extras, tracebacks
from teaching.errors import show_error

ANSI = re.compile(r"\x1b\[[0-9;]*m")
BUDGET_GLOSS = "释义：预算连最新的那个一致单元都装不下"


class Shell:
    """IPython's InteractiveShell, with what it would send a front end recorded as plain text."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.shown: list[tuple[str, str, str]] = []  # (ename, evalue, the traceback's text)
        shell._showtraceback = self._record

    def _record(self, etype: type[BaseException], value: BaseException, stb: list[str]) -> None:
        text = ANSI.sub("", "\n".join(stb))
        self.shown.append((etype.__name__, str(value), text))

    def run(self, code: str) -> str:
        """Run `code` as a cell (not counted: every cell is `In[1]`); the traceback it shows."""
        before = len(self.shown)
        self.shell.run_cell(code, store_history=False)
        assert len(self.shown) == before + 1, f"no traceback for {code!r}"
        return self.shown[-1][2]


@pytest.fixture
def ipython() -> Iterator[Shell]:
    from IPython.core.interactiveshell import InteractiveShell

    shell: Any = InteractiveShell.instance()
    try:
        assert tracebacks.install(shell) and tracebacks.install(shell)  # once, and again: no-op
        shell.run_cell(
            "from pathlib import Path\nfrom mini_agent import *\nfrom teaching.errors import show_error",
            store_history=False,
        )
        yield Shell(shell)
    finally:
        shell.set_custom_exc((), None)
        InteractiveShell.clear_instance()


def ends_with(text: str, *lines: str) -> bool:
    return text.rstrip("\n").split("\n")[-len(lines) :] == list(lines)


def test_a_budget_error_in_a_cell_keeps_the_chapters_phrase_and_gets_the_gloss(
    ipython: Shell,
) -> None:
    shown = ipython.run("trim_context([UserMessage('x' * 50)], 10)")
    phrase = (
        "ContextBudgetError: context budget cannot contain the smallest consistent message unit"
    )
    assert ends_with(shown, phrase, f"  {BUDGET_GLOSS}"), shown
    too_small = show_error(lambda: trim_context([UserMessage("x" * 50)], 10), ContextBudgetError)
    assert too_small.gloss == BUDGET_GLOSS  # the same words as notebook 05's show_error
    assert "context.py" not in shown and "本包内部的 1 层调用没有显示" in shown
    assert ipython.shown[-1][:2] == (
        "ContextBudgetError",
        phrase.split(": ", 1)[1],
    )  # what nbval compares


def test_a_session_error_gets_the_gloss_show_error_gives_without_the_json_error_beneath(
    ipython: Shell, tmp_path: Path
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"role":"user","content":"a"}\n{bad\n', encoding="utf-8")
    ipython.shell.user_ns["path"] = path
    shown = ipython.run("load_session(path)")
    expected = show_error(lambda: load_session(path), SessionFormatError).gloss
    assert expected is not None and expected.startswith("释义：第 2 行不是合法的 JSON")
    assert ends_with(shown, f"  {expected}"), shown
    assert "invalid session JSON at line 2" in shown
    assert "JSONDecodeError" not in shown and "direct cause" not in shown
    assert "session.py" not in shown and "本包内部的 2 层调用没有显示" in shown


@pytest.mark.parametrize(
    ("code", "message", "gloss"),
    [
        ("UserMessage(123)", "UserMessage.content must be a str, not int", "构造 UserMessage 时，content 必须是字符串，这里是 int"),
        ("trim_context([UserMessage('a')], '100')", "max_chars must be an int, not str", "预算必须是整数，这里是 str"),
        ("load_session(123)", "lstat: path should be string, bytes or os.PathLike, not int", "文件路径必须是字符串或 pathlib.Path，这里是 int"),
        # a TypeScript reader's object literal: refused before any file is touched
        ("append_session('never-written.jsonl', {'role': 'user', 'content': 'hi'})", "not a session message: dict", "append_session 要的是消息对象 UserMessage / AssistantMessage / ToolMessage，不是 dict；本章的对象字面量在本包里是这几个类"),
        ("trim_context('hello', 100)", "messages must be a list of messages, not str", "messages 应当是消息的列表，这里是 str"),
    ],
)  # fmt: skip
def test_a_wrong_argument_type_gets_its_gloss(
    ipython: Shell, code: str, message: str, gloss: str
) -> None:
    shown = ipython.run(code)
    lines = shown.rstrip("\n").split("\n")
    assert lines[-2] == f"TypeError: {message}" and lines[-1].startswith(f"  释义：{gloss}"), shown
    assert "mini_agent" not in shown and "没有显示" in shown


def test_a_session_path_that_is_a_folder_shows_the_readers_line_the_gloss_and_tb_shows_all(
    ipython: Shell, tmp_path: Path
) -> None:
    ipython.shell.user_ns["folder"] = tmp_path
    shown = ipython.run("load_session(folder)")
    assert "----> 1 load_session(folder)" in shown
    assert ends_with(
        shown,
        f"IsADirectoryError: [Errno 21] Is a directory: '{tmp_path}'",
        "  释义：这个路径是目录，不是文件",
    ) or (
        sys.platform == "win32"  # Windows words the error its own way
    ), shown
    assert "store.py" not in shown and shown.count("\n") < 12, shown
    full = ipython.run("%tb")  # the whole of it, as IPython shows it, on demand
    assert "store.py" in full and "释义" not in full


def test_an_error_the_kit_cannot_explain_is_shown_exactly_as_ipython_shows_it(
    ipython: Shell,
) -> None:
    code = "def divide(a, b):\n    return a / b\n\ndivide(1, 0)"
    with_hook = ipython.run(code)
    ipython.shell.set_custom_exc((), None)
    without = ipython.run(code)
    assert with_hook == without and "ZeroDivisionError: division by zero" in with_hook
    assert "释义" not in with_hook


def test_a_syntax_error_is_shown_as_ipython_shows_it(ipython: Shell) -> None:
    with_hook = ipython.run("def f(:\n    pass")
    ipython.shell.set_custom_exc((), None)
    assert with_hook == ipython.run("def f(:\n    pass") and "SyntaxError" in with_hook


def test_a_readers_function_the_kit_calls_back_keeps_every_frame(ipython: Shell) -> None:
    shown = ipython.run("show_error(lambda: {}['input'], ValueError)")
    assert "errors.py" in shown and "没有显示" not in shown  # the kit's frame between the reader's
    assert ends_with(
        shown, "KeyError: 'input'", "  释义：字典里没有键 'input'：取值之前没有先确认这个键在不在"
    )


def test_an_empty_session_path_is_glossed_as_empty_not_as_a_missing_file(
    ipython: Shell, tmp_path: Path
) -> None:
    ipython.shell.user_ns["client"] = ScriptedClient([AssistantMessage("好")])
    shown = ipython.run("run_agent('hi', client=client, session_path='')")
    assert "OSError: [Errno 22] the path is empty: it names no file: ''" in shown
    gloss = shown.rstrip("\n").split("\n")[-1]
    assert gloss.startswith("  释义：路径是空字符串") and "文件不存在" not in gloss, shown
    assert "if (options.sessionPath)" in gloss and "None" in gloss
    assert "mini_agent" not in shown and "没有显示" in shown


def test_a_name_a_cell_above_defines_is_glossed_as_not_defined_yet_in_this_kernel(
    ipython: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extras, "_said_missing", [])  # not in 08 after its first cell failed
    shown = ipython.run("view = SessionView([])")
    assert "NameError: name 'SessionView' is not defined" in shown
    gloss = shown.rstrip("\n").split("\n")[-1]
    assert gloss.startswith("  释义：名字 SessionView 在这个内核里还没有定义"), shown
    assert "先运行上面的单元格" in gloss and "第一个单元格" in gloss and "重启内核" in gloss


def test_notebook_08s_later_cells_say_in_chinese_why_a_name_is_missing(
    ipython: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extras, "_said_missing", [])
    assert "NameError: name 'random_history' is not defined" in ipython.run("random_history(3)")
    assert "还没有定义" in ipython.shown[-1][2]  # before 08's first cell said anything: generic
    monkeypatch.setitem(extras.BENCH_IMPORTS, "no-such-package", "no_such_package_for_08")
    first = ipython.run("from teaching.extras import require_bench\nrequire_bench()")
    assert "ModuleNotFoundError: 这本笔记本（08，本章之外）要用 no-such-package" in first
    # review 11: its traceback showed the kit's own raise; now it ends at the reader's cell
    assert "释义：08 要用的包没装：运行 python kit.py lab --bench" in first
    assert "extras.py" not in first and "本包内部的" in first
    later = ipython.run("random_history(3)")
    assert "NameError: name 'random_history' is not defined" in later
    assert "释义：第一个单元格已经说明缺少 no-such-package" in later
    assert "还没有定义" not in later  # 08's own reason, not the generic one
    assert extras.BENCH_COMMAND in later


def test_the_handler_stays_out_of_shells_it_does_not_fit() -> None:
    assert tracebacks.install(object()) is False  # no set_custom_exc (degrade silently)
    from IPython.core.interactiveshell import InteractiveShell

    shell: Any = InteractiveShell.instance()
    try:
        shell.set_custom_exc((KeyError,), lambda *args, **kwargs: None)
        theirs = shell.CustomTB
        assert tracebacks.install(shell) is False and shell.CustomTB is theirs
    finally:
        shell.set_custom_exc((), None)
        InteractiveShell.clear_instance()


def test_importing_teaching_outside_ipython_registers_nothing_and_imports_no_ipython() -> None:
    probe = (
        "import sys, teaching.tracebacks as t\n"
        "print(t.install_in_ipython(), 'IPython' in sys.modules)"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, encoding="utf-8", check=True
    )
    assert run.stdout.split() == ["False", "False"]


def test_a_check_called_without_the_readers_function_gets_its_gloss(ipython: Shell) -> None:
    # a third reader: `check_parse_session_message()` showed exercises.py's frames, no 释义
    shown = ipython.run(
        "from teaching.exercises import check_parse_session_message\ncheck_parse_session_message()"
    )
    assert shown.rstrip("\n").split("\n")[-1] == (
        "  释义：check_parse_session_message 要你把写好的函数交给它："
        "check_parse_session_message(你的函数名)，不加引号，函数名后面不加括号"
    )
