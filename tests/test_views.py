"""views.py: what notebooks show, in plain text (what nbval compares) and HTML."""

from __future__ import annotations

from pathlib import Path

from mini_agent import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from mini_agent.teaching.trace import label
from mini_agent.teaching.views import (
    FileView,
    SessionView,
    SideBySide,
    Table,
    TrimView,
    UnitsView,
    shorten,
)

from .helpers import multi_tool_history


def history() -> list[Message]:
    return [UserMessage("old question"), *multi_tool_history()]


def test_labels_name_calls_results_and_errors() -> None:
    user, assistant, tool_a, _ = multi_tool_history()
    assert [label(user), label(assistant), label(tool_a)] == ["user", "assistant(a,b)", "tool a"]
    assert label(ToolMessage("x", "boom", is_error=True)) == "tool x!"
    assert label(AssistantMessage("plain")) == "assistant"


def test_shorten_makes_control_characters_visible_and_clips() -> None:
    assert shorten("a\nb\tc\x00") == "a\\nb\\tc\\u0000"
    assert shorten("x" * 100, 10) == "x" * 9 + "…"
    assert shorten("中文😀") == "中文😀"


def test_session_view_lists_every_message() -> None:
    assert repr(SessionView(multi_tool_history())) == "\n".join(
        [
            "4 messages, 353 chars",
            "  [0] user             read two files",
            '  [1] assistant(a,b)   reading both → a:read({"path":"a.txt"}), b:read({"path":"b.txt"})',
            "  [2] tool a           contents of a",
            "  [3] tool b           contents of b",
        ]
    )


def test_session_view_lines_up_two_digit_indexes() -> None:
    rows = repr(SessionView([UserMessage(f"q{n}") for n in range(11)])).splitlines()
    assert rows[1] == "  [ 0] user             q0"
    assert rows[11] == "  [10] user             q10"


def test_units_view_says_one_unit_in_the_singular() -> None:
    view = UnitsView.of([UserMessage("alone")])
    assert repr(view).splitlines()[0] == "1 unit"
    assert "<p>1 unit</p>" in view._repr_html_()


def test_units_view_boxes_each_unit() -> None:
    view = UnitsView.of(history())
    assert repr(view) == "\n".join(
        [
            "3 units",
            "  unit 1: [user]  41 chars",
            "  unit 2: [user]  43 chars",
            "  unit 3: [assistant(a,b) | tool a | tool b]  310 chars",
        ]
    )
    assert view._repr_html_().count("border-radius:6px") == 3  # one box per unit


def test_trim_view_marks_kept_and_dropped_units() -> None:
    view = TrimView(history(), 360)
    assert view.kept == history()[1:]
    assert view.error is None
    assert repr(view).splitlines() == [
        "budget 360 chars: kept 2 of 3 units, 4 of 5 messages, 353 chars used",
        "  dropped unit 1: [user]  41 chars",
        "  kept    unit 2: [user]  43 chars",
        "  kept    unit 3: [assistant(a,b) | tool a | tool b]  310 chars",
    ]


def test_trim_view_shows_the_chapters_error_when_nothing_fits() -> None:
    view = TrimView(history(), 100)
    assert view.kept is None
    assert view.summary() == (
        "budget 100 chars: context budget cannot contain the smallest consistent message unit"
    )
    assert "#dc2626" in view._repr_html_()


def test_html_is_escaped() -> None:
    html = SessionView([UserMessage("<script>alert(1)</script>")])._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_error_results_are_flagged_in_html() -> None:
    html = SessionView([ToolMessage("a", "boom", is_error=True)])._repr_html_()
    assert "isError" in html


def test_tool_inputs_are_shown_compactly() -> None:
    message = AssistantMessage("", (ToolCall("a", "grep", {"pattern": "x" * 50}),))
    assert repr(SessionView([message])).splitlines()[1].endswith("…)")


def test_table_aligns_chinese_and_ascii_columns() -> None:
    table = Table(["条件", "result"], [["合法 user", UserMessage("x")], ["role 未知", None]])
    assert repr(table).splitlines() == [
        "条件       result",
        "---------  ------------------------",
        "合法 user  UserMessage(content='x')",
        "role 未知  None",
    ]
    assert "<code>None</code>" in table._repr_html_()


def test_file_view_numbers_physical_lines_and_marks_one() -> None:
    view = FileView('{"a":1}\n\n[1,', "s.jsonl", mark=3)
    assert repr(view).splitlines() == [
        "s.jsonl: 3 lines, 12 chars, no newline at end of file",
        '   1 | {"a":1}',
        "   2 |",
        ">  3 | [1,",
    ]
    assert view._repr_html_().count("#fee2e2") == 1


def test_file_view_of_a_path_shows_only_the_file_name(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text("x\n", encoding="utf-8")
    view = FileView.of(path)
    assert view.lines == ["x"]
    assert str(tmp_path) not in repr(view) + view._repr_html_()
    assert repr(FileView("")) == "0 lines, 0 chars"


def test_side_by_side_shows_every_panel_in_text_and_html() -> None:
    both = SideBySide(("disk", FileView("x\n")), ("model", [1]))
    assert repr(both) == "── disk ──\n1 line, 2 chars\n   1 | x\n\n── model ──\n[1]"
    html = both._repr_html_()
    assert "<h4>disk</h4>" in html and "<pre>[1]</pre>" in html


def test_unit_numbers_line_up_from_ten_units_on() -> None:
    many: list[Message] = [UserMessage(f"q{n}") for n in range(10)]
    rows = repr(UnitsView.of(many)).splitlines()
    assert rows[1].startswith("  unit  1: [user]") and rows[10].startswith("  unit 10: [user]")
    trim_rows = repr(TrimView(many, 10_000)).splitlines()
    assert trim_rows[1].startswith("  kept    unit  1:") and trim_rows[10].startswith(
        "  kept    unit 10:"
    )


def test_visible_line_escapes_only_what_cannot_be_seen() -> None:
    from mini_agent.teaching.views import visible_line

    line = '{"role":"user","content":"a\\\\b 中\tc\x01\x7f\u2028"}'
    assert visible_line(line) == '{"role":"user","content":"a\\\\b 中\\tc\\x01\\x7f\\u2028"}'
    assert visible_line("x" * 100, 10) == "x" * 9 + "…"
