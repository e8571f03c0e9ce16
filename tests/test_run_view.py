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
from mini_agent.teaching.views import RunView, ScanView, align_requests

from .helpers import multi_tool_history


def test_scan_view_lists_each_step_under_the_history() -> None:
    text = repr(ScanView(multi_tool_history())).splitlines()
    assert text[0] == "history: [user] [assistant(a,b)] [tool a] [tool b]"
    assert text[1].startswith("step 1: index=3 tool b")
    assert text[3].startswith("step 2: index=0 user")


def test_scan_view_html_marks_current_found_and_searched_messages() -> None:
    html = ScanView(multi_tool_history()).step_html(1)
    assert html.count("outline:3px solid #f59e0b") == 1  # the current message
    assert html.count("outline:3px solid #7c3aed") == 1  # the declaring assistant
    assert html.count("background:#fef3c7") == 1  # tool a, searched past


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
    text = repr(RunView.of(path, client)).splitlines()
    assert text[0].startswith("on disk: 4 messages")
    assert "2 requests sent: 1 of 1" in text[0]
    assert [row.split()[1] for row in text[2:]] == ["user", "assistant(c1)", "tool", "assistant"]
    assert "request 2" in RunView.of(path, client)._repr_html_()


def test_run_view_spans_a_restart(tmp_path: Path) -> None:
    path, first = two_turn_run(tmp_path, None)
    second = ScriptedClient([AssistantMessage("welcome back")])
    run_agent("again", client=second, session_path=path)
    view = RunView.of(path, first, second)
    history: list[Message] = list(view.disk)
    assert len(history) == 6 and view.spans[-1] == (0, 5)
