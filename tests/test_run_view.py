"""views.py: ScanView and RunView, the displays of notebooks 04 and 06."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_agent import (
    AssistantMessage,
    Message,
    ScriptedClient,
    ToolCall,
    UserMessage,
    estimate_context_chars,
    run_agent,
)
from teaching.style import palette
from teaching.views import RunView, ScanView, align_requests

from .helpers import multi_tool_history


def test_scan_view_lists_each_step_under_the_history() -> None:
    text = repr(ScanView(multi_tool_history())).splitlines()
    assert text[0] == "历史：[user] [assistant(a,b)] [tool a] [tool b]"
    assert text[1].startswith("第 1 步：index=3 tool b")
    assert text[3].startswith("第 2 步：index=0 user")


def test_scan_view_html_marks_current_found_and_searched_messages() -> None:
    html = ScanView(multi_tool_history()).step_html(1)
    colours = palette()
    assert html.count(f"outline:3px solid {colours.current}") == 1  # the current message
    assert html.count(f"outline:3px solid {colours.found}") == 1  # the declaring assistant
    assert html.count(f"background:{colours.searched}") == 1  # tool a, searched past
    assert "opacity" not in ScanView(multi_tool_history()).step_html(2)  # cut: still legible


def test_align_finds_each_trimmed_request_in_the_file() -> None:
    disk = multi_tool_history()
    assert align_requests(disk, [disk[:1], disk[1:4]]) == [(0, 1), (1, 4)]


def test_align_refuses_a_request_that_is_not_in_the_file() -> None:
    with pytest.raises(ValueError, match="request 1 is not a slice"):
        align_requests(multi_tool_history(), [[UserMessage("elsewhere")]])


def two_turn_run(
    tmp_path: Path, budget: int | None, name: str = "s.jsonl"
) -> tuple[Path, ScriptedClient]:
    path = tmp_path / name
    client = ScriptedClient(
        [AssistantMessage("calling", (ToolCall("c1", "nope", None),)), AssistantMessage("done")]
    )
    run_agent("hello " * 20, client=client, session_path=path, context_max_chars=budget)
    return path, client


def test_run_view_marks_sent_trimmed_and_not_yet_written(tmp_path: Path) -> None:
    path, client = two_turn_run(tmp_path, None)
    view = RunView.of(path, client)
    assert [view.mark(0, 1), view.mark(1, 1), view.mark(0, 2), view.mark(2, 2)] == [
        "●",
        " ",
        "●",
        "●",
    ]
    budget = estimate_context_chars(view.disk[1:3])
    path2, client2 = two_turn_run(tmp_path, budget, "trimmed.jsonl")
    trimmed = RunView.of(path2, client2)
    assert trimmed.mark(0, 2) == "○"  # on disk, left out of request 2


def test_run_view_text_has_one_row_per_message_on_disk(tmp_path: Path) -> None:
    path, client = two_turn_run(tmp_path, None)
    view = RunView.of(path, client)
    text = repr(view).splitlines()
    first, second = (estimate_context_chars(view.disk[:end]) for end in (1, 3))
    # the characters on disk per request are left out: in 06 they are the exercise's answer
    assert text[:3] == [
        f"磁盘上 4 条消息，{estimate_context_chars(view.disk)} 字符；模型共收到 2 次请求",
        f"  第 1 次请求：磁盘上 1 条消息；发出 1 条消息，{first} 字符",
        f"  第 2 次请求：磁盘上 3 条消息；发出 3 条消息，{second} 字符",
    ]
    assert text[3].split() == ["#", "消息", "字符", "r1", "r2"]
    assert [row.split()[1] for row in text[4:]] == ["user", "assistant(c1)", "tool", "assistant"]
    assert "请求 2" in view._repr_html_()


def test_run_view_says_the_budget_when_told_it(tmp_path: Path) -> None:
    path, client = two_turn_run(tmp_path, 1000)
    lines = RunView.of(path, client, budget=1000).summary().splitlines()
    chars = estimate_context_chars([UserMessage("hello " * 20)])
    assert lines[1] == f"  第 1 次请求：磁盘上 1 条消息；发出 1 条消息，{chars} 字符（预算 1000）"


def test_run_view_spans_a_restart(tmp_path: Path) -> None:
    path, first = two_turn_run(tmp_path, None)
    second = ScriptedClient([AssistantMessage("welcome back")])
    run_agent("again", client=second, session_path=path)
    view = RunView.of(path, first, second)
    history: list[Message] = list(view.disk)
    assert len(history) == 6 and view.spans[-1] == (0, 5)
